"""cl100k_base (GPT-4) and o200k_base (GPT-4o) encode exactly as tiktoken itself does.

The rank files are OpenAI's (../shared/tiktoken, skipped without it), loaded by Tokenizer.load
(recognised by their sha256: pattern and special tokens); tiktoken gets the same files through
its cache. The text is drawn where the two regexes are subtle: whitespace at the end of the
text (cl100k's \\s++$), CamelCase and contractions under o200k's case classes (upper, title,
modifier and other letters, marks), combining marks, digits of other scripts; then real documents.
"""

from __future__ import annotations

import inspect
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe.data.corpora import stdlib_prose

NAMES = ("cl100k_base", "o200k_base")
WHITESPACE = [" ", "  ", "\n", "\n\n", "\t", "\r\n", "\r", "\u00a0", "\u3000", "\u2028", " \n ", "\x0b", "\x0c", "\u0085"]
UPPER = list("ABZÀÉΩЖ") + ["ǅ", "ǈ"]  # Lu, and Lt (titlecase digraphs)
LOWER = list("abzàéωжß")
OTHER_LETTERS = ["ʰ", "ˆ", "あ", "中", "ا", "ก"]  # Lm, Lo
MARKS = ["\u0301", "\u0308", "\u0903", "\u20dd", "\u093f"]  # Mn, Mc, Me
CONTRACTIONS = ["'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'ve", "'m", "'M", "'ll", "'LL", "'d", "’s", "'x"]
DIGITS = list("0123456789") + ["٣", "۴", "३", "১", "๓", "１", "²", "½", "Ⅷ", "𝟘", "߃"]  # Nd of other scripts, No, Nl
PUNCTUATION = list(".,;:!?/\\-_()[]{}\"'`~@#$%^&*+=<>|") + ["—", "…", "«", "»", "🙂", "👩\u200d💻"]


def word():
    letters = st.sampled_from(UPPER + LOWER + OTHER_LETTERS + MARKS)
    return st.tuples(st.lists(letters, min_size=1, max_size=8).map("".join), st.sampled_from(["", "", *CONTRACTIONS])).map("".join)


PIECES = st.one_of(
    word(),
    st.sampled_from(WHITESPACE),
    st.lists(st.sampled_from(DIGITS), min_size=1, max_size=7).map("".join),
    st.sampled_from(PUNCTUATION),
    st.sampled_from(["HTTPServer", "camelCase", "XMLHttpRequest", "iPhone", "McDonald's", "DON'T", "O'Neil", "ÉcoleNormale"]),
)
TEXTS = st.lists(PIECES, max_size=25).map("".join)


@pytest.fixture(scope="module")
def pairs(openai_tokenizers, openai_encodings):
    """(ours, tiktoken's) for each encoding."""
    return {name: (openai_tokenizers[name], openai_encodings[name]) for name in NAMES}


def same(pairs, text: str) -> None:
    for name, (tok, enc) in pairs.items():
        ids = tok.encode(text, allowed_special="all")
        assert ids == enc.encode(text, allowed_special="all"), (name, text)
        assert tok.decode(ids) == enc.decode(ids)


@settings(max_examples=250, deadline=None)
@given(text=TEXTS)
def test_cased_words_contractions_marks_and_digits_of_other_scripts(pairs, text):
    same(pairs, text)


@settings(max_examples=150, deadline=None)
@given(text=TEXTS, end=st.lists(st.sampled_from(WHITESPACE), min_size=1, max_size=4).map("".join))
def test_text_that_ends_in_whitespace(pairs, text, end):
    same(pairs, text + end)  # cl100k and o200k end with \s++$: whitespace at the very end is one token's worth
    same(pairs, end + text)


@settings(max_examples=100, deadline=None)
@given(text=st.text(st.characters(exclude_categories=("Cn", "Cs")), max_size=60))
def test_any_assigned_unicode_text(pairs, text):
    # subtle: unassigned code points are classified by each engine's own Unicode version (U+3D000 is a letter to
    # regex 2026.11, not to tiktoken's Rust regex): an engine difference, not the tokenizer's, so they are not drawn
    same(pairs, text)


DOCUMENTS = {
    "prose": stdlib_prose(200_000),
    "code": inspect.getsource(json.decoder) + inspect.getsource(inspect)[:60_000],
    "multilingual": "日本語のテキストと中文文本，한국어 텍스트도 있습니다。 Ελληνικά кириллица हिन्दी में ३४५ अंक العربية ٣٤٥\n" * 50,
    "whitespace": "a" + " " * 1000 + "b\n\n\n\t\t  \r\n" + "\n" * 300 + "   end   \n\n  ",
}


@pytest.mark.parametrize("name", list(DOCUMENTS))
def test_real_documents_and_their_streamed_lines(pairs, name):
    text = DOCUMENTS[name]
    same(pairs, text)
    for tok, enc in pairs.values():
        assert list(tok.encode_iterable(text.splitlines(keepends=True), allowed_special="all")) == enc.encode(text, allowed_special="all")


def test_the_cs336_corpus(pairs, cs336):
    same(pairs, (cs336 / "corpus.en").read_text(encoding="utf-8"))


def test_special_tokens_as_tiktoken_allows_them(pairs):
    for name, (tok, enc) in pairs.items():
        text = "".join(f"x {t} y{t}{t}\n" for t in enc.special_tokens_set)
        assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all"), name
        with pytest.raises(ValueError, match="disallowed special token"):  # OpenAI's files follow tiktoken's default
            tok.encode(text)
