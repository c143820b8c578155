"""bpe.atomic: an output is the old file or the new one, never a mix, and a failure is one sentence naming it."""

from __future__ import annotations

import errno
import os

import pytest

from bpe import atomic


def test_a_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    atomic.write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_an_error_while_writing_keeps_the_old_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic.output(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_full_disk_names_the_file_and_keeps_the_old_one(tmp_path, monkeypatch):
    target = tmp_path / "counts.parquet"
    target.write_text("old")

    def full(*_):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(atomic.OutputError, match=r"^Cannot write .*counts\.parquet: the disk is full\.$"):
        atomic.write_text(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["counts.parquet"]


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda d: d / "adir", "it is a folder"),
        (lambda d: d / "missing" / "x.npy", "does not exist"),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_the_work(tmp_path, make, why):
    (tmp_path / "adir").mkdir()
    with pytest.raises(atomic.OutputError, match=why):
        atomic.check_writable(make(tmp_path))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_folder_is_refused_before_the_work(tmp_path):
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(atomic.OutputError, match="permission denied"):
            atomic.check_writable(tmp_path / "x.txt")
    finally:
        tmp_path.chmod(0o700)


def test_an_error_that_carries_its_errno_only_in_its_text_is_read_by_it():
    error = OSError("Error writing bytes to file. Detail: [errno 28] No space left on device")  # as pyarrow raises it
    assert atomic.why(error) == "the disk is full"
