"""The algorithm race: the four trainers on one input, timed honestly and compared.

What it does: pre-tokenize once (`prepare`) and give the same PreTokens to every
trainer; run each with detail off on its own clock (`run_timed`, or `race` to
let them take turns), keeping the time after every merge; stop a trainer that uses up its time budget and mark it cut off; find the
first merge where the merge lists differ (`first_difference`); sweep corpus
sizes (`scaling_sweep`); time parallel pre-tokenization (`pretokenize_speedup`);
and, when HuggingFace `tokenizers` or karpathy's `rustbpe` is installed, train
its Rust BPE on the same text as a reference (`hf_reference`,
`rustbpe_reference`), which our trainers match merge for merge under that
tool's tie-break rule (`REFERENCE_RULES`).

What it does not do: draw, print or keep state between calls. The race page and
benchmarks/race.py call these same functions, so they measure the same code.

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

import importlib.util
import json
import math
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from time import perf_counter, thread_time
from typing import Any

from .count import PARALLEL_MIN_BYTES, pretokenize_file
from .events import MergeEvent, StopReason
from .gpt2_bytes import from_unicode
from .load import merges_from_ranks
from .pretokenize import PATTERNS, PreTokens, pretokenize, split_on_special
from .spec import TrainSpec
from .train import ALGORITHMS, Run, check_spec, steps
from .trainer import paused_gc

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
            data, pattern=spec.pretokenizer, special_tokens=spec.special_tokens, keep_sequence=True, split_lines=spec.split_lines
        )
        seconds = CLOCK() - start_cpu
    return Prepared(corpus, {"read": read - start, "pre-tokenize": seconds})


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
    """Time pretokenize_file on one file with each number of worker processes.

    Process start-up is included: it is part of what parallelism costs. The
    file is read once first, so every run finds it in the page cache.
    """
    spec = TrainSpec.of(spec, **settings)
    Path(path).read_bytes()
    for workers in workers_list:
        start = perf_counter()
        # subtle: the Python path, whose work processes share; the compiled one counts this file in one
        # process in a fraction of a second, where starting workers costs more than it saves
        corpus = pretokenize_file(path, pattern=spec.pretokenizer, special_tokens=spec.special_tokens, workers=workers, compiled=False)
        yield SpeedupPoint(workers, perf_counter() - start, len(corpus.counts))


def write_repeated(path: str | os.PathLike, data: bytes, size: int) -> int:
    """Write data over and over to path until it holds at least size bytes; return the size written."""
    if not data:
        raise ValueError("Cannot build a file from empty data.")
    copies = -(-size // len(data))
    Path(path).write_bytes(data * copies)
    return len(data) * copies


# ---------------------------------------------------------------------------
# reference trainers in Rust, when they happen to be installed

HF = "hf tokenizers"
RUSTBPE = "rustbpe"
GIGATOKEN = "gigatoken"
FFBPE = "ffbpe"
# the tie-break rule under which ours makes the same merges as each, as the race page trains them
REFERENCE_RULES = {HF: "huggingface", RUSTBPE: "rustbpe", GIGATOKEN: "huggingface", FFBPE: "cs336"}
# their own names for the rules: which of ours each one is (None: no rule of ours; see gigatoken_reference)
GIGATOKEN_RULES = {"huggingface": "huggingface", "raw_token_ids": "rustbpe", "assembled_bytes": None}
FFBPE_RULES = {
    ("largest_content", "raw"): "cs336",
    ("smallest_pair_id", "raw"): "rustbpe",
    ("smallest_pair_id", "byte_level"): "huggingface",
}


def hf_available() -> bool:
    return importlib.util.find_spec("tokenizers") is not None


def rustbpe_available() -> bool:
    return importlib.util.find_spec("rustbpe") is not None


def gigatoken_available() -> bool:
    return importlib.util.find_spec("gigatoken") is not None


def ffbpe_available() -> bool:
    return importlib.util.find_spec("ffbpe") is not None


def hf_reference(text: str, num_merges: int, special_tokens: Sequence[str] = ()) -> RaceResult:
    """Train HuggingFace's Rust BPE (byte-level, GPT-2 regex) on the same text; its merges as bytes.

    It gets the pre-tokens ours gets: the text is cut at special tokens first
    (its trainer does not), each piece is one sequence, and ByteLevel splits it
    with GPT-2's regex. Its vocab_size counts the special tokens and the 256
    bytes, so num_merges new tokens are asked for. The text must be valid
    Unicode (no lone surrogates): decode bytes with 'replace' for both. Its time
    is wall-clock (it uses every core) and includes its own pre-tokenization; it
    records no per-merge times or counts. Ours makes the same merges with
    tie_break="huggingface". subtle: it trains with train_from_iterator over the
    documents, as the README says, so ours needs no split_lines; its
    Tokenizer.train(files) would read each line as a sequence (split_lines=True).
    """
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    start = perf_counter()
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    trainer = trainers.BpeTrainer(
        vocab_size=256 + len(special_tokens) + num_merges,
        special_tokens=list(special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(split_on_special(text, special_tokens), trainer=trainer)
    seconds = perf_counter() - start
    merges = []
    for merge in json.loads(tokenizer.to_str())["model"]["merges"]:
        left, right = merge.split(" ") if isinstance(merge, str) else merge
        merges.append((from_unicode(left), from_unicode(right)))
    return RaceResult(HF, tuple(merges), (), (), {"train (all phases)": seconds}, {}, False, StopReason.VOCAB_SIZE)


def rustbpe_reference(text: str, num_merges: int, special_tokens: Sequence[str] = ()) -> RaceResult:
    """Train karpathy's rustbpe on the same text with GPT-2's regex; its merges as bytes.

    As for hf_reference, the text is cut at special tokens and each piece is one
    sequence (rustbpe knows no special tokens: its vocab_size is 256 + merges).
    It reports tokens and ranks, not pairs, so each merge is recovered the way
    tiktoken would build its token (load.merges_from_ranks). Ours makes the same
    merges with tie_break="rustbpe".
    """
    import rustbpe

    start = perf_counter()
    tokenizer = rustbpe.Tokenizer()
    tokenizer.train_from_iterator(split_on_special(text, special_tokens), vocab_size=256 + num_merges, pattern=PATTERNS["gpt2"])
    seconds = perf_counter() - start
    ranks = {bytes(token): rank for token, rank in tokenizer.get_mergeable_ranks()}
    merges = tuple(merges_from_ranks(ranks))
    return RaceResult(RUSTBPE, merges, (), (), {"train (all phases)": seconds}, {}, False, StopReason.VOCAB_SIZE)


def gigatoken_reference(text: str, num_merges: int, special_tokens: Sequence[str] = (), tie_breaking: str = "huggingface") -> RaceResult:
    """Train gigatoken (0.10, Rust, parallel) on the same text; its merges as bytes.

    Its `train_bpe` cuts its input at one separator and splits each document with
    GPT-2's regex; the documents ours sees (the text cut at special tokens) are
    joined with a separator the text does not hold. Its vocab_size counts the 256
    bytes and the special tokens. Its tie_breaking rules: "huggingface" makes the
    merges of ours under tie_break="huggingface", "raw_token_ids" those under
    "rustbpe", and "assembled_bytes" takes the tied pair whose (left, right) bytes
    are the smallest -- the opposite of cs336's greatest, a rule ours does not have.
    """
    import gigatoken

    separator = _separator(text)
    data = separator.join(split_on_special(text, special_tokens)).encode("utf-8", "replace")
    start = perf_counter()
    with _quiet():  # it prints progress from Rust, and panics when stdout is a closed pipe (a worker process's)
        _, merges = gigatoken.train_bpe(
            data, 256 + len(special_tokens) + num_merges, list(special_tokens), tie_breaking, separator.encode()
        )
    seconds = perf_counter() - start
    merges = tuple((bytes(a), bytes(b)) for a, b in merges)
    return RaceResult(GIGATOKEN, merges, (), (), {"train (all phases)": seconds}, {}, False, StopReason.VOCAB_SIZE)


def ffbpe_reference(
    text: str, num_merges: int, special_tokens: Sequence[str] = (), tie_break: str = "largest_content", initial_alphabet: str = "raw"
) -> RaceResult:
    """Train ffbpe (0.1.10, Rust) on ours's own pre-token counts; its merges as bytes.

    Its BpeTrainer takes a word-frequency inventory, so it is given exactly the
    pre-tokens ours trains on (as text: invalid UTF-8 replaced, as for the others).
    Its rules: tie_break="largest_content" makes the merges of ours under "cs336";
    "smallest_pair_id" those under "rustbpe" with initial_alphabet="raw" (bytes
    numbered 0-255) and under "huggingface" with "byte_level" (GPT-2's order of
    the bytes). Its vocab_size counts the 256 bytes and the special tokens.
    """
    import tempfile

    from ffbpe import BpeTrainer

    words: dict[str, int] = {}
    for word, count in pretokenize(text, special_tokens=special_tokens).counts.items():
        key = word.decode("utf-8", "replace")
        words[key] = words.get(key, 0) + count
    start = perf_counter()
    trainer = BpeTrainer(list(special_tokens), tie_break=tie_break, initial_alphabet=initial_alphabet)
    trainer.add_words(words)
    trainer.train(256 + len(special_tokens) + num_merges)
    seconds = perf_counter() - start
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "merges.txt"
        trainer.validate_model().save_merges_txt(path, format="gpt2")
        lines = path.read_text(encoding="utf-8").splitlines()
    merges = []
    for n, line in enumerate(lines):  # 'Ġ t => 2940': the pair in GPT-2's byte-to-unicode form, then its count
        pair = line.split(" => ")[0].split(" ")
        if len(pair) == 2 and not (n == 0 and line.startswith("#version")):  # subtle: '# # => 12' is a merge of '#' and '#'
            merges.append((from_unicode(pair[0]), from_unicode(pair[1])))
    return RaceResult(FFBPE, tuple(merges), (), (), {"train (all phases)": seconds}, {}, False, StopReason.VOCAB_SIZE)


def _separator(text: str) -> str:
    """A document separator that does not occur in text."""
    n = 0
    while f"<|doc{n}|>" in text:
        n += 1
    return f"<|doc{n}|>"


@contextmanager
def _quiet() -> Iterator[None]:
    """The process's stdout and stderr (file descriptors 1 and 2) sent to /dev/null for the block."""
    import sys

    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)
