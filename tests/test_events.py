"""What trainers hand out besides the merges: each merge's work, and why a run stopped, in words."""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import EVERY_ALGORITHM
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import pretokenize, train
from bpe.events import MIN_FREQUENCY, NO_PAIRS, TIME_BUDGET, VOCAB_SIZE, WALL_BUDGET, WORK_NAMES, stop_sentence
from bpe.train import check_settings

TEXTBOOK = "low low low low low lower lower widest widest widest newest newest newest newest newest newest"


def run(text: str, algorithm: str, num_merges: int, **options):
    corpus = pretokenize(text, pretokenizer="whitespace", keep_sequence=True)
    return train(corpus, num_merges, algorithm=algorithm, **options)


# ---------------------------------------------------------------------------
# each merge's work


@EVERY_ALGORITHM
@settings(max_examples=40, deadline=None)
@given(text=st.text(alphabet="abc \n", max_size=80), num_merges=st.integers(0, 12))
def test_the_work_of_every_merge_adds_up_to_the_trainers_counters(algorithm, text, num_merges):
    result = run(text, algorithm, num_merges)
    total = Counter()
    for event in result.events:
        total.update(dict(event.work))
    if result.stop_reason == VOCAB_SIZE:  # no last, fruitless search for a pair
        assert total == Counter(result.work)
    else:
        assert all(total[name] <= result.work[name] for name in total)
    assert total["merges"] == len(result.events)


@EVERY_ALGORITHM
def test_every_counter_a_trainer_keeps_has_a_name_a_page_can_show(algorithm):
    result = run(TEXTBOOK, algorithm, 12)
    assert set(result.work) - {"merges"} <= set(WORK_NAMES)


def test_naive_checks_every_word_of_two_bytes_or_more_at_every_merge():
    # the words the race page counts as checked: low, lower, widest, newest, whatever the merge rewrites
    events = run(TEXTBOOK, "naive", 12).events
    assert [e.work_done("words_checked") for e in events] == [4] * 12
    assert events[2].work_done("words_touched") == 2  # 'o w' is in low and lower only


def test_heap_pops_one_current_entry_per_merge():
    events = run(TEXTBOOK, "heap", 12).events
    assert [e.work_done("heap_pops") for e in events] == [1] * 12


def test_work_done_is_zero_for_a_counter_the_trainer_does_not_keep():
    assert run(TEXTBOOK, "heap", 1).events[0].work_done("pairs_counted") == 0


# ---------------------------------------------------------------------------
# why a run stopped, as a sentence


def test_a_vocab_filled_by_bytes_and_special_tokens_says_there_is_no_room():
    # vocab size 257 with one special token: 256 bytes + 1 special, zero merges
    assert check_settings(257, ["<|endoftext|>"], "heap", 1) == 0
    corpus = pretokenize(TEXTBOOK, special_tokens=["<|endoftext|>"])
    result = train(corpus, 0, special_tokens=["<|endoftext|>"])
    sentence = stop_sentence(result.stop_reason, len(result.events), vocab_size=257, n_special=1)
    assert sentence == (
        "No merges: a vocab size of 257 is filled by the 256 bytes and 1 special token alone, "
        "leaving no room for a merge. Raise the vocab size."
    )


def test_a_corpus_of_single_bytes_says_there_is_no_pair():
    result = run("a b c", "heap", 5)
    assert stop_sentence(result.stop_reason, 0) == (
        "No merges: the corpus has no pair of adjacent tokens to merge (every pre-token is a single byte)."
    )


@pytest.mark.parametrize(
    "reason, merges, options, expected",
    [
        (
            VOCAB_SIZE,
            12,
            {"vocab_size": 269, "n_special": 1},
            "Made 12 merges: the vocabulary reached its size, 269 = 256 bytes + 12 merges + 1 special token.",
        ),
        (NO_PAIRS, 1, {}, "Stopped after 1 merge: no pair of adjacent tokens was left to merge (every pre-token is a single token now)."),
        (
            MIN_FREQUENCY,
            3,
            {"min_pair_frequency": 5},
            "Stopped after 3 merges: the best pair left occurred fewer than 5 times (the min pair frequency).",
        ),
        (TIME_BUDGET + " (30 s)", 314, {}, "Stopped after 314 merges: it ran out of its time budget (30 s)."),
        (WALL_BUDGET, 49, {}, "Stopped after 49 merges: the server was busy, so its wall-clock budget cut it off."),
    ],
)
def test_every_stop_reason_is_a_sentence(reason, merges, options, expected):
    assert stop_sentence(reason, merges, **options) == expected


@EVERY_ALGORITHM
@pytest.mark.parametrize("num_merges, options", [(12, {}), (50, {}), (12, {"min_pair_frequency": 4})])
def test_no_sentence_shows_a_raw_identifier(algorithm, num_merges, options):
    result = run(TEXTBOOK, algorithm, num_merges, **options)
    sentence = stop_sentence(result.stop_reason, len(result.events), vocab_size=256 + num_merges, **options)
    assert "_" not in sentence and sentence.endswith(".") and sentence[0].isupper()


def test_the_cli_summary_says_why_training_stopped(tmp_path, capsys):
    from bpe.cli import main

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXTBOOK, encoding="utf-8")
    args = ["train", str(corpus), "--special-token", "<|endoftext|>", "--workers", "1", "--pattern", "whitespace"]
    assert main([*args, "--vocab-size", "257", "--out", str(tmp_path / "none")]) == 0
    assert "No merges: a vocab size of 257 is filled by the 256 bytes and 1 special token alone" in capsys.readouterr().out
    assert main([*args, "--vocab-size", "269", "--out", str(tmp_path / "twelve")]) == 0
    assert "Made 12 merges: the vocabulary reached its size, 269 = 256 bytes + 12 merges + 1 special token." in capsys.readouterr().out
