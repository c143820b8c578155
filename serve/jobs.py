"""The app's heavy work as plain functions that a worker process runs (see serve/pool.py).

Each job takes small picklable arguments (a corpus's bytes, its settings) and a
`report` callback, and returns immutable data: a race, sweep or timing record,
a step-through trace, a training, a replayed text. A job reports a few times a
second. A race reports between the trainers' turns, when every clock is stopped,
so reporting costs the trainers nothing (bpe/lab/race.py explains the timing), and it
runs in the worker's main thread, where bpe pauses the garbage collector as
benchmarks/race.py does: the figures are the benchmark's.

What it does not do: import Streamlit, pandas or Altair (a worker starts small
and fast), draw, or keep anything between jobs.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from time import perf_counter
from typing import Any

from bpe import PreTokenizer, PreTokens, Training, pretokenize, train
from bpe.data.corpora import END_OF_TEXT
from bpe.events import MergeEvent, StopReason
from bpe.lab import race as R
from bpe.lab import references as refs
from bpe.lab import sweep as sweeps
from bpe.lab.diagnose import Diagnosis
from bpe.lab.threshold import Replay, replay, sample_of
from bpe.spec import DEFAULT, TrainSpec
from bpe.tokenizer.tokenizer import Tokenizer
from bpe.train import pretokenize_for
from bpe.train import run as train_run
from serve import disk

REPORT_S = 0.25  # a job reports at most this often
Report = Callable[[Any], None]


# ---------------------------------------------------------------------------
# what jobs hand back, and what they are keyed on


@dataclass(frozen=True)
class RunKey:
    """What a run in the pool is, so that sessions asking for the same one share it, and a longer one serves a shorter.

    RunKey("trace", digest, spec, 1000) is the step page's trace of the corpus
    with that digest under spec, built for 1,000 merges; `family` is the same
    without the size, which is how a longer run's prefix is found.
    """

    purpose: str  # "trace", "train", "replays", "race", "sweep"
    corpus: str  # the corpus's content digest (ui.corpus.digest), never its text
    spec: TrainSpec
    merges: int = 0  # how many merges the run was built for
    extra: tuple = ()  # anything else the run depends on: a race's budget, the replayed text's name

    @property
    def family(self) -> RunKey:
        return replace(self, merges=0)


@dataclass(frozen=True)
class RaceRecord:
    """A race as the page shows it: reported while it runs, kept per session when it ends."""

    key: RunKey  # what it was run on: see ui.views.race.race_key
    corpus_label: str
    n_bytes: int
    num_merges: int
    budget_s: float
    prep_seconds: dict[str, float]  # "read", "pre-tokenize": once, shared by all
    results: tuple[R.RaceResult, ...]
    status: str  # "running", "finished" or "stopped"
    clock_overhead_s: float = 0.0
    references: tuple[ReferenceCheck, ...] = ()  # HuggingFace and rustbpe, when asked for and installed
    reference_note: str = ""  # why a reference is missing (numbers and fixed names only: shown as markdown)
    doing: str = ""  # what the run is doing now, when that is not racing
    spec: TrainSpec = DEFAULT  # the settings the four trainers raced under
    started_at: float = 0.0  # when the run started and ended (time.time(), this machine's clock): a page says when a replay ran
    finished_at: float = 0.0

    @property
    def tie_break(self) -> str:
        return self.spec.tie_break


@dataclass(frozen=True)
class ReferenceCheck:
    """A reference tool's merges, checked against ours under its own tie-break rule and under cs336.

    Notes hold numbers and fixed names only (the page shows them as markdown);
    tokens go in `rows` as bytes, which the page formats and shows in a table.
    """

    result: R.RaceResult  # the tool's own run (its algorithm is its name: refs.HF or refs.RUSTBPE)
    rule: str  # its tie-break rule (refs.REFERENCE_RULES)
    agrees: bool  # ours (heap) under its rule made the same merges
    note: str  # that it agrees merge for merge, or where and why it does not
    cs336_note: str = ""  # where the cs336 rule first parts from it ("" when that is its rule)
    rows: tuple = ()  # (run, merge as a byte pair, its count) of both choices where cs336 (or, failing agreement, ours) first differs


@dataclass(frozen=True)
class SweepRecord:
    source_label: str
    sizes: tuple[int, ...]
    num_merges: int
    budget_s: float
    points: tuple[sweeps.ScalingPoint, ...]
    status: str  # "running", "finished" or "stopped"
    doing: str = ""


@dataclass(frozen=True)
class SpeedupRecord:
    n_bytes: int
    points: tuple[sweeps.SpeedupPoint, ...]
    status: str
    doing: str = ""
    load: float = 0.0  # the machine's 1-minute load average when the timing started: are there free cores?


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
    key: RunKey,
    label: str,
    data: bytes,
    spec: TrainSpec,
    num_merges: int,
    budget_s: float,
    with_references: bool,
    algorithms: tuple[str, ...] = (),
    *,
    report: Report,
) -> RaceRecord:
    """The trainers (algorithms: those the page knows; () every one this process has) taking turns on one
    pre-tokenized corpus under spec; then, if asked, the Rust references."""
    record = RaceRecord(
        key,
        label,
        len(data),
        num_merges,
        budget_s,
        {},
        (),
        "running",
        doing="Pre-tokenizing once for all four trainers…",
        spec=spec,
        started_at=time.time(),
    )
    report(record)
    prepared = R.prepare(data, spec)
    record = replace(record, n_bytes=prepared.corpus.n_bytes, prep_seconds=prepared.seconds, clock_overhead_s=R.clock_overhead(), doing="")
    throttle = Throttle(report)
    for results in R.race(prepared.corpus, num_merges, budget_s, algorithms or None, spec=spec):
        record = replace(record, results=results)
        throttle(record)  # between turns: every trainer's clock is stopped
    if with_references:
        record = references(record, data, prepared, report)
    return replace(record, status="finished", doing="", finished_at=time.time())


REFERENCES = {  # tool -> (is it installed, train it, its name in a sentence)
    refs.HF: (refs.hf_available, refs.hf_reference, "HuggingFace tokenizers"),
    refs.RUSTBPE: (refs.rustbpe_available, refs.rustbpe_reference, "rustbpe"),
    refs.GIGATOKEN: (refs.gigatoken_available, refs.gigatoken_reference, "gigatoken"),  # its tie_breaking="huggingface"
    refs.FFBPE: (refs.ffbpe_available, refs.ffbpe_reference, "ffbpe"),  # its tie_break="largest_content": the cs336 rule
}


def references(record: RaceRecord, data: bytes, prepared: R.Prepared, report: Report) -> RaceRecord:
    """Each installed Rust reference, trained on the same text and checked against ours under its own rule and under cs336.

    Ours is the heap trainer (the race shows the four agree), run once per rule
    needed; the race's own heap run serves for its rule when it was not cut off.
    """
    if record.spec.pretokenizer != refs.PRETOKENIZER:
        return replace(record, reference_note="The Rust references use GPT-2's pre-tokenizer; choose the gpt2 pre-tokenizer to add them.")
    installed = [tool for tool, (available, _, _) in REFERENCES.items() if available()]
    missing = [REFERENCES[tool][2] for tool in REFERENCES if tool not in installed]
    note = (
        f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not installed, so there is no line for {'it' if len(missing) == 1 else 'them'}."
        if missing
        else ""
    )
    heap = next(r for r in record.results if r.algorithm == "heap")
    ours = {record.tie_break: replace(heap, algorithm=f"ours ({record.tie_break})")} if heap.done and not heap.cut_off else {}
    text = data.decode("utf-8", "replace")
    checks = []
    for tool in installed:
        _, train_it, name = REFERENCES[tool]
        rule = refs.REFERENCE_RULES[tool]
        report(replace(record, doing=f"Training {name} as a reference, and ours under its tie-break rule…"))
        theirs = train_it(text, record.num_merges, record.spec.special_tokens)
        for needed in (rule, "cs336"):
            if needed not in ours:
                run = R.run_timed(
                    prepared.corpus, "heap", record.num_merges, max(record.budget_s, 30.0), spec=record.spec.but(tie_break=needed)
                )
                ours[needed] = replace(run, algorithm=f"ours ({needed})")  # subtle: first_difference tells runs apart by this name
        checks.append(check_reference(theirs, rule, name, ours[rule], ours["cs336"], prepared))
        record = replace(record, references=tuple(checks))
    return replace(record, reference_note=note)


def check_reference(
    theirs: R.RaceResult, rule: str, name: str, ours: R.RaceResult, cs336: R.RaceResult, prepared: R.Prepared
) -> ReferenceCheck:
    """Does ours under the tool's rule make its merges? Where does the cs336 rule first part from it, and was that a tie?"""
    found = R.first_difference([ours, theirs])
    if found is not None:  # not its rule's fault: the input differs (invalid UTF-8 is replaced for it)
        rank, there = found
        (mine, count), (their_pair, _) = there[ours.algorithm], there[theirs.algorithm]
        their_count = R.pair_count_after(prepared.corpus, ours.merges[:rank], their_pair, tie_break=rule)
        why = (
            "a tie broken another way"
            if their_count == count
            else "its pair has a different count, so its input differs from ours (invalid UTF-8 is replaced for it)"
        )
        note = f'{name} and ours under its rule, tie_break="{rule}", agree on {rank:,} merges and differ at merge {rank + 1:,}: {why}.'
        rows = ((f"ours (heap, {rule})", mine, count), (name, their_pair, their_count))
        return ReferenceCheck(theirs, rule, False, note, rows=rows)
    note = f'{name} made the same {R.compared([ours, theirs]):,} merges as ours under its rule, tie_break="{rule}", merge for merge.'
    if rule == "cs336":
        return ReferenceCheck(theirs, rule, True, note)
    parted = R.first_difference([cs336, ours])
    if parted is None:
        return ReferenceCheck(
            theirs,
            rule,
            True,
            note,
            f"The cs336 rule makes the same {R.compared([cs336, ours]):,} merges here too: no tie it breaks otherwise.",
        )
    rank, _ = parted
    mine, count, their_pair, their_count = cs336.merges[rank], cs336.counts[rank], ours.merges[rank], ours.counts[rank]
    tie = f"a tie at {count:,}, broken the other way" if count == their_count else "after different counts"
    cs336_note = f"The cs336 rule (Stanford CS336's reference) first parts from {name} at merge {rank + 1:,}: {tie}."
    rows = (
        ("ours under cs336", mine, count),
        (f"{name}, and ours under {rule}", their_pair, their_count),
    )
    return ReferenceCheck(theirs, rule, True, note, cs336_note, rows)


def sweep(label: str, data: bytes, spec: TrainSpec, num_merges: int, budget_s: float, *, report: Report) -> SweepRecord:
    """Every trainer on six growing prefixes of data (bpe.lab.sweep.scaling_sweep), one point at a time."""
    record = SweepRecord(label, tuple(sweeps.sweep_sizes(len(data))), num_merges, budget_s, (), "running", "Pre-tokenizing the first size…")
    report(record)
    throttle = Throttle(report)

    def tick(n_bytes: int, result: R.RaceResult) -> None:  # called with every clock stopped
        doing = f"{n_bytes / 1e6:.2f} MB: {result.algorithm}, {len(result.merges):,} of {num_merges:,} merges in {result.total:.2f} s"
        throttle(replace(record, doing=doing))

    for point in sweeps.scaling_sweep(data, record.sizes, num_merges, budget_s, spec, on_progress=tick):
        record = replace(record, points=record.points + (point,), doing=f"{point.n_bytes / 1e6:.2f} MB: {point.result.algorithm} done")
        throttle(record, now=True)
    return replace(record, status="finished", doing="")


def speedup(data: bytes, size: int, *, report: Report) -> SpeedupRecord:
    """Pre-tokenize data repeated to size bytes or a little more with 1..cpu_count worker processes, wall-clock."""
    workers = list(range(1, (os.cpu_count() or 1) + 1))
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "corpus.txt")
        n_bytes = sweeps.write_repeated(path, data, size)
        record = SpeedupRecord(n_bytes, (), "running", f"Pre-tokenizing {n_bytes / 1e6:,.1f} MB with 1 worker…", load=os.getloadavg()[0])
        report(record)
        for point in sweeps.pretokenize_speedup(path, workers, special_tokens=(END_OF_TEXT,)):
            more = f"Pre-tokenizing with {point.workers + 1} workers…" if point.workers < workers[-1] else ""
            record = replace(record, points=record.points + (point,), doing=more)
            report(record)
    return replace(record, status="finished")


# ---------------------------------------------------------------------------
# the step-through, threshold and tokenize pages


def digest(data: bytes) -> str:
    """A corpus's content digest, as ui.corpus names corpora."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def known(value: Any, *, report: Report) -> Any:
    """A job whose result is already at hand (read from the disk): the pool keeps it for every session like any other."""
    return value


def trace_kept(corpus_digest: str, spec: TrainSpec, num_merges: int, budget_s: float) -> tuple:
    """What a trace is kept on disk under (serve/disk.py): the corpus, the settings, the size and time asked for."""
    return (corpus_digest, spec, num_merges, budget_s)


def trace(data: bytes, spec: TrainSpec, num_merges: int, budget_s: float, *, report: Report) -> Trace:
    """Every merge with detail under spec, up to num_merges or budget_s seconds; reports Built as it goes.

    Kept on disk for the next start, unless the time budget cut it (how far it got depends on the machine's load).
    """

    def make() -> Trace:
        start = perf_counter()
        corpus = pretokenize_for(data, spec)
        return trace_of(corpus, num_merges, spec, budget_s, report, start)

    def finished(made: Trace) -> bool:
        return not made.stop_reason.startswith(StopReason.TIME_BUDGET)

    return disk.kept("trace", trace_kept(digest(data), spec, num_merges, budget_s), make, keep=finished)


def trace_of(corpus: PreTokens, num_merges: int, spec: TrainSpec, budget_s: float, report: Report, start: float) -> Trace:
    """trace() on a corpus pre-tokenized already (the app does this in-process for tiny corpora)."""
    throttle = Throttle(report)
    made = 0

    def past_budget(event: MergeEvent) -> str | None:
        nonlocal made
        made += 1
        seconds = perf_counter() - start
        if seconds > budget_s:
            return f"{StopReason.TIME_BUDGET} ({budget_s:.0f} s)"
        throttle(Built(made, seconds))
        return None

    run = train_run(corpus, num_merges, spec, should_stop=past_budget, detail=True)
    return Trace(run.events, run.stop_reason, perf_counter() - start, len(corpus.counts))


def training_kept(corpus_digest: str, spec: TrainSpec, num_merges: int) -> tuple:
    return (corpus_digest, spec, num_merges)


def training(data: bytes, spec: TrainSpec, num_merges: int, *, report: Report) -> Training:
    """Every merge up to num_merges under spec with no detail (its trainer: all four give the same merges); kept on disk."""

    def make() -> Training:
        start = perf_counter()
        corpus = pretokenize_for(data, spec)
        throttle = Throttle(report)

        def made(event: MergeEvent) -> None:
            throttle(Built(event.rank + 1, perf_counter() - start))

        return train(corpus, num_merges, spec, on_merge=made)

    return disk.kept("training", training_kept(digest(data), spec, num_merges), make)


def replays(merges: tuple, spec: TrainSpec, texts: tuple[bytes, ...], *, report: Report) -> tuple[Replay, ...]:
    """Each text encoded once with every merge, as bpe.lab.threshold.replay keeps it."""
    tokenizer = Tokenizer.from_merges(list(merges), spec.special_tokens, spec.pretokenizer)
    return tuple(replay(tokenizer, sample_of(data, spec.pretokenizer, spec.special_tokens)) for data in texts)


@dataclass(frozen=True)
class Tokenized:
    """A text through one tokenizer as the Tokenize page shows it: its first `shown` tokens, and the totals."""

    pieces: tuple[bytes, ...]  # the first tokens' bytes
    ids: tuple[int, ...]  # and their ids
    count: int  # tokens in all
    round_trip: bool  # decoding every id gives back the text, byte for byte


def tokenized(tok: Tokenizer, text: str, k: int | None, shown: int) -> Tokenized:
    """text through tok's first k merges (None: all), every special token it spells encoded as special."""
    ids = tok.encode(text, k, allowed_special="all")
    return Tokenized(tuple(tok.vocab[i] for i in ids[:shown]), tuple(ids[:shown]), len(ids), tok.decode(ids) == text)


def tokenize(
    text: str, merges: tuple, special_tokens: tuple[str, ...], pretokenizer: PreTokenizer, k: int, reference, shown: int, *, report: Report
) -> tuple[Tokenized, Tokenized | str | None]:
    """A long text through the sidebar's run at merge k and through a real tokenizer, for the Tokenize page.

    reference: (files as (name, bytes), pre-tokenizer) of the real tokenizer, loaded here so the server
    never encodes a book chapter itself, or None. Returns both Tokenized, the second a sentence when the
    real one cannot take the text or its files.
    """
    from bpe.files import formats

    report("the run trained here")
    ours = tokenized(Tokenizer.from_merges(list(merges), special_tokens, pretokenizer), text, k, shown)
    if reference is None:
        return ours, None
    report("the real tokenizer")
    files, reference_pretokenizer = reference
    try:
        other = Tokenizer.from_loaded(formats.with_pretokenizer(formats.read_uploads(dict(files)), reference_pretokenizer))
        return ours, tokenized(other, text, None, shown)
    except ValueError as e:
        return ours, str(e)


BUILD_CPU_S = 2.0  # processor seconds an uploaded tokenizer may take to build (o200k_base: 0.2): the server builds it again


def read_upload(files: tuple[tuple[str, bytes], ...], pretokenizer: str, *, report: Report):
    """A tokenizer's uploaded files read and checked here, in a worker, for the Tokenize page: bpe.files.load.Loaded.

    A hostile file (tokens made to collide in a hash table, a format's worst case) costs this process
    its seconds, not the server's, whose pages every student's click needs. The tokenizer is built
    here once too, since the server builds it again from what this returns: a file whose build took
    more than BUILD_CPU_S of processor is refused, so the server never spends that long on one.
    """
    from bpe.files import formats

    report("reading")
    found = formats.with_pretokenizer(formats.read_uploads(dict(files)), pretokenizer)
    report("building")
    start = time.process_time()
    Tokenizer.from_loaded(found)
    spent = time.process_time() - start
    if spent > BUILD_CPU_S:
        names = ", ".join(name for name, _ in files)
        raise ValueError(
            f"{names}: its tokenizer took {spent:.1f} s of processor to build, more than the {BUILD_CPU_S:.0f} s an upload may "
            "take on a server a class shares; load it on your own machine (python -m bpe encode FILE --text ...)."
        )
    return found


def vocabulary_rows(files: tuple[tuple[str, str], ...], held_out: bytes, *, report: Report) -> tuple:
    """Every token of a real tokenizer with its uses on the held-out text (bpe.lab.vocabulary.TokenRow, in id order).

    files: (name, path) of the tokenizer's files as OpenAI names them (encoder.json + vocab.bpe, or one .tiktoken):
    loaded here, in the worker, so the server never pays the load and the count twice. OpenAI's rank files are
    known by their sha256 and bring their pre-tokenizer and special tokens; GPT-2's find <|endoftext|> themselves.
    """
    from pathlib import Path

    from bpe.files import formats
    from bpe.lab.vocabulary import token_rows

    def make() -> tuple:
        tok = Tokenizer.from_loaded(formats.read_uploads({name: Path(path).read_bytes() for name, path in files}))
        words = pretokenize(held_out, pretokenizer=tok.pretokenizer, special_tokens=tok.special_tokens).counts
        return tuple(token_rows(tok, tok.token_counts(words)))

    return disk.kept("vocabulary", vocabulary_kept(files, held_out), make)


def vocabulary_kept(files: tuple[tuple[str, str], ...], held_out: bytes) -> tuple:
    """What a real tokenizer's vocabulary is kept on disk under: its files' names and contents, and the held-out text."""
    from pathlib import Path

    return (tuple((name, digest(Path(path).read_bytes())) for name, path in files), digest(held_out))


# ---------------------------------------------------------------------------
# the check-your-merges page

EXAMPLE = "tie:smaller"  # the built-in example: a student who wrote min where the rule takes max
WINDOW = 4  # merges shown on each side of the first difference
CHECK_BUDGET_S = 30.0  # each known mistake trains at most this long (a long list on a big corpus): then "at least" that many


@dataclass(frozen=True)
class Checking:
    """A check's progress: what it is doing, and how far it is (0..1)."""

    doing: str
    share: float


@dataclass(frozen=True)
class Checked:
    """A student's merges checked against the reference: the diagnosis, and their merges around the first difference."""

    diagnosis: Diagnosis
    label: str  # what was checked: the uploaded files' names, or the example
    start: int  # the index of theirs[0] in their list
    theirs: tuple[tuple[bytes, bytes], ...]  # their merges from start, up to WINDOW past the first difference


def check_merges(
    files: tuple[tuple[str, bytes], ...], label: str, data: bytes, spec: TrainSpec, num_merges: int, *, report: Report
) -> Checked:
    """Read the uploaded merges (or, with no files, make the example's) and diagnose them on data under spec.

    Bad files raise ValueError with one sentence, which the page shows.
    """
    from bpe.files.merges_file import parse_uploads
    from bpe.lab.diagnose import diagnose, make_mistake

    throttle = Throttle(report)
    if files:
        report(Checking("Reading your merges…", 0.0))
        theirs = parse_uploads(dict(files))
    else:
        report(Checking("Making the example's merges: a trainer that breaks ties toward the smaller pair…", 0.0))
        theirs = make_mistake(EXAMPLE, data, spec, num_merges)
    found = diagnose(
        theirs,
        data,
        spec,
        vocab_size=256 + num_merges + len(spec.special_tokens),
        budget_s=CHECK_BUDGET_S,
        on_progress=lambda doing, share: throttle(Checking(doing, share)),
    )
    at = found.first_difference if found.first_difference is not None else min(found.reproduced_through, len(theirs))
    start = max(0, at - WINDOW)
    return Checked(found, label, start, tuple(theirs[start : at + WINDOW + 1]))
