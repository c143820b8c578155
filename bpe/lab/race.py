"""The algorithm race: the trainers on one input, timed honestly and compared.

What it does: pre-tokenize once (`prepare`) and give the same PreTokens to every
trainer; run each with detail off on its own clock (`run_timed`, or `race` to
let them take turns), keeping the time after every merge; stop a trainer that
uses up its time budget and mark it cut off; find the first merge where the
merge lists differ (`first_difference`).

What it does not do: draw, print or keep state between calls; sweep sizes or
time parallel pre-tokenization (sweep.py); train the Rust tools we compare with
(references.py). The race page and benchmarks/race.py call these same
functions, so they measure the same code.

Honest timing: a trainer's clock runs only while that trainer works. Whatever
the caller does between turns (redrawing a chart) is outside every clock, and
the only bookkeeping inside it is one clock reading and three list appends per
merge; `clock_overhead` measures what that costs. The clock is the processor
time of the calling thread, so other sessions on a shared server (or other
programs on the machine) do not inflate a trainer's time; and, as timeit does,
the garbage collector is paused during a turn, so that its cost does not depend
on how many objects the rest of the process (a web server, other trainers) holds.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from time import perf_counter, thread_time
from typing import Any

from ..events import MergeEvent, StopReason
from ..spec import TrainSpec
from ..text.pretokenize import PreTokens
from ..text.tally import pretokenize
from ..train import ALGORITHMS, Run, check_spec, steps
from ..trainer import paused_gc

Merge = tuple[bytes, bytes]

SLICE_S = 0.05  # a turn in the race: each trainer works this long, then the next one
CLOCK = thread_time  # processor seconds of this thread: waiting for other threads or programs is not counted
WALL_FACTOR = 2  # on a busy machine a trainer is also cut off after this many budgets of wall-clock time (checked between turns)


# ---------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class Prepared:
    """The input every trainer starts from, and what it cost to make."""

    corpus: PreTokens
    seconds: dict[str, float]  # "read", "pre-tokenize"


@dataclass(frozen=True)
class RaceResult:
    """One trainer's run: what it merged, when, and how much work it did."""

    algorithm: str
    merges: tuple[Merge, ...]
    counts: tuple[int, ...]  # the count of each merged pair
    times: tuple[float, ...]  # seconds since the trainer started (initial count included) after merge k + 1
    seconds: dict[str, float] = field(default_factory=dict)  # "initial count", "merge loop"
    work: dict[str, int] = field(default_factory=dict)  # the trainer's counters
    cut_off: bool = False  # stopped by its time budget before the last merge
    stop_reason: str = ""  # a StopReason, or "" while running
    wall_s: float | None = None  # wall-clock seconds of a reference tool's run (its seconds are processor time, as ours)

    @property
    def total(self) -> float:
        return sum(self.seconds.values())

    @property
    def done(self) -> bool:
        return bool(self.stop_reason)


# ---------------------------------------------------------------------------
# preparing the shared input


def prepare(source: bytes | str | os.PathLike, spec: TrainSpec | None = None, **settings: Any) -> Prepared:
    """Read (if source is a Path) and pre-tokenize once under spec, keeping the sequence the positions trainer walks.

    Bytes or a str are text already in memory and cost nothing to read. The
    other trainers ignore the sequence. prepare(text, pretokenizer="whitespace") changes the default spec.
    """
    spec = TrainSpec.of(spec, **settings)
    start = perf_counter()  # wall-clock: waiting for the disk is part of reading
    data = Path(source).read_bytes() if isinstance(source, os.PathLike) else source
    read = perf_counter()
    with paused_gc():
        start_cpu = CLOCK()
        corpus = pretokenize(
            data,
            pretokenizer=spec.pretokenizer,
            special_tokens=spec.special_tokens,
            keep_sequence=any(t.needs_sequence for t in ALGORITHMS.values()),
            split_lines=spec.split_lines,
        )
        seconds = CLOCK() - start_cpu
    return Prepared(corpus, {"read": read - start, "pre-tokenize": seconds})


# ---------------------------------------------------------------------------
# one trainer on its own clock


class Runner:
    """One trainer, advanced a turn at a time on its own clock, so that several can take turns.

    The trainer is built (its initial pair count) on the first turn, not here,
    so a caller can show progress before the slowest constructor runs.
    """

    def __init__(self, corpus: PreTokens, spec: TrainSpec, num_merges: int, budget_s: float) -> None:
        if budget_s <= 0:
            raise ValueError(f"The time budget must be above 0 seconds, not {budget_s!r}.")
        check_spec(spec, 256 + len(spec.special_tokens))
        self.corpus, self.spec, self.num_merges, self.budget_s = corpus, spec, num_merges, budget_s
        self.algorithm = spec.algorithm
        self.run: Run | None = None
        self.init_s = self.loop_s = 0.0  # processor time
        self.wall_s = 0.0  # wall-clock time of the turns, for the safety cut-off
        self.merges: list[Merge] = []
        self.counts: list[int] = []
        self.times: list[float] = []
        self.work: dict[str, int] = {}
        self.stop_reason = ""

    @property
    def elapsed(self) -> float:
        return self.init_s + self.loop_s

    @property
    def done(self) -> bool:
        return bool(self.stop_reason)

    def advance(self, slice_s: float) -> None:
        """Work for about slice_s seconds: merge until the slice or the budget is used up, or training ends.

        A merge is never interrupted, so a turn overruns by at most one merge.
        """
        if self.done:
            return
        wall = perf_counter()
        with paused_gc():
            if self.run is None:
                start = CLOCK()
                self.run = Run(self.corpus, self.num_merges, self.spec)
                self.init_s = CLOCK() - start
                finished = False
            else:
                finished = self._merge_for(slice_s)
        self.wall_s += perf_counter() - wall
        if finished:
            self._finish(self.run.stop_reason)
        elif len(self.merges) >= self.num_merges:
            self._finish(StopReason.VOCAB_SIZE)
        elif self.elapsed >= self.budget_s:
            self._finish(StopReason.TIME_BUDGET)
        elif self.wall_s >= WALL_FACTOR * self.budget_s:
            self._finish(StopReason.WALL_BUDGET)  # the machine is busy: the trainer got under half of a processor

    def _merge_for(self, slice_s: float) -> bool:
        """The timed loop: the shared run loop (Run.until), plus one clock reading per merge. True when training ended."""
        merges, counts, times, clock = self.merges, self.counts, self.times, CLOCK
        base = self.elapsed
        start = clock()
        deadline = min(slice_s, self.budget_s - base) + start

        def tick(event) -> bool:  # the only bookkeeping inside the clock: clock_overhead measures it
            now = clock()
            merges.append((event.left, event.right))
            counts.append(event.count)
            times.append(base + now - start)
            return now >= deadline

        finished = self.run.until(tick)
        self.loop_s += clock() - start
        return finished

    def _finish(self, reason: str) -> None:
        self.stop_reason = reason
        self.work = dict(self.run.trainer.work)
        self.run = self.corpus = None  # let a big trainer's memory go now

    def result(self) -> RaceResult:
        """A snapshot of the run so far."""
        work = self.work if self.done else dict(self.run.trainer.work) if self.run else {}
        return RaceResult(
            algorithm=self.algorithm,
            merges=tuple(self.merges),
            counts=tuple(self.counts),
            times=tuple(self.times),
            seconds={"initial count": self.init_s, "merge loop": self.loop_s},
            work=work,
            cut_off=self.stop_reason in (StopReason.TIME_BUDGET, StopReason.WALL_BUDGET),
            stop_reason=self.stop_reason,
        )


def run_timed(
    corpus: PreTokens,
    algorithm: str,
    num_merges: int,
    budget_s: float,
    on_progress: Callable[[RaceResult], None] | None = None,
    every_s: float = 0.2,
    spec: TrainSpec | None = None,
    **settings: Any,
) -> RaceResult:
    """Train one algorithm under spec (settings by name change it) with detail off, stopping at budget_s seconds (initial count included).

    on_progress gets a snapshot about every every_s seconds; the clock is stopped while it runs.
    """
    runner = Runner(corpus, TrainSpec.of(spec, **settings, algorithm=algorithm), num_merges, budget_s)
    while not runner.done:
        runner.advance(every_s)
        if on_progress:
            on_progress(runner.result())
    return runner.result()


def race(
    corpus: PreTokens,
    num_merges: int,
    budget_s: float,
    algorithms: Sequence[str] | None = None,  # default: every trainer in ALGORITHMS when called
    slice_s: float = SLICE_S,
    spec: TrainSpec | None = None,
    **settings: Any,
) -> Iterator[tuple[RaceResult, ...]]:
    """Take turns: each unfinished trainer works for slice_s of its own time, then everyone's results so far are yielded.

    Every trainer gets the same share of the processor, so after t seconds each
    line of the chart has reached t and the fast ones have gone further right.
    The last tuple yielded is the final one. Every trainer runs under spec (settings by name change it), but its own algorithm.
    """
    spec = TrainSpec.of(spec, **settings)
    runners = [Runner(corpus, spec.but(algorithm=a), num_merges, budget_s) for a in (algorithms or tuple(ALGORITHMS))]
    while True:
        for runner in runners:
            runner.advance(slice_s)
            yield tuple(r.result() for r in runners)
        if all(r.done for r in runners):
            return


def clock_overhead(n: int = 20_000) -> float:
    """Seconds per merge that the timed loop adds: one call of its tick (a clock reading and three appends)."""
    merges, counts, times, clock = [], [], [], CLOCK
    event = MergeEvent(0, (97, 98), b"a", b"b", 256, 1, None, 0, 1)
    start = clock()
    deadline = start + 1e9

    def tick(event) -> bool:
        now = clock()
        merges.append((event.left, event.right))
        counts.append(event.count)
        times.append(now - start)
        return now >= deadline

    for _ in range(n):
        tick(event)
    return (clock() - start) / n


# ---------------------------------------------------------------------------
# comparing merge lists


def compared(results: Sequence[RaceResult]) -> int:
    """How many ranks first_difference checks: those that at least two of the runs reached."""
    longest = max((len(r.merges) for r in results), default=0)
    rank = 0
    while rank < longest and len(_reached(results, rank)) >= 2:
        rank += 1
    return rank


def first_difference(results: Sequence[RaceResult]) -> tuple[int, dict[str, tuple[Merge, int | None] | None]] | None:
    """The first rank where the merge lists differ, with each algorithm's merge and count there; None if they agree.

    At each rank the runs that made a merge there are compared, and so are
    finished runs that did not (they stopped early: None). A run cut off by its
    budget, or still running, takes part up to the merges it made.
    [ab, cd, ef] vs [ab, cd, xy] -> (2, {first: (ef, 3), second: (xy, 3)}).
    """
    for rank in range(compared(results)):
        there = {r.algorithm: _merge_at(r, rank) for r in _reached(results, rank)}
        if len({m[0] if m else None for m in there.values()}) > 1:
            return rank, there
    return None


def _reached(results: Sequence[RaceResult], rank: int) -> list[RaceResult]:
    """The runs that have a say at rank: they made a merge there, or finished without one."""
    return [r for r in results if rank < len(r.merges) or (r.done and not r.cut_off)]


def _merge_at(result: RaceResult, rank: int) -> tuple[Merge, int | None] | None:
    if rank >= len(result.merges):
        return None
    return result.merges[rank], result.counts[rank] if rank < len(result.counts) else None


def pair_count_after(corpus: PreTokens, merges: Sequence[Merge], pair: Merge, spec: TrainSpec | None = None, **settings: Any) -> int:
    """The count of pair (as bytes) after making merges, replayed with the heap trainer under spec's tie-break rule.

    Used to show that a reference trainer's different choice was a tie.
    """
    trainer, events = steps(corpus, len(merges), TrainSpec.of(spec, **settings), algorithm="heap")
    for _ in events:
        pass
    ids = {token: i for i, token in reversed(list(enumerate(trainer.vocab)))}  # first id with those bytes
    if pair[0] not in ids or pair[1] not in ids:
        return 0
    return trainer.pair_counts.get((ids[pair[0]], ids[pair[1]]), 0)
