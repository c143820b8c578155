"""What a long command shows as it runs: progress bars on a terminal, phase lines on a pipe, and a summary of time,
processor time and peak memory per phase. The byte-level CLI (cli.py) and the SentencePiece family's
(sentencepiece/cli.py) both report through it.

    phases = Phases()
    with phases.phase("pre-tokenize"), bar("pre-tokenize", total, "B", scale=True) as progress:
        ...  # follow(progress) is a (done, total) callback that moves it
    print("\n".join(phases.summary()))
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from .memory import megabytes, peak_rss, reset_peak

Progress = Callable[[int, int], None]  # (bytes done, bytes total)


@dataclass
class Phases:
    """Time and peak resident memory of each phase of a run, for the summary."""

    seconds: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)  # this process's processor time: a busy machine inflates it less
    peak: dict[str, int] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)  # e.g. the workers' peak
    per_phase: bool = True  # False: the system keeps one peak since start, not one per phase

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        self.per_phase = reset_peak() and self.per_phase
        start, cpu = time.perf_counter(), time.process_time()
        yield
        self.seconds[name] = time.perf_counter() - start
        self.cpu[name] = time.process_time() - cpu
        self.peak[name] = peak_rss()

    def summary(self) -> list[str]:
        total = sum(self.seconds.values())
        times = ", ".join(f"{name} {s:.2f}s" for name, s in self.seconds.items())
        cpu = ", ".join(f"{name} {s:.2f}s{self.notes.get(name + ' cpu', '')}" for name, s in self.cpu.items())
        since = "" if self.per_phase else " (peak since start: this system cannot reset it per phase)"
        memory = ", ".join(f"{name} {megabytes(n)}{self.notes.get(name, '')}" for name, n in self.peak.items())
        return [
            f"time: {times}, total {total:.2f}s",
            f"processor time (this process): {cpu}",
            f"peak memory (resident, this process{since}): {memory}",
        ]


def bar(label: str, total: float, unit: str, scale: bool = False):
    """A tqdm bar on stderr with rate and ETA; a Silent one when stderr is not a terminal (phase lines are printed instead)."""
    if not sys.stderr.isatty():
        return Silent()
    from tqdm import tqdm

    return tqdm(total=total, desc=label, unit=unit, unit_scale=scale, unit_divisor=1000, file=sys.stderr, dynamic_ncols=True, leave=True)


class Silent:
    """A bar that shows nothing, for a pipe: without tqdm, whose import alone (importlib.metadata for its version) is ~50 ms."""

    n = total = 0

    def update(self, n: int = 1) -> None:
        pass

    def __enter__(self) -> Silent:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def say(line: str) -> None:
    """A phase line on a pipe, where there is no bar."""
    if not sys.stderr.isatty():
        print(line, file=sys.stderr, flush=True)


def follow(progress) -> Progress:
    """A (done, total) callback that moves a tqdm bar."""

    def update(done: int, total: int) -> None:
        progress.total = total
        progress.update(done - progress.n)

    return update
