"""The SentencePiece family's heavy work, as plain functions a worker process runs (serve/pool.py): its step-through trace.

`trace` trains bpe/sentencepiece/trainer.py's readable trainer with detail (every merge's best candidates and the
frequent pairs it may not make) on a corpus and hands back an `SpTrace`: the merges, what the characters' coverage
kept and dropped, and the pieces the run makes with their scores. Like serve/jobs.py's trace it stops at a time
budget, reports its progress (jobs.Built) and is kept on disk when it finished.

What it does not do: import Streamlit, draw, or time anything for the race (serve/jobs.py's sp_race does).
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter

from bpe.sentencepiece.compiled import core
from bpe.sentencepiece.model import Piece
from bpe.sentencepiece.spec import SentencePieceSpec
from bpe.sentencepiece.trainer import Corpus, PieceMerge, Trainer, meta_pieces, prepare, select
from bpe.sentencepiece.trainer_c import prepare_compiled
from serve import disk
from serve.jobs import Built, Report, Throttle, digest

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
