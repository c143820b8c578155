"""A pre-tokenizer is one registered value: a new one trains, encodes, saves, loads and counts without touching another file.

The toy below is registered here and nowhere else (text/pretokenizers.py's `register`): every layer -- training,
the Tokenizer, the formats' writers and readers, counting files -- reads what it needs from the value.
"""

from __future__ import annotations

import json

import pytest

from bpe import PRETOKENIZERS, PreTokenizer, Tokenizer, count_inputs, pretokenize, register, train_bpe_text
from bpe.text.pretokenizers import pretokenizer_of, unregister

TEXT = "abc123 de45 abc12 abc9,de6 abc123!! de45\n" * 20


@pytest.fixture()
def toy():
    """Letters together, each digit apart, the rest together: a pre-tokenizer no other file knows."""
    made = register(PreTokenizer("digits-apart", r"\p{L}+|\p{N}|[^\p{L}\p{N}]+", "Letters together, each digit on its own."))
    try:
        yield made
    finally:
        unregister("digits-apart")
    assert "digits-apart" not in PRETOKENIZERS


def test_a_registered_pretokenizer_is_known_by_its_name(toy):
    assert PRETOKENIZERS["digits-apart"] is toy is pretokenizer_of("digits-apart")
    assert toy.split("ab12,c") == ["ab", "1", "2", ",", "c"]
    assert pretokenizer_of(toy.regex) is toy  # its regex, given as a regex, is it: it keeps the text between matches


def test_a_toy_pretokenizer_trains_encodes_saves_loads_and_counts(toy, tmp_path):
    # train: no merge crosses a digit, since each digit is a pre-token of its own
    vocab, merges = train_bpe_text(TEXT, 300, [], pretokenizer="digits-apart")
    assert merges and not any(any(c in b"0123456789" for c in a + b) and len(a + b) > 1 for a, b in merges)
    assert (b"ab", b"c") in merges or (b"a", b"bc") in merges
    # encode: the same ids as merging each of the toy's pre-tokens on its own, and back to the text
    tok = Tokenizer.from_merges(merges, pretokenizer="digits-apart")
    ids = tok.encode(TEXT)
    assert ids == [i for piece in toy.split(TEXT) for i in tok.encode(piece)]
    assert tok.decode(ids) == TEXT and [tok.vocab[i] for i in tok.encode("abc123")] == [b"abc", b"1", b"2", b"3"]
    # save and load: this tool's file records its name, HuggingFace's its form (a Split that keeps the gaps)
    tok.save(tmp_path)
    assert json.loads((tmp_path / "tokenizer.bpe.json").read_text())["pattern"] == "digits-apart"
    assert json.loads((tmp_path / "tokenizer.json").read_text())["pre_tokenizer"] == toy.hf()
    for name in ("tokenizer.bpe.json", "tokenizer.json"):
        back = Tokenizer.load(tmp_path / name)
        assert back.pretokenizer == toy and back.encode(TEXT) == ids
    # count: files are read and cut with it, and give the counts pretokenize gives in memory
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT)
    counted = count_inputs([corpus], pretokenizer="digits-apart", workers=1)
    assert counted.counts == pretokenize(TEXT, pretokenizer=toy).counts
    assert counted.counts[b"1"] == TEXT.count("1")


def test_the_named_pretokenizers_say_what_the_code_needs_to_know():
    gpt2, whitespace, none = PRETOKENIZERS["gpt2"], PRETOKENIZERS["whitespace"], PRETOKENIZERS["none"]
    assert gpt2.lossless and gpt2.cut_at_space and gpt2.scanner == "gpt2" and gpt2.hf()["type"] == "ByteLevel"
    assert not whitespace.lossless and whitespace.split("a  b") == ["a", "b"]
    assert none.regex is None and none.split("a b") == ["a b"] and none.split("") == []
    assert pretokenizer_of("gpt4") is PRETOKENIZERS["cl100k"]
    mine = pretokenizer_of(r"\S+")  # whitespace's regex, as a regex of the user's: the gaps are kept
    assert mine.name == "regex" and mine.spelled == r"\S+" and mine.split("a  b") == ["a", "  ", "b"]


@pytest.mark.parametrize(
    ("made", "says"),
    [
        (PreTokenizer("regex", r"\w+"), "a plain word other than 'regex'"),
        (PreTokenizer("two words", r"\w+"), "a plain word"),
        (PreTokenizer("empty", "a*"), "matches the empty string"),
        (PreTokenizer("broken", "("), "does not compile"),
    ],
)
def test_a_bad_registration_is_one_sentence(made, says):
    with pytest.raises(ValueError, match=says):
        register(made)
    assert made.name not in PRETOKENIZERS


def test_a_name_taken_is_refused_and_the_same_value_again_is_no_change():
    with pytest.raises(ValueError, match="'gpt2' is registered already"):
        register(PreTokenizer("gpt2", r"\w+"))
    with pytest.raises(ValueError, match="'gpt4' is registered already"):
        register(PreTokenizer("mine", r"\w+", aliases=("gpt4",)))
    assert "mine" not in PRETOKENIZERS and register(PRETOKENIZERS["gpt2"]) is PRETOKENIZERS["gpt2"]
