"""Pre-tokenizers by name (gpt2, cl100k alias gpt4, o200k) or as any regex, and OpenAI's files recognised by their sha256.

Exactness is checked against tiktoken itself: its own encodings of the shared rank files
(skipped without ../shared/tiktoken), and its own pat_str read from the Encoding object.
"""

from __future__ import annotations

import json

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import PRETOKENIZERS, Tokenizer, pretokenize
from bpe.files import formats, load
from bpe.text.pretokenize import sequence_of_text
from bpe.text.pretokenizers import pretokenizer_of

# text where the pre-tokenizers differ: case, contractions, digits, newlines, slashes, scripts, invalid bytes
ALPHABET = st.sampled_from(list("aZé 'sStTdD\n\r\t0123456789/.,!?-_ßΩжあ中👍\u200d\u0301") + ["'ll", "'VE", "  ", "\n\n", "HTTPServer"])
# subtle: characters unassigned in Python's Unicode tables (category Cn: unassigned, or assigned after its version) are
# left out: tiktoken's Rust regex and Python's `regex` classify them by different Unicode versions (U+3D000 is a letter
# to `regex` 2026.11, not to tiktoken), a difference of the engines, not of the tokenizer.
ASSIGNED = st.characters(exclude_categories=("Cn", "Cs"))
TEXTS = st.lists(ALPHABET, max_size=40).map("".join) | st.text(ASSIGNED, max_size=40)
HOSTILE = ["9.11 vs 9.9", "strawberry", "HTTPServer's camelCase", "        indented", "a/b//c\n\r\n", "I'M YOU'LL", "👩‍💻", ""]


def test_every_name_and_alias_is_a_pattern():
    assert list(PRETOKENIZERS) == ["gpt2", "cl100k", "o200k", "whitespace", "none"]
    assert pretokenizer_of("gpt4").regex == pretokenizer_of("cl100k").regex == PRETOKENIZERS["cl100k"].regex
    assert pretokenizer_of("gpt4").name == "cl100k" and pretokenizer_of(r"\w+").name == "regex"


@pytest.mark.parametrize(
    ("pretokenizer", "says"),
    [
        ("gtp2", "Unknown pre-tokenizer 'gtp2'; choose one of gpt2, cl100k, o200k, whitespace, none, gpt4, or give a regex."),
        ("(", "does not compile"),
        (r"\p{Nope}+", "does not compile"),
        ("a*", "matches the empty string"),
        ("", "Unknown pre-tokenizer ''"),
    ],
)
def test_a_bad_pretokenizer_is_one_sentence(pretokenizer, says):
    with pytest.raises(ValueError, match=regex.escape(says)) as e:
        pretokenizer_of(pretokenizer)
    assert "\n" not in str(e.value) and str(e.value).endswith(".")
    with pytest.raises(ValueError):
        Tokenizer.from_merges([], pretokenizer=pretokenizer)


def test_o200k_is_tiktokens_pat_str(openai_encodings):
    assert pretokenizer_of("o200k").regex == openai_encodings["o200k_base"]._pat_str


def test_cl100k_keeps_the_spelling_that_splits_as_tiktoken_does(openai_encodings, openai_tokenizers):
    # tiktoken's current cl100k pat_str ends '\s++$|\s*[\r\n]|...': under Python's regex, '\n  ' at the end
    # of a text is one match, yet tiktoken's own encoder gives '\n' and '  '; the older spelling agrees with it
    enc, tok = openai_encodings["cl100k_base"], openai_tokenizers["cl100k_base"]
    assert regex.findall(enc._pat_str, "\n  ") == ["\n  "]
    assert [enc.decode([i]) for i in enc.encode("\n  ")] == ["\n", "  "] == [t.decode() for t in tok.pieces("\n  ")]


def test_a_regex_with_groups_gives_whole_matches():
    # js-tiktoken writes cl100k's contractions as a capturing group; findall would return the group alone
    grouped = "('s|'S|'t|'T|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
    text = "It's 2024 and I'd   go\n\nnow"
    assert sequence_of_text(text, grouped) == sequence_of_text(text, "cl100k")
    assert pretokenize(text, pretokenizer=grouped).counts == pretokenize(text, pretokenizer="cl100k").counts


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_openai_files_are_recognised_with_their_pattern_and_special_tokens(name, openai_tokenizers, openai_encodings):
    tok, enc = openai_tokenizers[name], openai_encodings[name]
    assert tok.pretokenizer.name == {"cl100k_base": "cl100k", "o200k_base": "o200k"}[name]
    assert {t: tok.ids[t.encode()] for t in tok.special_tokens} == enc._special_tokens
    text = "hello<|endoftext|> world<|endofprompt|>"
    assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    with pytest.raises(ValueError, match="disallowed special token"):  # by default, as tiktoken: OpenAI's own files
        tok.encode(text)


@settings(max_examples=200, deadline=None)
@given(text=TEXTS | st.sampled_from(HOSTILE))
def test_openai_files_encode_as_tiktoken(text, openai_tokenizers, openai_encodings):
    for name, tok in openai_tokenizers.items():
        assert tok.encode(text) == openai_encodings[name].encode(text, disallowed_special=()), name


def test_any_regex_gives_the_same_tokens_as_its_name(openai_tokenizers, openai_encodings):
    tok = openai_tokenizers["o200k_base"]
    by_regex = Tokenizer(tok.vocab, tok.merges, tok.special_tokens, pretokenizer=openai_encodings["o200k_base"]._pat_str)
    for text in HOSTILE:
        assert by_regex.encode(text) == tok.encode(text)
    assert list(by_regex.encode_iterable(iter(HOSTILE))) == tok.encode("".join(HOSTILE))


def test_an_unknown_rank_file_is_not_taken_for_openais(tiktoken_files, tmp_path):
    lines = (tiktoken_files / "cl100k_base.tiktoken").read_text().splitlines()[:300]
    (tmp_path / "small.tiktoken").write_text("\n".join(lines) + "\n")
    loaded = formats.read(tmp_path / "small.tiktoken")
    assert (loaded.pretokenizer.name, loaded.special_tokens, loaded.encoding) == ("gpt2", (), "")
    told = formats.read(tiktoken_files / "o200k_base.tiktoken", pretokenizer="gpt4")  # a pre-tokenizer given wins
    assert (told.pretokenizer.name, told.encoding) == ("cl100k", "o200k_base")  # gpt4 is cl100k's other name
    # with_pretokenizer (the app's upload: its selectbox always says something) keeps an OpenAI file's own
    assert formats.with_pretokenizer(formats.read(tiktoken_files / "o200k_base.tiktoken"), "gpt2").pretokenizer.spelled == "o200k"
    assert formats.with_pretokenizer(loaded, "cl100k").pretokenizer.spelled == "cl100k"


def test_a_hf_split_by_any_regex_loads_and_saves_back(tmp_path):
    merges = [(b"a", b"b")]
    pat = r"\p{L}+|\p{N}|[^\p{L}\p{N}]+"
    Tokenizer.from_merges(merges, pretokenizer=pat).save(tmp_path)
    document = json.loads((tmp_path / "tokenizer.json").read_text())
    loaded = load.parse_hf(json.dumps(document))
    assert loaded.pretokenizer.spelled == pat and loaded.pretokenizer.name == "regex"
    assert Tokenizer.load(tmp_path).encode("ab12") == [256, ord("1"), ord("2")]
