"""Inputs of every format count like the same text in a plain file, and bad inputs get one sentence.

The reference is a plain UTF-8 file holding the documents separated by a
special token: a JSON line, a Parquet row or a compressed stream must give
exactly its counts, whatever the number of workers or the size of the blocks
a stream is read in.
"""

from __future__ import annotations

import bz2
import gzip
import importlib
import json
import lzma
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe import count_inputs, pretokenize, train_bpe
from bpe.cli import main

count_module = importlib.import_module("bpe.data.count")
inputs = importlib.import_module("bpe.data.inputs")
ROOT = Path(__file__).resolve().parents[1]
SPECIAL = "<|endoftext|>"
DOCUMENTS = [
    "The cat sat.\nIt's 42 o'clock!",
    "naïve café 日本語 — don't\t\ttabs\n\n  indented",
    "",
    "x" * 300 + " end",
    "   leading spaces and trailing   ",
    "emoji 🙂 and\r\nwindows lines",
] * 7
COMPRESS = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress, ".zst": zstandard.ZstdCompressor().compress}


def plain_counts(documents: list[str], pretokenizer: str = "gpt2") -> dict[bytes, int]:
    """The reference: the documents in one plain text, separated by a special token."""
    return pretokenize(SPECIAL.join(documents), pretokenizer=pretokenizer, special_tokens=[SPECIAL]).counts


def write_jsonl(path: Path, documents: list[str], field: str = "text") -> Path:
    path.write_text("".join(json.dumps({"id": i, field: d}) + "\n" for i, d in enumerate(documents)), encoding="utf-8")
    return path


def write_parquet(path: Path, documents: list[str], column: str = "text", binary: bool = False, row_group_size: int = 5) -> Path:
    values = [d.encode() for d in documents] if binary else documents
    table = pa.table({"id": list(range(len(documents))), column: pa.array(values, pa.binary() if binary else pa.string())})
    pq.write_table(table, path, row_group_size=row_group_size)
    return path


# ---------------------------------------------------------------------------
# every format counts like the plain file


@pytest.mark.parametrize("pretokenizer", ["gpt2", "none"])
@pytest.mark.parametrize("suffix", list(COMPRESS))
def test_compressed_text_counts_like_the_plain_file(tmp_path, suffix, pretokenizer):
    text = SPECIAL.join(DOCUMENTS).encode()
    path = tmp_path / f"corpus.txt{suffix}"
    path.write_bytes(COMPRESS[suffix](text))
    counted = count_inputs(path, pretokenizer=pretokenizer, special_tokens=[SPECIAL], workers=1, chunk_bytes=100)
    assert counted.counts == plain_counts(DOCUMENTS, pretokenizer)
    assert counted.text_bytes == len(text)


@pytest.mark.parametrize("pretokenizer", ["gpt2", "gpt4", "none"])
@pytest.mark.parametrize("suffix", ["", ".gz", ".zst"])
def test_each_json_line_is_a_document(tmp_path, suffix, pretokenizer):
    plain = write_jsonl(tmp_path / "docs.jsonl", DOCUMENTS)
    path = plain.with_name(plain.name + suffix)
    if suffix:
        path.write_bytes(COMPRESS[suffix](plain.read_bytes()))
    counted = count_inputs(path, pretokenizer=pretokenizer, special_tokens=[SPECIAL], workers=1, chunk_bytes=64)
    assert counted.counts == plain_counts(DOCUMENTS, pretokenizer)
    assert counted.text_bytes == sum(len(d.encode()) for d in DOCUMENTS)


def test_jsonl_text_field_is_chosen_and_special_tokens_inside_records_still_split(tmp_path):
    documents = ["a<|endoftext|>b c", "d"]
    path = write_jsonl(tmp_path / "docs.jsonl", documents, field="content")
    counted = count_inputs(path, special_tokens=[SPECIAL], text_field="content", workers=1)
    assert counted.counts == plain_counts(documents)


@pytest.mark.parametrize("binary", [False, True], ids=["string", "binary"])
def test_each_parquet_row_is_a_document(tmp_path, binary):
    path = write_parquet(tmp_path / "docs.parquet", DOCUMENTS, column="body", binary=binary)
    assert pq.ParquetFile(path).metadata.num_row_groups > 1
    counted = count_inputs(path, special_tokens=[SPECIAL], text_column="body", workers=1)
    assert counted.counts == plain_counts(DOCUMENTS)
    assert counted.text_bytes == sum(len(d.encode()) for d in DOCUMENTS)


def test_null_records_are_no_documents(tmp_path):
    jsonl = tmp_path / "nulls.jsonl"
    jsonl.write_text('{"text": "a b"}\n{"text": null}\n\n{"text": "c"}\n')
    table = pa.table({"text": pa.array(["a b", None, "c"], pa.string())})
    pq.write_table(table, tmp_path / "nulls.parquet")
    expected = plain_counts(["a b", "c"])
    assert count_inputs(jsonl, special_tokens=[SPECIAL], workers=1).counts == expected
    assert count_inputs(tmp_path / "nulls.parquet", special_tokens=[SPECIAL], workers=1).counts == expected


def test_every_format_in_parallel_workers_counts_like_one_process(tmp_path, monkeypatch):
    monkeypatch.setattr(count_module, "PARALLEL_MIN_BYTES", 0)
    many = DOCUMENTS * 40
    write_jsonl(tmp_path / "a.jsonl", many)
    (tmp_path / "b.txt.gz").write_bytes(gzip.compress(SPECIAL.join(many).encode()))
    write_parquet(tmp_path / "c.parquet", many, row_group_size=50)
    (tmp_path / "d.txt").write_text(SPECIAL.join(many))
    paths = [tmp_path / "*.jsonl", tmp_path / "b.txt.gz", tmp_path / "c.parquet", tmp_path / "d.txt"]
    parallel = count_inputs(paths, special_tokens=[SPECIAL], workers=2)
    alone = count_inputs(paths, special_tokens=[SPECIAL], workers=1)
    assert parallel.workers == 2 and parallel.worker_peak_rss > 0
    assert parallel.counts == alone.counts == {token: 4 * n for token, n in plain_counts(many).items()}


def test_several_files_and_globs_add_up_and_each_file_counts_once(tmp_path):
    (tmp_path / "a.txt").write_text("low lower")
    (tmp_path / "b.txt").write_text("lowest low")
    counted = count_inputs([tmp_path / "*.txt", tmp_path / "a.txt"], workers=1)
    assert [source.path.name for source in counted.inputs] == ["a.txt", "b.txt"]
    assert counted.counts == plain_counts(["low lower", "lowest low"])


def test_train_bpe_takes_several_inputs_like_one_plain_file(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", DOCUMENTS[:3])
    write_parquet(tmp_path / "b.parquet", DOCUMENTS[3:])
    (tmp_path / "plain.txt").write_text(SPECIAL.join(DOCUMENTS))
    assert train_bpe([tmp_path / "a.jsonl", tmp_path / "b.parquet"], 300, [SPECIAL]) == train_bpe(tmp_path / "plain.txt", 300, [SPECIAL])


def test_positions_trainer_reads_other_formats_in_order(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", DOCUMENTS)
    (tmp_path / "plain.txt").write_text(SPECIAL.join(DOCUMENTS))
    got = train_bpe(tmp_path / "a.jsonl", 300, [SPECIAL], algorithm="positions")
    assert got == train_bpe(tmp_path / "plain.txt", 300, [SPECIAL], algorithm="heap")


FRAGMENTS = [b"a", b"b c", b"don't", b" ", b"  ", b"\n", b"\r\n", b"\t", b"42", b"!", "é".encode(), b"\xff", b"\xe2\x82", SPECIAL.encode()]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.lists(st.sampled_from(FRAGMENTS), max_size=60).map(b"".join),
    pretokenizer=st.sampled_from(["gpt2", "whitespace", "none"]),
    special_tokens=st.sampled_from([[], [SPECIAL]]),
    block=st.integers(1, 40),
)
def test_a_stream_read_in_any_block_size_counts_like_the_whole_text(tmp_path, data, pretokenizer, special_tokens, block):
    path = tmp_path / "stream.txt.gz"
    path.write_bytes(gzip.compress(data))
    counted = count_inputs(path, pretokenizer=pretokenizer, special_tokens=special_tokens, workers=1, chunk_bytes=block)
    assert counted.counts == pretokenize(data, pretokenizer=pretokenizer, special_tokens=special_tokens).counts


def test_progress_reaches_the_size_on_disk_for_every_format(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", DOCUMENTS)
    (tmp_path / "b.txt.xz").write_bytes(lzma.compress(SPECIAL.join(DOCUMENTS).encode()))
    write_parquet(tmp_path / "c.parquet", DOCUMENTS)
    seen = []
    counted = count_inputs(tmp_path / "*.*", workers=1, chunk_bytes=50, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (counted.disk_bytes, counted.disk_bytes)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


# ---------------------------------------------------------------------------
# bad inputs: one sentence naming the file (and line or row group)


def bad_input_cases(tmp_path: Path) -> list[tuple[list[str], str]]:
    (tmp_path / "notjson.jsonl").write_text('{"text": "fine"}\n{"text": oops}\n')
    (tmp_path / "nofield.jsonl").write_text('{"text": "fine"}\n{"body": "x"}\n')
    (tmp_path / "number.jsonl").write_text('{"text": 5}\n')
    pq.write_table(pa.table({"body": ["x"]}), tmp_path / "nocolumn.parquet")
    pq.write_table(pa.table({"text": [1, 2]}), tmp_path / "ints.parquet")
    (tmp_path / "fake.parquet").write_bytes(b"not parquet at all")
    (tmp_path / "corrupt.txt.gz").write_bytes(b"\x1f\x8b\x08\x00garbage" * 10)
    (tmp_path / "truncated.txt.gz").write_bytes(gzip.compress(b"hello world " * 1000)[:50])
    (tmp_path / "corrupt.txt.bz2").write_bytes(b"BZh9" + b"garbage" * 10)
    (tmp_path / "corrupt.txt.zst").write_bytes(b"\x28\xb5\x2f\xfd" + b"garbage" * 10)
    d = str(tmp_path)
    return [
        ([f"{d}/missing.txt"], "No such file: .*missing.txt"),
        ([f"{d}/*.nothing"], r"\*.nothing matches no file"),
        ([d], "is a directory"),
        ([f"{d}/notjson.jsonl"], "notjson.jsonl line 2 is not a JSON object"),
        ([f"{d}/nofield.jsonl"], "nofield.jsonl line 2 has no field 'text'"),
        ([f"{d}/number.jsonl"], "number.jsonl line 1: field 'text' holds int, not text"),
        ([f"{d}/nocolumn.parquet"], "nocolumn.parquet has no column 'text' .*body"),
        ([f"{d}/ints.parquet"], "ints.parquet: column 'text' holds int64, not text"),
        ([f"{d}/fake.parquet"], "fake.parquet is not a Parquet file"),
        ([f"{d}/corrupt.txt.gz"], r"corrupt.txt.gz is not valid .gz data"),
        ([f"{d}/truncated.txt.gz"], r"truncated.txt.gz is not valid .gz data"),
        ([f"{d}/corrupt.txt.bz2"], r"corrupt.txt.bz2 is not valid .bz2 data"),
        ([f"{d}/corrupt.txt.zst"], r"corrupt.txt.zst is not valid .zst data"),
    ]


def test_bad_inputs_are_refused_in_one_sentence_naming_the_file(tmp_path):
    for paths, message in bad_input_cases(tmp_path):
        with pytest.raises(ValueError, match=message):
            count_inputs(paths, workers=1)


def test_bad_input_in_a_worker_process_is_refused_the_same_way(tmp_path, monkeypatch):
    monkeypatch.setattr(count_module, "PARALLEL_MIN_BYTES", 0)
    write_jsonl(tmp_path / "good.jsonl", DOCUMENTS * 50)
    (tmp_path / "bad.jsonl").write_text('{"text": "fine"}\n' * 10 + "{oops\n")
    with pytest.raises(ValueError, match="bad.jsonl line 11 is not a JSON object"):
        count_inputs([tmp_path / "good.jsonl", tmp_path / "bad.jsonl"], workers=2)


def test_a_bad_line_deep_in_a_big_file_is_numbered_from_the_start(tmp_path):
    lines = [json.dumps({"text": f"line {i}"}) + "\n" for i in range(5000)]
    lines[4321] = "not json\n"
    path = tmp_path / "deep.jsonl"
    path.write_text("".join(lines))
    with pytest.raises(ValueError, match="deep.jsonl line 4,322 is not a JSON object"):
        count_inputs(path, workers=1, chunk_bytes=1000)


def test_cli_prints_one_sentence_and_no_traceback_for_bad_inputs(tmp_path, capsys):
    for paths, message in bad_input_cases(tmp_path):
        code = main(["train", *paths, "--vocab-size", "300", "--out", str(tmp_path / "out"), "--workers", "1"])
        err = capsys.readouterr().err
        assert code == 2, paths
        assert "Traceback" not in err and err.startswith("error: ") and err.count("\n") == 1, err
        assert re.search(message, err), (message, err)


# ---------------------------------------------------------------------------
# a document of any size in flat memory; a decompression bomb refused


def no_safe_place(size: int, seed: int = 0) -> bytes:
    """Letters and digits in turn (b'q7a3...'), no whitespace: no safe place to cut, yet only 36 distinct pre-tokens
    (gpt2: each letter and each digit alone), and random enough to compress only ~2x (no decompression bomb)."""
    import random

    noise = random.Random(seed).randbytes(size // 2)
    text = bytearray(size // 2 * 2)
    text[0::2] = noise.translate(bytes(b"abcdefghijklmnopqrstuvwxyz"[i % 26] for i in range(256)))
    text[1::2] = noise[::-1].translate(bytes(b"0123456789"[i % 10] for i in range(256)))
    return bytes(text)


@pytest.mark.parametrize("suffix", [".txt", ".txt.zst", ".txt.gz"])
def test_a_document_without_a_safe_place_is_read_in_pieces_and_said_so(tmp_path, suffix, monkeypatch):
    """MAX_STRETCH 64 KB here: a 1 MB document is read in pieces of at most a block and that, with every byte, and the
    cuts are counted; the counts differ from the whole text's only where a letter met a digit across a cut (none here)."""
    monkeypatch.setattr(inputs, "MAX_STRETCH", 1 << 16)
    text = no_safe_place(1 << 20)
    path = tmp_path / f"long{suffix}"
    path.write_bytes(COMPRESS[suffix[4:]](text) if suffix != ".txt" else text)
    options = inputs.Reading(chunk_bytes=1 << 15)
    batches = [batch for shard in inputs.shards(inputs.describe(path), options) for batch in inputs.read_shard(shard, options, True)]
    pieces = [piece for batch in batches for piece in batch.documents]
    assert b"".join(pieces) == text and max(map(len, pieces)) <= (1 << 16) + (1 << 15) + (1 << 16)
    assert sum(batch.unsafe_cuts for batch in batches) >= len(text) // ((1 << 16) + (1 << 15) + (1 << 16))
    with pytest.warns(inputs.CutWarning, match=r"stretches of text without a safe place to cut in 0.0625 MB .* were cut anyway"):
        counted = count_inputs(path, workers=1, chunk_bytes=1 << 15)
    assert counted.counts == pretokenize(text).counts and counted.unsafe_cuts > 0


@pytest.mark.parametrize("suffix", ["", ".zst"])
def test_a_document_four_times_longer_takes_no_more_memory(tmp_path, suffix):
    """The peak of a process counting a 12 MB and a 48 MB document without a safe place (MAX_STRETCH 1 MB, blocks of
    1 MB): within 16 MB of each other. Before, the whole document was held, and a stream's carry copied at every block."""
    peaks = {}
    for mb in (12, 48):
        path = tmp_path / f"long{mb}.txt{suffix}"
        text = no_safe_place(mb << 20, mb)
        path.write_bytes(zstandard.ZstdCompressor(level=1).compress(text) if suffix else text)
        del text
        script = f"""
from bpe import memory
from bpe.data import count, inputs
inputs.MAX_STRETCH = 1 << 20
memory.reset_peak()  # subtle: a child's ru_maxrss starts at the pytest process's size, which it was forked from
counted = count.count_inputs({str(path)!r}, workers=1, chunk_bytes=1 << 20)
assert counted.unsafe_cuts >= {mb} // 3, counted.unsafe_cuts
print(memory.peak_rss() >> 10)
"""
        done = subprocess.run([sys.executable, "-W", "ignore", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        peaks[mb] = int(done.stdout.split()[-1]) / 1024
    assert peaks[48] - peaks[12] < 16, peaks


@pytest.mark.parametrize("suffix", [".zst", ".gz"])
def test_a_decompression_bomb_is_refused_in_one_sentence(tmp_path, suffix):
    """80 MB of one byte in a few KB: refused once it has given MIN_EXPANSION, not read to its end (the reviewer's: 33 KB -> 1 GB)."""
    path = tmp_path / f"bomb.txt{suffix}"
    path.write_bytes(
        zstandard.ZstdCompressor(level=3).compress(b"a" * (80 << 20)) if suffix == ".zst" else gzip.compress(b"a" * (80 << 20), 9)
    )
    with pytest.raises(
        ValueError, match=r"^.*bomb\.txt\.(zst|gz): [\d,]+ bytes of \.(zst|gz) data expand past \d+ MB, more than the 1,000 times"
    ):
        count_inputs(path, workers=1)
    code = main(["count", str(path), "--out", str(tmp_path / "c.parquet"), "--workers", "1"])
    assert code == 2 and not (tmp_path / "c.parquet").exists()


@pytest.mark.parametrize("suffix", ["", ".zst"])
def test_a_json_line_longer_than_a_record_may_be_is_refused(tmp_path, suffix, monkeypatch):
    monkeypatch.setattr(inputs, "MAX_RECORD", 1 << 16)
    plain = write_jsonl(tmp_path / "docs.jsonl", ["short", "x" * 200_000, "short"])
    path = plain.with_name(plain.name + suffix)
    if suffix:
        path.write_bytes(COMPRESS[suffix](plain.read_bytes()))
    with pytest.raises(ValueError, match=r"docs\.jsonl(\.zst)? holds a line of more than 0 MB, the most one JSON record may be here"):
        count_inputs(path, workers=1, chunk_bytes=1 << 12)


def test_the_cli_says_where_it_cut_without_a_safe_place(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(inputs, "MAX_STRETCH", 1 << 16)
    path = tmp_path / "long.txt.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(no_safe_place(1 << 20)))
    assert main(["count", str(path), "--out", str(tmp_path / "c.parquet"), "--workers", "1", "--no-compiled"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"^warning: 1 stretch of text without a safe place to cut in 0.0625 MB .* was cut anyway", err, re.M), err
