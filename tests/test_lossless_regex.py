"""A regex of the user's loses no text (issue 26.1): what it leaves between its matches are pre-tokens of their own.

tiktoken drops that text; HuggingFace's Split(pattern, behavior='isolated') keeps it, and so do we,
in training and in encoding, so that decode_bytes(encode(x)) == x for every pre-tokenizer but the
textbook 'whitespace' one (which drops whitespace by name). The fuzz test over any compiling regex is
in test_hostile_files.py.
"""

from __future__ import annotations

import pytest

from bpe import Tokenizer, pretokenize, train_bpe_text
from bpe.text.pretokenize import sequence_of_text
from bpe.text.pretokenizers import pretokenizer_of
from bpe.text.tally import Tally

SENTENCE = "the cat sat on the mat"


def test_a_word_regex_keeps_the_spaces_between_words_as_pre_tokens():
    assert sequence_of_text("the cat.", r"\w+") == ["the", " ", "cat", "."]


def test_encoding_with_a_word_regex_decodes_to_the_sentence():
    tok = Tokenizer.from_merges([(b"t", b"h"), (b"th", b"e")], pretokenizer=r"\w+")
    assert tok.decode(tok.encode(SENTENCE)) == SENTENCE  # was 'thecatsatonthemat'


def test_a_regex_that_matches_nothing_in_the_text_keeps_the_text_whole():
    tok = Tokenizer.from_merges([], pretokenizer="gpt2[ ]")  # was [] for this sentence
    assert tok.decode(tok.encode(SENTENCE)) == SENTENCE


def test_a_name_with_spaces_around_it_is_refused_as_a_typo():
    with pytest.raises(ValueError, match=r"^Unknown pre-tokenizer 'gpt2 ': the name 'gpt2' has spaces around it\.$"):
        pretokenizer_of("gpt2 ")


def test_training_counts_every_byte_the_regex_leaves():
    counts = pretokenize("the  cat, the cat", pretokenizer=r"\w+").counts
    assert counts == {b"the": 2, b"cat": 2, b"  ": 1, b", ": 1, b" ": 1}
    assert sum(len(token) * n for token, n in counts.items()) == len("the  cat, the cat")


def test_training_learns_merges_of_the_text_between_matches():
    _, merges = train_bpe_text("a!!b!!c!!d!!", 257, [], pretokenizer=r"[a-z]")
    assert merges == [(b"!", b"!")]


def test_empty_matches_make_no_empty_pre_tokens():
    # search('') finds nothing, so check_pattern takes it; on 'xbab' it matches empty before each b
    assert sequence_of_text("xbab", r"a*(?=b)") == ["x", "b", "a", "b"]


def test_the_whitespace_pre_tokenizer_still_drops_whitespace_by_name():
    assert sequence_of_text("low  lower", "whitespace") == ["low", "lower"]
    assert sequence_of_text("low  lower", r"\S+") == ["low", "  ", "lower"]  # the same regex, given as a regex, keeps it


def test_huggingface_encodes_a_saved_custom_regex_tokenizer_with_the_same_ids(tmp_path):
    hf = pytest.importorskip("tokenizers")
    text = "the cat sat on the mat, the cat's hat!!  \n  naïve 日本 " * 10
    vocab, merges = train_bpe_text(text, 300, [], pretokenizer=r"\w+")
    ours = Tokenizer(vocab, merges, pretokenizer=r"\w+")
    ours.save(tmp_path)
    theirs = hf.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for sample in [SENTENCE, "  hello,, world\n", text[:120]]:
        assert theirs.encode(sample).ids == ours.encode(sample)
    assert Tokenizer.load(tmp_path).pretokenizer.spelled == r"\w+"


def test_huggingface_isolated_split_by_the_whitespace_regex_keeps_whitespace_on_load(tmp_path):
    hf = pytest.importorskip("tokenizers")
    tok = Tokenizer.from_merges([(b"l", b"o")], pretokenizer=r"\S+")
    tok.save(tmp_path)
    loaded = Tokenizer.load(tmp_path)
    assert loaded.pretokenizer.spelled == r"\S+"  # not 'whitespace', which would drop what HuggingFace keeps
    theirs = hf.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert theirs.encode("lo  lo").ids == loaded.encode("lo  lo")


@pytest.mark.parametrize("core", ["0", "1"])
def test_the_whitespace_regex_keeps_whitespace_on_every_path(core, monkeypatch):
    """`\\S+` given as a regex is not the name 'whitespace': the compiled core must not take one for the other."""
    monkeypatch.setenv("BPE_CORE", core)
    tok = Tokenizer.from_merges([(b"l", b"o")], pretokenizer=r"\S+")
    assert tok.encode("lo  lo") == [256, 32, 32, 256]
    assert Tokenizer.from_merges([(b"l", b"o")], pretokenizer="whitespace").encode("lo  lo") == [256, 256]
    tally = Tally(r"\S+")
    tally.add(["lo  lo"])
    assert tally.counts() == {b"lo": 2, b"  ": 1}
