"""A minimum pair frequency answered from one run: the prefix rule, and replaying a text once.

The claim the threshold page rests on: the merges of a run with
min_pair_frequency=t are the first kept(counts, t) merges of the run with t = 1,
and what the first k merges do to a text can be read off one encoding.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import PRETOKENIZERS, pretokenize, train
from bpe.lab.threshold import kept, replay, sample_of, thresholds
from bpe.tokenizer.tokenizer import Tokenizer

SPECIAL = "<|s|>"
TEXTBOOK = "low low low low low lower lower widest widest widest newest newest newest newest newest newest"


@st.composite
def corpora(draw):
    alphabet = draw(st.sampled_from(["ab ", "abc\n ", "aé1 \n", "ab1é'\n "]))
    pieces = draw(st.lists(st.text(alphabet=alphabet, max_size=60), min_size=1, max_size=3))
    return SPECIAL.join(pieces)


def run(text: str, pretokenizer: str, t: int = 1, num_merges: int = 40):
    corpus = pretokenize(text, pretokenizer=pretokenizer, special_tokens=[SPECIAL])
    return train(corpus, num_merges, special_tokens=[SPECIAL], min_pair_frequency=t)


def test_kept_is_the_number_of_counts_at_or_above_t():
    counts = [9, 9, 7, 2, 2, 1]
    assert [kept(counts, t) for t in range(11)] == [6, 6, 5, 3, 3, 3, 3, 3, 2, 2, 0]
    assert kept([], 3) == 0


def test_thresholds_offer_each_count_and_one_above_the_top():
    assert thresholds([9, 9, 7, 2], [0, 5]) == [0, 2, 5, 7, 9, 10]


def test_textbook_threshold_three_stops_before_the_pairs_seen_twice():
    events = run(TEXTBOOK, "whitespace", num_merges=12).events
    counts = [e.count for e in events]
    k = kept(counts, 3)
    assert all(c >= 3 for c in counts[:k]) and all(c < 3 for c in counts[k:])
    assert [(e.left, e.right) for e in run(TEXTBOOK, "whitespace", t=3, num_merges=12).events] == [(e.left, e.right) for e in events[:k]]


@settings(max_examples=150, deadline=None)
@given(text=corpora(), pretokenizer=st.sampled_from(list(PRETOKENIZERS)), t=st.integers(0, 12))
def test_a_threshold_keeps_a_prefix_of_the_run_without_one(text, pretokenizer, t):
    full = run(text, pretokenizer)
    counts = [e.count for e in full.events]
    assert counts == sorted(counts, reverse=True), "the winning count never goes up"
    retrained = run(text, pretokenizer, t=t)
    assert retrained.events == full.events[: kept(counts, t)]


@settings(max_examples=150, deadline=None)
@given(text=corpora(), sample=corpora(), pretokenizer=st.sampled_from([p for p in PRETOKENIZERS]))
def test_replay_answers_for_every_k_exactly_as_encoding_with_k_merges(text, sample, pretokenizer):
    tok = Tokenizer.from_training(run(text, pretokenizer), pretokenizer)
    answer = replay(tok, sample_of(sample, pretokenizer, [SPECIAL]))
    for k in range(len(tok.merges) + 1):
        pieces = tok.pieces(sample, k)
        assert answer.tokens[k] == len(pieces)
        assert answer.usage(k) == Counter(p for p in pieces if p != SPECIAL.encode())


def test_replay_is_exact_when_two_merges_make_the_same_bytes():
    # 'abc' twice: a+bc (rank 2) and ab+c (rank 3); then abc+d only matches by bytes
    tok = Tokenizer.from_merges([(b"b", b"c"), (b"a", b"b"), (b"a", b"bc"), (b"ab", b"c"), (b"abc", b"d")], pretokenizer="whitespace")
    text = "abcd abc abd bcd abcabc"
    answer = replay(tok, sample_of(text, "whitespace"))
    for k in range(len(tok.merges) + 1):
        assert answer.tokens[k] == len(tok.pieces(text, k))
        assert answer.usage(k) == Counter(tok.pieces(text, k))


def test_compression_figures():
    tok = Tokenizer.from_training(run(TEXTBOOK, "whitespace", num_merges=12), "whitespace")
    sample = sample_of(TEXTBOOK, "whitespace")
    answer = replay(tok, sample)
    assert sample.n_words == 16 and sample.n_bytes == len(TEXTBOOK)
    full = answer.compression(len(tok.merges))
    assert full.n_tokens == len(tok.encode(TEXTBOOK))
    assert full.tokens_per_word == pytest.approx(full.n_tokens / 16)
    assert answer.compression(0).n_tokens == len(TEXTBOOK.replace(" ", ""))
