"""Pre-tokenization: the fast paths give what the plain regex gives, and bad input is refused.

Files are cut into chunks and counted in worker processes; whatever the chunk
size or the number of workers, the counts must equal counting the whole text
in memory.
"""

from __future__ import annotations

import importlib
import random
import sys
import tempfile
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest
import regex
from conftest import EVERY_ALGORITHM
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe import PRETOKENIZERS, pretokenize, pretokenize_file, train, train_bpe, train_bpe_text
from bpe.data.inputs import chunk_boundaries
from bpe.text.pretokenize import count_text
from bpe.text.pretokenizers import split_on_special

# subtle: `bpe.text.pretokenize` is also the name of a function that bpe/__init__ re-exports,
# so attribute access finds the function; the module has to be looked up by name.
pretokenize_module = importlib.import_module("bpe.text.pretokenize")
count_module = importlib.import_module("bpe.data.count")

ROOT = Path(__file__).resolve().parents[1]
SPECIAL = "<|s|>"

# ---------------------------------------------------------------------------
# the GPT-2 fast path (split at safe spaces, count unique pieces) equals the plain regex

WHITESPACE_AND_FRIENDS = [
    " ", "  ", "   ", "\t", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0",
    "\u1680", "\u2000", "\u200a", "\u200b", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\u180e", "\ufeff",
]  # fmt: skip
WORDS_AND_MARKS = ["'s", "'", "'ll", "'ve", " 's", "'S", "1", "42", "2024", "a", "é", "ab", "日本", "!", "?!", "\udce9"]


def texts(characters: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    fragments = st.sampled_from(WHITESPACE_AND_FRIENDS + WORDS_AND_MARKS)
    return st.lists(st.one_of(fragments, characters, st.text(characters, max_size=5)), max_size=40).map("".join)


gpt2_text = texts(st.characters())
# subtle: text that came from bytes holds only the surrogates U+DC80-U+DCFF (surrogateescape);
# any other lone surrogate cannot be written as bytes at all
valid_text = texts(st.characters(exclude_categories=["Cs"]))


@settings(max_examples=400, deadline=None)
@given(text=gpt2_text)
def test_gpt2_fast_path_equals_plain_regex(text):
    assert count_text(text, "gpt2") == Counter(regex.findall(PRETOKENIZERS["gpt2"].regex, text))


@pytest.mark.parametrize("pretokenizer", list(PRETOKENIZERS))
@settings(max_examples=60, deadline=None)
@given(text=valid_text, special_tokens=st.sampled_from([[], [SPECIAL]]))
def test_counts_agree_with_the_kept_sequence(pretokenizer, text, special_tokens):
    corpus = pretokenize(text, pretokenizer=pretokenizer, special_tokens=special_tokens, keep_sequence=True)
    assert Counter(corpus.sequence) == corpus.counts


def test_whitespace_pattern_drops_whitespace():
    assert pretokenize("low  lower\n\tlow", pretokenizer="whitespace").counts == {b"low": 2, b"lower": 1}


def test_none_pattern_keeps_each_document_whole():
    corpus = pretokenize("a b<|s|>c d<|s|>a b", pretokenizer="none", special_tokens=[SPECIAL])
    assert corpus.counts == {b"a b": 2, b"c d": 1}


# ---------------------------------------------------------------------------
# special tokens


def test_special_tokens_split_longest_first():
    special_tokens = ["<|a|>", "<|a|><|a|>"]
    # shortest first would leave an empty piece between the two halves
    assert split_on_special("x<|a|><|a|>y<|a|>z", special_tokens) == ["x", "y", "z"]
    assert split_on_special("x<|a|><|a|>y<|a|>z", special_tokens[::-1]) == ["x", "y", "z"]


@pytest.mark.parametrize("special_tokens", [["<|a|>", "<|a|>!"], ["<|a|>!", "<|a|>"]])
def test_longer_special_token_wins_whatever_the_listed_order(special_tokens):
    corpus = pretokenize("<|a|>!x<|a|>y", pretokenizer="none", special_tokens=special_tokens)
    assert corpus.counts == {b"x": 1, b"y": 1}


@pytest.mark.parametrize(
    "special, text, expected",
    [
        ("[x]+", "xx[x]+y", {b"xx": 1, b"y": 1}),
        ("a.b", "axb a.b!", {b"axb ": 1, b"!": 1}),
        ("a|b", "ab|a|bc", {b"ab|": 1, b"c": 1}),
        ("(", "f(x)", {b"f": 1, b"x)": 1}),
        ("\\d", "1\\d2", {b"1": 1, b"2": 1}),
    ],
)
def test_special_tokens_are_matched_literally(special, text, expected):
    assert pretokenize(text, pretokenizer="none", special_tokens=[special]).counts == expected


@EVERY_ALGORITHM
def test_special_token_with_metacharacters_stays_out_of_merges(algorithm):
    vocab, merges = train_bpe_text("a.b a.b axb axb", 256 + 10 + 1, ["a.b"], algorithm=algorithm)
    assert b"axb" in [left + right for left, right in merges]  # 'axb' is text, not the special token
    assert not any(b"a.b" in token for token in vocab.values() if token != b"a.b")


# ---------------------------------------------------------------------------
# files: chunked and parallel counting equals counting in memory

WORDS = ["the", "cat", "é", "naïve", "日本語", "don't", "it's", "42", "1999", "!!", "...", "  ", "\t", "x\xa0y", "\u2028"]


def sample_file_bytes(size: int, with_special_tokens: bool) -> bytes:
    """Lines of words, multi-byte characters and a few invalid bytes, about `size` bytes long."""
    rng = random.Random(size)
    lines, total = [], 0
    while total < size:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))).encode()
        if with_special_tokens and rng.random() < 0.1:
            line += SPECIAL.encode()
        if rng.random() < 0.05:
            line += bytes([rng.randint(0x80, 0xFF)])  # invalid UTF-8 on its own
        lines.append(line)
        total += len(line) + 1
    return b"\n".join(lines)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pretokenize")


FILE_CASES = [(p, s) for p in ("gpt2", "gpt4", "whitespace") for s in ([SPECIAL], [])]
FILE_IDS = [f"{p}-{'special' if s else 'newlines'}" for p, s in FILE_CASES]


@pytest.mark.parametrize("pretokenizer, special_tokens", FILE_CASES, ids=FILE_IDS)
def test_parallel_counting_equals_counting_in_memory(pretokenizer, special_tokens, scratch, monkeypatch):
    # subtle: with more than one worker a chunk is at least 1 MiB, so the file must be bigger than that
    data = sample_file_bytes((1 << 20) + 50_000, with_special_tokens=bool(special_tokens))
    path = scratch / f"big-{pretokenizer}-{len(special_tokens)}.txt"
    path.write_bytes(data)
    monkeypatch.setattr(count_module, "PARALLEL_MIN_BYTES", 0)
    calls = []
    real_pool = count_module._count_in_pool

    def spy(jobs, options, workers, report):
        tallies, used = real_pool(jobs, options, workers, report)
        calls.append((len(jobs), used))
        return tallies, used

    monkeypatch.setattr(count_module, "_count_in_pool", spy)
    parallel = pretokenize_file(path, pretokenizer=pretokenizer, special_tokens=special_tokens, workers=2, chunk_bytes=4096)
    assert calls and calls[0][0] >= 2 and calls[0][1] == 2  # the pool really ran, with two workers
    assert parallel.counts == pretokenize(data, pretokenizer=pretokenizer, special_tokens=special_tokens).counts
    assert parallel.n_bytes == len(data)


@pytest.mark.parametrize("pretokenizer, special_tokens", FILE_CASES, ids=FILE_IDS)
def test_small_chunks_count_like_one_process(pretokenizer, special_tokens, scratch, monkeypatch):
    data = sample_file_bytes(60_000, with_special_tokens=bool(special_tokens))
    path = scratch / f"small-{pretokenizer}-{len(special_tokens)}.txt"
    path.write_bytes(data)
    monkeypatch.setattr(count_module, "PARALLEL_MIN_BYTES", 0)
    assert len(chunk_boundaries(path, special_tokens, pretokenizer, 4096)) > 10
    chunked = pretokenize_file(path, pretokenizer=pretokenizer, special_tokens=special_tokens, workers=1, chunk_bytes=4096)
    whole = pretokenize_file(path, pretokenizer=pretokenizer, special_tokens=special_tokens, workers=1)
    assert chunked.counts == whole.counts == pretokenize(data, pretokenizer=pretokenizer, special_tokens=special_tokens).counts


FRAGMENTS = [b"a", b"b c", b"don't", b" ", b"  ", b"\n", b"\r\n", b"\t", b"42", b"!", "é".encode(), "日".encode(),
             b"\xff", b"\xc3", b"\xe2\x82", SPECIAL.encode(), "<|é|>".encode()]  # fmt: skip
file_bytes = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map(b"".join)
SPECIAL_CHOICES = [[], [SPECIAL], [SPECIAL, "<|é|>"]]


@contextmanager
def temp_file(folder: Path, data: bytes):
    """A file holding data, removed afterwards (hypothesis runs many examples in one test)."""
    with tempfile.NamedTemporaryFile(dir=folder, suffix=".txt", delete=False) as f:
        f.write(data)
    try:
        yield Path(f.name)
    finally:
        Path(f.name).unlink()


# files of any bytes, under any pre-tokenizer and special tokens, cut into chunks of any size
def ANY_CHUNKING(test):  # noqa: N802  (a decorator named like the EVERY_ALGORITHM marks)
    settled = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    return settled(
        given(
            data=file_bytes,
            pretokenizer=st.sampled_from(list(PRETOKENIZERS)),
            special_tokens=st.sampled_from(SPECIAL_CHOICES),
            chunk_bytes=st.integers(1, 32),
        )(test)
    )


@ANY_CHUNKING
def test_any_chunk_size_counts_like_the_whole_text(scratch, data, pretokenizer, special_tokens, chunk_bytes):
    with temp_file(scratch, data) as path:
        chunked = pretokenize_file(path, pretokenizer=pretokenizer, special_tokens=special_tokens, workers=1, chunk_bytes=chunk_bytes)
    assert chunked.counts == pretokenize(data, pretokenizer=pretokenizer, special_tokens=special_tokens).counts


@ANY_CHUNKING
def test_chunk_boundaries_are_at_special_tokens_or_after_newlines(scratch, data, pretokenizer, special_tokens, chunk_bytes):
    with temp_file(scratch, data) as path:
        bounds = chunk_boundaries(path, special_tokens, pretokenizer, chunk_bytes)
    assert bounds[0] == 0 and bounds[-1] == len(data)
    inner = bounds[1:-1]
    assert all(a < b for a, b in zip(bounds[:-1], inner + [len(data) + 1]))
    for cut in inner:
        at_special = any(data.startswith(s.encode(), cut) for s in special_tokens)
        after_newline = data[cut - 1 : cut] == b"\n"
        assert at_special or after_newline, (cut, data)


@pytest.mark.parametrize(
    "data, special_tokens, pretokenizer, chunk_bytes",
    [
        (b"xaaay", ["aa"], "none", 2),  # a special token that overlaps itself
        (b"x<|ab|>y", ["b|>", "<|ab|>"], "none", 3),  # a special token inside another one
        (b"x<|a\nb|>y", ["<|a\nb|>"], "whitespace", 2),  # a newline inside a special token
    ],
)
def test_chunk_size_never_changes_counts_of_overlapping_special_tokens(scratch, data, special_tokens, pretokenizer, chunk_bytes):
    path = scratch / "overlap.txt"
    path.write_bytes(data)
    chunked = pretokenize_file(path, pretokenizer=pretokenizer, special_tokens=special_tokens, workers=1, chunk_bytes=chunk_bytes)
    assert chunked.counts == pretokenize(data, pretokenizer=pretokenizer, special_tokens=special_tokens).counts


def test_keep_sequence_reads_the_file_in_text_order(scratch):
    path = scratch / "sequence.txt"
    path.write_bytes(b"b a<|s|>c\nb")
    corpus = pretokenize_file(path, special_tokens=[SPECIAL], keep_sequence=True)
    assert corpus.sequence == (b"b", b" a", b"c", b"\n", b"b")


# ---------------------------------------------------------------------------
# progress


@pytest.mark.parametrize("keep_sequence", [False, True])
def test_progress_reaches_size_of_size(scratch, monkeypatch, keep_sequence):
    data = sample_file_bytes(20_000, with_special_tokens=True)
    path = scratch / "progress.txt"
    path.write_bytes(data)
    monkeypatch.setattr(count_module, "PARALLEL_MIN_BYTES", 0)
    seen = []
    pretokenize_file(path, special_tokens=[SPECIAL], workers=1, chunk_bytes=2048, keep_sequence=keep_sequence,
                     progress=lambda done, total: seen.append((done, total)))  # fmt: skip
    assert seen[-1] == (len(data), len(data))
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert {total for _, total in seen} == {len(data)}


def test_progress_of_an_empty_file_reaches_zero_of_zero(scratch):
    path = scratch / "empty-progress.txt"
    path.write_bytes(b"")
    seen = []
    pretokenize_file(path, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (0, 0)


def test_train_bpe_passes_progress_through(scratch):
    path = scratch / "train-progress.txt"
    path.write_bytes(b"low lower lowest")
    seen = []
    train_bpe(path, 260, [], progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (16, 16)


# ---------------------------------------------------------------------------
# bad input is refused with a sentence a person can act on


@EVERY_ALGORITHM
@pytest.mark.parametrize(
    "vocab_size, special_tokens, options, phrase",
    [
        (255, [], {}, "too small"),
        (256, ["<|e|>"], {}, "too small"),
        (257, ["<|e|>", "<|f|>"], {}, "too small"),
        (300, [""], {}, "non-empty"),
        (300, ["<|e|>", "<|e|>"], {}, "listed twice"),
        (300, "<|e|>", {}, "list of strings"),
        (300.0, [], {}, "whole number"),
        (300, [], {"min_pair_frequency": -1}, "at least 0"),
        (300, [], {"pattern": "gpt5"}, "Unknown pre-tokenizer"),
    ],
)
def test_bad_settings_raise_value_error(algorithm, vocab_size, special_tokens, options, phrase):
    with pytest.raises(ValueError, match=phrase):
        train_bpe_text("low lower", vocab_size, special_tokens, algorithm=algorithm, **options)


def test_unknown_algorithm_is_refused_everywhere():
    with pytest.raises(ValueError, match="Unknown algorithm 'quick'"):
        train_bpe_text("low lower", 300, [], algorithm="quick")
    with pytest.raises(ValueError, match="Unknown algorithm"):
        train(pretokenize("low lower"), 10, algorithm="quick")


def test_unknown_pretokenizer_is_refused_before_reading(tmp_path):
    with pytest.raises(ValueError, match="Unknown pre-tokenizer 'gpt5'; choose one of gpt2"):
        pretokenize("low lower", pretokenizer="gpt5")
    with pytest.raises(ValueError, match="Unknown pre-tokenizer 'gpt5'"):
        pretokenize_file(tmp_path / "missing.txt", pretokenizer="gpt5")


def test_missing_file_is_refused(tmp_path):
    with pytest.raises(ValueError, match="No such file"):
        train_bpe(tmp_path / "missing.txt", 300, [])
    with pytest.raises(ValueError, match="No such file"):
        pretokenize_file(tmp_path / "missing.txt")


def test_directory_is_refused(tmp_path):
    with pytest.raises(ValueError, match="is a directory"):
        train_bpe(tmp_path, 300, [])


@pytest.mark.parametrize("workers", [0, -1, 1.5])
def test_workers_must_be_at_least_one(tmp_path, workers):
    path = tmp_path / "w.txt"
    path.write_text("low lower")
    with pytest.raises(ValueError, match="workers must be a whole number of at least 1"):
        pretokenize_file(path, workers=workers)
    with pytest.raises(ValueError, match="workers must be"):
        train_bpe(path, 300, [], workers=workers)


def test_empty_or_duplicate_special_token_is_refused_by_pretokenizers(tmp_path):
    path = tmp_path / "e.txt"
    path.write_text("abc")
    with pytest.raises(ValueError, match="non-empty"):
        pretokenize("abc", special_tokens=[""])
    with pytest.raises(ValueError, match="non-empty"):
        pretokenize_file(path, special_tokens=[""])
    with pytest.raises(ValueError, match="listed twice"):
        pretokenize_file(path, special_tokens=["<|e|>", "<|e|>"])


# ---------------------------------------------------------------------------
# empty and near-empty corpora are fine: nothing to merge


@EVERY_ALGORITHM
@pytest.mark.parametrize(
    "text, pretokenizer",
    [("", "gpt2"), ("", "none"), ("a", "gpt2"), ("<|e|><|e|>", "gpt2"), (" \n\t  \n", "whitespace"), (" ", "gpt4")],
    ids=["empty", "empty-none", "one-byte", "only-special-tokens", "whitespace-only", "one-space"],
)
def test_corpus_with_nothing_to_merge_gives_zero_merges(algorithm, text, pretokenizer):
    vocab, merges = train_bpe_text(text, 300, ["<|e|>"], algorithm=algorithm, pretokenizer=pretokenizer)
    assert merges == []
    assert vocab == {**{i: bytes([i]) for i in range(256)}, 256: b"<|e|>"}


@EVERY_ALGORITHM
def test_empty_file_gives_zero_merges(algorithm, tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    vocab, merges = train_bpe(path, 300, ["<|e|>"], algorithm=algorithm)
    assert merges == [] and len(vocab) == 257


@EVERY_ALGORITHM
def test_whitespace_only_corpus_with_gpt2_learns_only_whitespace(algorithm):
    # subtle: gpt2 keeps '  \n\t ' as pre-tokens, so unlike with the whitespace pattern there are pairs to merge
    vocab, merges = train_bpe_text("  \n\t  \n  ", 300, [], algorithm=algorithm)
    assert merges
    assert all((left + right).isspace() for left, right in merges)


# ---------------------------------------------------------------------------
# the units' whitespace (that the library imports no UI library: tests/test_layers.py)


def test_unit_whitespace_is_exactly_the_whitespace_of_the_gpt2_regex():
    """_UNITS spells out whitespace because `re` and `regex` disagree on \\s (\\x1c-\\x1f); the list must be exact."""
    import regex

    module = importlib.import_module("bpe.text.pretokenize")
    spaces = regex.compile(r"\s")
    expected = {chr(c) for c in range(sys.maxunicode + 1) if spaces.match(chr(c))}
    assert set(module._WHITESPACE) == expected


@given(st.lists(st.sampled_from(list("ab é'sllve\n\t.,1²Ⅻ\udc80\xa0\x1c") + ["  ", "naïve"]), max_size=40).map("".join))
@settings(max_examples=300, deadline=None)
def test_ascii_fast_path_counts_like_the_gpt2_regex(text):
    module = importlib.import_module("bpe.text.pretokenize")
    assert module.count_text(text, "gpt2") == Counter(regex.findall(PRETOKENIZERS["gpt2"].regex, text))


# the units of the gpt2 fast path: words with the whitespace before them (see _UNITS)
unit_text = st.lists(
    st.sampled_from(WHITESPACE_AND_FRIENDS + WORDS_AND_MARKS + ["\x1c", "\x1f", "\x00", "'ll", "s", "x.y", "\udcff"]),
    max_size=60,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=unit_text)
def test_units_cover_the_text_and_each_splits_alone_as_in_context(text):
    module = importlib.import_module("bpe.text.pretokenize")
    units = module._UNITS.findall(text)
    assert "".join(units) == text
    alone = Counter(token for unit in units for token in regex.findall(PRETOKENIZERS["gpt2"].regex, unit))
    assert alone == Counter(regex.findall(PRETOKENIZERS["gpt2"].regex, text))


@settings(max_examples=400, deadline=None)
@given(text=unit_text)
def test_whitespace_led_units_glued_in_any_order_split_like_apart(text):
    module = importlib.import_module("bpe.text.pretokenize")
    led = [unit for unit in module._UNITS.findall(text) if regex.fullmatch(r"\s+\S+", unit)]  # as count_units picks them
    glued = Counter(module.split_gpt2(led[::-1]))
    assert glued == Counter(token for unit in led for token in regex.findall(PRETOKENIZERS["gpt2"].regex, unit))


@settings(max_examples=300, deadline=None)
@given(text=unit_text, repeats=st.integers(1, 4))
def test_repeated_units_count_like_the_gpt2_regex(text, repeats):
    """Repetition puts units in count groups above one (count_units scales their pre-tokens)."""
    module = importlib.import_module("bpe.text.pretokenize")
    text = (text + "\n") * repeats + text
    assert module.count_text(text, "gpt2") == Counter(regex.findall(PRETOKENIZERS["gpt2"].regex, text))
