"""Encoding datasets into one array of token ids: every input format, in worker processes, in flat memory.

What it does: cut the inputs into shards as counting does (inputs.py: byte ranges of
text and JSON Lines, Parquet row groups, a compressed file whole), encode each shard
with a Tokenizer -- in this process, or in worker processes that each write a shard's
ids to a temporary file beside the output -- and append the shards' ids to the output
in input order (ids.py). So the array is the same whatever the number of workers,
and no process holds more than a shard of text and its ids.

A document is a JSON Lines record, a Parquet row, or a whole text file (plain or
compressed); each is followed by the end-of-text id when there is one (`eot`).
With a tokenizer of the SentencePiece family (Llama 2's) a text file's documents
are its lines instead, as sentencepiece reads a file (spm_train, spm_encode): each
non-empty line without its '\n' (a '\r' before it is kept), followed by the eot,
by default </s>; its shards are cut at newlines. This family works on sentences:
a whole file would be one word to merge. add_special_tokens puts what the
tokenizer adds around each document (<s> first for Llama 2), and the array
equals encode(document, add_special_tokens=...) of each document, plus the eot.
Special tokens spelled in the text are, as `special` says: encoded as the
tokenizer's special tokens ("special"), as plain text ("text", tiktoken's
encode_ordinary), or refused in one sentence ("refuse", tiktoken's default); the
default is the tokenizer's own (see tokenizer.py). A text file's bytes are encoded
as Tokenizer.encode encodes them (invalid UTF-8 at its very end as tiktoken's
_encode_bytes does), so the array equals encode() of each document, plus the eot.

    encoded = encode_files(tok, ["shards/*.jsonl.zst"], "ids.npy", workers=4)
    encoded.tokens, encoded.documents, encoded.text_bytes

Not here: the file formats of the array (ids.py), encoding itself (tokenizer.py).
"""

from __future__ import annotations

import contextlib
import copy
import os
import queue
import signal
import sys
import threading
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .. import atomic
from ..core import follow
from ..core import settings as core_settings
from ..data.count import check_workers, reporter
from ..data.inputs import (
    CHUNK_BYTES,
    Input,
    Reading,
    Shard,
    line_boundaries,
    read_shard,
    resolve_inputs,
    shards,
    warn_unsafe_cuts,
)
from ..files.ids import DTYPES, IdsWriter, dtype_for
from ..memory import peak_rss
from ..text.pretokenizers import ENCODING, ERRORS, find_specials

if TYPE_CHECKING:  # imported where a Tokenizer is made: bpe train, whose help lists SPECIAL_TEXT, does without it
    from .sentencepiece_tokenizer import SentencePieceTokenizer
    from .tokenizer import Tokenizer

SPECIAL_TEXT = {
    "special": "encoded as special tokens",
    "text": "encoded as plain text (tiktoken's encode_ordinary)",
    "refuse": "refused (tiktoken's default for OpenAI's encodings)",
}
PARALLEL_MIN_BYTES = 16 << 20  # below this, one process: starting workers and building the tokenizer in each costs more
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Settings:
    """How every shard is encoded (what a worker is given once)."""

    special: str  # a key of SPECIAL_TEXT
    eot: int | None  # the id after each document; None: nothing
    k: int | None  # the first k merges only
    options: Reading  # how inputs are read and cut
    dtype: str  # of the output: uint16 or uint32
    add_special_tokens: bool = False  # the SentencePiece family: what the tokenizer puts around each document (<s>)


@dataclass(frozen=True)
class Job:
    index: int
    shard: Shard
    ends_document: bool  # a text file's last shard: its end is the document's (the eot goes after it)


@dataclass(frozen=True)
class Part:
    """What encoding one shard gave."""

    index: int
    tokens: int
    documents: int
    text_bytes: int
    disk_bytes: int
    path: str | None = None  # a worker's temporary file of the ids (None: written straight to the output)
    peak_rss: int = 0
    cpu_seconds: float = 0.0
    encoder: str = ""  # a worker's: which encoder merged (encoder_of)
    unsafe_cuts: int = 0  # places its text was cut where no cut was safe (inputs.py)


@dataclass(frozen=True)
class Encoded:
    """An encoded dataset, and what it took."""

    out: Path
    dtype: str
    tokens: int
    documents: int
    text_bytes: int
    inputs: tuple[Input, ...]
    special: str
    eot: int | None
    seconds: float
    workers: int = 1
    worker_peak_rss: int = 0  # the largest peak of one worker process (0: no workers)
    worker_cpu_seconds: float = 0.0
    encoder: str = ""  # which encoder ran
    notes: list[str] = field(default_factory=list)

    @property
    def disk_bytes(self) -> int:
        return sum(source.size for source in self.inputs)


def default_special(tok: Tokenizer | SentencePieceTokenizer) -> str:
    """What a tokenizer does with special-token text when not told: 'special' (CS336) or 'refuse' (tiktoken, OpenAI's).

    The SentencePiece family does what its tool does, and nothing else: a tokenizer.json's special tokens are
    matched in text ('special', as tokenizers does), a .model's are not ('text', as sentencepiece does).
    """
    if tok.family == "sentencepiece":
        return "special" if tok.follows == "tokenizers" else "text"
    if not tok.special_tokens or tok.allowed_special == frozenset(tok.special_tokens):
        return "special"
    return "refuse" if not tok.allowed_special else "special"


def default_eot(tok: Tokenizer | SentencePieceTokenizer) -> int | None:
    """The end-of-text id where the tokenizer has <|endoftext|> as a special token (the SentencePiece family: </s>), else None."""
    from .tokenizer import END_OF_TEXT

    if tok.family == "sentencepiece":
        try:
            return tok.eot_token
        except KeyError:
            return None
    return tok.ids[END_OF_TEXT.encode(ENCODING)] if END_OF_TEXT in tok.special_tokens else None


def encoder_of(tok: Tokenizer | SentencePieceTokenizer) -> str:
    """Which encoder merges: the compiled core's, or the Python path."""
    if tok.family == "sentencepiece":
        how = "by score, as sentencepiece" if tok.follows == "sentencepiece" else "by rank, as HuggingFace tokenizers"
        where = "compiled (bpe._core)" if tok.encoder.compiled() is not None else "Python (bpe/sentencepiece/)"
        return f"{where}, {how}"
    return "compiled (bpe._core)" if getattr(tok, "_compiled", None) is not None else "Python (encoder.py)"


def reading_of(reading: dict) -> tuple[str, str, int]:
    """(text_field, text_column, chunk_bytes) of the reading keywords encode_files takes; the rest are the tokenizer's."""
    taken = {"special_tokens", "pretokenizer", "pattern", "split_lines", "compiled"} & set(reading)
    if taken:
        raise TypeError(f"{', '.join(sorted(taken))}: the tokenizer decides it when encoding (its special tokens and pre-tokenizer).")
    options = Reading.of(**reading)
    return options.text_field, options.text_column, options.chunk_bytes


def encode_files(
    tok: Tokenizer | SentencePieceTokenizer,
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    out: str | os.PathLike,
    *,
    special: str | None = None,
    eot: int | None | str = "default",
    workers: int | None = None,
    progress: Progress | None = None,
    k: int | None = None,
    parallel_min_bytes: int = PARALLEL_MIN_BYTES,
    add_special_tokens: bool = False,
    **reading,
) -> Encoded:
    """Encode every input (paths or globs of any format) into out (.npy or .bin); see the module's docstring.

    eot: "default" (the tokenizer's <|endoftext|>, or </s> for the SentencePiece family, if it has one), None
    (nothing), or an id. add_special_tokens: the SentencePiece family only (see the module's docstring). The other
    keywords say how inputs are read (bpe.data.inputs.Reading: text_field, text_column, chunk_bytes); the tokenizer
    gives the rest (its special tokens and pre-tokenizer decide where text files may be cut).
    """
    text_field, text_column, chunk_bytes = reading_of(reading)
    start = time.perf_counter()
    pieces = tok.family == "sentencepiece"
    if special is not None and special not in SPECIAL_TEXT:
        raise ValueError(f"special is one of {', '.join(SPECIAL_TEXT)}, not {special!r}.")
    if pieces:
        _check_sentencepiece(tok, special, k)
    elif add_special_tokens:
        raise ValueError("add_special_tokens is for the SentencePiece family (Llama 2's <s>); a byte-level tokenizer adds nothing.")
    special = special or default_special(tok)
    eot_id = default_eot(tok) if eot == "default" else eot
    if eot_id is not None and eot_id not in tok.vocab:
        raise ValueError(f"The end-of-text id {eot_id} is not in the vocabulary.")
    workers = check_workers(workers)
    atomic.check_writable(out)
    inputs = resolve_inputs(paths)
    total = sum(source.size for source in inputs)
    parallel = workers > 1 and total >= parallel_min_bytes
    if parallel and chunk_bytes == CHUNK_BYTES:
        chunk_bytes = max(1 << 20, min(chunk_bytes, total // (workers * 4) + 1))  # shards enough to keep every worker busy
    if pieces:  # text files are cut at newlines (_jobs), not where pre-tokens allow
        options = Reading(text_field, text_column, chunk_bytes=chunk_bytes)
    else:
        cut_at = tok.special_tokens if special != "text" else ()  # special-token text encoded as text: never cut before it
        options = Reading(text_field, text_column, tuple(cut_at), tok.pretokenizer, chunk_bytes)
    settings = Settings(special, eot_id, k, options, dtype_for(tok.max_token_value), add_special_tokens)
    jobs = _jobs(inputs, options, lines=pieces)
    report = reporter(progress, total)
    meta = {"tokenizer": tok.name, "eot": eot_id, "special": special}
    used, worker_peak, worker_cpu = 1, 0, 0.0
    with IdsWriter(out, settings.dtype, meta) as writer:
        if parallel and len(jobs) > 1:
            parts, used = _encode_in_pool(tok, jobs, settings, min(workers, len(jobs)), writer, report)
            worker_peak = max((p.peak_rss for p in parts), default=0) if used > 1 else 0
            worker_cpu = sum(p.cpu_seconds for p in parts) if used > 1 else 0.0
        else:
            parts = [encode_job(tok, job, settings, writer.write, report) for job in jobs]
    if progress and not jobs:
        progress(0, 0)
    warn_unsafe_cuts(sum(p.unsafe_cuts for p in parts))
    return Encoded(
        Path(out),
        settings.dtype,
        sum(p.tokens for p in parts),
        sum(p.documents for p in parts),
        sum(p.text_bytes for p in parts),
        tuple(inputs),
        special,
        eot_id,
        time.perf_counter() - start,
        used,
        worker_peak,
        worker_cpu,
        ", ".join(sorted({p.encoder for p in parts if p.encoder})) or encoder_of(tok),  # the workers' where they encoded
    )


def _check_sentencepiece(tok: SentencePieceTokenizer, special: str | None, k: int | None) -> None:
    """The options a tokenizer of the SentencePiece family cannot honour, refused in one sentence."""
    if k is not None:
        raise ValueError("k (the first k merges) is for byte-level tokenizers; a SentencePiece tokenizer encodes with all its pieces.")
    if special is not None and special != default_special(tok):
        raise ValueError(
            f"A SentencePiece tokenizer encodes special-token text as its tool does ({SPECIAL_TEXT[default_special(tok)]}); "
            "leave --special-text out."
        )


def _jobs(inputs: Iterable[Input], options: Reading, lines: bool = False) -> list[Job]:
    """The shards of every input, in order; lines: a plain text file's cut just after newlines (its documents are lines)."""
    jobs = []
    for source in inputs:
        if lines and source.format == "text" and not source.compression:
            bounds = line_boundaries(source.path, options.chunk_bytes)
            pieces = [Shard(source, a, b, b - a) for a, b in zip(bounds, bounds[1:], strict=False)]
        else:
            pieces = shards(source, options)
        for n, shard in enumerate(pieces):
            jobs.append(Job(len(jobs), shard, source.format == "text" and n == len(pieces) - 1))
    return jobs


# ---------------------------------------------------------------------------
# one shard


def encode_job(
    tok: Tokenizer | SentencePieceTokenizer, job: Job, settings: Settings, emit: Callable, report: Callable[[int], None] | None = None
) -> Part:
    """Encode one shard, handing its ids to emit (a list, or the array's little-endian bytes where the core encodes); report(disk bytes) as it reads."""
    if tok.family == "sentencepiece":
        return _encode_pieces_job(tok, job, settings, emit, report)
    allowed = frozenset(tok.special_tokens) if settings.special == "special" else frozenset()
    typecode, width = DTYPES[settings.dtype][0], DTYPES[settings.dtype][2]
    # where the core encodes, the ids come as the array's own bytes (no list of ints between); little-endian, as .npy's
    as_bytes = getattr(tok, "_compiled", None) is not None and sys.byteorder == "little"
    eot = [settings.eot] if settings.eot is not None else []
    if as_bytes:
        eot = array(typecode, eot).tobytes()
    limit = tok._limit(settings.k)
    source = job.shard.input
    tokens = documents = text_bytes = disk_bytes = cuts = 0

    def encode(piece: str | bytes) -> list[int] | bytearray:
        if settings.special == "refuse":
            _refuse(tok, piece, source)
        if as_bytes and isinstance(piece, str):  # a str of clean UTF-8: the core's bytes (None: the Python path encodes)
            data = tok._encode_compiled(piece, limit, allowed, as_array=width)
            if data is not None:
                return data
        ids = tok.encode(piece, settings.k, allowed_special=allowed, disallowed_special=())
        return array(typecode, ids).tobytes() if as_bytes else ids

    def encode_inside(piece: bytes) -> list[int] | bytearray:
        """A piece of a document before its end: its bytes as they are where the core encodes (each invalid byte its
        own character, as the str surrogateescape decodes it to is in the Python path, and no decoding between)."""
        if as_bytes:
            if settings.special == "refuse":
                _refuse(tok, piece, source)
            data = tok._encode_compiled(piece, limit, allowed, as_array=width)
            if data is not None:
                return data
        return encode(piece.decode(ENCODING, ERRORS))

    def count(ids: list[int] | bytes) -> int:
        return len(ids) // width if as_bytes else len(ids)

    if source.format == "text":
        pending = None  # the last piece read: held back until the next, since the document's very end is encoded as bytes
        for batch in read_shard(job.shard, settings.options, undecoded=True):
            for piece in batch.documents:
                if pending is not None:
                    ids = encode_inside(pending)
                    tokens += count(ids)
                    emit(ids)
                pending = piece
            text_bytes += batch.text_bytes
            disk_bytes += batch.disk_bytes
            cuts += batch.unsafe_cuts
            if report:
                report(batch.disk_bytes)
        if pending is not None:
            ids = encode(pending) if job.ends_document else encode_inside(pending)
            tokens += count(ids)
            emit(ids)
        if job.ends_document:
            documents, tokens = 1, tokens + count(eot)
            emit(eot)
    else:
        for batch in read_shard(job.shard, settings.options):
            block: list[int] | bytearray = bytearray() if as_bytes else []
            for document in batch.documents:
                block += encode(document)
                block += eot
            documents += len(batch.documents)
            tokens += count(block)
            emit(block)
            text_bytes += batch.text_bytes
            disk_bytes += batch.disk_bytes
            if report:
                report(batch.disk_bytes)
    return Part(job.index, tokens, documents, text_bytes, disk_bytes, unsafe_cuts=cuts)


def _encode_pieces_job(
    tok: SentencePieceTokenizer, job: Job, settings: Settings, emit: Callable, report: Callable[[int], None] | None
) -> Part:
    """encode_job for the SentencePiece family: each record, row or non-empty line of text a document (a line cut
    between two batches of a compressed file is joined first), each followed by the eot."""
    eot = [settings.eot] if settings.eot is not None else []
    add = settings.add_special_tokens
    tokens = documents = text_bytes = disk_bytes = 0
    text = job.shard.input.format == "text"
    carry = b""  # a text file's line begun in one batch and ended in the next
    for batch in read_shard(job.shard, settings.options, undecoded=text):
        block: list[int] = []
        if text:
            *lines, carry = (carry + b"".join(batch.documents)).split(b"\n")
        else:
            lines = batch.documents
        for line in lines:
            if line or not text:
                block += tok.encode(line, add_special_tokens=add)
                block += eot
                documents += 1
        tokens += len(block)
        emit(block)
        text_bytes += batch.text_bytes
        disk_bytes += batch.disk_bytes
        if report:
            report(batch.disk_bytes)
    if carry:  # the last line, with no newline after it
        block = tok.encode(carry, add_special_tokens=add) + eot
        documents, tokens = documents + 1, tokens + len(block)
        emit(block)
    return Part(job.index, tokens, documents, text_bytes, disk_bytes)


def _refuse(tok: Tokenizer, piece: str | bytes, source: Input) -> None:
    text = piece.decode(ENCODING, ERRORS) if isinstance(piece, bytes) else piece
    found = next(find_specials(text, tok.special_tokens), None) if tok.special_tokens else None
    if found is not None:
        raise ValueError(
            f"{source.path}: the text spells the special token {found[1]!r}, which {tok.name or 'this tokenizer'} refuses by default, "
            "as tiktoken does; --special-text special encodes it as that token, --special-text text as plain text."
        )


# ---------------------------------------------------------------------------
# the pool: each worker encodes the shards it is given into temporary files; the main process
# appends them to the output in order, holding at most a few shards' ids on disk at a time

_tok: Tokenizer | None = None  # in a worker: the tokenizer, built once
_settings: Settings | None = None
_folder = ""  # where the shards' temporary files go (the output's folder)
_run = ""  # names this run's temporary files, so that the main process can remove them whatever happens
_writing: Path | None = None  # in a worker: the temporary file it is writing now


def _start(tok: Tokenizer, settings: Settings, folder: str, run: str, alive, pids, chosen) -> None:
    global _tok, _settings, _folder, _run
    if follow(chosen):  # the caller's BPE_CORE and BPE_COMPILED, not the forkserver's, which tok was unpickled with
        tok = copy.copy(tok)  # built again from its vocab and merges (Tokenizer.__reduce__)
    _tok, _settings, _folder, _run = tok, settings, folder, run
    threading.Thread(target=_end_with_parent, args=(alive,), daemon=True, name="bpe-watch-parent").start()
    pids.put(os.getpid())


def _end_with_parent(alive) -> None:
    """In a worker: when the main process closes its end of `alive`, or dies (even by SIGKILL), remove the
    temporary file being written and end at once (see count.py's watcher for why a worker cannot know otherwise)."""
    with contextlib.suppress(EOFError, OSError):
        alive.recv_bytes()  # nothing is ever sent: this returns at end of file
    if _writing is not None:
        with contextlib.suppress(OSError):
            _writing.unlink()
    os._exit(1)


def part_path(folder: str, run: str, index: int) -> Path:
    return Path(folder) / f".{run}.{index}.part{atomic.TMP_SUFFIX}"


def _encode_part(job: Job) -> Part:
    """In a worker: encode one shard into its temporary file; the file is removed again if anything fails."""
    global _writing
    path = _writing = part_path(_folder, _run, job.index)
    typecode = DTYPES[_settings.dtype][0]
    try:
        with open(path, "wb") as f:

            def emit(ids) -> None:
                f.write(ids if isinstance(ids, (bytes, bytearray)) else array(typecode, ids).tobytes())

            part = encode_job(_tok, job, _settings, emit)
    except BaseException:
        with contextlib.suppress(OSError):
            path.unlink()
        raise
    return Part(
        part.index,
        part.tokens,
        part.documents,
        part.text_bytes,
        part.disk_bytes,
        str(path),
        peak_rss(),
        time.process_time(),
        encoder_of(_tok),
        part.unsafe_cuts,
    )


def _encode_in_pool(tok: Tokenizer, jobs: list[Job], settings: Settings, workers: int, writer: IdsWriter, report) -> tuple[list[Part], int]:
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    from multiprocessing import get_context

    context = get_context("forkserver")  # safe to start from a threaded process such as the Streamlit server
    alive, keep_alive = context.Pipe(duplex=False)  # the workers watch `alive`; closing keep_alive ends them
    pids = context.Queue()
    folder, run = str(writer.path.parent), f"{writer.path.name}.{os.getpid()}.{time.monotonic_ns()}"
    parts: list[Part] = []
    try:
        initargs = (tok, settings, folder, run, alive, pids, core_settings())
        with ProcessPoolExecutor(workers, mp_context=context, initializer=_start, initargs=initargs) as pool:
            try:
                waiting, ahead = deque(), iter(jobs)
                for job in ahead:  # a window of shards in flight: their files wait on disk for their turn
                    waiting.append(pool.submit(_encode_part, job))
                    if len(waiting) >= 2 * workers:
                        break
                while waiting:
                    try:
                        part = waiting.popleft().result()
                    except OSError as error:
                        if error.filename is not None and not Path(error.filename).name.startswith(f".{run}."):
                            raise  # an input could not be read: the CLI names it
                        # a worker's write of its shard beside the output (a full disk): named as the output, the file asked for
                        raise atomic.OutputError(f"Cannot write {writer.path}: {atomic.why(error)}.") from None
                    _append(writer, Path(part.path))
                    parts.append(part)
                    if report:
                        report(jobs[part.index].shard.size)
                    job = next(ahead, None)
                    if job is not None:
                        waiting.append(pool.submit(_encode_part, job))
                return parts, workers
            except BaseException:  # an error, Ctrl-C, SIGTERM: end the workers now, and leave no temporary file
                keep_alive.close()
                for future in waiting:
                    future.cancel()
                for pid in _drain(pids):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                pids.cancel_join_thread()
                raise
    except BrokenProcessPool:
        # subtle: a worker could not start (e.g. __main__ is <stdin>, which forkserver cannot re-import): encode here
        writer.rewind()
        return [encode_job(tok, job, settings, writer.write, report) for job in jobs], 1
    finally:
        keep_alive.close()
        alive.close()
        for job in jobs:
            with contextlib.suppress(OSError):
                part_path(folder, run, job.index).unlink()


def _append(writer: IdsWriter, path: Path) -> None:
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            writer.write(block)
    path.unlink()


def _drain(pids) -> list[int]:
    found = []
    while True:
        try:
            found.append(pids.get_nowait())
        except (queue.Empty, OSError, ValueError):
            return found
