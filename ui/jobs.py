"""The app's heavy work as plain functions that a worker process runs (see ui/pool.py).

Each job takes small picklable arguments (a corpus's bytes, its settings) and a
`report` callback, and returns immutable data: a race, sweep or timing record,
a step-through trace, a training, a replayed text. A job reports a few times a
second. A race reports between the trainers' turns, when every clock is stopped,
so reporting costs the trainers nothing (bpe/race.py explains the timing), and it
runs in the worker's main thread, where bpe pauses the garbage collector as
benchmarks/race.py does: the figures are the benchmark's.

What it does not do: import Streamlit, pandas or Altair (a worker starts small
and fast), draw, or keep anything between jobs.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from time import perf_counter
from typing import Any

from bpe import PreTokens, Training, pretokenize, train
from bpe import race as R
from bpe.corpora import END_OF_TEXT
from bpe.events import MergeEvent
from bpe.threshold import Replay, replay, sample_of
from bpe.tokenizer import Tokenizer
from bpe.train import steps
from bpe.trainer import paused_gc

from .render import show_pair

REPORT_S = 0.25  # a job reports at most this often
Report = Callable[[Any], None]


# ---------------------------------------------------------------------------
# what jobs hand back


@dataclass(frozen=True)
class RaceRecord:
    """A race as the page shows it: reported while it runs, kept per session when it ends."""

    key: tuple  # what it was run on: see ui.race_views.race_key
    corpus_label: str
    n_bytes: int
    num_merges: int
    budget_s: float
    prep_seconds: dict[str, float]  # "read", "pre-tokenize": once, shared by all
    results: tuple[R.RaceResult, ...]
    status: str  # "running", "finished" or "stopped"
    clock_overhead_s: float = 0.0
    hf: R.RaceResult | None = None
    hf_note: str = ""  # why there is no reference, or whether it agrees (numbers only: shown as markdown)
    hf_rows: tuple = ()  # (trainer, merge, count) of both choices where HF first differs
    doing: str = ""  # what the run is doing now, when that is not racing


@dataclass(frozen=True)
class SweepRecord:
    source_label: str
    sizes: tuple[int, ...]
    num_merges: int
    budget_s: float
    points: tuple[R.ScalingPoint, ...]
    status: str  # "running", "finished" or "stopped"
    doing: str = ""


@dataclass(frozen=True)
class SpeedupRecord:
    n_bytes: int
    points: tuple[R.SpeedupPoint, ...]
    status: str
    doing: str = ""


@dataclass(frozen=True)
class Trace:
    """Every merge of one run, with detail, as the step-through page replays it."""

    events: tuple[MergeEvent, ...]
    stop_reason: str
    seconds: float
    unique_words: int


@dataclass(frozen=True)
class Built:
    """A trace job's progress: merges made so far, and the seconds they took."""

    merges: int
    seconds: float


class Throttle:
    """Calls report at most every REPORT_S seconds; `now` forces a call."""

    def __init__(self, report: Report) -> None:
        self.report, self.last = report, 0.0

    def __call__(self, progress: Any, now: bool = False) -> None:
        if now or perf_counter() - self.last >= REPORT_S:
            self.report(progress)
            self.last = perf_counter()


# ---------------------------------------------------------------------------
# the race page


def race(
    key: tuple,
    label: str,
    data: bytes,
    pattern: str,
    specials: tuple[str, ...],
    num_merges: int,
    budget_s: float,
    with_hf: bool,
    *,
    report: Report,
) -> RaceRecord:
    """The four trainers taking turns on one pre-tokenized corpus; then, if asked, HuggingFace's as a reference."""
    record = RaceRecord(key, label, len(data), num_merges, budget_s, {}, (), "running", doing="Pre-tokenizing once for all four trainers…")
    report(record)
    prepared = R.prepare(data, pattern=pattern, special_tokens=specials)
    record = replace(record, n_bytes=prepared.corpus.n_bytes, prep_seconds=prepared.seconds, clock_overhead_s=R.clock_overhead(), doing="")
    throttle = Throttle(report)
    for results in R.race(prepared.corpus, num_merges, budget_s):
        record = replace(record, results=results)
        throttle(record)  # between turns: every trainer's clock is stopped
    if with_hf:
        report(replace(record, doing="Training HuggingFace tokenizers' BPE as a reference…"))
        record = replace(record, **hf_reference(data, pattern, specials, num_merges, prepared, record.results))
    return replace(record, status="finished")


def hf_reference(
    data: bytes, pattern: str, specials: tuple[str, ...], num_merges: int, prepared: R.Prepared, results: tuple[R.RaceResult, ...]
) -> dict:
    """The HF reference and what to say about it, or only the sentence saying why there is none.

    Its merges are compared with heap's; where they first differ, the count of
    HF's choice is looked up in our trainer's state to show whether it was a tie.
    """
    if not R.hf_available():
        return {"hf_note": "HuggingFace tokenizers is not installed, so there is no reference line."}
    if pattern != "gpt2":
        return {"hf_note": "The HuggingFace reference uses GPT-2's pre-tokenizer; choose the gpt2 pre-tokenizer to add it."}
    hf = R.hf_reference(data.decode("utf-8", "replace"), num_merges, specials)
    ours = next(r for r in results if r.algorithm == "heap")
    found = R.first_difference([ours, hf])
    if found is None:
        return {"hf": hf, "hf_note": f"HuggingFace's Rust trainer made the same {R.compared([ours, hf]):,} merges."}
    rank, there = found
    (mine, count), (theirs, _) = there["heap"], there[R.HF]
    their_count = R.pair_count_after(prepared.corpus, ours.merges[:rank], theirs)
    why = (
        "a tie, which it breaks another way."
        if their_count == count
        else "its pair has a different count, so its input differs from ours (invalid UTF-8 is replaced for it)."
    )
    agreed = f"agrees on the first {rank:,} merges and differs at merge {rank + 1:,}" if rank else "differs already at merge 1"
    return {
        "hf": hf,
        "hf_note": f"HuggingFace's Rust trainer {agreed}: {why}",
        "hf_rows": (("ours (heap)", show_pair(*mine), f"{count:,}"), (R.HF, show_pair(*theirs), f"{their_count:,}")),
    }


def sweep(
    label: str, data: bytes, pattern: str, specials: tuple[str, ...], num_merges: int, budget_s: float, *, report: Report
) -> SweepRecord:
    """Every trainer on six growing prefixes of data (bpe.race.scaling_sweep), one point at a time."""
    record = SweepRecord(label, tuple(R.sweep_sizes(len(data))), num_merges, budget_s, (), "running", "Pre-tokenizing the first size…")
    report(record)
    throttle = Throttle(report)

    def tick(n_bytes: int, result: R.RaceResult) -> None:  # called with every clock stopped
        doing = f"{n_bytes / 1e6:.2f} MB: {result.algorithm}, {len(result.merges):,} of {num_merges:,} merges in {result.total:.2f} s"
        throttle(replace(record, doing=doing))

    for point in R.scaling_sweep(data, record.sizes, num_merges, budget_s, pattern=pattern, special_tokens=specials, on_progress=tick):
        record = replace(record, points=record.points + (point,), doing=f"{point.n_bytes / 1e6:.2f} MB: {point.result.algorithm} done")
        throttle(record, now=True)
    return replace(record, status="finished", doing="")


def speedup(data: bytes, size: int, *, report: Report) -> SpeedupRecord:
    """Pre-tokenize data repeated to size bytes or a little more with 1..cpu_count worker processes, wall-clock."""
    workers = list(range(1, (os.cpu_count() or 1) + 1))
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "corpus.txt")
        n_bytes = R.write_repeated(path, data, size)
        record = SpeedupRecord(n_bytes, (), "running", f"Pre-tokenizing {n_bytes / 1e6:.0f} MB with 1 worker…")
        report(record)
        for point in R.pretokenize_speedup(path, workers, special_tokens=(END_OF_TEXT,)):
            more = f"Pre-tokenizing with {point.workers + 1} workers…" if point.workers < workers[-1] else ""
            record = replace(record, points=record.points + (point,), doing=more)
            report(record)
    return replace(record, status="finished")


# ---------------------------------------------------------------------------
# the step-through, threshold and tokenize pages


def trace(
    data: bytes,
    pattern: str,
    specials: tuple[str, ...],
    num_merges: int,
    algorithm: str,
    budget_s: float,
    tie_break: str = "cs336",
    *,
    report: Report,
) -> Trace:
    """Every merge with detail, up to num_merges or budget_s seconds, ties broken by tie_break; reports Built as it goes."""
    start = perf_counter()
    corpus = pretokenize(data, pattern=pattern, special_tokens=specials, keep_sequence=algorithm == "positions")
    return trace_of(corpus, num_merges, algorithm, budget_s, report, start, tie_break)


def trace_of(
    corpus: PreTokens, num_merges: int, algorithm: str, budget_s: float, report: Report, start: float, tie_break: str = "cs336"
) -> Trace:
    """trace() on a corpus pre-tokenized already (the app does this in-process for tiny corpora)."""
    throttle = Throttle(report)
    kept = []
    with paused_gc():
        trainer, events = steps(corpus, num_merges, algorithm=algorithm, detail=True, tie_break=tie_break)
        for event in events:
            kept.append(event)
            seconds = perf_counter() - start
            if seconds > budget_s:
                trainer.stop_reason = f"time budget ({budget_s:.0f} s)"
                break
            throttle(Built(len(kept), seconds))
    return Trace(tuple(kept), trainer.stop_reason, perf_counter() - start, len(corpus.counts))


def training(
    data: bytes, pattern: str, specials: tuple[str, ...], num_merges: int, tie_break: str = "cs336", *, report: Report
) -> Training:
    """Every merge up to num_merges with no threshold and no detail (heap: all four give the same merges), ties broken by tie_break."""
    start = perf_counter()
    corpus = pretokenize(data, pattern=pattern, special_tokens=specials)
    throttle = Throttle(report)

    def made(event: MergeEvent) -> None:
        throttle(Built(event.rank + 1, perf_counter() - start))

    return train(corpus, num_merges, algorithm="heap", special_tokens=specials, on_merge=made, tie_break=tie_break)


def replays(merges: tuple, specials: tuple[str, ...], pattern: str, texts: tuple[bytes, ...], *, report: Report) -> tuple[Replay, ...]:
    """Each text encoded once with every merge, as bpe.threshold.replay keeps it."""
    tokenizer = Tokenizer.from_merges(list(merges), specials, pattern)
    return tuple(replay(tokenizer, sample_of(data, pattern, specials)) for data in texts)
