"""What the server builds for every class, kept on disk between starts: the standard library's prose, traces, vocabularies.

A fresh server built the 2 MB preset's prose (3-4 s of its own processor), its
step-through trace (5-20 s in a worker) and the real tokenizers' vocabulary
counts again on every start, while the first class waited. Each is now a file
in a private folder, found again on the next start.

Where: $BPE_CACHE, else $XDG_CACHE_HOME/bpe-workbench, else ~/.cache/bpe-workbench;
BPE_CACHE=off keeps nothing. The folder is made 0700 (only this user may enter it).

What: an entry's file name is a digest of its key and of the code that made it
(`CODE`: the sources of bpe/ and serve/, and Python's version), so a change to
either is a new entry, never an old one read as new. Files are written through
bpe/atomic.py: a crash leaves the old file or none. The oldest entries go once
the folder holds more than MAX_BYTES.

Safe: text is kept as raw bytes. Traces and vocabularies are pickled -- our own
frozen dataclasses -- and a pickle is read only from a folder that this user
owns and no one else may enter, from a file this user owns that no one else may
write: nothing another user (or a download, an upload) put there is ever
unpickled. Anything else about an entry -- unreadable, truncated, not a pickle
-- counts as no entry, and the work is done again.

What it does not do: decide what to keep (serve/jobs.py and ui/corpus.py do), or import Streamlit.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import pickle
import stat
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from bpe import atomic
from bpe.files.load import own_file, private_folder
from serve import settings

log = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[1]
MAX_BYTES = 1 << 30  # the folder's size; past it the least recently used entries go
T = TypeVar("T")


def folder() -> Path | None:
    """The cache folder, made private if new; None when turned off or when it is not private (then nothing is read)."""
    base = settings.cache_folder()
    if base is None:
        return None
    try:
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = base.stat()
    except OSError as e:
        log.warning("no disk cache: %s (%s)", base, e)
        return None
    if not private_folder(base):
        log.warning("no disk cache: %s is not private to this user (owner %s, mode %o)", base, info.st_uid, stat.S_IMODE(info.st_mode))
        return None
    return base


@cache
def code() -> str:
    """A digest of the code whose results are kept: every .py file of bpe/ and serve/ (and the compiled core's sources), and Python's version."""
    digest = hashlib.blake2b(sys.version.encode(), digest_size=16)
    for path in sorted([*ROOT.glob("bpe/**/*.py"), *ROOT.glob("bpe/**/*.c"), *ROOT.glob("bpe/**/*.h"), *ROOT.glob("serve/*.py")]):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def path_of(kind: str, key: Any) -> Path | None:
    """Where the entry for (kind, key) lives: kind-<digest of key and code>. key's repr names it, so it must be plain data."""
    where = folder()
    if where is None:
        return None
    return where / f"{kind}-{hashlib.blake2b(f'{key!r} {code()}'.encode(), digest_size=16).hexdigest()}"


def _read(path: Path | None) -> bytes | None:
    if path is None or not own_file(path):  # ours, and no one else may write it (folder() checked the folder)
        return None
    try:
        data = path.read_bytes()
        os.utime(path)  # used now: the least recently used go first
        return data
    except OSError:
        return None


def _write(path: Path | None, data: bytes) -> None:
    if path is None:
        return
    try:
        atomic.write_bytes(path, data, mode=0o600)
    except (OSError, atomic.OutputError) as e:  # a full disk: the class goes on without the entry
        log.warning("not kept on disk: %s", e)
        return
    _trim(path.parent)


def _trim(where: Path) -> None:
    """Remove the least recently used entries while the folder holds more than MAX_BYTES."""
    with contextlib.suppress(OSError):
        entries = sorted((p.stat().st_mtime, p.stat().st_size, p) for p in where.iterdir() if p.is_file() and not p.name.startswith("."))
        total = sum(size for _, size, _ in entries)
        for _, size, entry in entries:
            if total <= MAX_BYTES:
                break
            entry.unlink(missing_ok=True)
            total -= size


def kept_bytes(kind: str, key: Any, make: Callable[[], bytes]) -> bytes:
    """make()'s bytes, from the disk when an earlier start kept them, else made now and kept."""
    path = path_of(kind, key)
    found = _read(path)
    if found is not None:
        return found
    made = make()
    _write(path, made)
    return made


def load(kind: str, key: Any) -> Any | None:
    """The value an earlier start kept for (kind, key), or None."""
    path = path_of(kind, key)
    data = _read(path)
    if data is None:
        return None
    try:
        return pickle.loads(data)  # our own file, in our own private folder: see the module's docstring
    except Exception as e:  # noqa: BLE001  (truncated, or from a class that changed: made again)
        log.warning("ignored %s: %s", path, e)
        return None


def kept(kind: str, key: Any, make: Callable[[], T], keep: Callable[[T], bool] = lambda value: True) -> T:
    """make()'s value, unpickled from the disk when an earlier start kept it, else made now and kept if keep(value).

    The pickle is written with serve.pool's Pickler (frozen dataclasses as calls to their class: twice as fast to load).
    """
    from serve.pool import Pickler

    found = load(kind, key)
    if found is not None:
        return found
    path = path_of(kind, key)
    made = make()
    if keep(made):
        buffer = io.BytesIO()
        Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(made)
        _write(path, buffer.getvalue())
    return made
