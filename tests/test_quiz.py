"""The quiz's questions and explanations (ui/lessons/quiz.py), checked against the trainers."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import ALGORITHMS, pretokenize, train
from ui.corpus import SOURCES
from ui.lessons import quiz

PRESETS = ["textbook", "wikipedia", "ties"]


def run_of(text: str, pretokenizer: str = "whitespace", merges: int = 20, algorithm: str = "heap"):
    corpus = pretokenize(text.encode(), pretokenizer=pretokenizer)
    return train(corpus, merges, algorithm=algorithm, detail=True).events


def preset(key: str, algorithm: str = "heap"):
    source = SOURCES[key]
    return run_of(source.text, source.pretokenizer, source.merges, algorithm)


def questions(events, run: str = "run"):
    return [quiz.question(run, events, k) for k in quiz.askable(events)]


@pytest.mark.parametrize("key", PRESETS)
@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_options_hold_the_merged_pair_and_the_runner_up(key, algorithm):
    events = preset(key, algorithm)
    for q in questions(events):
        pairs = [o.pair for o in q.options]
        assert (q.event.left, q.event.right) in pairs
        assert q.event.runner_up in pairs
        assert len(set(pairs)) == len(pairs)
        assert [o.letter for o in q.options] == list("ABCD"[: len(pairs)])


def test_every_merge_with_a_choice_is_asked_in_order():
    events = preset("textbook")
    assert quiz.askable(events) == list(range(1, 12))  # merge 12 (lowe + r) was the only pair left


def test_option_order_is_the_same_on_every_reload():
    events = preset("textbook")
    assert questions(events) == questions(events)
    assert questions(events) == questions(preset("textbook", "naive"))  # the algorithm does not reshuffle


def test_the_winner_does_not_always_sit_in_the_same_place():
    places = {q.winner.letter for q in questions(preset("textbook"))}
    assert len(places) >= 3


def test_textbook_first_merge_is_explained_as_a_tie_decided_by_the_left_bytes():
    q = questions(preset("textbook"))[0]
    lines = quiz.explain(q)
    assert lines[0] == "A tie: s + t and e + s both occur 9 times."
    assert "s (byte 115) is greater than e (byte 101)" in lines[1]


def test_a_pick_with_a_lower_count_is_told_by_how_much():
    q = questions(preset("textbook"))[0]
    lines = quiz.explain(q, (b"w", b"e"))
    assert lines[-1] == "Your pick, w + e, occurs 8 times: 1 fewer than s + t."


def test_a_clear_winner_names_the_runner_up_and_its_count():
    q = questions(preset("textbook"))[1]  # merge 2: e + st (9) ahead of w + e (8)
    assert quiz.explain(q) == ["e + st occurs 9 times, more than any other pair (next: w + e, 8 times)."]


def test_a_tied_pick_that_was_not_the_runner_up_is_told_which_bytes_lost():
    q = questions(preset("textbook"))[4]  # merge 5: w + est, n + e and e + w all at 6
    assert q.option((b"e", b"w")) is not None
    assert "w (byte 119) is greater than e (byte 101)" in quiz.explain(q, (b"e", b"w"))[-1]


def test_the_right_token_decides_when_the_left_ones_are_equal():
    clause = quiz.greater_because((b"e", b"st"), (b"e", b"s"))
    assert clause == "the left tokens are the same (e), so the right tokens decide: st starts like s and is longer, so it is greater"


def test_counts_read_as_words():
    assert [quiz.times(n) for n in (1, 2, 3, 1234)] == ["once", "twice", "3 times", "1,234 times"]


def test_score_counts_right_and_wrong_answers():
    answers = {"a": quiz.Answer((b"s", b"t"), True), "b": quiz.Answer((b"w", b"e"), False), "c": quiz.Answer((b"o", b"w"), True)}
    assert quiz.score(answers) == (2, 1)
    assert quiz.score({}) == (0, 0)


# ---------------------------------------------------------------------------
# properties over many corpora

words = st.lists(st.text(alphabet="abcd", min_size=1, max_size=6), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(words)
def test_the_winner_is_the_best_option_by_the_rule_and_the_tie_is_said_when_there_is_one(ws):
    events = run_of(" ".join(ws))
    for q in questions(events):
        best = max(q.options, key=lambda o: (o.count, o.left, o.right))
        assert best.pair == q.winner.pair
        lines = quiz.explain(q)
        assert lines[0].startswith("A tie") == q.event.tie
        for o in q.options:
            if o.pair != q.winner.pair:
                assert quiz.explain(q, o.pair)[-1].startswith(f"Your pick, {o.label},")


pairs = st.tuples(st.binary(min_size=1, max_size=3), st.binary(min_size=1, max_size=3))


@settings(max_examples=200, deadline=None)
@given(pairs, pairs)
def test_the_tie_clause_quotes_bytes_in_the_order_the_rule_uses(a, b):
    if a == b:
        return
    a, b = max(a, b), min(a, b)
    clause = quiz.greater_because(a, b)
    quoted = [int(n) for n in re.findall(r"\(byte (\d+)\)", clause)]
    if quoted:
        assert quoted[0] > quoted[1]
    else:
        side = 0 if a[0] != b[0] else 1
        assert a[side].startswith(b[side]) and len(a[side]) > len(b[side])
    assert ("left tokens decide" in clause) == (a[0] != b[0])
