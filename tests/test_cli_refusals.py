"""Bad input and impossible outputs, as the CLI and the library meet them (issue 26.2, 26.3, 26.5-26.7).

Each refusal is one sentence that names the file, comes before the work, and leaves what was
at the output path as it was; input that is mostly not text trains, with a warning line.
"""

from __future__ import annotations

import json
import os
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import StoppedEarly, train_bpe, train_bpe_text, train_from_counts
from bpe.cli import main, shown
from bpe.data.counts_file import MAX_COUNT, CountsInfo, load_counts, merge_counts_files, metadata_of, save_counts
from bpe.text.pretokenize import not_text, not_utf8

TEXT = "the lowest lower newest widest " * 20


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def one_error(err: str) -> str:
    """The one 'error: ...' line a refusal prints, and nothing else (no traceback, no phase line: no work was done)."""
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err[len("error: ") : -1]


# ---------------------------------------------------------------------------
# empty and binary input (26.2), a small corpus (26.3)


@pytest.mark.parametrize("command", ["train", "count"])
def test_an_empty_input_is_refused_in_one_sentence(tmp_path, capsys, command):
    (tmp_path / "empty.txt").write_bytes(b"")
    out = ["--out", str(tmp_path / ("r" if command == "train" else "c.parquet"))]
    extra = ["--vocab-size", "1000"] if command == "train" else []
    code, _, err = run(capsys, command, str(tmp_path / "empty.txt"), *extra, *out, "--workers", "1")
    assert code == 2
    doing = "train on" if command == "train" else "count"
    assert err.endswith(f"error: Nothing to {doing}: {tmp_path / 'empty.txt'} holds no text.\n"), err
    assert not (tmp_path / "r").exists() and not (tmp_path / "c.parquet").exists()


def test_input_of_only_special_tokens_is_refused(tmp_path, capsys):
    (tmp_path / "s.txt").write_text("<|e|><|e|>")
    code, _, err = run(
        capsys, "train", str(tmp_path / "s.txt"), "--vocab-size", "300", "--special-token", "<|e|>", "--out", str(tmp_path / "r")
    )
    assert code == 2 and err.endswith("holds only special tokens.\n"), err


def test_a_binary_file_trains_with_a_warning_line_and_a_short_longest_token(tmp_path, capsys):
    data = b"\x7fELF\x02\x01\x01" + b"\x00" * 3000 + bytes(range(256)) * 4 + b"\x00" * 600
    (tmp_path / "a.out").write_bytes(data)
    code, out, _ = run(capsys, "train", str(tmp_path / "a.out"), "--vocab-size", "400", "--out", str(tmp_path / "r"), "--workers", "1")
    assert code == 0
    warning = next(line for line in out.splitlines() if line.startswith("warning: "))
    assert warning.startswith(
        "warning: the input does not look like text: of its 4,631 bytes, 78% are NUL bytes and 11% are not valid UTF-8"
    )
    longest = next(line for line in out.splitlines() if line.startswith("longest token: "))
    assert longest.startswith("longest token: '\\x00' × ") and len(longest) < 60, longest


def test_text_gets_no_warning(capsys, tmp_path):
    (tmp_path / "a.txt").write_text(TEXT + "naïve 日本 🙂")
    code, out, _ = run(capsys, "train", str(tmp_path / "a.txt"), "--vocab-size", "270", "--out", str(tmp_path / "r"), "--workers", "1")
    assert code == 0 and "warning:" not in out


def test_not_text_counts_nul_bytes_and_invalid_utf8_once_per_unique_pre_token():
    assert not_text({b"\x00\x00": 9, b"ok": 1}) == "the input does not look like text: of its 20 bytes, 90% are NUL bytes (a binary file?)."
    assert not_text({b"caf\xe9": 1, b"abcdefghijklmnopqrstuvwxyz": 2}) is None  # one Latin-1 byte in 56: text
    assert "% are not valid UTF-8" in not_text({b"\xff\xfe": 5, b"ok": 1})


def test_a_long_token_is_cut_in_the_summary():
    assert shown(b"\x00" * 256) == "'\\x00' × 256"
    assert shown(b"ab" * 100).endswith("…") and len(shown(b"ab" * 100)) < 70
    assert shown(b" the") == "' the'"


def test_train_bpe_on_a_small_corpus_warns_with_the_stop_sentence(tmp_path):
    path = tmp_path / "small.txt"
    path.write_text("hello world hello")
    with pytest.warns(
        StoppedEarly, match=r"^Stopped after 10 merges: no pair .* The vocabulary has 266 tokens, not the 10,000 asked for\.$"
    ) as caught:
        vocab, _ = train_bpe(path, 10_000, [])
    assert len(vocab) == 266
    assert caught[0].filename == __file__  # it points at the caller's line, not at bpe's
    with pytest.warns(StoppedEarly):
        train_bpe_text("hello", 300, [])


def test_a_run_that_reaches_its_size_or_its_min_pair_frequency_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        train_bpe_text(TEXT, 260, [])
        train_bpe_text(TEXT, 10_000, [], min_pair_frequency=21)  # every pair occurs 20 times, or a multiple


# ---------------------------------------------------------------------------
# outputs checked before the work (26.6), the right usage and the right words (26.7)


def test_train_refuses_an_output_it_cannot_make_before_pre_tokenizing(tmp_path, capsys):
    (tmp_path / "a.txt").write_text(TEXT)
    (tmp_path / "afile").write_text("x")
    for out, says in [
        ("/proc/nope", "Cannot write /proc/nope: no file can be made in /proc."),
        (tmp_path / "afile", "it is a file, not a folder"),
    ]:
        code, stdout, err = run(capsys, "train", str(tmp_path / "a.txt"), "--vocab-size", "300", "--out", str(out))
        assert code == 2 and says in one_error(err) and stdout == ""


def test_count_refuses_a_folder_as_its_output_before_counting(tmp_path, capsys):
    (tmp_path / "a.txt").write_text(TEXT)
    (tmp_path / "adir").mkdir()
    code, stdout, err = run(capsys, "count", str(tmp_path / "a.txt"), "--out", str(tmp_path / "adir"))
    assert code == 2 and one_error(err) == f"Cannot write {tmp_path / 'adir'}: it is a folder." and stdout == ""


def test_count_makes_a_missing_folder_for_its_output(tmp_path, capsys):
    (tmp_path / "a.txt").write_text(TEXT)
    code, _, _ = run(capsys, "count", str(tmp_path / "a.txt"), "--out", str(tmp_path / "new" / "c.parquet"), "--workers", "1")
    assert code == 0 and load_counts(tmp_path / "new" / "c.parquet")[0][b" lowest"] == 20


def test_an_unknown_option_prints_the_commands_usage(capsys):
    with pytest.raises(SystemExit) as e:
        main(["train", "corpus.txt", "--vocab-size", "300", "--out", "x", "--bogus"])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert err.startswith("usage: bpe train ") and err.endswith("bpe train: error: unrecognized arguments: --bogus\n")


def test_a_trainers_refusal_of_a_counts_file_names_it(tmp_path, capsys):
    path = tmp_path / "big.parquet"
    save_counts(path, {b"hello": 10**9, b"world": 3}, CountsInfo("gpt2", ()))
    with pytest.raises(ValueError, match=rf"^Cannot train on {path}: the positions trainer keeps every byte"):
        train_from_counts(path, 300, algorithm="positions")
    code, _, err = run(
        capsys, "train", "--from-counts", str(path), "--vocab-size", "300", "--algorithm", "positions", "--out", str(tmp_path / "r")
    )
    assert code == 2 and err.splitlines()[-1].startswith(f"error: Cannot train on {path}: the positions trainer"), err


# ---------------------------------------------------------------------------
# counts files: overflow (26.5), atomic (27.8)


def counts_at(path, counts: dict[bytes, int]):
    """A counts file as another tool could write it: any int64 count."""
    info = CountsInfo("gpt2", (), (), 0, sum(counts.values()), len(counts))
    table = pa.table({"token": pa.array(list(counts), pa.binary()), "count": pa.array(list(counts.values()), pa.int64())})
    pq.write_table(table.replace_schema_metadata({b"bpe.counts": json.dumps(metadata_of(info)).encode()}), path)
    return path


def test_merged_counts_that_overflow_int64_are_refused_naming_the_files(tmp_path, capsys):
    a = counts_at(tmp_path / "good.parquet", {b"x": MAX_COUNT - 5, b"y": 1})
    b = counts_at(tmp_path / "c.parquet", {b"x": 6})
    out = tmp_path / "m.parquet"
    out.write_bytes(b"the old file")
    code, _, err = run(capsys, "count", "--merge", str(a), str(b), "--out", str(out))
    assert code == 2
    assert one_error(err) == (
        f"Adding up {a} and {b} overflows: pre-token b'x' would count 9,223,372,036,854,775,808, "
        "more than the 2**63 - 1 a counts file's int64 column holds."
    )
    assert out.read_bytes() == b"the old file"
    assert merge_counts_files([a, counts_at(tmp_path / "ok.parquet", {b"x": 5})], out).pre_tokens == MAX_COUNT + 1  # x fits exactly


def test_save_counts_refuses_a_count_past_int64_naming_the_file(tmp_path):
    with pytest.raises(ValueError, match=r"^Cannot write .*c\.parquet: pre-token b'x' would count"):
        save_counts(tmp_path / "c.parquet", {b"x": 2**63}, CountsInfo("gpt2", ()))


def test_a_failed_count_keeps_the_counts_file_it_was_replacing(tmp_path, capsys, monkeypatch):
    (tmp_path / "a.txt").write_text(TEXT)
    out = tmp_path / "c.parquet"
    save_counts(out, {b"old": 1}, CountsInfo("gpt2", ()))
    before = out.read_bytes()

    def full(*_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    code, _, err = run(capsys, "count", str(tmp_path / "a.txt"), "--out", str(out), "--workers", "1")
    assert code == 2 and err.endswith(f"error: Cannot write {out}: the disk is full.\n"), err
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "c.parquet"]  # no temporary file left


def test_counting_in_this_process_reports_its_peak_memory(tmp_path):
    from bpe import count_inputs

    (tmp_path / "a.txt").write_text(TEXT)
    counted = count_inputs(tmp_path / "a.txt", workers=1)
    assert counted.workers == 1 and counted.worker_peak_rss > 10_000_000  # was 0, as the README's snippet printed (issue 26.8)


def test_a_read_error_names_the_input(tmp_path, capsys, monkeypatch):
    import errno

    from bpe.data import inputs

    def failing(*_):
        raise OSError(errno.EIO, "Input/output error")  # as read() raises it: no file name (issue 27.10)

    (tmp_path / "a.txt").write_text(TEXT)
    monkeypatch.setattr(inputs, "_read_range", failing)
    code, _, err = run(capsys, "count", str(tmp_path / "a.txt"), "--out", str(tmp_path / "c.parquet"), "--workers", "1")
    assert code == 2 and err.splitlines()[-1] == f"error: Input/output error: {tmp_path / 'a.txt'}"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=6), max_size=12))
def test_the_tokens_found_not_utf8_together_are_those_found_one_by_one(tokens):
    def invalid(token: bytes) -> bool:
        try:
            token.decode("utf-8")
            return False
        except UnicodeDecodeError:
            return True

    assert not_utf8(tokens) == [token for token in tokens if invalid(token)]
