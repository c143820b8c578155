"""Input files of every format: found from paths and globs, cut into shards, read as documents.

What it does: turn paths and globs into `Input`s -- plain text, compressed text
(.gz, .bz2, .xz, .zst), JSON Lines (a text field per line) and Parquet (a text
column) -- cut each into `Shard`s that can be counted independently (byte
ranges of plain text and JSON Lines, row groups of Parquet, a compressed file
whole), and read a shard as a stream of `Batch`es of documents. A document
boundary (a JSON line, a Parquet row) works like a special token: no pre-token
spans it. Reading is streamed: at most a block of text is held at a time.

Memory stays flat whatever a document's size. Text is cut only where no
pre-token can span the cut (a safe place); a stretch of more than MAX_STRETCH
with no safe place in it -- one long line of minified code, a gigabyte of
`a` -- is cut anyway (not inside a character or a special token), and each
such cut is counted in the batches (`unsafe_cuts`) so that the caller says
so: a pre-token across it becomes two. So at most a block and MAX_STRETCH
of text are held, however long a document is.
A JSON line cannot be cut: one longer than MAX_RECORD is refused. A compressed
input that expands more than MAX_RATIO times (past MIN_EXPANSION) is refused
as a decompression bomb.

What it does not do: count anything (count.py does, over the documents read
here). Every problem with an input is a ValueError whose one sentence names the
file, and the line or row group.

    inputs = resolve_inputs(["data/*.jsonl.gz", "notes.txt"])
    for shard in shards(inputs[0], Reading()):
        for batch in read_shard(shard, Reading()):
            batch.documents  # ['first record's text', 'second ...']
"""

from __future__ import annotations

import bz2
import glob
import gzip
import io
import json
import lzma
import os
import re
import warnings
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

from ..renamed import renamed
from ..text.pretokenizers import (  # invalid bytes are kept as bytes
    DEFAULT,
    ENCODING,
    ERRORS,
    PreTokenizer,
    check_special_tokens,
    pretokenizer_of,
)

CHUNK_BYTES = 8 << 20  # a shard of a plain file, and a block read from a stream
MAX_STRETCH = 8 << 20  # bytes of text without a safe place to cut, past which it is cut anyway
MAX_RECORD = 256 << 20  # bytes of one JSON line at most: a record is parsed whole
MAX_RATIO = 1000  # a compressed input may expand this many times (text: 3-10; gzip at most ~1030) ...
MIN_EXPANSION = 64 << 20  # ... once it has given this many bytes (a small file of one repeated byte is fine)
BATCH_ROWS = 4096  # Parquet rows read at a time
COMPRESSIONS = (".gz", ".bz2", ".xz", ".zst")
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
PARQUET_SUFFIXES = (".parquet", ".pq")


@dataclass(frozen=True)
class Reading:
    """How inputs are read: where the text is in a record, how text files are cut, what a document is.

    One value for every function that reads inputs (counting, training, encoding datasets, Ray), as
    TrainSpec is for training; their keyword arguments build one with `Reading.of`, each default written here once.
    """

    text_field: str = "text"  # JSON Lines
    text_column: str = "text"  # Parquet
    special_tokens: tuple[str, ...] = ()  # text files are cut only where no special token is split
    pretokenizer: PreTokenizer = DEFAULT  # text files are cut only where no pre-token is split
    chunk_bytes: int = CHUNK_BYTES
    split_lines: bool = False  # each line (newline kept) is a document, as HuggingFace's train(files) reads a file
    compiled: bool = True  # count with a compiled engine where it is exact (text/tally.py; False: the Python path only)

    @classmethod
    @renamed(pattern="pretokenizer")
    def of(cls, reading: Reading | None = None, **settings) -> Reading:
        """reading (or the defaults) with settings changed and checked: Reading.of(pretokenizer="cl100k", split_lines=True).

        An unknown name is a TypeError; a bad value a ValueError with one sentence (a str of special
        tokens is refused, not split into characters). pattern=, the old name of pretokenizer=, is still accepted.
        """
        names = {f.name for f in fields(cls)}
        unknown = set(settings) - names
        if unknown:
            raise TypeError(f"Unknown reading setting(s) {', '.join(sorted(unknown))}; a Reading has {', '.join(sorted(names))}.")
        if "pretokenizer" in settings:
            settings["pretokenizer"] = pretokenizer_of(settings["pretokenizer"])
        if "special_tokens" in settings:
            check_special_tokens(settings["special_tokens"])
            settings["special_tokens"] = tuple(settings["special_tokens"])
        if "split_lines" in settings:
            settings["split_lines"] = _flag(settings["split_lines"])
        return replace(reading or DEFAULT_READING, **settings)


def _flag(split_lines: object) -> bool:
    if not isinstance(split_lines, bool):
        raise ValueError(f"split_lines must be True or False, not {split_lines!r}.")
    return split_lines


DEFAULT_READING = Reading()  # each reading default, written once: TrainSpec and the keyword functions take theirs from it


@dataclass(frozen=True)
class Input:
    path: Path
    format: str  # "text", "jsonl" or "parquet"
    compression: str  # "" or one of COMPRESSIONS
    size: int  # bytes on disk


@dataclass(frozen=True)
class Shard:
    """A piece of one input that can be counted on its own."""

    input: Input
    start: int  # a byte offset; for Parquet, a row group
    stop: int  # a byte offset (exclusive); for Parquet, the row group again
    size: int  # bytes on disk it covers, for progress; a file's shards add up to its size
    cut_unsafely: bool = False  # it starts where no cut was safe (a plain text file with no safe place for a block)


@dataclass(frozen=True)
class Batch:
    documents: list[str] | list[bytes]  # each one a document, or a stretch of one cut at a safe place (bytes: undecoded)
    text_bytes: int  # bytes of text in them
    disk_bytes: int  # bytes of the file read to get them
    unsafe_cuts: int = 0  # places among them cut where no cut was safe (see the module's docstring)


class CutWarning(UserWarning):
    """Text was cut where no cut is safe (see the module's docstring): a pre-token across such a place became two."""


def warn_unsafe_cuts(cuts: int) -> None:
    """Say, as one CutWarning (the CLI prints it as a warning: line), that text was cut at `cuts` places where no cut is safe."""
    if cuts:
        warnings.warn(
            f"{cuts:,} stretch{'es' if cuts > 1 else ''} of text without a safe place to cut in {MAX_STRETCH / (1 << 20):,g} MB "
            f"(a newline between printable characters, a special token) {'were' if cuts > 1 else 'was'} cut anyway, to keep memory flat: "
            "a pre-token across such a cut was read as two.",
            CutWarning,
            stacklevel=3,
        )


# ---------------------------------------------------------------------------
# finding inputs


def resolve_inputs(paths: str | os.PathLike | Sequence[str | os.PathLike]) -> list[Input]:
    """Paths and globs -> inputs, each file once, in the order given (a glob's matches sorted).

    A path that exists is taken as it is, even if it holds glob characters.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not paths:
        raise ValueError("No input given; name one or more files or globs.")
    found: dict[Path, Input] = {}
    for given in paths:
        for path in _expand(given):
            if path not in found:
                found[path] = describe(path)
    return list(found.values())


def _expand(given: str | os.PathLike) -> list[Path]:
    path = Path(given)
    if path.exists():
        if path.is_dir():
            raise ValueError(f"{path} is a directory; give a text file (or a glob such as {path / '*.txt'}).")
        if path.is_char_device() or path.is_block_device():  # /dev/zero would be read forever (a FIFO may wait for its writer)
            raise ValueError(f"{path} is a device, not a file.")
        return [path]
    if glob.has_magic(str(given)):
        matches = sorted(Path(m) for m in glob.glob(str(given), recursive=True) if Path(m).is_file())
        if not matches:
            raise ValueError(f"{given} matches no file.")
        return matches
    raise ValueError(f"No such file: {path}.")


def describe(path: Path) -> Input:
    """The format of a file, from its name: x.jsonl.gz is gzip-compressed JSON Lines."""
    name = path.name.lower()
    compression = next((c for c in COMPRESSIONS if name.endswith(c)), "")
    name = name.removesuffix(compression)
    if name.endswith(PARQUET_SUFFIXES):
        if compression:
            raise ValueError(f"{path}: a Parquet file compresses its own columns; give the {compression}-free file.")
        return Input(path, "parquet", "", path.stat().st_size)
    fmt = "jsonl" if name.endswith(JSONL_SUFFIXES) else "text"
    return Input(path, fmt, compression, path.stat().st_size)


# ---------------------------------------------------------------------------
# cutting inputs into shards


def shards(source: Input, options: Reading) -> list[Shard]:
    """Pieces of one input that can be counted independently (one, for a compressed file)."""
    if source.compression:
        return [Shard(source, 0, source.size, source.size)]
    if source.format == "parquet":
        return _row_groups(source, options)
    unsafe: set[int] = set()
    if source.format == "jsonl":
        bounds = line_boundaries(source.path, options.chunk_bytes)
    else:
        bounds = chunk_boundaries(source.path, options.special_tokens, options.pretokenizer, options.chunk_bytes, unsafe)
    return [Shard(source, a, b, b - a, a in unsafe) for a, b in zip(bounds, bounds[1:])]


def line_boundaries(path: Path, chunk_bytes: int) -> list[int]:
    """Byte offsets [0, ..., size] cutting a file into ~chunk_bytes pieces just after newlines.

    A line longer than MAX_RECORD is refused: a JSON record is parsed whole.
    """
    size = path.stat().st_size
    bounds = [0]
    with open(path, "rb") as f:
        guess = chunk_bytes
        while guess < size:
            f.seek(guess)
            _skip_line(f, path)
            cut = f.tell()
            if cut >= size:
                break
            _check_record(path, cut - bounds[-1], chunk_bytes)
            bounds.append(cut)
            guess = cut + chunk_bytes
    _check_record(path, size - bounds[-1], chunk_bytes)
    bounds.append(size)
    return bounds


def _skip_line(f, path: Path) -> None:
    """Read past the next newline (or to the end) a block at a time, refusing a line longer than MAX_RECORD."""
    start = f.tell()
    while (piece := f.readline(1 << 20)) and not piece.endswith(b"\n"):
        if f.tell() - start > MAX_RECORD:
            _check_record(path, f.tell() - start, 0)


def _check_record(path: Path, length: int, chunk_bytes: int) -> None:
    """Refuse a shard of JSON Lines that holds a line longer than MAX_RECORD (a shard is chunk_bytes plus at most a line)."""
    if length > MAX_RECORD + chunk_bytes:
        raise ValueError(
            f"{path} holds a line of more than {MAX_RECORD >> 20:,} MB, the most one JSON record may be here; "
            "split the text into several records."
        )


# A newline with printable ASCII on both sides is a boundary for every regex
# pattern here: no pre-token spans it, and no pattern looks across it.
_SAFE_NEWLINE = re.compile(rb"(?<=[!-~])\n(?=[!-~])")
_WINDOW = 1 << 16


def _find_boundary(f, start: int, stop: int, special_bytes: list[bytes], pretokenizer: PreTokenizer) -> int | None:
    """First safe cut at or after `start` and before `stop`, or None.

    A cut goes just before a special token, or else just after a safe newline.
    subtle: a cut must not fall inside a special token, and a special token found
    by a local search may itself sit inside another occurrence (tokens that
    overlap themselves, like 'aa' in 'aaa', or contain one another). A cut that
    no occurrence straddles is safe: the left-to-right split cannot jump over it.
    """
    longest = max((len(s) for s in special_bytes), default=1)
    starts = re.compile(b"(?=" + b"|".join(re.escape(s) for s in special_bytes) + b")") if special_bytes else None
    pos = start
    while pos < stop:
        base = max(0, pos - longest)
        f.seek(base)
        window = f.read(pos - base + _WINDOW + longest)
        if len(window) <= pos - base:
            return None
        cuts = [m.start() for m in starts.finditer(window, pos - base)] if starts else []
        if (
            pretokenizer.regex is not None and b"\n" in window
        ):  # without a regex only special tokens end a document; no newline, no regex (30x faster)
            cuts += [m.end() for m in _SAFE_NEWLINE.finditer(window, pos - base)]
        for cut in sorted(cuts):
            if not _straddled(window, cut, special_bytes):
                return base + cut
        pos += _WINDOW
    return None


def _straddled(window: bytes, cut: int, special_bytes: list[bytes]) -> bool:
    """Does an occurrence of a special token start before `cut` and end after it?"""
    for s in special_bytes:
        i = window.find(s, max(0, cut - len(s) + 1))
        if 0 <= i < cut:
            return True
    return False


def chunk_boundaries(
    path: Path, special_tokens: Sequence[str], pretokenizer: str | PreTokenizer, chunk_bytes: int, unsafe: set[int] | None = None
) -> list[int]:
    """Byte offsets [0, ..., size] cutting the file into ~chunk_bytes pieces at safe places.

    Where a block holds no safe place, the cut is made anyway (_forced_cut) and added to `unsafe`.
    """
    pretokenizer = pretokenizer_of(pretokenizer)
    size = path.stat().st_size
    special_bytes = [t.encode(ENCODING) for t in special_tokens]
    bounds = [0]
    with open(path, "rb") as f:
        guess = chunk_bytes
        while guess < size:
            cut = _find_boundary(f, guess, min(guess + chunk_bytes, size), special_bytes, pretokenizer)
            if cut is None and guess + chunk_bytes < size and guess - bounds[-1] >= MAX_STRETCH:  # cut anyway
                base = max(bounds[-1] + 1, guess - _WINDOW)
                f.seek(base)
                cut = base + _forced_cut(f.read(guess - base + max((len(s) for s in special_bytes), default=1)), special_bytes)
                if unsafe is not None:
                    unsafe.add(cut)
            if cut is not None and cut > bounds[-1]:
                bounds.append(cut)
                guess = cut + chunk_bytes
            else:
                guess += chunk_bytes
    bounds.append(size)
    return bounds


def _last_safe_cut(block: bytes, special_bytes: list[bytes], pretokenizer: PreTokenizer, start: int | None = None) -> int | None:
    """A safe cut in the second half of a block read from a stream (or from start on), or None.

    subtle: what follows the block is unknown, so a cut must leave room for the
    longest special token after it: only then is an occurrence that starts
    before the cut seen whole.
    """
    longest = max((len(s) for s in special_bytes), default=1)
    start = len(block) // 2 if start is None else max(1, start)
    cut = _find_boundary(io.BytesIO(block), start, len(block), special_bytes, pretokenizer)
    return cut if cut is not None and 0 < cut < len(block) - longest else None


def _forced_cut(block: bytes, special_bytes: list[bytes]) -> int:
    """Where to cut a block that has no safe place: near its end, leaving room for the longest special token after
    the cut (as _last_safe_cut), not inside a UTF-8 character or an occurrence of a special token, and before a
    space that follows a letter or digit where one is that near (there a pre-token mostly starts anyway).

    b'aaaa' -> 3; b'xxx abc' -> 3 (before the space); the result is always in 1..len(block) - 1.
    """
    longest = max((len(s) for s in special_bytes), default=1)
    end = max(1, len(block) - longest)
    low = max(1, end - _WINDOW)
    space = block.rfind(b" ", low, end)
    candidates = [space] if space > 0 and block[space - 1 : space].isalnum() else []
    candidates += range(end, max(low, end - 8) - 1, -1)  # a character is at most 4 bytes: one of these starts one
    for cut in candidates:
        if block[cut] & 0xC0 != 0x80 and not _straddled(block, cut, special_bytes):
            return cut
    return min(end, len(block) - 1) if len(block) > 1 else 1  # special tokens overlapping all along: no cut is clean


# ---------------------------------------------------------------------------
# reading a shard


def read_shard(shard: Shard, options: Reading, undecoded: bool = False) -> Iterator[Batch]:
    """The documents of one shard, a batch at a time; the batches' disk_bytes add up to shard.size.

    undecoded: a text file's documents are its bytes as read (Tally decodes them if it must).
    A read error (a failing disk, a network file system gone) names the file.
    """
    source = shard.input
    try:
        if source.format == "parquet":
            yield from _read_row_group(shard, options)
        elif source.compression:
            yield from _read_compressed(source, options, undecoded)
        elif source.format == "jsonl":
            yield _jsonl_batch(source, _read_range(source.path, shard.start, shard.stop), shard.start, shard.size, options)
        else:
            data = _read_range(source.path, shard.start, shard.stop)
            yield Batch([data if undecoded else data.decode(ENCODING, ERRORS)], len(data), shard.size, int(shard.cut_unsafely))
    except OSError as e:
        if e.filename is not None:
            raise
        raise OSError(e.errno, e.strerror or str(e), str(source.path)) from None  # a read() error carries no name


def _read_range(path: Path, start: int, stop: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(stop - start)


def _read_compressed(source: Input, options: Reading, undecoded: bool = False) -> Iterator[Batch]:
    """A compressed file, streamed; corrupt data is refused in one sentence, whichever library noticed."""
    if source.format == "jsonl":
        reader = _stream_jsonl
    else:
        reader = _stream_bytes if undecoded else _stream_text
    try:
        with open(source.path, "rb") as raw, _decompressor(source.compression, raw) as stream:
            yield from reader(source, raw, _Bounded(stream, raw, source), options)
    except gzip.BadGzipFile as e:  # 'Not a gzipped file (b'ga')' after a whole stream: bytes follow it
        why = TRAILING if str(e).startswith("Not a gzipped file") and _starts_gzip(source.path) else _one_line(e)
        raise ValueError(f"{source.path} is not valid {source.compression} data ({why}).") from None
    except (EOFError, zlib.error, lzma.LZMAError) as e:
        raise ValueError(f"{source.path} is not valid {source.compression} data ({_one_line(e)}).") from None
    except OSError as e:
        if e.filename is not None:  # the file itself could not be read: the CLI names it
            raise
        raise ValueError(f"{source.path} is not valid {source.compression} data ({_one_line(e)}).") from None  # bz2's bad data
    except Exception as e:
        if type(e).__name__ != "ZstdError":
            raise
        raise ValueError(f"{source.path} is not valid {source.compression} data ({_one_line(e)}).") from None


TRAILING = "bytes follow the end of the compressed data"


def _starts_gzip(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _decompressor(compression: str, raw):
    if compression == ".gz":
        return gzip.GzipFile(fileobj=raw)  # refuses a truncated stream and trailing garbage itself
    if compression == ".bz2":
        return _Streams(raw, bz2.BZ2Decompressor)
    if compression == ".xz":
        return _Streams(raw, lzma.LZMADecompressor)
    import zstandard  # only needed for .zst

    return _Streams(raw, zstandard.ZstdDecompressor().decompressobj)


class _Streams:
    """A file of one or more compressed streams (frames) one after another, read to the end, checked.

    Python's BZ2File and LZMAFile ignore whatever follows the last stream, and a
    zstandard stream_reader ends quietly inside a cut frame; here a file must end
    exactly where a stream does (else EOFError: truncated), and bytes after a stream
    must be another stream (else the decompressor's own error). Several streams
    (pbzip2, pzstd, `cat a.zst b.zst`) are read as one text. Output is produced a
    bounded piece at a time: compressed bytes are fed FEED at a time (a zstd
    decompressor has no output limit; 1 KB can expand to at most about 32 MB).
    """

    FEED = 1024
    CAP = 1 << 20  # bytes of output per call, where the decompressor can be told

    def __init__(self, raw, new) -> None:
        self.raw, self.new = raw, new
        self.decompressor, self.pending, self.buffer, self.started, self.following = new(), b"", bytearray(), False, False

    def read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            decompressor = self.decompressor
            if decompressor.eof:
                rest = decompressor.unused_data or self.raw.read(self.FEED)
                if not rest:
                    break  # the file ends where a stream does
                self.decompressor, self.pending = self.new(), rest  # another stream: garbage makes the decompressor raise
                self.following = True  # until the new stream gives output: an error means bytes follow the last stream
                continue
            limited = hasattr(decompressor, "needs_input")  # bz2 and lzma can cap their output; zstd cannot
            data = b""
            if not limited or decompressor.needs_input:
                data, self.pending = self.pending or self.raw.read(self.FEED), b""
                if not data:
                    if self.following:
                        raise EOFError(TRAILING)
                    if self.started:
                        raise EOFError("the file ends inside a compressed stream: it is truncated")
                    break  # an empty file: no text
                self.started = True
            try:
                out = decompressor.decompress(data, self.CAP) if limited else decompressor.decompress(data)
            except Exception:
                if self.following:
                    raise EOFError(TRAILING) from None
                raise
            self.buffer += out
            self.following = self.following and not out and not decompressor.eof
        out = bytes(self.buffer[:n])
        del self.buffer[:n]
        return out

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


class _Bounded:
    """A decompressed stream that refuses, in one sentence, to expand past MAX_RATIO times the compressed bytes read."""

    def __init__(self, stream, raw, source: Input) -> None:
        self.stream, self.raw, self.source, self.given = stream, raw, source, 0

    def read(self, n: int) -> bytes:
        data = self.stream.read(n)
        self.given += len(data)
        if self.given > MIN_EXPANSION and self.given > MAX_RATIO * max(1, self.raw.tell()):
            raise ValueError(
                f"{self.source.path}: {self.raw.tell():,} bytes of {self.source.compression} data expand past "
                f"{self.given / 1e6:,.0f} MB, more than the {MAX_RATIO:,} times a compressed input may here "
                "(a decompression bomb?); if it is meant so, decompress it yourself and give the plain file."
            )
        return data


def _stream_text(source: Input, raw, stream, options: Reading) -> Iterator[Batch]:
    """A compressed text file in blocks of text (see _stream_bytes)."""
    for batch in _stream_bytes(source, raw, stream, options):
        yield Batch([data.decode(ENCODING, ERRORS) for data in batch.documents], batch.text_bytes, batch.disk_bytes, batch.unsafe_cuts)


def _stream_bytes(source: Input, raw, stream, options: Reading) -> Iterator[Batch]:
    """A compressed text file in blocks, each cut at a safe place (the rest carried into the next).

    What is carried never grows past MAX_STRETCH: when more than that holds no safe place, the text is cut near
    its end anyway (_forced_cut), and the batch says so. So a block and MAX_STRETCH are held, whatever the document.
    """
    special_bytes = [t.encode(ENCODING) for t in options.special_tokens]
    stretch, carry, done = MAX_STRETCH, b"", 0
    while True:
        block = stream.read(options.chunk_bytes)
        if not block:  # the end: the rest of the text, and the rest of the file's bytes
            yield Batch([carry] if carry else [], len(carry), source.size - done)
            return
        data = carry + block if carry else block
        carry = block = b""  # subtle: not held beside data (a block is megabytes)
        forced = 0
        cut = _last_safe_cut(data, special_bytes, options.pretokenizer)
        if cut is None and len(data) > stretch:  # no safe place in its second half: one that leaves at most MAX_STRETCH
            cut = _last_safe_cut(data, special_bytes, options.pretokenizer, len(data) - stretch)
            if cut is None:  # none at all: cut anyway
                cut, forced = _forced_cut(data, special_bytes), 1
        if cut is None:  # no safe place yet: read on
            carry = data
            continue
        carry = data[cut:]
        position = min(raw.tell(), source.size)
        yield Batch([data[:cut]], cut, position - done, forced)
        done = position


def _stream_jsonl(source: Input, raw, stream, options: Reading) -> Iterator[Batch]:
    """A compressed JSON Lines file in blocks of whole lines (a line longer than MAX_RECORD is refused)."""
    pending, done, line = bytearray(), 0, 1
    while True:
        block = stream.read(options.chunk_bytes)
        if not block:  # the end: a last line without a newline, and the rest of the file's bytes
            yield _jsonl_batch(source, bytes(pending), None, source.size - done, options, line)
            return
        cut = block.rfind(b"\n") + 1
        if not cut:  # inside a line: gathered (a bytearray grows without copying what it holds)
            pending += block
            _check_record(source.path, len(pending), 0)
            continue
        data = bytes(pending) + block[:cut]
        pending = bytearray(block[cut:])
        position = min(raw.tell(), source.size)
        yield _jsonl_batch(source, data, None, position - done, options, line)
        line += data.count(b"\n")
        done = position


def _jsonl_batch(source: Input, data: bytes, offset: int | None, disk_bytes: int, options: Reading, first_line: int = 1) -> Batch:
    """The text field of every line in data (whole lines).

    Blank lines are skipped, and so is a null field; anything else that is not a
    JSON object with a string in the field is refused, naming the line.
    `offset` is where data starts in an uncompressed file, to number lines.
    """
    field = options.text_field
    documents, text_bytes = [], 0
    for n, line in enumerate(data.decode(ENCODING, ERRORS).split("\n")):
        if not line or line.isspace():
            continue
        try:
            record = json.loads(line)
        except RecursionError:
            raise ValueError(f"{_where(source, offset, first_line, n)} is JSON nested too deeply to be a record.") from None
        except json.JSONDecodeError as e:
            raise ValueError(f"{_where(source, offset, first_line, n)} is not a JSON object on one line ({e}).") from None
        except ValueError:  # Python's limit on the digits of an integer
            raise ValueError(f"{_where(source, offset, first_line, n)} holds a number of thousands of digits.") from None
        if not isinstance(record, dict) or field not in record:
            raise ValueError(f"{_where(source, offset, first_line, n)} has no field {field!r} (choose the field with --text-field).")
        text = record[field]
        if text is None:
            continue
        if not isinstance(text, str):
            raise ValueError(f"{_where(source, offset, first_line, n)}: field {field!r} holds {type(text).__name__}, not text.")
        try:
            size = len(text) if text.isascii() else len(text.encode(ENCODING, ERRORS))
        except UnicodeEncodeError:  # a \ud800-style escape: a lone surrogate stands for no byte
            raise ValueError(f"{_where(source, offset, first_line, n)} holds a lone surrogate escape, which is not text.") from None
        documents.append(text)
        text_bytes += size
    return Batch(documents, text_bytes, disk_bytes)


def _where(source: Input, offset: int | None, first_line: int, n: int) -> str:
    """'data.jsonl line 12': the line number is counted from the start of the file only now, on an error."""
    if offset is not None:
        with open(source.path, "rb") as f:
            first_line = f.read(offset).count(b"\n") + 1
    return f"{source.path} line {first_line + n:,}"


# ---------------------------------------------------------------------------
# Parquet


def _parquet_file(source: Input):
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(source.path)
    except Exception as e:  # pyarrow raises ArrowInvalid, OSError, ... for a file it cannot read
        raise ValueError(f"{source.path} is not a Parquet file that can be read ({_one_line(e)}).") from None


def _text_column(source: Input, parquet, column: str) -> int:
    """The index of the text column, or a sentence saying why it is not there."""
    import pyarrow as pa

    schema = parquet.schema_arrow
    if column not in schema.names:
        names = ", ".join(schema.names[:10]) or "none"
        raise ValueError(f"{source.path} has no column {column!r} (its columns: {names}; choose one with --text-column).")
    kind = schema.field(column).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind) or pa.types.is_large_binary(kind)):
        raise ValueError(f"{source.path}: column {column!r} holds {kind}, not text.")
    return schema.get_field_index(column)


def _row_groups(source: Input, options: Reading) -> list[Shard]:
    """One shard per row group; their sizes share out the file's size by compressed bytes."""
    parquet = _parquet_file(source)
    _text_column(source, parquet, options.text_column)
    meta = parquet.metadata
    # subtle: row-group totals, not meta.row_group(i).column(j): pyarrow 26 aborts the whole process (an uncaught C++
    # exception) on the column metadata of some corrupt files, where reading them raises an error we can catch
    weights = [max(meta.row_group(i).total_byte_size, 0) for i in range(meta.num_row_groups)]
    total = sum(weights) or 1
    sizes = [source.size * w // total for w in weights]
    if sizes:
        sizes[-1] += source.size - sum(sizes)
    return [Shard(source, i, i, size) for i, size in enumerate(sizes)]


def _read_row_group(shard: Shard, options: Reading) -> Iterator[Batch]:
    import pyarrow.compute as pc

    source, group = shard.input, shard.start
    parquet = _parquet_file(source)
    _text_column(source, parquet, options.text_column)
    rows, done, reported = max(1, parquet.metadata.row_group(group).num_rows), 0, 0
    try:
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, row_groups=[group], columns=[options.text_column]):
            column = batch.column(0)
            text_bytes = pc.sum(pc.binary_length(column)).as_py() or 0
            values = [v for v in column.to_pylist() if v is not None]  # null: no document
            if values and isinstance(values[0], bytes):
                values = [v.decode(ENCODING, ERRORS) for v in values]
            done += batch.num_rows
            disk_bytes = shard.size * done // rows - reported
            reported += disk_bytes
            yield Batch(values, text_bytes, disk_bytes)
    except Exception as e:  # a corrupt page: ArrowInvalid, OSError, ...
        raise ValueError(f"{source.path} row group {group} cannot be read ({_one_line(e)}).") from None


def _one_line(error: BaseException) -> str:
    """An error's message on one line, cut short: pyarrow's span several lines."""
    text = " ".join(str(error).split())
    return text if len(text) <= 200 else text[:197] + "..."
