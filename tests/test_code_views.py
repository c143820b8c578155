"""The code beside the step (issue 28.13): each marked line is the line that does what the page says it did.

A real merge (and a real encoding) runs under a profiler that notes, for every call, the function and line it was
made from; each mark of ui.views.code must be the line the call is made from, as often as the page says: if a
refactor moves the pop, the recount or the lowest-rank choice to another line (or function), a test here fails.
"""

from __future__ import annotations

import html
import sys
from collections import Counter
from contextlib import contextmanager

import pytest

from bpe import pretokenize, train
from bpe.heap import Heap
from bpe.naive import Naive
from bpe.tokenizer.encoder import Encoder
from bpe.tokenizer.tokenizer import Tokenizer
from ui.views import code

TEXT = "low low low low low lower lower widest widest widest newest newest newest newest newest newest " * 3


@contextmanager
def calls_from(function):
    """Counter of (called name, line it was called from) for the calls made inside `function` while the block runs."""
    made: Counter = Counter()
    target = function.__code__

    def profile(frame, event, arg):
        if event == "call" and frame.f_back is not None and frame.f_back.f_code is target:
            made[(frame.f_code.co_name, frame.f_back.f_lineno)] += 1
        elif event == "c_call" and frame.f_code is target:
            made[(getattr(arg, "__name__", ""), frame.f_lineno)] += 1

    sys.setprofile(profile)
    try:
        yield made
    finally:
        sys.setprofile(None)


@contextmanager
def lines_run(function):
    """Counter of line numbers run inside `function` (a generator too: each resume is traced) while the block runs."""
    ran: Counter = Counter()
    target = function.__code__

    def local(frame, event, arg):
        if event == "line":
            ran[frame.f_lineno] += 1
        return local

    def tracer(frame, event, arg):
        return local if frame.f_code is target else None

    sys.settrace(tracer)
    try:
        yield ran
    finally:
        sys.settrace(None)


def merges_of(trainer_class, n: int):
    trainer = trainer_class(pretokenize(TEXT, pretokenizer="whitespace").counts)
    return trainer, trainer.merges(n, detail=True)


def test_the_heap_pops_the_winner_on_the_marked_line_and_the_stale_entries_from_the_others():
    part = code.excerpt(Heap.choose, code.HEAP_CHOOSE)
    trainer, merges = merges_of(Heap, 6)
    with calls_from(Heap.choose) as made:
        events = list(merges)
    assert made[("heappop", part.marks["pop"])] == len(events)  # one pop per merge: the winner
    assert made[("_clean_top", part.marks["stale"])] == made[("_clean_top", part.marks["runner"])] == len(events)
    assert part.marks["stale"] < part.marks["pop"] < part.marks["runner"]  # before the winner, then after it
    assert sum(e.detail.heap.stale_popped_total for e in events) > 0  # and the stale pops the marks name happened


def test_the_heap_pushes_an_entry_per_pair_that_went_up_on_the_marked_line():
    part = code.excerpt(Heap.apply, code.HEAP_APPLY)
    trainer, merges = merges_of(Heap, 6)
    with calls_from(Heap.apply) as made:
        events = list(merges)
    went_up = sum(1 for e in events for _, _, d in e.detail.changes if d > 0)
    assert all(e.detail.changes_total == len(e.detail.changes) for e in events)  # none left out of the count
    assert made[("heappush", part.marks["push"])] == went_up > 0


def test_naive_recounts_on_the_marked_line_and_checks_every_word_on_the_other():
    choose, merge = code.excerpt(Naive.choose, code.NAIVE_CHOOSE), code.excerpt(Naive.merge, code.NAIVE_MERGE)
    trainer, merges = merges_of(Naive, 4)
    with calls_from(Naive.choose) as chose:  # one profiler at a time: each function on its own run
        events = list(merges)
    assert chose[("count_pairs", choose.marks["recount"])] == len(events)
    assert chose[("choose", choose.marks["scan"])] == len(events)
    trainer, merges = merges_of(Naive, 4)
    with calls_from(Naive.merge) as merged:
        events = list(merges)
    assert merged[("merge_word", merge.marks["rewrite"])] == sum(dict(e.work)["words_checked"] for e in events)


def test_the_encoder_takes_the_lowest_merge_number_and_merges_on_the_marked_lines():
    run = train(pretokenize(TEXT, pretokenizer="whitespace"), 12)
    tok = Tokenizer.from_training(run, "whitespace")
    part = code.encode_excerpt()
    with calls_from(Encoder.rounds) as made, lines_run(Encoder.rounds) as ran:
        steps = tok.encode_steps(b"lowest")  # recorded from the encoder's own rounds
    merges = [s for s in steps if s.rank is not None]
    assert len(steps[-1].parts) > 1  # 'low' + 'est': one pair is left, so the loop looks once more and finds no merge
    assert made[("min", part.marks["lowest"])] == len(merges) + 1  # once per step, and once more to find none is left
    assert ran[part.marks["merge"]] == sum(len(s.at) for s in merges) > 0  # the merge itself, once per merged place
    assert part.lines[part.numbers.index(part.marks["merge"])].strip() == "ids[i : i + 2] = [new]"


@pytest.mark.parametrize("algorithm", ["naive", "positions", "parent_set", "heap", "heap_c"])
def test_the_step_page_shows_the_code_of_each_trainer_with_this_merges_lines_lit(algorithm):
    events = train(pretokenize(TEXT, pretokenizer="whitespace"), 3, algorithm=algorithm, detail=True).events
    shown = code.step_code(events[1], algorithm)
    assert shown.count('class="lit"') >= 1 and "<script" not in shown
    if algorithm in ("heap", "heap_c"):
        assert "popped the winner: e + st" in shown and "heappop(self.heap)" in shown


def test_a_mark_whose_call_is_gone_says_so():
    with pytest.raises(LookupError, match="no longer calls heappush"):
        code.excerpt(Heap.choose, (code.Mark("push", "heappush"),))


@pytest.mark.parametrize("function, marks", [(Heap.choose, code.HEAP_CHOOSE), (Naive.merge, code.NAIVE_MERGE)])
def test_the_bookkeeping_for_the_pages_is_folded_into_one_line_and_the_algorithms_lines_are_shown(function, marks):
    # issue 36.9: `if detail: self._winner_pops = ...` sat among the algorithm's lines; each `if detail:` block is one line
    # that says what it is, and every other line of the function is shown, with its own number
    part = code.excerpt(function, marks)
    blocks = [(a, b) for a, b in part.folds]
    assert blocks and all(part.lines[part.numbers.index(a)].lstrip().startswith("if detail:") for a, b in blocks)
    said = {name: f"did {name}" for name in part.marks}
    shown = code.render(part, said)
    folded = {n for a, b in blocks for n in range(a, b + 1)}
    for number in part.numbers:
        written = f'<span class="ln">{number}</span>'
        assert (written in shown) is (number not in folded), number
    for a, b in blocks:
        assert f"lines {a}–{b} left out: if detail, they record what this page draws" in shown
    assert "_winner_pops" not in shown and "record_word" not in shown
    assert shown.count('class="lit"') == len(part.marks)  # the marks are never in a folded block


def test_a_mark_in_an_if_detail_block_says_so():
    def trainer_step(self, detail):
        if detail:
            self.record(1)
        return self.best()

    with pytest.raises(LookupError, match="'record' is in an `if detail:` block"):
        code.excerpt(trainer_step, (code.Mark("record", "record"),))


def test_a_line_wraps_under_its_own_indentation_not_at_column_0():
    # the CSS wraps a line four columns in from where it starts (--i: its indentation): the line is written without
    # its leading spaces, which the style puts back
    part = code.excerpt(Heap.apply, code.HEAP_APPLY)
    shown = code.render(part, {})
    for number, line in zip(part.numbers, part.lines):
        indent = len(line) - len(line.lstrip(" "))
        style = f' style="--i:{indent}"' if indent else ""
        assert f'<span class="ln">{number}</span><code{style}>{html.escape(line.lstrip(" ")) or " "}</code>' in shown
