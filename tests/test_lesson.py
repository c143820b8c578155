"""The guided lesson's narration (ui/lessons/lesson.py): every number it says is the trainer's.

The lesson is built from the heap trainer's trace; the checks recount from the
pre-tokens, or ask a different trainer, so a number copied into the text by
hand, or computed wrongly, fails here.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import pretokenize, train
from bpe.tokenizer.tokenizer import Tokenizer
from bpe.trainer import count_pairs, word_lists
from ui.corpus import SOURCES
from ui.lessons import lesson

TEXT = SOURCES[lesson.PRESET].text


def pretokens(text: str = TEXT):
    return pretokenize(text.encode(), pretokenizer="whitespace")


def lesson_for(text: str = TEXT, merges: int = 12):
    corpus = pretokens(text)
    return lesson.steps(text, corpus.counts, train(corpus, merges, algorithm="heap", detail=True).events)


@pytest.fixture(scope="module")
def steps():
    return {step.view: step for step in lesson_for()}


@pytest.fixture(scope="module")
def naive():
    """The same run by another trainer, with its work counters."""
    return train(pretokens(), 12, algorithm="naive", detail=True)


def pair_counts_after(k: int) -> dict[tuple[bytes, bytes], int]:
    """Recount every pair from scratch with the first k merges applied (no trainer involved)."""
    counts = pretokens().counts
    tok = Tokenizer.from_merges(train(pretokens(), 12).merges, pretokenizer="whitespace")
    total: Counter = Counter()
    for word, n in counts.items():
        tokens = tok.bpe(word, k)
        for pair in zip(tokens, tokens[1:]):
            total[pair] += n
    return dict(total)


def test_the_lesson_has_its_seven_screens_in_order(steps):
    assert list(steps) == ["words", "pairs", "tie", "history", "changes", "heap", "run"]


def test_pre_tokens_are_counted_from_the_text(steps):
    words = TEXT.split()
    assert f"{len(words)} words, only {len(set(words))} of them different" in steps["words"].text
    assert f"{len(TEXT.encode())} bytes" in steps["words"].text


def test_the_worked_pair_count_adds_up_to_the_recount(steps):
    text = steps["pairs"].text
    left, right = re.search(r"`(\S+) \+ (\S+)`:", text).groups()
    parts = [int(n) for n in re.findall(r"(\d+) from `", text)]
    total = int(re.search(r"= \*\*(\d+)\*\*", text).group(1))
    assert sum(parts) == total == pair_counts_after(0)[(left.encode(), right.encode())]
    assert f"{len(pair_counts_after(0))} different pairs" in text


def test_the_tie_is_the_trainers_first_merge_and_its_bytes(steps, naive):
    first = naive.events[0]
    assert first.tie and steps["tie"].merges == (1,)
    text = steps["tie"].text
    assert f"**{first.count}**" in text
    assert (
        f"`{first.left.decode()} + {first.right.decode()}`" in text
        and f"`{first.runner_up[0].decode()} + {first.runner_up[1].decode()}`" in text
    )
    assert f"s (byte {ord('s')}) is greater than e (byte {ord('e')})" in text
    assert f"id {first.new_id}" in text


def test_the_first_merges_name_the_ties_the_trainer_made(steps, naive):
    ties = [k for k, e in enumerate(naive.events[:4], 1) if e.tie]
    assert ties == [1, 3]
    assert "Merges 1 and 3 were ties" in steps["history"].text
    assert steps["history"].merges == (1, 2, 3, 4)


def test_counts_that_change_and_stay_match_a_recount(steps):
    step = steps["changes"]
    k = step.merge
    before, after = pair_counts_after(k - 1), pair_counts_after(k)
    kept = sum(1 for pair, n in before.items() if after.get(pair) == n)
    assert f"the other {kept} of the {len(before)} pairs kept their counts" in step.text
    pair, loss = re.search(r"For example `(\S+ \+ \S+)` loses (\d+)", step.text).groups()
    left, right = (t.encode() for t in pair.split(" + "))
    assert before[(left, right)] - after.get((left, right), 0) == int(loss)


def test_the_heap_step_counts_the_scans_the_naive_trainer_made(steps, naive):
    text = steps["heap"].text
    assert f"{naive.work['pairs_scanned']} looks for these 12 merges" in text
    k = steps["heap"].merge
    stale, said, now = re.search(r"`(\S+ \+ \S+)` still said (\d+), though its count was (\d+)", text).groups()
    pair = tuple(t.encode() for t in stale.split(" + "))
    assert pair_counts_after(k - 2).get(pair) == int(said)  # what it was when the entry was pushed
    assert pair_counts_after(k - 1).get(pair, 0) == int(now)  # what it is when the heap looks


def test_the_whole_run_counts_ties_and_the_vocabulary(steps, naive):
    ties = sum(e.tie for e in naive.events)
    assert f"**{ties} of the 12 merges were ties**" in steps["run"].text
    assert f"256 bytes to {256 + len(naive.events)}" in steps["run"].text
    assert steps["run"].merges == (12,)


def test_the_lesson_is_written_from_the_data_not_for_one_corpus():
    other = lesson_for("hug hug hug pug pug pun bun bun bun bun hugs", merges=8)
    assert other[0].text.count("11 words, only 5 of them different") == 1
    assert all(step.text for step in other)


# ---------------------------------------------------------------------------
# the helpers the views use, against the tokenizer and the trainer's counting

words = st.lists(st.text(alphabet="abcd", min_size=1, max_size=7), min_size=1, max_size=10)


@settings(max_examples=60, deadline=None)
@given(words, st.integers(0, 10))
def test_split_words_replays_merges_as_the_tokenizer_does(ws, k):
    corpus = pretokens(" ".join(ws))
    merges = train(corpus, 10).merges
    tok = Tokenizer.from_merges(merges, pretokenizer="whitespace")
    split = dict((b"".join(t), t) for t, _ in lesson.split_words(corpus.counts, merges[:k]))
    assert split == {w: tok.bpe(w, k) for w in corpus.counts}


@settings(max_examples=60, deadline=None)
@given(words)
def test_pair_sources_add_up_to_the_trainers_pair_counts(ws):
    corpus = pretokens(" ".join(ws))
    sources = lesson.pair_sources(lesson.split_words(corpus.counts, []))
    ids, counts = word_lists(corpus.counts)
    expected = {(bytes([a]), bytes([b])): n for (a, b), n in count_pairs(ids, counts).items()}
    assert {pair: sum(n for _, n in parts) for pair, parts in sources.items()} == expected
