"""The CS336 Tokenizer with GPT-2's own files encodes exactly as tiktoken's gpt2 encoding.

GPT-2's encoder.json and vocab.bpe come from ../shared/gpt2 (the tests skip
without it); tiktoken gets the same files offline through its cache directory.
"""

from __future__ import annotations

import base64
import inspect
import json
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import Tokenizer
from bpe.data.corpora import stdlib_prose
from bpe.text.gpt2_bytes import byte_to_char

EOT = "<|endoftext|>"
DOCUMENTS = {
    "prose": "It's the dog's day; they'll say we've won, I'm sure. The quick brown fox jumps over the lazy dog.\n",
    "code": inspect.getsource(json.decoder),
    "emoji": "Nice 🙂🙂 work 👩‍👩‍👧‍👦 and 🏳️‍🌈 flags, ☕️ too!",
    "cjk": "日本語のテキストと中文文本，한국어 텍스트도 있습니다。",
    "whitespace": "a" + " " * 1000 + "b\n\n\n\t\t  \r\n" + "\n" * 300 + "   end   ",
    "long word": "x" * 5000 + " " + "ab" * 3000 + " " + "🙂" * 500,
    "numbers": "1234567890 3.14159 -42 1,000,000 ٣٤٥ ⅷ",
    "accents": "naïve café — ünïcödé façade Ελληνικά кириллица",
    "special tokens": f"before{EOT}after {EOT} {EOT}{EOT}x",
    "empty": "",
}


@pytest.fixture(scope="module")
def tok(gpt2) -> Tokenizer:
    return Tokenizer.from_files(gpt2 / "encoder.json", gpt2 / "vocab.bpe", [EOT])


# ---------------------------------------------------------------------------
# loading GPT-2's files as they are


def test_gpt2_files_keep_gpt2s_ids(tok):
    assert len(tok.vocab) == 50257 and len(tok.merges) == 50000
    assert tok.ids[b"!"] == 0 and tok.ids[b"\x00"] == 188  # GPT-2 numbers printable bytes first
    assert tok.ids[b" the"] == 262 and tok.ids[EOT.encode()] == 50256
    assert tok.merges[0] == (b" ", b"t")


def test_the_special_token_is_found_in_the_vocab_without_being_asked_for(gpt2):
    loaded = Tokenizer.load(gpt2)  # a folder holding encoder.json and vocab.bpe
    assert loaded.special_tokens == (EOT,)
    assert loaded.encode(f"hi{EOT}") == [5303, 50256]


@pytest.mark.parametrize("name", list(DOCUMENTS))
def test_encoding_equals_tiktoken_on_documents(tok, tiktoken_gpt2, name):
    text = DOCUMENTS[name]
    assert tok.encode(text) == tiktoken_gpt2.encode(text, allowed_special="all")
    assert tok.decode(tok.encode(text)) == text


def test_encoding_equals_tiktoken_on_real_text(tok, tiktoken_gpt2, cs336):
    for text in ((cs336 / "corpus.en").read_text(encoding="utf-8"), stdlib_prose(1_000_000)):
        ids = tok.encode(text)
        assert ids == tiktoken_gpt2.encode(text, allowed_special="all")
        assert tok.decode(ids) == text


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.text(), min_size=1, max_size=4))
def test_encoding_equals_tiktoken_on_any_text(tok, tiktoken_gpt2, pieces):
    text = EOT.join(pieces)
    ids = tok.encode(text)
    assert ids == tiktoken_gpt2.encode(text, allowed_special="all")
    assert tok.decode(ids) == text


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(" \n\t\r\u00a0\u3000ab1.'😀é"), max_size=80))
def test_encoding_equals_tiktoken_on_whitespace_heavy_text(tok, tiktoken_gpt2, text):
    assert tok.encode(text) == tiktoken_gpt2.encode(text, allowed_special="all")


# ---------------------------------------------------------------------------
# built the way CS336's own test harness builds it (tests/test_tokenizer.py + common.py of
# stanford-cs336/assignment1-basics): every line of merges.txt with two space-separated fields
# is a merge, so GPT-2's header '#version: 0.2' arrives as the merge ('#version:', '0.2')


def cs336_harness_tokenizer(vocab_path, merges_path, special_tokens=None) -> Tokenizer:
    """Their get_tokenizer_from_vocab_merges_path, line for line, with our Tokenizer as get_tokenizer."""
    byte_decoder = {c: b for b, c in byte_to_char().items()}
    with open(vocab_path) as vocab_f:
        gpt2_vocab = json.load(vocab_f)
    gpt2_bpe_merges = []
    with open(merges_path) as f:
        for line in f:
            cleaned_line = line.rstrip()
            if cleaned_line and len(cleaned_line.split(" ")) == 2:
                gpt2_bpe_merges.append(tuple(cleaned_line.split(" ")))
    vocab = {index: bytes([byte_decoder[c] for c in item]) for item, index in gpt2_vocab.items()}
    if special_tokens:
        for special_token in special_tokens:
            if special_token.encode("utf-8") not in set(vocab.values()):
                vocab[len(vocab)] = special_token.encode("utf-8")
    merges = [(bytes([byte_decoder[c] for c in m1]), bytes([byte_decoder[c] for c in m2])) for m1, m2 in gpt2_bpe_merges]
    return Tokenizer(vocab, merges, special_tokens)


@pytest.mark.parametrize("special_tokens", [None, [EOT], [EOT, EOT + EOT]], ids=["none", "eot", "overlapping"])
def test_the_cs336_harness_tokenizer_encodes_like_tiktoken(gpt2, tiktoken_gpt2, special_tokens):
    tok = cs336_harness_tokenizer(gpt2 / "encoder.json", gpt2 / "vocab.bpe", special_tokens)
    assert tok.merges[0] == (b"#version:", b"0.2") and tok.inert == {0}  # the header: kept at its rank, never applied
    for text in [*DOCUMENTS.values(), f"a{EOT}{EOT}b{EOT}"]:
        ids = tok.encode(text)
        if special_tokens == [EOT, EOT + EOT]:  # tiktoken has no doubled token: the same text, encoded around it, with its id between
            parts = [tiktoken_gpt2.encode(part, allowed_special={EOT}) for part in text.split(EOT + EOT)]
            assert ids == [i for n, part in enumerate(parts) for i in ([50257] if n else []) + part]
        else:
            assert ids == tiktoken_gpt2.encode(text, allowed_special=set(special_tokens or ()), disallowed_special=())
        assert tok.decode(ids) == text


def test_the_header_merge_shifts_no_other_merges_rank(gpt2, tok):
    harness = cs336_harness_tokenizer(gpt2 / "encoder.json", gpt2 / "vocab.bpe", [EOT])
    assert harness.merges[1:] == tok.merges
    assert all(harness.ranks[pair] == rank + 1 for pair, rank in list(tok.ranks.items())[:2000])
    text = DOCUMENTS["prose"]
    for k in (0, 1, 2, 50, 1000):  # the first k merges of the harness's list are the header and k - 1 of GPT-2's
        assert harness.encode(text, k) == tok.encode(text, max(k - 1, 0))
    assert list(harness.merge_steps(b" the")) == [(r + 1, step) for r, step in tok.merge_steps(b" the")]


# ---------------------------------------------------------------------------
# special tokens


def test_overlapping_special_tokens_longest_first(gpt2):
    double = EOT + EOT
    tok = Tokenizer.from_files(gpt2 / "encoder.json", gpt2 / "vocab.bpe", [EOT, double])
    assert tok.ids[double.encode()] == 50257  # not in GPT-2's vocab: the next id
    ids = tok.encode(f"a{double}b{EOT}c{double}{EOT}")
    assert ids.count(50257) == 2 and ids.count(50256) == 2
    assert tok.decode(ids) == f"a{double}b{EOT}c{double}{EOT}"


def test_without_special_tokens_the_text_is_ordinary(gpt2, tiktoken_gpt2):
    tok = Tokenizer.from_files(gpt2 / "encoder.json", gpt2 / "vocab.bpe")
    assert tok.encode(EOT) == tiktoken_gpt2.encode(EOT, disallowed_special=()) != [50256]


# ---------------------------------------------------------------------------
# decoding


def test_decode_replaces_a_cut_character_and_decode_bytes_keeps_it(tok):
    ids = tok.encode("🙂")
    assert len(ids) > 1  # GPT-2 spends more than one token on it
    assert tok.decode(ids[:1]) == "\ufffd"
    assert tok.decode_bytes(ids[:1]) + tok.decode_bytes(ids[1:]) == "🙂".encode()


# ---------------------------------------------------------------------------
# streaming


@settings(max_examples=60, deadline=None)
@given(
    text=st.lists(st.sampled_from(["a", "b", " ", "\n", "é", "🙂", "1", ".", "'", EOT, "<|", "|>"]), max_size=100).map("".join),
    cuts=st.lists(st.integers(0, 300), max_size=12),
    as_bytes=st.booleans(),
)
def test_encode_iterable_equals_encode_however_the_text_is_cut(tok, text, cuts, as_bytes):
    assert list(streamed(tok, text, cuts, as_bytes)) == tok.encode(text)


def streamed(tok: Tokenizer, text: str, cuts: list[int], as_bytes: bool):
    """encode_iterable over text cut at cuts (as bytes: maybe inside a character), gathering only 8 characters at a time."""
    data = text.encode() if as_bytes else text
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    with mock.patch("bpe.tokenizer.tokenizer.STREAM_CHUNK", 8):  # cut as often as possible, so every boundary is tried
        return list(tok.encode_iterable(data[a:b] for a, b in zip(bounds, bounds[1:])))


def test_encode_iterable_reads_a_file_line_by_line(tok, tmp_path, tiktoken_gpt2):
    text = stdlib_prose(300_000) + "\n\n   trailing  \n"
    path = tmp_path / "prose.txt"
    path.write_text(text, encoding="utf-8")
    with open(path, encoding="utf-8") as f:
        assert list(tok.encode_iterable(f)) == tiktoken_gpt2.encode(text, allowed_special="all")


# ---------------------------------------------------------------------------
# the same tokenizer from the other formats


def test_a_tiktoken_rank_file_of_gpt2_encodes_the_same(tok, tmp_path):
    ranks = {tok.vocab[i]: i for i in range(50256)}
    path = tmp_path / "gpt2.tiktoken"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()))
    loaded = Tokenizer.load(path, special_tokens=[EOT])
    assert loaded.merges == tok.merges  # recovered from the ranks
    for text in DOCUMENTS.values():
        assert loaded.encode(text) == tok.encode(text)


def test_huggingfaces_own_gpt2_tokenizer_json_encodes_the_same(tok, gpt2, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    model = tokenizers.models.BPE.from_file(str(gpt2 / "encoder.json"), str(gpt2 / "vocab.bpe"))
    hf = tokenizers.Tokenizer(model)
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = tokenizers.decoders.ByteLevel()
    hf.add_special_tokens([EOT])
    hf.save(str(tmp_path / "tokenizer.json"))
    loaded = Tokenizer.load(tmp_path / "tokenizer.json")
    assert loaded.special_tokens == (EOT,) and loaded.vocab == tok.vocab
    for text in DOCUMENTS.values():
        assert loaded.encode(text) == tok.encode(text) == hf.encode(text).ids
