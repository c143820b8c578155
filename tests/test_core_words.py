"""A counts file's columns held by the core (bpe/c/words.c, counts_file.CountedWords) read as the dict load_counts makes.

Property tests over arbitrary tokens (any bytes, invalid UTF-8, NUL bytes, the empty
token), split into batches of Arrow columns as a Parquet reader hands them out
(binary and large_binary, arrays that start part way into their buffers): the same
tokens and counts in the same order, a repeated token found at its row, the not-text
sums of the Python path, and the compiled heap trained on the columns making the
Python heap's run. scripts/sanitize.sh runs this file under AddressSanitizer and UBSan.
Also: corrupt columns are one sentence, and a file whose counts need converting (int32)
is read into a dict, as where the core is absent.
"""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import bpe.core
from bpe.core import core
from bpe.data.counts_file import KEY, CountedWords, CountsInfo, load_counts, metadata_of, read_counts, save_counts
from bpe.rule import TIE_BREAKS
from bpe.text.pretokenize import invalid_bytes, not_text
from bpe.train import train_from_counts
from tests.test_heap_c import assert_same_run

built = pytest.mark.skipif(core is None, reason=f"the compiled core is absent: {bpe.core.missing}")
EXAMPLES = int(os.environ.get("BPE_HEAP_C_EXAMPLES", "150"))  # scripts/sanitize.sh asks for more
TOKENS = st.binary(max_size=12) | st.lists(st.sampled_from(b"ab\x00\xc3\xa9\xff"), max_size=10).map(bytes)
COUNTS = st.integers(1, 6) | st.integers(1, 2**62)


def columns(rows: list[tuple[bytes, int]], large: bool, skip: int):
    """Arrow columns of rows, starting `skip` rows into their buffers (as a slice of a bigger batch does)."""
    padded = [(b"pad%d" % k, 1) for k in range(skip)] + rows
    tokens = pa.array([t for t, _ in padded], pa.large_binary() if large else pa.binary())
    counts = pa.array([n for _, n in padded], pa.int64())
    return tokens[skip:], counts[skip:]


def held(rows: list[tuple[bytes, int]], cuts: list[int], large: bool = False, skip: int = 0) -> tuple[CountedWords, list[bool]]:
    """rows added a batch at a time, cut where cuts say; and whether each batch had a repeat."""
    words = CountedWords(core.Words(12345))
    edges = sorted({0, len(rows), *(c % (len(rows) + 1) for c in cuts)})
    return words, [words.add(*columns(rows[a:b], large, skip)) for a, b in zip(edges, edges[1:])]


@built
@settings(max_examples=EXAMPLES, deadline=None)
@given(
    counts=st.dictionaries(TOKENS, COUNTS, max_size=40),
    cuts=st.lists(st.integers(0, 40), max_size=4),
    large=st.booleans(),
    skip=st.integers(0, 3),
)
@example(counts={}, cuts=[], large=False, skip=0)
@example(counts={b"": 3, b"\x00": 1}, cuts=[1], large=True, skip=2)
def test_the_columns_hold_the_dict_of_the_file(counts, cuts, large, skip):
    words, repeats = held(list(counts.items()), cuts, large, skip)
    assert not any(repeats)
    assert len(words) == len(counts)
    assert list(words.to_dict().items()) == list(counts.items())  # the file's order
    assert words == counts and dict(words) == counts  # as a Mapping


@built
@settings(max_examples=EXAMPLES, deadline=None)
@given(counts=st.dictionaries(TOKENS, COUNTS, min_size=1, max_size=30), data=st.data())
def test_a_repeated_token_is_found_at_its_row(counts, data):
    rows = list(counts.items())
    again = data.draw(st.sampled_from(rows))
    at = data.draw(st.integers(rows.index(again) + 1, len(rows)))
    rows.insert(at, (again[0], 7))
    words = core.Words(99)
    tokens, numbers = columns(rows, large=False, skip=0)
    _, offsets, data_buffer = tokens.buffers()
    assert words.add(b"" if data_buffer is None else data_buffer, offsets, numbers.buffers()[1], False) == at


def python_sums(counts: dict[bytes, int]) -> tuple[int, int, int]:
    """What not_text adds up, one token at a time: bytes, NUL bytes, bytes not valid UTF-8, each times its count."""
    return (
        sum(len(t) * n for t, n in counts.items()),
        sum(t.count(0) * n for t, n in counts.items()),
        sum(invalid_bytes(t) * n for t, n in counts.items()),
    )


@built
@settings(max_examples=EXAMPLES, deadline=None)
@given(counts=st.dictionaries(TOKENS, st.integers(1, 9), max_size=30))
@example(counts={b"\xe2\x82": 1, b"\xed\xa0\x80": 2, b"\xf4\x90\x80\x80": 3, b"\xc0\x80": 1, b"\xf0\x9f\x98\x80": 5})
def test_the_not_text_sums_are_the_python_paths(counts):
    words, _ = held(list(counts.items()), [])
    assert words.compiled.sums() == python_sums(counts)
    assert not_text(words) == not_text(dict(counts))


@built
@settings(max_examples=EXAMPLES, deadline=None)
@given(token=st.binary(max_size=40))
def test_invalid_bytes_are_counted_as_pythons_decoder_finds_them(token):
    words, _ = held([(token, 1)], [])
    assert words.compiled.sums()[2] == invalid_bytes(token)


@built
def test_sums_past_64_bits_are_left_to_python():
    words, _ = held([(b"ab" * 4, 2**62), (b"cd" * 4, 2**62)], [])
    assert words.compiled.sums() is None
    assert not_text(words) is None  # added up in Python's integers instead: 2^66 bytes of text


@built
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    counts=st.dictionaries(st.lists(st.sampled_from(b"ab \xc3"), max_size=12).map(bytes), st.integers(1, 6), max_size=12),
    rule=st.sampled_from(TIE_BREAKS),
    max_merges=st.integers(0, 30),
    min_pair_frequency=st.integers(0, 4),
)
def test_the_compiled_heap_trains_on_the_columns_as_the_python_heap_on_the_dict(counts, rule, max_merges, min_pair_frequency):
    words, _ = held(list(counts.items()), [len(counts) // 2])
    assert_same_run(words, rule, max_merges, min_pair_frequency)  # the Python heap reads the Mapping, the compiled its columns


@built
@pytest.mark.parametrize(
    ("offsets", "counts", "message"),
    [
        ([0, 2, 1], [1, 1], "go backwards"),
        ([0, 2, 9], [1, 1], "outside the tokens' bytes"),
        ([-1, 2, 3], [1, 1], "outside the tokens' bytes"),
        ([0, 1, 3], [1, 0], "a count below 1"),
        ([0, 1, 3], [1, -5], "a count below 1"),
        ([0, 1], [1, 1], "one offset more than tokens"),
    ],
)
def test_corrupt_columns_are_value_errors(offsets, counts, message):
    words = core.Words(1)
    with pytest.raises(ValueError, match=message):
        words.add(b"abc", pa.array(offsets, pa.int32()).buffers()[1], pa.array(counts, pa.int64()).buffers()[1], False)


def test_a_file_read_as_columns_is_the_file_read_as_a_dict(tmp_path):
    counts = {b" the": 9, b"cat": 2, b"\xff\x00": 4, b"": 1, b"a": 3}
    save_counts(tmp_path / "c.parquet", counts, CountsInfo("gpt2", ()))
    loaded, info = read_counts(tmp_path / "c.parquet")
    assert isinstance(loaded, CountedWords if core is not None else dict)
    assert loaded == counts and load_counts(tmp_path / "c.parquet")[0] == counts and info.unique == 5


def test_a_file_whose_counts_are_int32_is_read_into_a_dict(tmp_path):
    info = CountsInfo("gpt2", (), (), 0, 5, 2)
    table = pa.table({"token": pa.array([b"ab", b"c"]), "count": pa.array([3, 2], pa.int32())})
    pq.write_table(table.replace_schema_metadata({KEY: json.dumps(metadata_of(info)).encode()}), tmp_path / "c.parquet")
    loaded, _ = read_counts(tmp_path / "c.parquet")
    assert type(loaded) is dict and loaded == {b"ab": 3, b"c": 2}


def test_a_count_below_1_in_the_columns_is_the_files_sentence(tmp_path):
    info = CountsInfo("gpt2", (), (), 0, 3, 2)
    table = pa.table({"token": pa.array([b"ab", b"c"]), "count": pa.array([3, 0], pa.int64())})
    pq.write_table(table.replace_schema_metadata({KEY: json.dumps(metadata_of(info)).encode()}), tmp_path / "c.parquet")
    with pytest.raises(ValueError, match=r"c\.parquet has a count below 1; counts are numbers of occurrences\.$"):
        read_counts(tmp_path / "c.parquet")


def test_without_the_core_a_counts_file_is_read_into_a_dict_and_trains_the_same(tmp_path, monkeypatch):
    counts = {b" low": 5, b" lower": 2, b" newest": 6, b" widest": 3, b"\xff\xfe": 2}
    save_counts(tmp_path / "c.parquet", counts, CountsInfo("gpt2", ()))
    with_core = train_from_counts(tmp_path / "c.parquet", 270)
    monkeypatch.setattr("bpe.core.core", None)
    monkeypatch.setattr("bpe.core.missing", "BPE_CORE=0 is set")
    loaded, _ = read_counts(tmp_path / "c.parquet")
    assert type(loaded) is dict and loaded == counts
    assert train_from_counts(tmp_path / "c.parquet", 270) == with_core


@built
def test_words_made_without_init_refuse_to_add():
    words = core.Words.__new__(core.Words)
    with pytest.raises(RuntimeError, match="not initialised"):
        words.add(b"ab", pa.array([0, 2], pa.int32()).buffers()[1], pa.array([1], pa.int64()).buffers()[1], False)
    assert len(words) == 0 and words.to_dict() == {} and words.sums() == (0, 0, 0)
