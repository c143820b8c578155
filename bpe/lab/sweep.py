"""Scaling the race up: every trainer on growing prefixes of a corpus, and pre-tokenization on more workers.

What it does: cut a corpus into log-spaced prefixes (`sweep_sizes`, `prefix`),
race every trainer on each (`scaling_sweep`, giving up on one once it is cut
off), and time pre-tokenizing one file with 1..N worker processes
(`pretokenize_speedup`). Each point is a bpe.lab.race run, timed as the race is.

What it does not do: draw or print (the race page and benchmarks/race.py do).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from time import perf_counter
from typing import Any

from ..data.count import PARALLEL_MIN_BYTES, pretokenize_with
from ..spec import TrainSpec
from ..train import ALGORITHMS
from .race import RaceResult, prepare, run_timed


def prefix(data: bytes, size: int) -> bytes:
    """The first size bytes of data, cut back to the last newline so no word or character is split."""
    if size >= len(data):
        return data
    cut = data.rfind(b"\n", 0, size)
    return data[: cut + 1] if cut > 0 else data[:size]


def log_sizes(low: int, high: int, n: int) -> list[int]:
    """n sizes evenly spaced on a log scale: log_sizes(50_000, 2_000_000, 3) -> [50000, 316228, 2000000]."""
    if n < 2 or low >= high:
        return [high]
    step = (math.log(high) - math.log(low)) / (n - 1)
    return [round(math.exp(math.log(low) + i * step)) for i in range(n)]


def sweep_sizes(n_bytes: int, n: int = 6) -> list[int]:
    """The sizes the page and benchmarks/race.py sweep: n log-spaced from 50 KB (or a fortieth) up to n_bytes."""
    return log_sizes(min(50_000, max(1, n_bytes // 40)), n_bytes, n)


# ---------------------------------------------------------------------------
# scaling


@dataclass(frozen=True)
class ScalingPoint:
    """One trainer on one prefix of the corpus."""

    n_bytes: int
    pretokenize_s: float  # shared by all trainers at this size
    result: RaceResult


def scaling_sweep(
    data: bytes,
    sizes: Sequence[int],
    num_merges: int,
    budget_s: float,
    spec: TrainSpec | None = None,
    *,
    algorithms: Sequence[str] | None = None,  # default: every trainer in ALGORITHMS when called
    on_progress: Callable[[int, RaceResult], None] | None = None,
    **settings: Any,
) -> Iterator[ScalingPoint]:
    """Run every algorithm on growing prefixes of data, one point per (size, algorithm).

    A trainer that is cut off at one size is not run at the larger ones: it
    could only be slower, and the sweep stays within len(sizes) x budget_s per trainer.
    on_progress gets (size in bytes, the run so far) while a trainer runs.
    """
    spec = TrainSpec.of(spec, **settings)
    given_up: set[str] = set()
    for size in sizes:
        prepared = prepare(prefix(data, size), spec)
        for algorithm in algorithms or tuple(ALGORITHMS):
            if algorithm in given_up:
                continue
            report = (lambda result, n=prepared.corpus.n_bytes: on_progress(n, result)) if on_progress else None
            result = run_timed(prepared.corpus, algorithm, num_merges, budget_s, report, spec=spec)
            if result.cut_off:
                given_up.add(algorithm)
            yield ScalingPoint(prepared.corpus.n_bytes, prepared.seconds["pre-tokenize"], result)


# ---------------------------------------------------------------------------
# parallel pre-tokenization


SPEEDUP_BYTES = 6 * PARALLEL_MIN_BYTES  # big enough that a pool of workers more than pays for starting up


@dataclass(frozen=True)
class SpeedupPoint:
    workers: int
    seconds: float
    unique: int  # unique pre-tokens found: the same for every worker count


def pretokenize_speedup(
    path: str | os.PathLike, workers_list: Sequence[int], spec: TrainSpec | None = None, **settings: Any
) -> Iterator[SpeedupPoint]:
    """Time pre-tokenizing one file with each number of worker processes.

    Process start-up is included: it is part of what parallelism costs. The
    file is read once first, so every run finds it in the page cache.
    """
    spec = TrainSpec.of(spec, **settings)
    Path(path).read_bytes()
    for workers in workers_list:
        start = perf_counter()
        # subtle: the Python path, whose work processes share; the compiled one counts this file in one
        # process in a fraction of a second, where starting workers costs more than it saves
        corpus = pretokenize_with([path], replace(spec.reading(), compiled=False), workers=workers)
        yield SpeedupPoint(workers, perf_counter() - start, len(corpus.counts))


def write_repeated(path: str | os.PathLike, data: bytes, size: int) -> int:
    """Write data over and over to path until it holds at least size bytes; return the size written."""
    if not data:
        raise ValueError("Cannot build a file from empty data.")
    copies = -(-size // len(data))
    Path(path).write_bytes(data * copies)
    return len(data) * copies
