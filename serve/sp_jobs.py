"""The SentencePiece family's heavy work, as plain functions a worker process runs (serve/pool.py): its trace and its race.

`trace` trains bpe/sentencepiece/trainer.py's readable trainer with detail (every merge's best candidates and the
frequent pairs it may not make) on a corpus and hands back an `SpTrace`: the merges, what the characters' coverage
kept and dropped, and the pieces the run makes with their scores. Like serve/jobs.py's trace it stops at a time
budget, reports its progress (jobs.Built) and is kept on disk when it finished.

`race` trains the same run three ways, one after the other, from the same file: ours compiled (the core's trainer,
as `bpe train --sentencepiece` runs), sentencepiece 0.2.3 itself (when installed), and ours in Python (the
readable trainer, cut off at the race's budget); each is timed on the processor's clock (every thread of this
process) and the wall's, and the pieces each made are held against sentencepiece's, piece, score and type.

What it does not do: import Streamlit, draw, or race byte-level trainers (serve/jobs.py's race does).
"""

from __future__ import annotations

import importlib.util
import io
import os
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from time import perf_counter, process_time

from bpe.sentencepiece.compiled import core
from bpe.sentencepiece.model import Piece
from bpe.sentencepiece.spec import SentencePieceSpec
from bpe.sentencepiece.trainer import Corpus, PieceMerge, Trainer, meta_pieces, prepare, read_lines, select
from bpe.sentencepiece.trainer_c import CompiledTrainer, prepare_compiled, prepare_files
from serve import disk
from serve.jobs import Built, Report, RunKey, Throttle, digest

TIME_BUDGET = "stopped at the time limit"


@dataclass(frozen=True)
class Characters:
    """What phase 2 made of the corpus's characters: those kept (each with its count, in the order they become pieces),
    those that fell outside the coverage and became <unk> (most frequent first), and the shares."""

    kept: tuple[tuple[str, int], ...]
    dropped: tuple[tuple[str, int], ...]
    counted: int  # every character counted, the coverage's denominator
    coverage: float  # the share of them the kept characters cover
    lines: int  # lines trained on
    skipped: int  # lines dropped: empty, over max_sentence_length bytes, or holding U+2585
    words: int  # distinct words (or lines, without split_by_whitespace)


@dataclass(frozen=True)
class SpTrace:
    """A SentencePiece run as the step page replays it: every merge with detail, the characters, the pieces made."""

    events: tuple[PieceMerge, ...]
    stop_reason: str  # "vocab_size", "no candidates left", or TIME_BUDGET (with the seconds)
    seconds: float
    characters: Characters
    pieces: tuple[Piece, ...]  # the model's pieces in id order, from the merges made
    n_meta: int  # pieces before the first merge's: <unk>, <s>, </s>, and the 256 byte pieces with byte fallback
    problem: str = ""  # why sentencepiece would refuse this run (hard_vocab_limit: too few pieces), or ""


def trace_kept(corpus_digest: str, spec: SentencePieceSpec, budget_s: float) -> tuple:
    """What an SpTrace is kept on disk under (serve/disk.py)."""
    return ("sentencepiece", corpus_digest, spec, budget_s)


def trace(data: bytes, spec: SentencePieceSpec, budget_s: float, *, report: Report) -> SpTrace:
    """Every merge of a SentencePiece run with detail, up to the vocabulary or budget_s seconds; kept on disk when it finished.

    A ValueError (a vocab size smaller than the characters the coverage keeps) is the job's one-sentence failure.
    """

    def make() -> SpTrace:
        return trace_of(data, spec, budget_s, report)

    return disk.kept("sp-trace", trace_kept(digest(data), spec, budget_s), make, keep=lambda made: made.stop_reason != TIME_BUDGET)


def trace_of(data: bytes, spec: SentencePieceSpec, budget_s: float, report: Report) -> SpTrace:
    start = perf_counter()
    lines = select(data.split(b"\n"), spec)  # getline's lines: '\r' kept, as spm_train reads a file
    corpus = prepare_compiled(lines, spec) if core() is not None else prepare(lines, spec)  # the same Corpus, in C where built
    trainer = Trainer(corpus, spec)  # the readable trainer: it records the detail
    throttle = Throttle(report)
    events, reason = [], ""
    for event in trainer.merges(detail=True):
        events.append(event)
        seconds = perf_counter() - start
        if seconds > budget_s:
            reason = TIME_BUDGET
            break
        throttle(Built(len(events), seconds))
    pieces, problem = _pieces(trainer)
    return SpTrace(
        tuple(events),
        reason or trainer.stop_reason,
        perf_counter() - start,
        characters(corpus, len(trainer.words)),
        pieces,
        len(meta_pieces(spec)),
        problem,
    )


def _pieces(trainer: Trainer) -> tuple[tuple[Piece, ...], str]:
    """The model's pieces, and why sentencepiece would refuse them ("" if it would not): with hard_vocab_limit a run that
    makes too few pieces is an error there; here the pieces made are still shown, with that sentence."""
    try:
        return tuple(trainer.pieces()), ""
    except ValueError as error:
        problem = str(error)
    trainer.spec = trainer.spec.but(hard_vocab_limit=False)  # the same pieces, without the check that refused them
    try:
        return tuple(trainer.pieces()), problem
    except ValueError:  # a meta piece's id past the pieces made: there is no model to show
        return (), problem


def characters(corpus: Corpus, words: int) -> Characters:
    lines = corpus.lines
    return Characters(
        corpus.required,
        corpus.dropped,
        corpus.characters,
        corpus.coverage,
        lines.kept,
        lines.empty + lines.too_long + lines.reserved,
        words,
    )


# ---------------------------------------------------------------------------
# the race: ours (compiled, Python) and sentencepiece itself, to the same pieces

COMPILED, PYTHON, SENTENCEPIECE = "ours compiled (C)", "ours in Python", "sentencepiece 0.2.3"


@dataclass(frozen=True)
class SpRun:
    """One trainer's run in the race: its merges and when it made them, its totals on both clocks, and its verdict."""

    name: str  # COMPILED, PYTHON or SENTENCEPIECE
    merges: int
    times: tuple[float, ...] = ()  # processor seconds since its start after each merge (ours; sentencepiece tells none)
    prepare_s: float = 0.0  # processor seconds before the first merge: lines, normalization, characters, words (ours)
    total_s: float = 0.0  # processor seconds to its pieces, every thread counted
    wall_s: float = 0.0
    cut_off: bool = False  # stopped by the race's budget before its last merge
    same: bool | None = None  # made sentencepiece's pieces, score and type, in id order (None: nothing to hold it to)
    error: str = ""  # why it made no model (a vocab size this corpus cannot fill, with hard_vocab_limit)


@dataclass(frozen=True)
class SpRaceRecord:
    """The race as the page shows it: reported while it runs, kept per session when it ends."""

    key: RunKey
    corpus_label: str
    n_bytes: int
    budget_s: float
    runs: tuple[SpRun, ...]
    status: str  # "running", "finished" or "stopped"
    pieces: int = 0  # pieces in the model
    doing: str = ""
    note: str = ""  # why sentencepiece has no line (not installed)
    started_at: float = 0.0
    finished_at: float = 0.0


def sentencepiece_available() -> bool:
    return importlib.util.find_spec("sentencepiece") is not None


def spm_options(spec: SentencePieceSpec) -> dict[str, object]:
    """spm_train's options for spec: vocab_size, and every setting that differs from the default (as a command line gives them)."""
    default = SentencePieceSpec()
    options = {k: v for k, v in asdict(spec).items() if k == "vocab_size" or v != getattr(default, k)}
    for name in ("user_defined_symbols", "control_symbols"):
        if name in options:
            options[name] = list(options[name])
    if options.get("input_sentence_size"):
        options["shuffle_input_sentence"] = False  # the first N lines, as ours reads them (spec.py says why)
    return options


def race(key: RunKey, label: str, data: bytes, spec: SentencePieceSpec, budget_s: float, *, report: Report) -> SpRaceRecord:
    """Ours compiled, sentencepiece (when installed), then ours in Python (cut off at budget_s), on data written to one file."""
    record = SpRaceRecord(key, label, len(data), budget_s, (), "running", doing="Training ours, compiled…", started_at=time.time())
    report(record)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "corpus.txt")
        with open(path, "wb") as f:
            f.write(data)
        compiled, pieces = _ours(path, spec, budget_s, compiled=True, report=lambda run: report(replace(record, runs=(run,))))
        record = replace(record, runs=(compiled,), pieces=len(pieces or ()))
        runs = [compiled]
        theirs = None
        if sentencepiece_available():
            report(replace(record, doing="Training sentencepiece itself…"))
            spm_run, theirs = _sentencepiece(path, spec)
            runs.append(spm_run)
        else:
            record = replace(record, note="sentencepiece is not installed, so there is no line for it (pip install sentencepiece==0.2.3).")
        record = replace(record, runs=tuple(runs), doing="Training ours in Python…")
        report(record)
        python, python_pieces = _ours(path, spec, budget_s, compiled=False, report=lambda run: report(replace(record, runs=(*runs, run))))
        runs.append(python)
    if theirs is not None:  # each held to sentencepiece's pieces (a cut-off run has no model to hold)
        runs = [replace(r, same=found == theirs) if found is not None else r for r, found in zip(runs, (pieces, theirs, python_pieces))]
    elif pieces is not None and python_pieces is not None:
        runs[-1] = replace(runs[-1], same=python_pieces == pieces)  # the Python trainer held to the compiled one's
    return replace(record, runs=tuple(runs), status="finished", doing="", finished_at=time.time())


def _ours(path: str, spec: SentencePieceSpec, budget_s: float, *, compiled: bool, report) -> tuple[SpRun, tuple | None]:
    """One of ours timed to its pieces (phase 1-2, then each merge, then the pieces); (its run, its pieces or None if cut off)."""
    name = COMPILED if compiled and core() is not None else PYTHON
    if compiled and core() is None:  # no compiled core here: the race says so by having only the Python line
        return SpRun(COMPILED, 0, error="The compiled core is not built on this server."), None
    wall, start = perf_counter(), process_time()
    try:
        corpus = prepare_files([path], spec) if compiled else prepare(select(read_lines([path]), spec), spec)
    except ValueError as error:
        return SpRun(name, 0, error=str(error)), None
    prepared = process_time() - start
    trainer = CompiledTrainer(corpus, spec) if compiled else Trainer(corpus, spec)
    throttle, times, cut_off = Throttle(lambda run: report(run)), [], False
    for _ in trainer.merges():
        times.append(process_time() - start)
        if times[-1] > budget_s and not compiled:
            cut_off = True
            break
        throttle(SpRun(name, len(times), tuple(times), prepared, times[-1], perf_counter() - wall))
    pieces, error = None, ""
    if not cut_off:
        try:
            pieces = tuple((p.piece, p.score, p.type) for p in trainer.model().pieces)
        except ValueError as e:
            error = str(e)
    total, wall_s = process_time() - start, perf_counter() - wall
    return SpRun(name, len(times), tuple(times), prepared, total, wall_s, cut_off, error=error), pieces


def _sentencepiece(path: str, spec: SentencePieceSpec) -> tuple[SpRun, tuple | None]:
    """sentencepiece's own training from the same file (spm_train's options for spec), timed; its pieces read from its model."""
    import sentencepiece as spm

    from bpe.sentencepiece.model_file import parse_model

    out = io.BytesIO()
    wall, start = perf_counter(), process_time()
    try:
        spm.SentencePieceTrainer.train(input=path, model_writer=out, model_type="bpe", minloglevel=2, **spm_options(spec))
    except RuntimeError as error:  # a vocab size the corpus cannot fill: ours refuses it too
        return SpRun(SENTENCEPIECE, 0, total_s=process_time() - start, wall_s=perf_counter() - wall, error=str(error)[:200]), None
    total, wall_s = process_time() - start, perf_counter() - wall
    pieces = tuple((p.piece, p.score, p.type) for p in parse_model(out.getvalue()).pieces)
    merges = sum(1 for p in pieces if p[2] == 1 and len(p[0]) > 1)  # NORMAL pieces longer than one character
    return SpRun(SENTENCEPIECE, merges, total_s=total, wall_s=wall_s), pieces
