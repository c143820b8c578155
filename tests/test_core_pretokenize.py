"""The compiled pre-tokenizers (bpe/c/pretokenize.c) split and count exactly as pretokenize.py's regexes do.

Each test calls the core itself (core.pretokens, core.PreTokenCounter) and compares with the
Python path (the `regex` module), so a fallback cannot hide a difference: on text over all of
Unicode, where the patterns are subtle (contractions in any case, whitespace runs before a
newline or the end, o200k's case classes and marks, digits in threes), on invalid UTF-8 (each
bad byte a character of its own, as surrogateescape makes it), with special tokens and lines as
documents, and on real corpora. The character tables are checked against `regex` for every
code point. Skipped where the compiled core is not built (bpe/core/ says why); the fallback
is tested too.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe import count_inputs
from bpe.cli import main
from bpe.core import core, missing
from bpe.data.corpora import stdlib_prose
from bpe.text import pretokenize_c, unicode_classes
from bpe.text.pretokenize import sequence_of_text
from bpe.text.pretokenizers import ENCODING, ERRORS, PRETOKENIZERS, find_specials
from bpe.text.tally import Tally

needs_core = pytest.mark.skipif(core is None, reason=f"the compiled core is absent: {missing}")
NAMED = [name for name in PRETOKENIZERS]  # gpt2, cl100k, o200k, whitespace, none
EOT = "<|endoftext|>"

# where the five patterns are subtle
PIECES = [
    "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Ve", "'LL", "'D", "'ſ", "'K", "'", "''", " 's", "'x", "’s",
    " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", "\r", " \n ", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0",
    "\u1680", "\u2000", "\u200a", "\u200b", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\u180e", "\ufeff",
    "a", "Z", "é", "e\u0301", "\u0915\u093f", "日本", "ß", "ǅ", "ǈ", "ʰ", "ˆ", "\u0301", "\u20dd", "\u0903",
    "HTTPServer", "camelCase", "iPhone", "McDonald's", "DON'T", "ÉcoleNormale",
    "1", "42", "2024", "1234567", "²", "½", "٣", "३", "Ⅻ", "①", "𝟙", "１",
    "!", "?!", ".", "...", "-", "—", "“", "”", "€", "😀", "👩‍👩‍👧", "/", "//", "!/", "\x00", "\x7f", "\U0010fffd",
]  # fmt: skip
ALL_CHARACTERS = st.characters(exclude_categories=["Cs"])
# bytes that are not UTF-8, or only nearly: cut sequences, overlong forms, surrogates, past U+10FFFF
BAD_BYTES = [b"\xc3", b"\xa9", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xf8", b"\xff"]


def unicode_text() -> st.SearchStrategy[str]:
    piece = st.one_of(st.sampled_from(PIECES), ALL_CHARACTERS, st.text(ALL_CHARACTERS, max_size=6))
    return st.lists(piece, max_size=40).map("".join)


def any_bytes() -> st.SearchStrategy[bytes]:
    piece = st.one_of(st.sampled_from(PIECES).map(str.encode), st.sampled_from(BAD_BYTES), st.binary(max_size=6))
    return st.lists(piece, max_size=30).map(b"".join)


def python_pretokens(data: bytes, pretokenizer: str) -> list[bytes]:
    return [token.encode(ENCODING, ERRORS) for token in sequence_of_text(data.decode(ENCODING, ERRORS), pretokenizer)]


def python_counts(documents: list[bytes], pretokenizer: str, special_tokens=(), split_lines=False) -> dict[bytes, int]:
    tally = Tally(pretokenizer, split_lines, compiled=False)
    tally.add(documents, special_tokens)
    return tally.counts()


def core_counts(documents: list[bytes], pretokenizer: str, special_tokens=(), split_lines=False) -> dict[bytes, int]:
    counter = pretokenize_c.counter(pretokenizer)
    for document in documents:
        counter.add(document, tuple(t.encode() for t in special_tokens), split_lines)
    return counter.counts()


# ---------------------------------------------------------------------------
# the character tables are regex's


@needs_core
def test_the_compiled_classes_are_regexs_for_every_code_point():
    assert regex.__version__ == core.REGEX_VERSION, "python -m bpe.text.unicode_classes remakes the tables for this regex"
    assert core.class_table() == bytes(unicode_classes.classes())


def test_the_committed_tables_are_what_regex_gives():
    assert unicode_classes.HEADER.read_text(encoding="utf-8") == unicode_classes.header(), "run python -m bpe.text.unicode_classes"


def test_case_insensitive_contraction_letters_include_the_long_s():
    assert unicode_classes.folded_letters()[0x17F] == "s"  # regex's (?i)s matches ſ; (?i)k's Kelvin sign is no contraction letter


# ---------------------------------------------------------------------------
# pre-tokens in order


@needs_core
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=unicode_text(), pretokenizer=st.sampled_from(NAMED))
def test_pretokens_equal_the_regexs_on_text_over_all_of_unicode(text, pretokenizer):
    data = text.encode()
    assert pretokenize_c.pretokens(data, pretokenizer) == python_pretokens(data, pretokenizer)


@needs_core
@settings(max_examples=300, deadline=None)
@given(data=any_bytes(), pretokenizer=st.sampled_from(NAMED))
def test_invalid_utf8_splits_as_the_python_path_splits_its_surrogates(data, pretokenizer):
    assert pretokenize_c.pretokens(data, pretokenizer) == python_pretokens(data, pretokenizer)


# ASCII where the scanner decides 64 bytes at a time (pretokenize.c's block_starts): every rule of the three regexes,
# runs of any length across the edges of its blocks, and a few bytes of 0x80 and above that end what a block decides
ASCII_PIECES = [
    "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'RE", "'Ll", "'", "''", " 's", "'x", "'l", "'r", "'v", "'sa", "it's's",
    " ", "  ", "\t", "\n", "\r\n", "\r", " \n ", "\x0b", "\x0c", "\x1c", "a", "Z", "word", " word", "Word", "HTTPServer",
    "camelCase", "iPhone", "DON'T", "don't", "I'M", "1", "42", "2024", "!", "?!", ".", "-", "/", "//", "!/", "/\n", "\n/",
    "\x00", "\x7f", " \"", "(", "_", "é", "\xa0", "٣",
]  # fmt: skip
RUNS = st.sampled_from([" ", "\n", "\t", "x", "X", "1", "!", "/", "'", " \n", "\r\n", "ab"])


def ascii_text() -> st.SearchStrategy[str]:
    run = st.builds(str.__mul__, RUNS, st.integers(1, 90))
    piece = st.one_of(st.sampled_from(ASCII_PIECES), st.sampled_from(ASCII_PIECES), run)
    return st.lists(piece, min_size=20, max_size=120).map("".join)


@needs_core
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=ascii_text(), pretokenizer=st.sampled_from(["gpt2", "cl100k", "o200k"]))
def test_pretokens_of_ascii_decided_64_bytes_at_a_time_equal_the_regexs(text, pretokenizer):
    data = text.encode()
    assert pretokenize_c.pretokens(data, pretokenizer) == python_pretokens(data, pretokenizer)


@needs_core
@pytest.mark.parametrize("pretokenizer", ["gpt2", "cl100k", "o200k"])
def test_each_rule_across_the_edge_of_a_block_at_every_offset(pretokenizer):
    # where a block ends, a whitespace run's last newline, a contraction's letters or a word's case may be past it
    for piece in ["  \n  x", "\n\n  !", "  x", " \t\n", "!\n\n/x", "a//\n/.", "x's", "it's's", "'ll", "DON'T", "aB'Re",
                  "1234567", "x.'s", "é'x", "!\n/\n/\nx", "\r\n\r\n", "word\u00e9", "  \u3000x", "'\u017f"]:  # fmt: skip
        texts = ["w " * 20 + "y" * k + piece + " and more" * 12 for k in range(90)]
        data = "".join(texts).encode()
        assert pretokenize_c.pretokens(data, pretokenizer) == python_pretokens(data, pretokenizer), piece
        for text in texts:
            assert pretokenize_c.pretokens(text.encode(), pretokenizer) == python_pretokens(text.encode(), pretokenizer), (piece, text)


@needs_core
@pytest.mark.parametrize("pretokenizer", NAMED)
@pytest.mark.parametrize(
    "text",
    ["", " ", "a" * 5000, " " * 5000, "\n" * 3000 + "x", "1" * 4000, "!" * 4000 + "\n\n", "ab" * 3000 + "'S", "\u0301" * 3000],
)
def test_empty_text_and_long_runs(pretokenizer, text):
    data = text.encode()
    assert pretokenize_c.pretokens(data, pretokenizer) == python_pretokens(data, pretokenizer)


SPECIALS = ["<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|", "<", "<<", "|>", "ab", "aa", "a", "aaa", "é", "éa"]


def python_pretokens_with_specials(data: bytes, pretokenizer: str, specials: list[str]) -> list[bytes]:
    text, out, pos = data.decode(ENCODING, ERRORS), [], 0
    for at, token in find_specials(text, specials):
        out += python_pretokens(text[pos:at].encode(ENCODING, ERRORS), pretokenizer) + [token.encode()]
        pos = at + len(token)
    return out + python_pretokens(text[pos:].encode(ENCODING, ERRORS), pretokenizer)


@needs_core
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    specials=st.lists(st.sampled_from(SPECIALS), min_size=1, max_size=6, unique=True),
    pieces=st.lists(
        st.one_of(
            st.sampled_from([*SPECIALS, "<|endoftext", "<|fim_", " ", "x", "|"]),
            st.builds(str.__mul__, st.sampled_from(["<", "a", "<|"]), st.integers(1, 60)),
        ),
        max_size=40,
    ),
    pretokenizer=st.sampled_from(["gpt2", "cl100k"]),
)
def test_special_tokens_with_one_first_byte_are_found_together_as_the_python_path_finds_them(specials, pieces, pretokenizer):
    # tokens that share a first byte are searched for in one pass (the longest of them at one place); runs of that byte
    # past the budget of misses hand over to memmem, token by token
    data = "".join(pieces).encode()
    expected = python_pretokens_with_specials(data, pretokenizer, specials)
    assert pretokenize_c.pretokens(data, pretokenizer, [s.encode() for s in specials]) == expected


@needs_core
@pytest.mark.parametrize("run", [5, 40, 300])
def test_the_longest_special_token_at_one_place_wins_after_a_run_of_their_first_byte(run):
    # past the budget of misses memmem finds each token of the group: the two here at one place, the longer kept
    data = ("<" * run + "<|endoftext|><|x" + "<" * run + "<|").encode()
    for specials in (["<|", "<|endoftext|>"], ["<|endoftext|>", "<|", "<|x"]):
        assert pretokenize_c.pretokens(data, "gpt2", [s.encode() for s in specials]) == python_pretokens_with_specials(
            data, "gpt2", specials
        )


@needs_core
def test_special_tokens_are_kept_whole_in_order():
    assert pretokenize_c.pretokens(b"Hello world<|e|>!", "o200k", [b"<|e|>"]) == [b"Hello", b" world", b"<|e|>", b"!"]


def test_the_pattern_can_be_named_or_given_as_its_regex():
    if core is None:
        assert pretokenize_c.kind("gpt2") is None
        return
    assert pretokenize_c.kind("gpt4") == pretokenize_c.kind("cl100k") == pretokenize_c.kind(PRETOKENIZERS["cl100k"].regex) is not None
    assert pretokenize_c.kind(r"\w+") is None
    assert pretokenize_c.unavailable(r"\w+") == "a regex of your own runs in Python"


# ---------------------------------------------------------------------------
# counting, as Tally counts


@needs_core
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(st.one_of(unicode_text(), any_bytes().map(lambda b: b.decode(ENCODING, ERRORS))), min_size=1, max_size=4),
    specials=st.lists(st.sampled_from([EOT, "<|s|>", "<|", "|>", "ab", "aa", "a", " ", "\n", "é"]), max_size=3, unique=True),
    split_lines=st.booleans(),
    pretokenizer=st.sampled_from(NAMED),
)
def test_counts_cut_at_special_tokens_and_lines_as_tally(parts, specials, split_lines, pretokenizer):
    # specials at the edges, doubled, overlapping one another ('<|' in '<|s|>'), overlapping themselves ('aa')
    joiners = specials or [""]
    text = joiners[0] + "".join(p + joiners[i % len(joiners)] for i, p in enumerate(parts)) + joiners[-1]
    documents = [text.encode(ENCODING, ERRORS), parts[0].encode(ENCODING, ERRORS)]
    assert core_counts(documents, pretokenizer, specials, split_lines) == python_counts(documents, pretokenizer, specials, split_lines)


@needs_core
@pytest.mark.parametrize("pretokenizer", ["none", "gpt2"])
def test_keys_of_every_length_counted_where_the_text_ends_and_before_it(pretokenizer):
    # the counter keeps keys of up to 16 bytes in its slots, read as two words (masked, or copied near the text's end),
    # longer ones apart: NUL bytes, lengths about 8 and 16, keys that are prefixes of one another, at and before the end
    documents = []
    for n in range(1, 41):
        for key in (b"\x00" * n, b"!" * (n - 1) + b"\x00", b"\xff" * n, bytes(range(200, 200 + n))):
            documents += [key, key + b"<|s|>" + b"x" * 20, b"<|s|>" + key]
    assert core_counts(documents, pretokenizer, ["<|s|>"]) == python_counts(documents, pretokenizer, ["<|s|>"])


@needs_core
def test_many_unique_pre_tokens_grow_the_table_and_the_arena():
    words = [f" w{i}" if i % 3 else f" {'long' * (i % 9)}word{i}" for i in range(60_000)]
    text = "".join(words * 2).encode()
    counts = core_counts([text], "gpt2")
    assert counts == python_counts([text], "gpt2") and len(counts) > 60_000


@pytest.fixture(scope="module")
def prose() -> bytes:
    return stdlib_prose(400_000).encode("utf-8", "surrogateescape")


@needs_core
@pytest.mark.parametrize("pretokenizer", NAMED)
def test_real_prose_counts_the_same(prose, pretokenizer):
    assert core_counts([prose], pretokenizer, [EOT]) == python_counts([prose], pretokenizer, [EOT])


@needs_core
def test_the_cs336_corpus_counts_the_same(cs336):
    data = (cs336 / "corpus.en").read_bytes()
    for pattern in ("gpt2", "cl100k", "o200k"):
        assert core_counts([data], pattern, [EOT]) == python_counts([data], pattern, [EOT])


# ---------------------------------------------------------------------------
# Tally, count_inputs and the CLI count with it


@needs_core
@settings(max_examples=100, deadline=None)
@given(data=any_bytes(), text=unicode_text(), pretokenizer=st.sampled_from(NAMED))
def test_tally_counts_any_bytes_with_the_core(data, text, pretokenizer):
    tally = Tally(pretokenizer)
    tally.add([data, text, "caf\udce9"], [EOT])  # a str holding a surrogate: the Python path's
    python = Tally(pretokenizer, compiled=False)
    python.add([data, text, "caf\udce9"], [EOT])
    assert tally.counts() == python.counts()
    assert tally.compiled_bytes == len(data) + len(text.encode()) and tally.python_why == {"text holding a surrogate"}


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory, prose) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_bytes((prose + b"\xff\xfe invalid " + EOT.encode()) * 6)  # past 2 MB: shards of 1 MB for two workers
    return path


@needs_core
@pytest.mark.parametrize("pretokenizer", ["cl100k", "o200k"])
def test_counting_in_workers_equals_the_python_path(corpus_file, pretokenizer, monkeypatch):
    monkeypatch.setattr("bpe.data.count.PARALLEL_MIN_BYTES", 0)  # a pool even for this small corpus
    monkeypatch.setattr("bpe.data.count.COMPILED_PARALLEL_FACTOR", 1)
    fast = count_inputs(corpus_file, pretokenizer=pretokenizer, special_tokens=[EOT], workers=2, chunk_bytes=1 << 17)
    slow = count_inputs(corpus_file, pretokenizer=pretokenizer, special_tokens=[EOT], workers=1, compiled=False)
    assert fast.workers == 2 and fast.counts == slow.counts
    assert fast.counted_by() == "counted by bpe._core (compiled)"


def switch_the_core_off(monkeypatch) -> None:
    """BPE_CORE=0 for this process as tests/test_compiled.py sets it, and for the workers it asks for."""
    monkeypatch.setenv("BPE_CORE", "0")
    monkeypatch.setattr("bpe.core.core", None)
    monkeypatch.setattr("bpe.core.missing", "BPE_CORE=0 is set")


@needs_core
def test_workers_count_with_the_core_setting_of_the_call_that_asks(corpus_file, monkeypatch):
    # subtle: the workers come from one forkserver per process, which has the environment of the call that started it;
    # one call with the core off and one with it on: one of them differs from the forkserver's, whoever started it
    # (in the whole suite this test's twin above failed after a test of tests/test_compiled.py started it with BPE_CORE=0)
    monkeypatch.setattr("bpe.data.count.PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr("bpe.data.count.COMPILED_PARALLEL_FACTOR", 1)
    said = []
    for core_off in (True, False):
        with monkeypatch.context() as m:
            if core_off:
                switch_the_core_off(m)
            counted = count_inputs(corpus_file, pretokenizer="cl100k", special_tokens=[EOT], workers=2, chunk_bytes=1 << 17)
        assert counted.workers == 2
        said.append(counted.counted_by())
    assert said == ["counted in Python (the compiled core is absent (BPE_CORE=0 is set))", "counted by bpe._core (compiled)"]


@needs_core
def test_bpe_count_says_the_core_counted(corpus_file, tmp_path, capsys):
    base = ["count", str(corpus_file), "--special-token", EOT, "--workers", "1", "--pretokenizer", "gpt4"]
    assert main([*base, "--out", str(tmp_path / "a.parquet")]) == 0
    assert "pre-tokens counted by bpe._core (compiled)" in capsys.readouterr().out
    assert main([*base, "--out", str(tmp_path / "b.parquet"), "--no-compiled"]) == 0
    assert "pre-tokens counted in Python (the Python path was asked for)" in capsys.readouterr().out
    assert pq.read_table(tmp_path / "a.parquet").equals(pq.read_table(tmp_path / "b.parquet"))


# ---------------------------------------------------------------------------
# when it is not used


@needs_core
def test_another_regex_version_is_refused_in_one_reason(monkeypatch):
    monkeypatch.setattr(pretokenize_c.regex, "__version__", "2020.1.1")
    why = pretokenize_c.unavailable("o200k")
    assert why.startswith("regex 2020.1.1 is installed") and "python -m bpe.text.unicode_classes" in why


def test_without_the_core_it_says_why(monkeypatch):
    monkeypatch.setattr("bpe.core.core", None)
    assert pretokenize_c.unavailable("gpt2").startswith("the compiled core is absent")
    assert pretokenize_c.kind("gpt2") is None
