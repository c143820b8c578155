"""Writing files so that a crash, a full disk or a signal leaves the old file or nothing, never a mix.

Every output the library and the CLI write goes through here: the bytes go to a
temporary name in the same folder (so the rename cannot cross file systems),
are flushed to disk, and only then renamed over the final path, which POSIX
makes atomic. A failure on the way removes the temporary file and raises
`OutputError`, whose one sentence names the file.

    with atomic.output("counts.parquet") as tmp:   # tmp: a path to write to
        write_the_file(tmp)                          # renamed to counts.parquet on success
    atomic.write_bytes("ids.bin", data)
    atomic.write_together({"a.json": a, "b.txt": b})  # both on disk before either is replaced

A file written here gets the permissions writing it in place would give: those of
the file it replaces, else 0666 less the user's umask (0644 under umask 022), or
the mode asked for (mode=0o600: a private cache entry).

What it does not do: replace a folder of several files as a whole (a tokenizer
folder keeps a manifest written last: see `save` in formats.py), or remove
temporary files when the process is killed by SIGKILL (nothing can); their
names start with `.` and end with `.tmp`, so they are easy to find.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

TMP_SUFFIX = ".tmp"


class OutputError(ValueError):
    """An output file could not be written; the message is one sentence naming it."""


def why(error: OSError) -> str:
    """An OSError as a short phrase: 'the disk is full', 'permission denied', ...

    pyarrow's 'Error writing bytes to file. Detail: [errno 28] No space left on device' is read by its errno too.
    """
    if error.errno is None and (number := re.search(r"\[errno (\d+)\]", str(error))):
        error = OSError(int(number.group(1)), os.strerror(int(number.group(1))))
    if error.errno == errno.ENOSPC:
        return "the disk is full"
    if error.errno == errno.EDQUOT:
        return "the disk quota is used up"
    if error.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if error.errno == errno.EROFS:
        return "the file system is read-only"
    if error.errno == errno.ENOENT:
        return "its folder does not exist"
    if error.errno == errno.EISDIR:
        return "it is a folder"
    if error.errno == errno.ENOTDIR:
        return "a part of its path is not a folder"
    return (error.strerror or str(error)).rstrip(".").lower()


def check_writable(path: str | os.PathLike, *, parents: bool = False) -> Path:
    """Raise OutputError now, before any work, if path cannot be written: a folder, a missing or unwritable parent.

    'out/counts.parquet' with no folder 'out' -> "Cannot write out/counts.parquet: its folder out does not exist."
    With parents=True a missing folder is fine if it can be made (its nearest existing folder is writable).
    """
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"Cannot write {path}: it is a folder.")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir() and not parents:
        raise OutputError(f"Cannot write {path}: its folder {parent} does not exist.")
    _probe(path, parent)
    return path


def check_folder(path: str | os.PathLike) -> Path:
    """Raise OutputError now, before any work, if a folder of outputs cannot be written at path (made if missing).

    '/proc/nope' -> "Cannot write to /proc/nope: permission denied." (or what the system says)
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputError(f"Cannot write to {path}: it is a file, not a folder.")
    _probe(path, path)
    return path


def _probe(path: Path, folder: Path) -> None:
    """Make and remove a temporary file in folder, or in its nearest existing ancestor if it does not exist yet."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise OutputError(f"Cannot write {path}: {folder} is a file, not a folder.")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=folder)
    except OSError as error:
        if error.errno == errno.ENOENT:  # the folder is there, yet no file can be made in it (/proc)
            raise OutputError(f"Cannot write {path}: no file can be made in {folder}.") from None
        raise OutputError(f"Cannot write {path}: {why(error)}.") from None
    os.close(fd)
    os.unlink(probe)


def _temporary(path: Path, mode: int | None) -> tuple[int, Path, int | None]:
    """A new file beside path, open for writing, and the permissions path must get when it is renamed there: mode,
    else those of the file it replaces; None: those it has, what the umask gives a new file. Raises OutputError.

    subtle: not tempfile.mkstemp, whose 0600 os.replace carried over to every output: a tokenizer
    folder written under umask 022 could not be read by a teammate or the container's app user.
    """
    parent = path.parent if str(path.parent) else Path(".")
    if mode is None:
        with contextlib.suppress(OSError):
            old = os.stat(path)
            if stat.S_ISREG(old.st_mode):
                mode = stat.S_IMODE(old.st_mode) & 0o777
    for _ in range(100):
        name = parent / f".{path.name}.{secrets.token_hex(4)}{TMP_SUFFIX}"
        try:
            # a new file: 0666 less the umask; else 0600 from the start (a private file is never another's to open)
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666 if mode is None else 0o600)
        except FileExistsError:
            continue
        except OSError as error:
            raise OutputError(f"Cannot write {path}: {why(error)}.") from None
        if mode is not None:  # its final mode, but one we may write while it is written (a replaced 0444 file)
            with contextlib.suppress(OSError):
                os.fchmod(fd, mode | stat.S_IRUSR | stat.S_IWUSR)
        return fd, name, mode
    raise OutputError(f"Cannot write {path}: no free temporary name beside it.")


@contextlib.contextmanager
def output(path: str | os.PathLike, *, mode: int | None = None) -> Iterator[Path]:
    """A temporary path beside `path` to write to; renamed over `path` when the block ends without an error.

    mode: the file's permissions (0o600: for this user only); None: those writing it in place would give,
    the replaced file's, or what the umask gives a new file.

    subtle: the temporary file is fsynced before the rename, so that after a power
    cut the final name never points at a file whose data was never written.
    """
    path = Path(path)
    fd, tmp, final = _temporary(path, mode)
    os.close(fd)
    try:
        yield tmp
        with open(tmp, "rb+") as written:
            os.fsync(written.fileno())
        if final is not None:
            os.chmod(tmp, final)
        os.replace(tmp, path)
    except OSError as error:
        raise OutputError(f"Cannot write {path}: {why(error)}.") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def write_bytes(path: str | os.PathLike, data: bytes, *, mode: int | None = None) -> None:
    """Path(path).write_bytes(data), atomically (mode: as for output)."""
    with output(path, mode=mode) as tmp:
        tmp.write_bytes(data)


def write_text(path: str | os.PathLike, text: str) -> None:
    """Path(path).write_text(text, encoding='utf-8'), atomically."""
    write_bytes(path, text.encode("utf-8"))


def write_together(files: Mapping[str | os.PathLike, bytes] | Sequence[tuple[str | os.PathLike, bytes]]) -> None:
    """Write several files so that none is replaced before all are on disk; then rename them in order, the last last.

    A full disk while writing leaves every old file as it was, and no temporary file.
    The renames need no space; should one fail (or the process die between two), the
    files are a mix of old and new. So a folder that must stay whole (a tokenizer's:
    formats.save) lists its files with their hashes in a manifest, which it renames
    twice: first saying a save is under way, last saying it finished (files given as
    pairs may name one path twice: each is renamed in its turn); loading checks it.
    """
    staged: list[tuple[Path, Path]] = []
    try:
        for path, data in files.items() if isinstance(files, Mapping) else files:
            path = Path(path)
            fd, name, final = _temporary(path, None)
            staged.append((name, path))
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                    out.flush()
                    os.fsync(out.fileno())
                    if final is not None:
                        os.fchmod(out.fileno(), final)
            except OSError as error:
                raise OutputError(f"Cannot write {path}: {why(error)}.") from None
        for tmp, path in staged:
            try:
                os.replace(tmp, path)
            except OSError as error:
                raise OutputError(f"Cannot write {path}: {why(error)}.") from None
        for folder in {path.parent for _, path in staged}:
            _sync_folder(folder)
    finally:
        for tmp, _ in staged:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()


def _sync_folder(folder: Path) -> None:
    """fsync a folder, so that its renames survive a power cut (where the system allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder if str(folder) else ".", os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
