"""Arrays of token ids on disk: NumPy's .npy and raw .bin files, written as a stream and read back as one.

What it does: `IdsWriter` appends ids to an output file in constant memory, as
uint16 when every id of the tokenizer fits (a vocabulary below 65,536), else
uint32, little-endian; a .npy file is NumPy's format, so `np.load(path,
mmap_mode="r")` opens it without reading it, and a .bin file is the raw array
with its dtype and length in `<name>.json` beside it. The file is written under
a temporary name and renamed when complete (bpe.atomic): a failure leaves the
old file or none. `read_ids` streams the ids of a .npy, .bin or text file
(whitespace-separated decimal ids) a block at a time, for `bpe decode`.

A dataset encoded on a cluster is a folder of shards instead (tokenizer/ray_encode.py): .npy files
and `manifest.json`, written last, which lists them in order with their counts. `read_ids` and
`load_ids` read it as one array; so does NumPy alone:

    m = json.load(open("ids/manifest.json"))
    ids = np.concatenate([np.load(f"ids/{s['file']}", mmap_mode="r") for s in m["shards"]])

Not here: encoding (encode_files.py); NumPy is not needed to write or read (load_ids uses it).
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import sys
from array import array
from collections.abc import Iterator
from pathlib import Path

from .. import atomic

NPY_MAGIC = b"\x93NUMPY\x01\x00"
MAX_HEADER = 10_000  # bytes of a .npy header at most, as numpy's np.load reads them (max_header_size)
HEADER_BYTES = 128  # the whole .npy header, padded, so that the length can be written in place at the end
BLOCK = 1 << 20  # ids read at a time
DTYPES = {"uint16": ("H", "<u2", 2), "uint32": ("I", "<u4", 4)}  # name -> (array typecode, numpy descr, bytes)
SIDECAR = ".json"  # ids.bin -> ids.bin.json
FORMAT = "bpe-workbench-ids"
MANIFEST = "manifest.json"  # a folder of shards: the shards in order, with their counts
SHARDS_FORMAT = "bpe-workbench-ids-shards"


def dtype_for(max_id: int) -> str:
    """uint16 when every id fits in 16 bits, else uint32."""
    return "uint16" if max_id < 1 << 16 else "uint32"


def kind_of(path: str | os.PathLike) -> str:
    """'npy' or 'bin' from an output's name; ValueError for anything else."""
    suffix = Path(path).suffix.lower()
    if suffix not in (".npy", ".bin"):
        raise ValueError(f"{path}: the ids are written as .npy (NumPy) or .bin (raw, its dtype in {Path(path).name}.json); name it so.")
    return suffix[1:]


def npy_header(dtype: str, count: int) -> bytes:
    """A .npy header (version 1.0) of exactly HEADER_BYTES for a 1-D array of count ids."""
    text = f"{{'descr': '{DTYPES[dtype][1]}', 'fortran_order': False, 'shape': ({count},), }}"
    room = HEADER_BYTES - len(NPY_MAGIC) - 2
    return NPY_MAGIC + room.to_bytes(2, "little") + text.ljust(room - 1).encode("latin-1") + b"\n"


class IdsWriter:
    """Appends ids to path (.npy or .bin) as they come; `close()` completes the file, `abort()` leaves the old one.

    with IdsWriter("ids.npy", "uint16") as out:
        out.write([15496, 995])     # a list, an array, or bytes already in the file's dtype
    """

    def __init__(self, path: str | os.PathLike, dtype: str, meta: dict | None = None) -> None:
        self.path, self.dtype, self.kind = Path(path), dtype, kind_of(path)
        self.meta = dict(meta or {})
        self.count = 0
        self._output = atomic.output(self.path)
        self._tmp = self._output.__enter__()
        self._file = open(self._tmp, "wb")  # noqa: SIM115  (closed in close/abort)
        if self.kind == "npy":
            self._file.write(npy_header(dtype, 0))

    def write(self, ids) -> None:
        if isinstance(ids, (bytes, bytearray, memoryview)):
            data = bytes(ids)
            self.count += len(data) // DTYPES[self.dtype][2]
        else:
            block = ids if isinstance(ids, array) and ids.typecode == DTYPES[self.dtype][0] else array(DTYPES[self.dtype][0], ids)
            if sys.byteorder != "little":
                block.byteswap()
            data = block.tobytes()
            self.count += len(block)
        try:
            self._file.write(data)
        except OSError as error:
            self.abort()
            raise atomic.OutputError(f"Cannot write {self.path}: {atomic.why(error)}.") from None

    def rewind(self) -> None:
        """Start again from no ids (after a pool that broke halfway, the shards are encoded again here)."""
        self._file.seek(HEADER_BYTES if self.kind == "npy" else 0)
        self._file.truncate()
        self.count = 0

    def close(self) -> Path:
        try:
            if self.kind == "npy":
                self._file.seek(0)
                self._file.write(npy_header(self.dtype, self.count))
            self._file.close()
            if self.kind == "bin":
                sidecar = {"format": FORMAT, "version": 1, "dtype": self.dtype, "byteorder": "little", "count": self.count} | self.meta
                atomic.write_text(str(self.path) + SIDECAR, json.dumps(sidecar, indent=1) + "\n")
        except OSError as error:
            self.abort()
            raise atomic.OutputError(f"Cannot write {self.path}: {atomic.why(error)}.") from None
        self._output.__exit__(None, None, None)  # renamed into place
        return self.path

    def abort(self) -> None:
        """Remove the temporary file; the old output, if any, stays."""
        with contextlib.suppress(OSError):
            self._file.close()
        with contextlib.suppress(Exception):
            self._output.__exit__(RuntimeError, RuntimeError("aborted"), None)

    def __enter__(self) -> IdsWriter:
        return self

    def __exit__(self, kind, error, trace) -> None:
        if kind is None:
            self.close()
        else:
            self.abort()


# ---------------------------------------------------------------------------
# reading ids back, a block at a time


def read_ids(path: str | os.PathLike, block: int = BLOCK) -> Iterator[array]:
    """The ids of a .npy, a .bin (with its .json), a folder of shards or a text file of decimal ids, in blocks; ValueError naming the file."""
    path = Path(path)
    if is_shards(path):
        for shard, count in shard_files(path):
            yield from _read_shard(shard, count, block)
        return
    try:
        with open(path, "rb") as f:
            head = f.read(len(NPY_MAGIC) - 2)
            f.seek(0)
            if head == NPY_MAGIC[:6]:
                yield from _read_npy(path, f, block)
            elif path.suffix.lower() == ".bin":
                yield from _read_bin(path, f, block)
            else:
                yield from text_ids(f, str(path), block)
    except OSError as e:
        raise ValueError(f"{path}: cannot be read ({e.strerror or e}).") from None


def _read_npy(path: Path, f, block: int) -> Iterator[array]:
    version = f.read(len(NPY_MAGIC))[6:8]
    size = 2 if version[:1] == b"\x01" else 4
    length = int.from_bytes(f.read(size), "little")
    try:
        header = ast.literal_eval(f.read(length).decode("latin-1")) if length <= MAX_HEADER else None  # numpy's own limit
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        header = None
    if not isinstance(header, dict) or header.get("fortran_order") or not isinstance(header.get("shape"), tuple):
        raise ValueError(f"{path}: not a .npy file of token ids (its header cannot be read).")
    codes = {"<u2": "H", "<u4": "I", "|u1": "B", "<i4": "i", "<i8": "q", "<u8": "Q", "<i2": "h"}
    code, shape = codes.get(header.get("descr")), header["shape"]
    if code is None or len(shape) != 1:
        raise ValueError(f"{path}: holds {header.get('descr')} of shape {shape}; token ids are one row of whole numbers.")
    if type(shape[0]) is not int or shape[0] < 0:  # ('x',), (-5,), (True,): no count of ids; the file is damaged
        raise ValueError(f"{path}: its header gives the shape {shape}, which is no number of ids; the file is damaged.")
    yield from _blocks(path, f, code, shape[0], block)


def _read_bin(path: Path, f, block: int) -> Iterator[array]:
    sidecar = Path(str(path) + SIDECAR)
    try:
        meta = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ValueError(f"{path}: a raw .bin needs {sidecar.name} beside it, which says its dtype (bpe encode writes both).") from None
    dtype = meta.get("dtype") if isinstance(meta, dict) else None
    if dtype not in DTYPES or not isinstance(meta.get("count"), int):
        raise ValueError(f"{sidecar}: expected the dtype (uint16 or uint32) and the count of the ids in {path.name}.")
    if path.stat().st_size != meta["count"] * DTYPES[dtype][2]:
        raise ValueError(
            f"{path}: holds {path.stat().st_size:,} bytes, but {sidecar.name} says {meta['count']:,} ids of {dtype}: they are not of one run."
        )
    yield from _blocks(path, f, DTYPES[dtype][0], meta["count"], block)


def _blocks(path: Path, f, code: str, count: int, block: int) -> Iterator[array]:
    left = count
    while left > 0:
        ids = array(code)
        data = f.read(min(left, block) * ids.itemsize)
        if not data or len(data) % ids.itemsize:
            raise ValueError(f"{path}: ends after {count - left:,} of the {count:,} ids its header announces; it is truncated.")
        ids.frombytes(data)
        if sys.byteorder != "little":
            ids.byteswap()
        left -= len(ids)
        yield ids


# ---------------------------------------------------------------------------
# a folder of shards (encoded on a cluster): .npy files and the manifest that orders them


def shards_manifest(dtype: str, shards: list[dict], meta: dict | None = None) -> dict:
    """The manifest of a folder of shards: [{"file": "ids-00000.npy", "count": 3, ...}, ...] in order, their dtype and total."""
    return (
        {"format": SHARDS_FORMAT, "version": 1, "dtype": dtype, "count": sum(s["count"] for s in shards)}
        | dict(meta or {})
        | {"shards": shards}
    )


def is_shards(path: Path) -> bool:
    """A folder of shards, or its manifest.json."""
    return path.is_dir() or (path.name == MANIFEST and path.is_file())


def read_manifest(path: str | os.PathLike) -> tuple[Path, dict]:
    """(the folder, its manifest) of a folder of shards or its manifest.json; ValueError in one sentence if it is none."""
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(
            f"{folder}: a folder of ids holds {MANIFEST}, which lists its shards (bpe encode --ray writes it last); it has none."
        ) from None
    except (OSError, ValueError) as e:
        raise ValueError(f"{folder / MANIFEST}: cannot be read ({getattr(e, 'strerror', None) or e}).") from None
    shards = manifest.get("shards") if isinstance(manifest, dict) else None
    if (
        manifest.get("format") != SHARDS_FORMAT
        or manifest.get("dtype") not in DTYPES
        or not isinstance(shards, list)
        or not all(
            isinstance(s, dict) and isinstance(s.get("file"), str) and type(s.get("count")) is int and s["count"] >= 0 for s in shards
        )
    ):
        raise ValueError(f"{folder / MANIFEST}: not a manifest of token ids (it lists no shards with their counts).")
    return folder, manifest


def shard_files(path: str | os.PathLike) -> list[tuple[Path, int]]:
    """Each shard's path and count, in order; ValueError if the manifest names a file outside its folder."""
    folder, manifest = read_manifest(path)
    found = []
    for shard in manifest["shards"]:
        name = shard["file"]
        if Path(name).name != name or name in ("", ".", ".."):  # a manifest may not point elsewhere
            raise ValueError(f"{folder / MANIFEST}: the shard {name!r} is not a file of that folder.")
        found.append((folder / name, shard["count"]))
    return found


def _read_shard(path: Path, count: int, block: int) -> Iterator[array]:
    seen = 0
    for ids in read_ids(path, block):
        seen += len(ids)
        yield ids
    if seen != count:
        raise ValueError(f"{path}: holds {seen:,} ids, but {MANIFEST} says {count:,}: the shard is not of this run.")


def load_ids(path: str | os.PathLike, mmap_mode: str | None = "r"):
    """The ids of a .npy, a .bin or a folder of shards as one NumPy array (needs NumPy).

    A .npy or .bin is mapped, not read (mmap_mode, as np.load); a folder's shards are mapped and
    joined, which reads them into memory: to walk a large one, read_ids gives it a block at a time.
    """
    import numpy as np

    path = Path(path)
    if is_shards(path):
        dtype = np.dtype(DTYPES[read_manifest(path)[1]["dtype"]][1])
        parts = []
        for shard, count in shard_files(path):
            part = load_ids(shard, mmap_mode)
            if len(part) != count:
                raise ValueError(f"{shard}: holds {len(part):,} ids, but {MANIFEST} says {count:,}: the shard is not of this run.")
            parts.append(part)
        return np.concatenate(parts) if parts else np.zeros(0, dtype)
    if path.suffix.lower() == ".bin":
        dtype = np.dtype(DTYPES[json.loads(Path(str(path) + SIDECAR).read_text(encoding="utf-8"))["dtype"]][1])
        return np.fromfile(path, dtype) if mmap_mode is None or not path.stat().st_size else np.memmap(path, dtype, mmap_mode)
    return np.load(path, mmap_mode=mmap_mode)


def text_ids(f, name: str, block: int = BLOCK) -> Iterator[array]:
    """Decimal ids separated by whitespace, from a binary stream, in chunks cut at whitespace (standard input too)."""
    carry = b""
    while True:
        data = f.read(block * 8)
        text = carry + data
        if data:
            cut = max(text.rfind(c) for c in (b" ", b"\n", b"\t", b"\r"))
            text, carry = (text[: cut + 1], text[cut + 1 :]) if cut >= 0 else (b"", text)
        yield parse_ids(text, name)
        if not data:
            return


_NOT_AN_ID = re.compile(rb"[^0-9\s]|[0-9]{11,}")


def parse_ids(text: bytes | str, name: str = "the input") -> array:
    """Decimal ids separated by whitespace, as an array of uint32; ValueError naming the first word that is not one.

    b'15496 995' -> array('I', [15496, 995]); '٣' and '1_000', which int() takes, are refused.
    """
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    try:
        if not _NOT_AN_ID.search(data):
            return array("I", map(int, data.split()))
    except OverflowError:
        pass
    bad = next(w for w in data.split() if _NOT_AN_ID.search(w) or int(w) >= 1 << 32).decode("utf-8", "replace")
    shown = repr(bad) if len(bad) <= 20 else f"{bad[:20]!r}... ({len(bad):,} characters)"
    raise ValueError(f"{name}: {shown} is not a token id; ids are whole numbers below 2**32, such as 256.")


# ---------------------------------------------------------------------------
# decoding a stream of ids


class Decoder:
    """The bytes of blocks of ids, exactly as Tokenizer.decode_bytes gives them, faster for long streams.

    With NumPy (optional), a block is gathered from one array of every token's bytes in
    a few vectorised steps (~150 MB/s of text); without it, a token at a time (~35 MB/s).
    """

    def __init__(self, vocab: dict[int, bytes]) -> None:
        size = max(vocab) + 1 if vocab else 0
        self.vocab, self.size = vocab, size
        self.table = [b""] * size
        for i, token in vocab.items():
            self.table[i] = token
        try:
            import numpy as np
        except ImportError:
            self.np = None
            return
        self.np = np
        self.lengths = np.array([len(t) for t in self.table], dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)
        self.known = np.zeros(size, dtype=bool)
        self.known[list(vocab)] = True
        self.blob = np.frombuffer(b"".join(self.table), dtype=np.uint8)

    def decode(self, ids) -> bytes:
        if not len(ids):
            return b""
        np = self.np
        if np is None:
            try:
                return b"".join(map(self.vocab.__getitem__, ids))
            except KeyError:
                self._unknown(ids)
        block = np.asarray(ids, dtype=np.int64)
        if block.min() < 0 or block.max() >= self.size or not self.known[block].all():
            self._unknown(ids)
        lengths, starts = self.lengths[block], self.starts[block]
        ends = np.cumsum(lengths)
        shift = np.repeat(starts - (ends - lengths), lengths)  # each output byte's index in blob, less its position
        return self.blob[np.arange(int(ends[-1])) + shift].tobytes()

    def _unknown(self, ids) -> None:
        bad = next(i for i in ids if i not in self.vocab)
        raise ValueError(f"Token id {bad} is not in the vocabulary (ids {min(self.vocab)}..{max(self.vocab)}).")
