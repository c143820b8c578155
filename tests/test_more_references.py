"""gigatoken and ffbpe, the fastest trainers we know, beside HuggingFace and rustbpe: which rule of ours each
of their tie-break settings is, merge for merge, and where the one that is none of ours parts from us.

Each is trained by bpe.lab.race on the same pre-tokens as ours (skipped when not installed). Real text:
CS336's corpus.en (../shared/cs336) and 300 KB of the standard library's docstrings.
"""

from __future__ import annotations

from functools import cache

import pytest

from bpe import ALGORITHMS, pretokenize, train
from bpe.data.corpora import stdlib_prose
from bpe.lab import race as R
from bpe.lab import references as refs

SPECIAL = "<|endoftext|>"
NUM_MERGES = 300
SETTINGS = [(refs.GIGATOKEN, (tb,), rule) for tb, rule in refs.GIGATOKEN_RULES.items() if rule] + [
    (refs.FFBPE, setting, rule) for setting, rule in refs.FFBPE_RULES.items()
]
TRAIN = {refs.GIGATOKEN: (refs.gigatoken_available, refs.gigatoken_reference), refs.FFBPE: (refs.ffbpe_available, refs.ffbpe_reference)}


def theirs(tool: str, text: str, setting: tuple) -> list:
    available, trainer = TRAIN[tool]
    if not available():
        pytest.skip(f"{tool} is not installed")
    return list(trainer(text, NUM_MERGES, (SPECIAL,), *setting).merges)


@cache
def corpus(name: str) -> str:
    if name == "stdlib":
        return stdlib_prose(300_000)
    from conftest import SHARED

    if not (SHARED / "corpus.en").is_file():
        pytest.skip("../shared/cs336 not present")
    return (SHARED / "corpus.en").read_text(encoding="utf-8")


@cache
def ours(name: str, rule: str, algorithm: str = "heap", num_merges: int = NUM_MERGES) -> list:
    corpus_ = pretokenize(corpus(name), special_tokens=[SPECIAL], keep_sequence=algorithm == "positions")
    return train(corpus_, num_merges, algorithm=algorithm, special_tokens=[SPECIAL], tie_break=rule).merges


def first_difference(a: list, b: list) -> int | None:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None if len(a) == len(b) else min(len(a), len(b)))


@pytest.mark.parametrize("name", ["corpus.en", "stdlib"])
@pytest.mark.parametrize("tool, setting, rule", SETTINGS, ids=[f"{t}-{'-'.join(s)}" for t, s, _ in SETTINGS])
def test_each_setting_is_one_of_our_rules_merge_for_merge(tool, setting, rule, name):
    made = theirs(tool, corpus(name), setting)
    assert len(made) == NUM_MERGES and first_difference(made, ours(name, rule)) is None
    others = [r for r in ("cs336", "huggingface", "rustbpe") if r != rule]
    assert all(first_difference(made, ours(name, other)) is not None for other in others)  # the rules part on this text


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_every_algorithm_of_ours_agrees_with_ffbpe_largest_content(algorithm):
    made = theirs(refs.FFBPE, corpus("corpus.en"), ("largest_content", "raw"))
    assert first_difference(made[:100], ours("corpus.en", "cs336", algorithm, 100)) is None


@pytest.mark.parametrize("name", ["corpus.en", "stdlib"])
def test_gigatoken_assembled_bytes_takes_the_smallest_bytes_of_a_tie_which_no_rule_of_ours_does(name):
    made = theirs(refs.GIGATOKEN, corpus(name), ("assembled_bytes",))
    cs336 = ours(name, "cs336")
    at = first_difference(made, cs336)
    assert at is not None and made[:at] == cs336[:at]
    # at that merge both pairs have the same count: a tie, which cs336 gives to the greater bytes and gigatoken to the smaller
    corpus_ = pretokenize(corpus(name), special_tokens=[SPECIAL])
    counts = {pair: R.pair_count_after(corpus_, cs336[:at], pair) for pair in (made[at], cs336[at])}
    assert counts[made[at]] == counts[cs336[at]] and made[at] < cs336[at]
