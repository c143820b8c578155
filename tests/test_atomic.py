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


# ---------------------------------------------------------------------------
# permissions: those writing in place would give, never mkstemp's 0600


@pytest.fixture(params=[0o022, 0o077])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def mode(path) -> int:
    return os.stat(path).st_mode & 0o777


def test_a_new_file_gets_what_the_umask_gives(tmp_path, umask):
    atomic.write_bytes(tmp_path / "a.bin", b"a")
    atomic.write_together({tmp_path / "b.txt": b"b", tmp_path / "c.txt": b"c"})
    with atomic.output(tmp_path / "d.bin") as tmp:
        tmp.write_bytes(b"d")
    assert {p.name: mode(p) for p in tmp_path.iterdir()} == dict.fromkeys(["a.bin", "b.txt", "c.txt", "d.bin"], 0o666 & ~umask)


@pytest.mark.parametrize("old", [0o644, 0o600, 0o444])
def test_a_replaced_file_keeps_its_permissions(tmp_path, umask, old):
    for name in ("a.bin", "b.txt"):
        (tmp_path / name).write_bytes(b"old")
        (tmp_path / name).chmod(old)
    atomic.write_bytes(tmp_path / "a.bin", b"new")
    atomic.write_together({tmp_path / "b.txt": b"new"})
    assert [(p.read_bytes(), mode(p)) for p in sorted(tmp_path.iterdir())] == [(b"new", old)] * 2


def test_a_private_file_is_never_readable_by_others(tmp_path, umask, monkeypatch):
    seen = []
    replace = os.replace
    monkeypatch.setattr(os, "replace", lambda tmp, path: (seen.append(mode(tmp)), replace(tmp, path)))
    (tmp_path / "entry").write_bytes(b"old")
    (tmp_path / "entry").chmod(0o644)
    atomic.write_bytes(tmp_path / "entry", b"pickle", mode=0o600)
    assert seen == [0o600] and mode(tmp_path / "entry") == 0o600


def test_every_output_of_the_cli_is_readable_as_the_umask_says(tmp_path, umask):
    """train's files, count's parquet, encode's .npy and its sidecar, decode's text: what a teammate may read."""
    from bpe.cli import main

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low lower lowest newer newest widest\n" * 20)
    corpus.chmod(0o644)
    out = tmp_path / "out"
    assert main(["train", str(corpus), "--vocab-size", "270", "--out", str(out / "tok"), "--workers", "1"]) == 0
    assert main(["count", str(corpus), "--out", str(out / "c.parquet"), "--workers", "1"]) == 0
    assert main(["encode", str(out / "tok"), str(corpus), "--out", str(out / "ids.npy"), "--workers", "2"]) == 0
    assert main(["decode", str(out / "tok"), "--file", str(out / "ids.npy"), "--out", str(out / "back.txt")]) == 0
    written = {str(p.relative_to(out)): mode(p) for p in out.rglob("*") if p.is_file()}
    assert len(written) >= 8 and "ids.npy" in written and "c.parquet" in written, written
    assert written == dict.fromkeys(written, 0o666 & ~umask)
