"""Training end to end: check the settings, pre-tokenize, run a trainer, build the vocab.

`train_bpe` is the CS336-compatible entry point; `train` returns the whole run
(events, timings, why it stopped) for the CLI, the app and the benchmarks.
Every entry point takes its settings as one `TrainSpec` (spec.py), or by name
as a convenience that builds one: `tie_break` (rule.py) is "cs336" (default),
"huggingface" or "rustbpe", to reproduce the merges of that tool.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .data.count import Paths, pretokenize_with
from .events import MIN_FREQUENCY, VOCAB_SIZE, WORK_NAMES, MergeEvent, stop_sentence
from .heap import Heap
from .heap_c import HeapC
from .naive import Naive
from .parent_set import ParentSet
from .positions import Positions
from .renamed import renamed
from .rule import rule_for
from .spec import DEFAULT, TrainSpec
from .text.pretokenize import PreTokens, Progress
from .text.pretokenizers import check_special_tokens
from .text.tally import pretokenize
from .trainer import Merged, Trainer, encode_words, paused_gc

ALGORITHMS: dict[str, type[Trainer]] = {}  # name -> trainer class: the registry every page, the race and the CLI read
ABSENT: dict[str, type[Trainer]] = {}  # compiled trainers that cannot run here (their `missing` says why): their reference runs


def register(trainer: type[Trainer]) -> type[Trainer]:
    """Add a trainer to ALGORITHMS under its name (usable as a class decorator); everything else reads its class attributes.

    A compiled trainer that cannot run here goes to ABSENT instead: the race and the pages leave it out,
    and asking for it by name runs its reference (the same merges), saying why.
    """
    (ABSENT if trainer.missing else ALGORITHMS)[trainer.name] = trainer
    return trainer


for _trainer in (Naive, Positions, ParentSet, Heap, HeapC):
    register(_trainer)


def work_names() -> dict[str, str]:
    """Every work counter a registered trainer keeps -> as a page says it: events.WORK_NAMES, then any a trainer adds."""
    names = dict(WORK_NAMES)
    for trainer in ALGORITHMS.values():
        names.update(trainer.work_names)
    return names


Vocab = dict[int, bytes]
Merges = list[tuple[bytes, bytes]]


@dataclass(frozen=True)
class Training:
    """A finished run: what was learned, under which settings, and what it cost."""

    events: tuple[MergeEvent, ...]
    spec: TrainSpec
    stop_reason: str
    seconds: dict[str, float] = field(default_factory=dict)  # per phase
    work: dict[str, int] = field(default_factory=dict)

    @property
    def merges(self) -> Merges:
        return [(e.left, e.right) for e in self.events]

    @property
    def vocab(self) -> Vocab:
        return build_vocab(self.merges, self.special_tokens, distinct=rule_for(self.tie_break).reuses_tokens)

    @property
    def special_tokens(self) -> tuple[str, ...]:
        return self.spec.special_tokens

    @property
    def algorithm(self) -> str:
        return self.spec.algorithm

    @property
    def tie_break(self) -> str:
        return self.spec.tie_break


def build_vocab(merges: Merges, special_tokens: Sequence[str] = (), *, distinct: bool = False) -> Vocab:
    """Ids 0-255 are the bytes, merges follow in order, special tokens come last.

    The vocab is derived from the merges, never kept separately. With distinct,
    a merge whose bytes are already a token adds none (the huggingface rule).
    """
    vocab = {i: bytes([i]) for i in range(256)}
    known = set(vocab.values()) if distinct else None
    for left, right in merges:
        if known is not None:
            if left + right in known:
                continue
            known.add(left + right)
        vocab[len(vocab)] = left + right
    for token in special_tokens:
        vocab[len(vocab)] = token.encode("utf-8")
    return vocab


def trainer_for(algorithm: str, *, detail: bool = False) -> type[Trainer]:
    """The trainer class that runs for algorithm, or a ValueError that lists the names.

    A compiled trainer hands detail to its reference (the readable trainer it compiles, which records
    it), and so does one that cannot run here: trainer_for("heap_c", detail=True) is Heap.
    """
    trainer = ALGORITHMS.get(algorithm) or ABSENT.get(algorithm)
    if trainer is None:
        raise ValueError(f"Unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}.")
    if trainer.reference is not None and (detail or trainer.missing):
        return trainer.reference
    return trainer


def keeps_sequence(spec: TrainSpec) -> bool:
    """Whether pre-tokenizing for spec must keep every occurrence in text order (its trainer says: needs_sequence)."""
    return trainer_for(spec.algorithm).needs_sequence


def pretokenize_for(text: str | bytes, spec: TrainSpec) -> PreTokens:
    """pretokenize(text) as spec says: its pre-tokenizer, special tokens and split_lines, and the sequence if its trainer needs it."""
    return pretokenize(
        text,
        pretokenizer=spec.pretokenizer,
        special_tokens=spec.special_tokens,
        keep_sequence=keeps_sequence(spec),
        split_lines=spec.split_lines,
    )


def check_spec(spec: TrainSpec, vocab_size: int) -> int:
    """Raise ValueError with a sentence a person can act on; return the number of merges."""
    check_special_tokens(spec.special_tokens)
    trainer_for(spec.algorithm)
    rule_for(spec.tie_break)
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise ValueError(f"vocab_size must be a whole number, not {vocab_size!r}.")
    minimum = 256 + len(spec.special_tokens)
    if vocab_size < minimum:
        raise ValueError(
            f"vocab_size {vocab_size} is too small: the 256 bytes and {len(spec.special_tokens)} special token(s) already need {minimum}."
        )
    m = spec.min_pair_frequency
    if isinstance(m, bool) or not isinstance(m, int) or m < 0:
        raise ValueError(f"min_pair_frequency must be a whole number of at least 0, not {m!r}.")
    return vocab_size - minimum


def check_settings(
    vocab_size: int, special_tokens: Sequence[str], algorithm: str, min_pair_frequency: int, tie_break: str = DEFAULT.tie_break
) -> int:
    """check_spec for settings given one by one."""
    return check_spec(
        TrainSpec.of(special_tokens=special_tokens, algorithm=algorithm, min_pair_frequency=min_pair_frequency, tie_break=tie_break),
        vocab_size,
    )


class Run:
    """One trainer's run under a spec, advanced until the caller says stop: the merge loop train, the CLI, traces and races share.

    Building it is the trainer's initial pair count; `until` merges, handing
    each event to on_merge, until should_stop(event) gives a reason to stop
    (a pause: call `until` again to go on) or the trainer has no merge left.
        run = Run(corpus, 100, spec)
        run.until(on_merge=events.append)  # True: the trainer stopped; run.stop_reason says why
    """

    def __init__(self, corpus: PreTokens, num_merges: int, spec: TrainSpec, *, detail: bool = False, merged: Merged = ()) -> None:
        """merged: merges an earlier run made, to go on from (Trainer's `merged`): each of corpus.counts' pre-tokens is
        encoded with them first (encode_words, or the trainer itself); a pre-token given as token ids (a tuple) already is."""
        self.spec = spec
        trainer = trainer_for(spec.algorithm, detail=detail)
        asked = ALGORITHMS.get(spec.algorithm) or ABSENT[spec.algorithm]
        self.why = "" if trainer is asked or detail else f"{asked.name} cannot run here: {asked.missing}"
        more = {"merged": merged} if merged else {}  # a plug-in trainer that cannot go on from merges is not asked to
        words = corpus.counts
        if merged and not trainer.encodes:  # each pre-token as the merges made it (the compiled heap does it in C)
            words = encode_words(words, merged, rule_for(spec.tie_break).reuses_tokens)
        try:
            self.trainer = trainer(words, corpus.sequence, tie_break=spec.tie_break, **more)
        except OverflowError as error:  # counts beyond a compiled trainer's 64-bit counters: Python's ints hold them
            if trainer.reference is None:
                raise
            self.why = f"{trainer.name} cannot take these counts ({error})"
            if merged and words is corpus.counts:
                words = encode_words(words, merged, rule_for(spec.tie_break).reuses_tokens)
            self.trainer = trainer.reference(words, corpus.sequence, tie_break=spec.tie_break, **more)
        self._events = self.trainer.merges(num_merges, spec.min_pair_frequency, detail)
        self.stop_reason: str = ""  # the trainer's StopReason once it has stopped, or what should_stop said

    @property
    def trained_by(self) -> str:
        """Which trainer made the merges, for a summary: 'heap_c (compiled)', or 'heap (in Python: heap_c cannot run here: …)'."""
        trainer = type(self.trainer)
        if trainer.reference is not None:
            return f"{trainer.name} (compiled)"
        absent = next((t for t in ABSENT.values() if t.reference is trainer), None)
        why = self.why or (f"{absent.name} cannot run here: {absent.missing}" if absent else "")
        return f"{trainer.name} (in Python: {why})" if why else f"{trainer.name} (in Python)"

    def until(
        self, should_stop: Callable[[MergeEvent], object] | None = None, on_merge: Callable[[MergeEvent], None] | None = None
    ) -> bool:
        """Merge until should_stop(event) returns something true (False: stopped by the caller) or the trainer stops (True)."""
        for event in self._events:
            if on_merge is not None:
                on_merge(event)
            if should_stop is not None and (why := should_stop(event)):
                self.stop_reason = why if isinstance(why, str) else ""
                return False
        self.stop_reason = self.trainer.stop_reason
        return True


def run(
    corpus: PreTokens,
    num_merges: int,
    spec: TrainSpec,
    on_merge: Callable[[MergeEvent], None] | None = None,
    should_stop: Callable[[MergeEvent], str | None] | None = None,
    *,
    detail: bool = False,
    merged: Merged = (),
) -> Training:
    """Run one trainer over pre-tokenized input under spec, timed by phase; the input is not changed.

    on_merge sees every event; should_stop(event) may end the run early by
    returning why (a StopReason, such as "time budget (30 s)"): the run keeps
    the merges made so far, that event included. merged: go on from these merges (Run's);
    the run's events are then the new merges only.
    """
    with paused_gc():
        t0 = time.perf_counter()
        going = Run(corpus, num_merges, spec, detail=detail, merged=merged)
        t1 = time.perf_counter()
        events: list[MergeEvent] = []

        def made(event: MergeEvent) -> None:
            events.append(event)
            if on_merge is not None:
                on_merge(event)

        going.until(should_stop, made)
        t2 = time.perf_counter()
        stop_reason, work = going.stop_reason, dict(going.trainer.work)
        del going  # the trainer is freed now, before the collector is back and would walk it
    return Training(
        events=tuple(events),
        spec=spec,
        stop_reason=stop_reason,
        seconds={"initial count": t1 - t0, "merge loop": t2 - t1},
        work=work,
    )


def train(
    corpus: PreTokens,
    num_merges: int,
    spec: TrainSpec | None = None,
    *,
    detail: bool = False,
    on_merge: Callable[[MergeEvent], None] | None = None,
    **settings: Any,
) -> Training:
    """run() with the settings given by name as a convenience: train(corpus, 100, algorithm="naive").

    num_merges counts new tokens: under tie_break="huggingface" a merge whose
    bytes are already a token makes none, and training goes on (never on real text).
    """
    return run(corpus, num_merges, TrainSpec.of(spec, **settings), on_merge, detail=detail)


def steps(
    corpus: PreTokens, num_merges: int, spec: TrainSpec | None = None, *, detail: bool = False, **settings: Any
) -> tuple[Trainer, Iterator[MergeEvent]]:
    """A trainer and its merge generator, for callers that step through the merges themselves (bpe.lab.race.pair_count_after)."""
    going = Run(corpus, num_merges, TrainSpec.of(spec, **settings), detail=detail)
    return going.trainer, going._events


def train_bpe(
    input_path: Paths,
    vocab_size: int,
    special_tokens: Sequence[str],
    *,
    workers: int | None = None,
    progress: Progress | None = None,
    **settings,
) -> tuple[Vocab, Merges]:
    """CS336's train_bpe: (vocab id -> bytes, merges in order).

    input_path is one path (as in CS336) or several paths and globs, of plain
    or compressed text, JSON Lines (text_field) or Parquet (text_column).
    The other keyword arguments are TrainSpec's settings (spec.py): pretokenizer ("gpt2", ... or a regex),
    tie_break ("cs336", "huggingface", "rustbpe": whose merges to reproduce), algorithm, min_pair_frequency,
    text_field, text_column, split_lines (each line, newline kept, is a document, as HuggingFace's
    `Tokenizer.train(files)` reads files; with tie_break="huggingface" it reproduces that). train_spec takes a
    TrainSpec. pattern=, the old name of pretokenizer=, is still accepted.
    """
    return train_spec(input_path, vocab_size, TrainSpec.of(special_tokens=special_tokens, **settings), workers=workers, progress=progress)


def train_spec(
    input_path: Paths, vocab_size: int, spec: TrainSpec, *, workers: int | None = None, progress: Progress | None = None
) -> tuple[Vocab, Merges]:
    """train_bpe under a TrainSpec."""
    num_merges = check_spec(spec, vocab_size)
    corpus = pretokenize_with(input_path, spec.reading(), workers=workers, keep_sequence=keeps_sequence(spec), progress=progress)
    result = train(corpus, num_merges, spec)
    return finished(result, vocab_size)


def train_bpe_text(text: str | bytes, vocab_size: int, special_tokens: Sequence[str], **settings) -> tuple[Vocab, Merges]:
    """train_bpe for text held in memory, with the same settings (split_lines: each line is a document, see train_bpe)."""
    spec = TrainSpec.of(special_tokens=special_tokens, **settings)
    num_merges = check_spec(spec, vocab_size)
    result = train(pretokenize_for(text, spec), num_merges, spec)
    return finished(result, vocab_size)


@renamed(pattern="pretokenizer")
def train_from_counts(
    counts_path: str | os.PathLike,
    vocab_size: int,
    special_tokens: Sequence[str] | None = None,
    *,
    pretokenizer: str | None = None,
    **settings,
) -> tuple[Vocab, Merges]:
    """train_bpe from a counts file written by `bpe count` (or save_counts): no text is read.

    special_tokens and pretokenizer default to the file's; given, they must be the ones the counts were
    made with, or a ValueError says which differs. The other keyword arguments are TrainSpec's (tie_break,
    algorithm, min_pair_frequency). Training from the counts of a text gives the merges of training on the text.
    """
    from .data.counts_file import check_request, read_counts

    special_tokens = check_request(counts_path, pretokenizer, special_tokens)
    spec = TrainSpec.of(special_tokens=special_tokens, **settings)
    num_merges = check_spec(spec, vocab_size)
    counts, info = read_counts(counts_path)
    spec = spec.but(pretokenizer=info.pretokenizer)
    corpus = PreTokens(counts, None, info.text_bytes)
    try:
        result = train(corpus, num_merges, spec)
    except ValueError as e:  # a trainer that refuses these counts (positions: too many occurrences)
        raise ValueError(f"Cannot train on {counts_path}: {str(e)[:1].lower()}{str(e)[1:]}") from None
    return finished(result, vocab_size)


class StoppedEarly(UserWarning):
    """train_bpe made fewer merges than vocab_size asked for (a small corpus); the message says why."""


def finished(result: Training, vocab_size: int) -> tuple[Vocab, Merges]:
    """(vocab, merges) of a run, warning (StoppedEarly) when it stopped before vocab_size for want of pairs.

    Stopping at min_pair_frequency is what was asked for, and says nothing.
    """
    vocab = result.vocab
    if result.stop_reason not in (VOCAB_SIZE, MIN_FREQUENCY):
        spec = result.spec
        why = stop_sentence(result.stop_reason, len(result.events), vocab_size=vocab_size, n_special=len(spec.special_tokens))
        warnings.warn(
            f"{why} The vocabulary has {len(vocab):,} tokens, not the {vocab_size:,} asked for.", StoppedEarly, stacklevel=_caller()
        )
    return vocab, result.merges


def _caller() -> int:
    """The stacklevel of the first frame outside this package, so that a warning points at the user's line."""
    package, frame, level = os.path.dirname(__file__), sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level
