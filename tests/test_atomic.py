"""bpe.atomic: an output is the old file or the new one, never a mix, and a failure is one sentence naming it."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bpe import atomic

ROOT = Path(__file__).resolve().parents[1]


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


@pytest.fixture
def umask():
    """Set the process's umask for a test (and put it back)."""
    before = os.umask(0o022)
    os.umask(before)
    yield lambda mask: os.umask(mask)
    os.umask(before)


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_what_is_written_gets_the_mode_the_umask_gives_a_new_file(tmp_path, umask, mask, mode):
    # mkstemp makes 0600 files and the rename kept it: a tokenizer saved for a class was unreadable to the class
    umask(mask)
    atomic.write_bytes(tmp_path / "one.bin", b"x")
    with atomic.output(tmp_path / "two.parquet") as tmp:
        tmp.write_bytes(b"y")
    atomic.write_together({tmp_path / "a.json": b"{}", tmp_path / "b.txt": b"z"})
    assert {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()} == dict.fromkeys(
        ["one.bin", "two.parquet", "a.json", "b.txt"], mode
    )


def test_the_umask_is_read_where_proc_is_missing_too(umask, monkeypatch):
    umask(0o027)
    assert atomic._umask() == 0o027
    real_open = open

    def without_proc(path, *args, **kwargs):
        if path == "/proc/self/status":
            raise FileNotFoundError(2, "No such file or directory")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", without_proc)
    assert atomic._umask() == 0o027 and os.umask(0o027) == 0o027  # read, and left as it was


def test_bpe_train_writes_files_others_can_read(tmp_path):
    (tmp_path / "c.txt").write_text("low lower lowest newer newest widest\n")
    done = subprocess.run(
        ["sh", "-c", f"umask 022 && {sys.executable} -m bpe train c.txt --vocab-size 262 --out o"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    modes = {p.name: oct(p.stat().st_mode & 0o777) for p in (tmp_path / "o").iterdir()}
    assert modes and set(modes.values()) == {"0o644"}, modes
