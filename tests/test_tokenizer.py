"""Encoding and decoding with a trained tokenizer, held to what training did.

Worked examples pin down the rules (merge by rank, special tokens whole, the
first k merges); property tests check the round trip on any text or bytes and
that encoding with k merges is the same as replaying the first k merges.
"""

from __future__ import annotations

from collections import Counter
from unittest import mock

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bpe import PRETOKENIZERS, pretokenize, train
from bpe.rule import merge_word
from bpe.text.pretokenize import sequence_of_text
from bpe.tokenizer.tokenizer import Tokenizer

SPECIAL = "<|endoftext|>"
TEXT = (
    "low low low low low lower lower widest widest widest newest newest newest newest newest newest\n"
    "It's the newest; they'll lower it.  Numbers 12345 and 3.14 too.\n"
    f"{SPECIAL}naïve café — 日本語 🙂 low\tlower\n\n"
)
LOSSLESS = [p for p in PRETOKENIZERS if p != "whitespace"]


def trained(text: str = TEXT, pretokenizer: str = "gpt2", num_merges: int = 60, special_tokens=(SPECIAL,)) -> Tokenizer:
    corpus = pretokenize(text, pretokenizer=pretokenizer, special_tokens=special_tokens)
    return Tokenizer.from_training(train(corpus, num_merges, special_tokens=special_tokens), pretokenizer)


def replay(merges, word: bytes) -> list[bytes]:
    """The definition: apply the merges one after another, each everywhere, left to right."""
    ids = list(word)
    vocab = [bytes([b]) for b in range(256)]
    index = {v: i for i, v in enumerate(vocab)}
    for left, right in merges:
        vocab.append(left + right)
        index.setdefault(left + right, len(vocab) - 1)
        ids = merge_word(ids, (index[left], index[right]), len(vocab) - 1)
    return [vocab[i] for i in ids]


def has_twins(merges) -> bool:
    """Two merges that make the same bytes (b'a'+b'bc' and b'ab'+b'c')."""
    made = [a + b for a, b in merges]
    return len(set(made)) != len(made)


# ---------------------------------------------------------------------------
# worked examples


def test_merges_apply_by_rank_inside_a_pre_token():
    tok = Tokenizer.from_merges([(b"l", b"o"), (b"lo", b"w")], pretokenizer="whitespace")
    assert tok.bpe(b"lower") == (b"low", b"e", b"r")
    assert tok.bpe(b"lower", 1) == (b"lo", b"w", b"e", b"r")
    assert tok.bpe(b"lower", 0) == tuple(bytes([b]) for b in b"lower")


def test_overlapping_pairs_merge_left_to_right():
    tok = Tokenizer.from_merges([(b"a", b"a")], pretokenizer="none")
    assert tok.pieces("aaa") == [b"aa", b"a"]
    assert tok.pieces("aaaa") == [b"aa", b"aa"]


def test_lowest_rank_wins_wherever_it_is_in_the_word():
    # (b, c) has the lower rank, so 'abc' becomes a + bc although 'ab' comes first
    tok = Tokenizer.from_merges([(b"b", b"c"), (b"a", b"b")], pretokenizer="none")
    assert tok.pieces("abc") == [b"a", b"bc"]


def test_special_tokens_are_kept_whole_and_never_merged_into():
    tok = trained()
    pieces = tok.pieces(f"low{SPECIAL}low")
    assert SPECIAL.encode() in pieces
    assert tok.encode(SPECIAL) == [tok.ids[SPECIAL.encode()]] == [len(tok.vocab) - 1]


def test_longest_special_token_wins():
    tok = Tokenizer.from_merges([], ["<a>", "<a><a>"], pretokenizer="none")
    assert tok.pieces("<a><a><a>") == [b"<a><a>", b"<a>"]


def test_token_counts_encode_pre_token_counts():
    tok = Tokenizer.from_merges([(b"l", b"o"), (b"lo", b"w")], pretokenizer="whitespace")
    assert tok.token_counts({b"low": 5, b"lower": 2}) == Counter({b"low": 7, b"e": 2, b"r": 2})


def test_merge_steps_show_each_merge_applied():
    tok = Tokenizer.from_merges([(b"l", b"o"), (b"lo", b"w")], pretokenizer="whitespace")
    assert list(tok.merge_steps(b"lower")) == [(0, [b"lo", b"w", b"e", b"r"]), (1, [b"low", b"e", b"r"])]


def test_training_counts_travel_with_the_tokenizer():
    tok = trained()
    assert len(tok.counts) == len(tok.merges) and all(c >= 1 for c in tok.counts)
    assert list(tok.counts) == sorted(tok.counts, reverse=True)


@pytest.mark.parametrize(
    "merges, message",
    [
        ([(b"ab", b"c")], "uses 'ab'"),  # 'ab' was never made
        ([(b"a", b"b"), (b"abc", b"d")], "uses 'abc'"),
        ([("a", "b")], "not a pair of bytes"),
    ],
)
def test_a_merge_of_unknown_tokens_is_refused(merges, message):
    with pytest.raises(ValueError, match=message):
        Tokenizer.from_merges(merges)


def test_a_merge_whose_parts_are_not_tokens_never_applies_and_keeps_the_other_ranks(tmp_path):
    tok = trained()
    header = (b"#version:", b"0.2")  # how CS336's harness reads GPT-2's merges.txt header
    with_header = Tokenizer(tok.vocab, [header, *tok.merges], tok.special_tokens)
    assert with_header.inert == {0} and with_header.ranks == {pair: rank + 1 for pair, rank in tok.ranks.items()}
    text = "the lowest lower newest #version: 0.2"
    assert with_header.encode(text) == tok.encode(text)
    assert with_header.encode(text, 4) == tok.encode(text, 3)
    in_the_middle = Tokenizer(tok.vocab, [*tok.merges[:2], (b"zz", b"q"), *tok.merges[2:]], tok.special_tokens)
    assert in_the_middle.inert == {2} and in_the_middle.encode(text) == tok.encode(text)
    with_header.save(tmp_path)  # a merge that never applies is not written
    assert Tokenizer.load(tmp_path / "merges.txt").merges == tok.merges


def test_a_merge_of_two_tokens_that_makes_no_token_is_refused():
    vocab = {i: bytes([i]) for i in range(256)}
    with pytest.raises(ValueError, match="Merge 1 \\('a' \\+ 'b'\\) joins two tokens into 'ab', which is not in the vocabulary"):
        Tokenizer(vocab, [(b"a", b"b")])


def test_unknown_id_is_a_clear_error():
    tok = trained()
    with pytest.raises(ValueError, match="not in the vocabulary"):
        tok.decode([10**6])


def test_negative_k_is_a_clear_error():
    with pytest.raises(ValueError, match="at least 0"):
        trained().encode("low", -1)


def test_k_beyond_the_merges_means_all_of_them():
    tok = trained()
    assert tok.encode(TEXT, 10**6) == tok.encode(TEXT)


def test_a_lone_surrogate_that_no_bytes_give_is_the_replacement_character_as_in_tiktoken():
    # it raised ValueError before; tiktoken encodes it as U+FFFD (and a surrogate pair as its character), and so do we
    tok = trained()
    assert tok.encode("a\ud800b") == tok.encode("a\ufffdb")
    assert tok.encode("\ud83d\udc4d") == tok.encode("👍")


def test_invalid_utf8_survives_as_bytes_and_decode_replaces_it():
    tok = trained()
    data = b"low \xff\xfe lower \xc3"
    assert tok.decode_bytes(tok.encode(data)) == data
    text = data.decode("utf-8", "surrogateescape")
    assert tok.decode_bytes(tok.encode(text)) == data
    assert tok.decode(tok.encode(data)) == "low \ufffd\ufffd lower \ufffd"  # as CS336 and tiktoken


# ---------------------------------------------------------------------------
# properties

TOKENIZERS = {pattern: trained(pretokenizer=pattern) for pattern in PRETOKENIZERS}


@pytest.mark.parametrize("pretokenizer", LOSSLESS)
@settings(max_examples=150, deadline=None)
@given(text=st.text())
def test_round_trip_of_any_text(pretokenizer, text):
    tok = TOKENIZERS[pretokenizer]
    assert tok.decode(tok.encode(text)) == text


@pytest.mark.parametrize("pretokenizer", LOSSLESS)
@settings(max_examples=150, deadline=None)
@given(data=st.binary())
def test_round_trip_of_any_bytes(pretokenizer, data):
    tok = TOKENIZERS[pretokenizer]
    assert tok.decode_bytes(tok.encode(data)) == data
    text = data.decode("utf-8", "surrogateescape")
    assert tok.decode_bytes(tok.encode(text)) == data
    assert tok.decode(tok.encode(data)) == data.decode("utf-8", "replace")


@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet="ab ", max_size=40).map(lambda t: t + " "), pretokenizer=st.sampled_from(LOSSLESS))
def test_round_trip_with_special_tokens_between(text, pretokenizer):
    tok = TOKENIZERS[pretokenizer]
    joined = SPECIAL.join([text, text, ""])
    assert tok.decode(tok.encode(joined)) == joined


@st.composite
def corpus_and_text(draw):
    alphabet = draw(st.sampled_from(["ab ", "abc \n", "aé1 ", "ab'é\n "]))
    corpus = draw(st.text(alphabet=alphabet, min_size=1, max_size=120))
    text = draw(st.text(alphabet=alphabet, max_size=60))
    return corpus, text


@settings(max_examples=200, deadline=None)
@given(case=corpus_and_text(), pretokenizer=st.sampled_from(list(PRETOKENIZERS)), data=st.data())
def test_encoding_with_k_merges_matches_replaying_the_first_k(case, pretokenizer, data):
    corpus, text = case
    tok = trained(corpus, pretokenizer, num_merges=30, special_tokens=())
    k = data.draw(st.integers(0, len(tok.merges)))
    assume(not has_twins(tok.merges[:k]))  # see Tokenizer.bpe: twins are matched by bytes
    expected = [piece for word in sequence_of_text(text, pretokenizer) for piece in replay(tok.merges[:k], word.encode())]
    assert tok.pieces(text, k) == expected


# ---------------------------------------------------------------------------
# long pre-tokens and streaming


@settings(max_examples=200, deadline=None)
@given(case=corpus_and_text(), pretokenizer=st.sampled_from(list(PRETOKENIZERS)), data=st.data())
def test_long_pre_tokens_merge_as_short_ones_do(case, pretokenizer, data):
    corpus, text = case
    tok = trained(corpus, pretokenizer, num_merges=30, special_tokens=())
    k = data.draw(st.integers(0, len(tok.merges)))
    word = (text * 3).encode()
    start = tok._python.start(word)
    assert tok._python.merge_long(start, k) == tok._python.merge(start, k)


def test_a_long_run_of_one_letter_encodes_quickly_and_round_trips():
    tok = Tokenizer.from_merges([(b"a", b"a"), (b"aa", b"aa"), (b"aaaa", b"aaaa")], pretokenizer="gpt2")
    text = "a" * 200_001  # one pre-token: merged with the heap, not rescanned per merge
    ids = tok.encode(text)
    assert len(ids) == 200_001 // 8 + 1 and tok.decode(ids) == text


@pytest.mark.parametrize("pretokenizer", list(PRETOKENIZERS))
@settings(max_examples=80, deadline=None)
@given(
    text=st.lists(st.sampled_from(["a", "b", " ", "\n", "é", "1", ".", "'", SPECIAL, "<|", "|>", "\t"]), max_size=80).map("".join),
    cuts=st.lists(st.integers(0, 200), max_size=10),
    as_bytes=st.booleans(),
)
def test_encode_iterable_equals_encode_however_the_text_is_cut(pretokenizer, text, cuts, as_bytes):
    tok = TOKENIZERS[pretokenizer]
    data = text.encode() if as_bytes else text
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    with mock.patch("bpe.tokenizer.tokenizer.STREAM_CHUNK", 8):  # cut as often as possible, so every boundary is tried
        streamed = list(tok.encode_iterable(data[a:b] for a, b in zip(bounds, bounds[1:])))
    assert streamed == tok.encode(text)


@pytest.mark.parametrize("pretokenizer", ["gpt2", "cl100k", "o200k"])
@settings(max_examples=60, deadline=None)
@given(
    text=st.lists(st.sampled_from(["a", "b", " ", "\n", "é", "1", SPECIAL, "<|", "\t"]), max_size=40).map("".join),
    middle=st.sampled_from([b"", b"\xff", b"\xe4\xb8"]),
    tail=st.sampled_from([b"", b"\xe4", b"\xe4\xb8", b"\xff", b"\x80\x80"]),
    cuts=st.lists(st.integers(0, 100), max_size=8),
    ordinary=st.booleans(),
)
def test_encode_iterable_equals_encode_for_bytes_cut_short_and_special_tokens_as_text(pretokenizer, text, middle, tail, cuts, ordinary):
    tok = TOKENIZERS[pretokenizer]
    data = text.encode() + middle + text.encode() + tail  # invalid bytes inside, and a character cut short at the end
    options = {"allowed_special": set(), "disallowed_special": ()} if ordinary else {}
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    with mock.patch("bpe.tokenizer.tokenizer.STREAM_CHUNK", 8):
        streamed = list(tok.encode_iterable((data[a:b] for a, b in zip(bounds, bounds[1:])), **options))
    assert streamed == tok.encode(data, **options)
    assert tok.decode_bytes(streamed) == data


def test_encode_iterable_refuses_what_is_not_text():
    with pytest.raises(ValueError, match="pieces of text \\(str or bytes\\), not int"):
        list(TOKENIZERS["gpt2"].encode_iterable([1, 2]))


@st.composite
def merge_lists(draw):
    """Merges over 'a', 'b', 'c' in which each pair joins tokens made before it; twins ('a'+'bc', 'ab'+'c') allowed."""
    known, merges = [b"a", b"b", b"c"], []
    for _ in range(draw(st.integers(0, 12))):
        pair = (draw(st.sampled_from(known)), draw(st.sampled_from(known)))
        if pair not in merges:
            merges.append(pair)
            known.append(pair[0] + pair[1])
    return merges


def gpt2_bpe(merges, word: bytes) -> list[bytes]:
    """The definition, as in GPT-2's encoder.py: join every occurrence of the lowest-ranked pair present, repeat."""
    ranks = {pair: rank for rank, pair in reversed(list(enumerate(merges)))}
    parts = [bytes([b]) for b in word]
    while len(parts) > 1:
        pair = min(zip(parts, parts[1:]), key=lambda p: ranks.get(p, len(merges)))
        if pair not in ranks:
            return parts
        out, i = [], 0
        while i < len(parts):
            if parts[i : i + 2] == list(pair):
                out.append(pair[0] + pair[1])
                i += 2
            else:
                out.append(parts[i])
                i += 1
        parts = out
    return parts


@settings(max_examples=300, deadline=None)
@given(merges=merge_lists(), word=st.text(alphabet="abc", max_size=40))
def test_merging_follows_gpt2s_definition_for_any_merge_list(merges, word):
    tok = Tokenizer.from_merges(merges, pretokenizer="none")
    data = word.encode()
    start = tok._python.start(data)
    expected = gpt2_bpe(merges, data)
    assert list(tok.bpe(data)) == expected
    assert [tok.vocab[i] for i in tok._python.merge_long(start, len(merges))] == expected
