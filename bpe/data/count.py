"""Counting pre-tokens over input files, in parallel worker processes.

What it does: cut the inputs into shards (inputs.py), hand them to worker
processes that each keep one running `Tally` (pretokenize.py) across every
shard they take, and add up the workers' counts at the end. So the text never
travels between processes, each unique piece is split into pre-tokens once per
worker rather than once per chunk, and the main process combines as many
counts as there are workers, not as many as there are chunks. Memory grows with
the number of unique pre-tokens, never with the size of the input.

What it does not do: train, or count on a cluster (ray_count.py does that with
the same shards and tallies).

    counted = count_inputs(["corpus.txt"], special_tokens=["<|endoftext|>"], workers=2)
    counted.counts[b" the"]  # -> 123456
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..core import follow
from ..core import settings as core_settings
from ..memory import peak_rss
from ..text.pretokenize import PreTokens, Progress, sequence_bytes
from ..text.tally import Tally, compiled_path
from .inputs import CHUNK_BYTES, Input, Reading, Shard, read_shard, resolve_inputs, shards, warn_unsafe_cuts

# Below this many bytes of input, counting runs in this process: a pool costs more than it saves.
PARALLEL_MIN_BYTES = 4 << 20
# The same for the compiled path (compiled.py), ~10x faster per byte: starting the workers and
# sending their counts back (~0.5 s) pays off from about 100 MB, so 32 times that (128 MiB).
COMPILED_PARALLEL_FACTOR = 32
COMPILED_CHUNK_BYTES = 64 << 20  # fewer, larger calls into gigatoken (each batch's counts are added up in Python) and the core
Paths = str | os.PathLike | Sequence[str | os.PathLike]


@dataclass(frozen=True)
class Counted:
    """Pre-token counts of some inputs, and what it took to make them."""

    counts: dict[bytes, int]
    inputs: tuple[Input, ...]
    text_bytes: int  # bytes of text counted (a JSON line's text field, not the whole line)
    worker_peak_rss: int = 0  # the largest peak resident memory of a process that counted, in bytes (this one's, counting alone)
    workers: int = 1
    worker_cpu_seconds: float = 0.0  # processor time of the worker processes together (0: no workers)
    compiled_bytes: int = 0  # of text_bytes, those the compiled path counted
    python_why: tuple[str, ...] = ()  # why the rest went to the Python path
    library: str = ""  # the compiled path: 'bpe._core' or 'gigatoken 0.10.0' (pretokenize.compiled_path)
    unsafe_cuts: int = 0  # places cut where no cut was safe (inputs.py: a block without one; a CutWarning said so)

    @property
    def disk_bytes(self) -> int:
        return sum(source.size for source in self.inputs)

    def counted_by(self) -> str:
        """Which path counted, for the CLI's summary: 'counted by bpe._core (compiled)'."""
        return counted_by(self.text_bytes, self.compiled_bytes, self.python_why, self.library)


def counted_by(text_bytes: int, compiled_bytes: int, python_why: Sequence[str], library: str = "") -> str:
    """'counted by bpe._core (compiled)', 'counted in Python (why)', or how much each path counted."""
    why = "; ".join(sorted(python_why))
    if text_bytes and compiled_bytes >= text_bytes:
        return f"counted by {library} (compiled)"
    if not compiled_bytes:
        return f"counted in Python ({why})" if why else "counted in Python"
    return (
        f"counted by {library} (compiled) {compiled_bytes / 1e6:,.1f} MB, in Python {(text_bytes - compiled_bytes) / 1e6:,.1f} MB ({why})"
    )


def count_inputs(paths: Paths, *, workers: int | None = None, progress: Progress | None = None, **reading) -> Counted:
    """Count the pre-tokens of every input (paths or globs), in parallel when the input is large enough.

    The keyword arguments say how inputs are read (bpe.data.inputs.Reading: pretokenizer, special_tokens,
    text_field, text_column, chunk_bytes, split_lines, compiled): with split_lines each line (newline kept)
    is a document of its own, as HuggingFace's `Tokenizer.train(files)` reads files; compiled=False counts
    with the Python path only, even where a compiled engine is exact. count_with takes them as one value.
    """
    return count_with(paths, Reading.of(**reading), workers, progress)


def count_with(
    paths: Paths, reading: Reading, workers: int | None = None, progress: Progress | None = None, *, only: Sequence[Shard] | None = None
) -> Counted:
    """count_inputs with the reading options as one value: count_with(paths, spec.reading(), workers=2).

    only: count these shards of the inputs, cut by the caller, rather than all of them (lab/ladder.py holds some out).
    """
    chunk_bytes = reading.chunk_bytes
    workers = check_workers(workers)
    inputs = resolve_inputs(paths)
    total = sum(source.size for source in inputs) if only is None else sum(shard.size for shard in only)
    min_bytes = PARALLEL_MIN_BYTES
    library = compiled_path(reading.pretokenizer)[0] if reading.compiled else ""
    if library:
        min_bytes = PARALLEL_MIN_BYTES * COMPILED_PARALLEL_FACTOR
        chunk_bytes = COMPILED_CHUNK_BYTES if chunk_bytes == CHUNK_BYTES else chunk_bytes
    if workers > 1 and total >= min_bytes:
        # enough shards to keep every worker busy and the progress bar moving
        chunk_bytes = max(1 << 20, min(chunk_bytes, total // (workers * 4) + 1))
    options = replace(reading, chunk_bytes=chunk_bytes)
    jobs = [shard for source in inputs for shard in shards(source, options)] if only is None else list(only)
    jobs.sort(key=lambda shard: -shard.size)  # largest first: the last shards to finish are short ones
    report = reporter(progress, total)
    if workers == 1 or total < min_bytes or len(jobs) < 2:
        tallies = [count_shards(jobs, options, report)]
        used = 1
    else:
        tallies, used = _count_in_pool(jobs, options, min(workers, len(jobs)), report)
    if progress and not jobs:
        progress(0, 0)
    counts = combine(tally.counts for tally in tallies)
    peak = max((tally.peak_rss for tally in tallies), default=0)  # subtle: 0 here once hid that this process counted alone
    cpu = sum(tally.cpu_seconds for tally in tallies) if used > 1 else 0.0
    why = tuple(sorted({reason for tally in tallies for reason in tally.python_why}))
    compiled_bytes = sum(tally.compiled_bytes for tally in tallies)
    cuts = sum(tally.unsafe_cuts for tally in tallies)
    warn_unsafe_cuts(cuts)
    return Counted(counts, tuple(inputs), sum(t.text_bytes for t in tallies), peak, used, cpu, compiled_bytes, why, library, cuts)


def check_workers(workers: int | None) -> int:
    workers = counting_workers() if workers is None else workers
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError("workers must be a whole number of at least 1.")
    return workers


def counting_workers() -> int:
    """Processes that count when none are asked for: every core (a count is a job of its own process, unlike the app's
    long jobs, which leave the server a core: serve/settings.long_job_workers)."""
    return os.cpu_count() or 1


# ---------------------------------------------------------------------------
# one worker's share


@dataclass(frozen=True)
class ShardCounts:
    """What one worker counted over the shards it took."""

    counts: dict[bytes, int]
    text_bytes: int
    peak_rss: int  # this process's peak resident memory so far, in bytes
    cpu_seconds: float  # this process's processor time so far
    compiled_bytes: int = 0  # of text_bytes, those the compiled path counted
    python_why: tuple[str, ...] = ()  # why the rest went to the Python path
    unsafe_cuts: int = 0  # places cut where no cut was safe


def count_shards(jobs: Iterable[Shard], options: Reading, report: Callable[[int], None] | None = None) -> ShardCounts:
    """Count shards into one tally; report(disk bytes) after each batch.

    Text files are read as bytes: the compiled path counts valid UTF-8 without making a str.
    """
    tally, text_bytes, cuts = Tally(options.pretokenizer, options.split_lines, options.compiled), 0, 0
    for shard in jobs:
        for batch in read_shard(shard, options, undecoded=True):
            tally.add(batch.documents, options.special_tokens)
            text_bytes += batch.text_bytes
            cuts += batch.unsafe_cuts
            if report:
                report(batch.disk_bytes)
    counts = tally.counts()
    why = tuple(sorted(tally.python_why))
    return ShardCounts(counts, text_bytes, peak_rss(), time.process_time(), tally.compiled_bytes, why, cuts)


def combine(parts: Iterable[dict[bytes, int]]) -> dict[bytes, int]:
    """Add up counts: [{b'a': 1}, {b'a': 2, b'b': 1}] -> {b'a': 3, b'b': 1}.

    The first dict is kept and the others added into it (a copy would cost as
    much memory again).
    """
    total: dict[bytes, int] = {}
    for part in parts:
        if not total:
            total = part
            continue
        get = total.get
        for token, n in part.items():
            total[token] = get(token, 0) + n
    return total


def reporter(progress: Progress | None, total: int) -> Callable[[int], None] | None:
    """A callback that adds up the bytes read so far and gives progress(done, total); None without progress."""
    if progress is None:
        return None
    done = 0

    def report(disk_bytes: int) -> None:
        nonlocal done
        done += disk_bytes
        progress(done, total)

    return report


# ---------------------------------------------------------------------------
# the pool: every worker drains one shared queue of shards into its own tally

_jobs = None  # in a worker: the shared queue of shards (None ends it)
_done = None  # in a worker: where it reports the disk bytes it has read
_stop = None  # in a worker: set when another worker failed


def _attach(jobs, done, stop, alive, chosen) -> None:
    global _jobs, _done, _stop
    follow(chosen)  # the caller's BPE_CORE and BPE_COMPILED, not the forkserver's
    _jobs, _done, _stop = jobs, done, stop
    threading.Thread(target=_end_with_parent, args=(alive,), daemon=True, name="bpe-watch-parent").start()
    done.put(-os.getpid())  # who this worker is, so that the main process can end it at once (a negative number: not bytes)


def _end_with_parent(alive) -> None:
    """In a worker: end this process as soon as the main process closes its end of `alive`, or dies.

    subtle: a worker's parent is the forkserver, not the main process, and it holds
    both ends of its queues, so nothing else tells it that the main process is gone
    (SIGTERM, SIGKILL, Ctrl-C): without this it would count on, holding the caller's
    stdout, and keep the forkserver and the resource tracker alive with it.
    """
    with contextlib.suppress(EOFError, OSError):
        alive.recv_bytes()  # nothing is ever sent: this returns at end of file
    os._exit(1)


def _drain(options: Reading) -> ShardCounts:
    def take():
        while (shard := _jobs.get()) is not None:
            if _stop.is_set():
                continue  # another worker failed: use up the queue without reading
            yield shard

    return count_shards(take(), options, _done.put)


def _count_in_pool(jobs: list[Shard], options: Reading, workers: int, report) -> tuple[list[ShardCounts], int]:
    # imported here: a run that counts in one process (most runs below 128 MB) skips their ~25 ms
    from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool
    from multiprocessing import get_context

    context = get_context("forkserver")  # safe to start from a threaded process such as the Streamlit server
    job_queue, done_queue, stop = context.Queue(), context.Queue(), context.Event()
    alive, keep_alive = context.Pipe(duplex=False)  # the workers watch `alive`; closing keep_alive ends them
    pids: list[int] = []  # the workers', as they report them
    for shard in jobs:
        job_queue.put(shard)
    for _ in range(workers):
        job_queue.put(None)  # one end marker per drain task
    try:
        attach = (job_queue, done_queue, stop, alive, core_settings())
        with ProcessPoolExecutor(workers, mp_context=context, initializer=_attach, initargs=attach) as pool:
            try:
                futures = [pool.submit(_drain, options) for _ in range(workers)]
                pending = set(futures)
                while pending:
                    finished, pending = wait(pending, timeout=0.1, return_when=FIRST_EXCEPTION)
                    _pass_on(done_queue, report, pids)
                    if any(f.exception() for f in finished):
                        stop.set()
                _pass_on(done_queue, report, pids)
                return [f.result() for f in futures], workers
            except BaseException:  # Ctrl-C, SIGTERM (the CLI raises it as an exception), an error: end the workers now
                stop.set()
                keep_alive.close()  # each worker's watcher ends it; the pool sees them gone and stops any still starting
                _pass_on(done_queue, None, pids)
                for pid in pids:  # subtle: a watcher needs the GIL, which a worker inside a long C call holds: a signal does not
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                for q in (job_queue, done_queue):
                    q.cancel_join_thread()  # the shards not taken stay unsent: exiting must not wait for them
                raise  # subtle: leaving the block waits for the pool to end them all, while their semaphores still exist
    except BrokenProcessPool:
        # subtle: a worker could not start (e.g. __main__ is <stdin>, which forkserver
        # cannot re-import); count everything here rather than fail
        return [count_shards(jobs, options)], 1
    finally:
        keep_alive.close()
        alive.close()


def _pass_on(done_queue, report, pids: list[int]) -> None:
    """Hand the disk bytes the workers have read to report, and note the pids they announce (as negative numbers)."""
    while True:
        try:
            disk_bytes = done_queue.get_nowait()
        except queue.Empty:
            return
        if disk_bytes < 0:
            pids.append(-disk_bytes)
        elif report:
            report(disk_bytes)


# ---------------------------------------------------------------------------
# PreTokens for trainers


def pretokenize_files(
    paths: Paths, *, workers: int | None = None, keep_sequence: bool = False, progress: Progress | None = None, **reading
) -> PreTokens:
    """PreTokens of every input (paths or globs of text, compressed text, JSON Lines, Parquet).

    The keyword arguments say how inputs are read (see count_inputs); pretokenize_with takes them as one value.
    """
    return pretokenize_with(paths, Reading.of(**reading), workers=workers, keep_sequence=keep_sequence, progress=progress)


def pretokenize_with(
    paths: Paths, reading: Reading, *, workers: int | None = None, keep_sequence: bool = False, progress: Progress | None = None
) -> PreTokens:
    """pretokenize_files with the reading options as one value: pretokenize_with(paths, spec.reading())."""
    if keep_sequence:  # the order of occurrences is for the teaching algorithms: small inputs, one process
        return _with_sequence(paths, reading, progress)
    counted = count_with(paths, reading, workers, progress)
    return PreTokens(counted.counts, None, counted.text_bytes)


def pretokenize_file(path: str | os.PathLike, **options) -> PreTokens:
    """Pre-tokenize one file of any size and format (see pretokenize_files, which takes the same keywords)."""
    return pretokenize_files([Path(path)], **options)


def _with_sequence(paths: Paths, options: Reading, progress: Progress | None) -> PreTokens:
    """Counts and every occurrence in text order, read in this process."""
    pretokenizer, special_tokens, split_lines = options.pretokenizer, options.special_tokens, options.split_lines
    inputs = resolve_inputs(paths)
    report = reporter(progress, sum(source.size for source in inputs))
    tally, sequence, text_bytes, cuts = Tally(pretokenizer, split_lines, options.compiled), [], 0, 0
    for source in inputs:
        for shard in shards(source, options):
            for batch in read_shard(shard, options):
                tally.add(batch.documents, special_tokens)
                for document in batch.documents:
                    sequence += sequence_bytes(document, pretokenizer, special_tokens, split_lines)
                text_bytes += batch.text_bytes
                cuts += batch.unsafe_cuts
                if report:
                    report(batch.disk_bytes)
    warn_unsafe_cuts(cuts)
    return PreTokens(tally.counts(), tuple(sequence), text_bytes)
