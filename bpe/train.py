"""Training end to end: check the settings, pre-tokenize, run a trainer, build the vocab.

`train_bpe` is the CS336-compatible entry point; `train` returns the whole run
(events, timings, why it stopped) for the CLI, the app and the benchmarks.
Every entry point takes `tie_break` (rule.py): "cs336" (default), "huggingface"
or "rustbpe", to reproduce the merges of that tool.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from .count import Paths, pretokenize_files
from .events import MergeEvent
from .heap import Heap
from .naive import Naive
from .parent_set import ParentSet
from .positions import Positions
from .pretokenize import PreTokens, Progress, check_pattern, check_special_tokens, pretokenize
from .rule import rule_for
from .trainer import Trainer, paused_gc

ALGORITHMS: dict[str, type[Trainer]] = {t.name: t for t in (Naive, Positions, ParentSet, Heap)}

Vocab = dict[int, bytes]
Merges = list[tuple[bytes, bytes]]


@dataclass(frozen=True)
class Training:
    """A finished run: what was learned, and what it cost."""

    events: tuple[MergeEvent, ...]
    special_tokens: tuple[str, ...]
    algorithm: str
    stop_reason: str
    seconds: dict[str, float] = field(default_factory=dict)  # per phase
    work: dict[str, int] = field(default_factory=dict)
    tie_break: str = "cs336"

    @property
    def merges(self) -> Merges:
        return [(e.left, e.right) for e in self.events]

    @property
    def vocab(self) -> Vocab:
        return build_vocab(self.merges, self.special_tokens, distinct=rule_for(self.tie_break).reuses_tokens)


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


def trainer_for(algorithm: str) -> type[Trainer]:
    """The trainer class named algorithm, or a ValueError that lists the names."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"Unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}.")
    return ALGORITHMS[algorithm]


def check_settings(
    vocab_size: int, special_tokens: Sequence[str], algorithm: str, min_pair_frequency: int, tie_break: str = "cs336"
) -> int:
    """Raise ValueError with a sentence a person can act on; return the number of merges."""
    check_special_tokens(special_tokens)
    trainer_for(algorithm)
    rule_for(tie_break)
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise ValueError(f"vocab_size must be a whole number, not {vocab_size!r}.")
    minimum = 256 + len(special_tokens)
    if vocab_size < minimum:
        raise ValueError(
            f"vocab_size {vocab_size} is too small: the 256 bytes and {len(special_tokens)} special token(s) already need {minimum}."
        )
    if isinstance(min_pair_frequency, bool) or not isinstance(min_pair_frequency, int) or min_pair_frequency < 0:
        raise ValueError(f"min_pair_frequency must be a whole number of at least 0, not {min_pair_frequency!r}.")
    return vocab_size - minimum


def train(
    corpus: PreTokens,
    num_merges: int,
    *,
    algorithm: str = "heap",
    special_tokens: Sequence[str] = (),
    min_pair_frequency: int = 1,
    detail: bool = False,
    on_merge: Callable[[MergeEvent], None] | None = None,
    tie_break: str = "cs336",
) -> Training:
    """Run one trainer over pre-tokenized input; the input is not changed.

    num_merges counts new tokens: under tie_break="huggingface" a merge whose
    bytes are already a token makes none, and training goes on (never on real text).
    """
    with paused_gc():
        t0 = time.perf_counter()
        trainer = trainer_for(algorithm)(corpus.counts, corpus.sequence, tie_break=tie_break)
        t1 = time.perf_counter()
        events = []
        for event in trainer.merges(num_merges, min_pair_frequency, detail):
            events.append(event)
            if on_merge:
                on_merge(event)
        t2 = time.perf_counter()
        stop_reason, work = trainer.stop_reason, dict(trainer.work)
        del trainer  # freed now, before the collector is back and would walk it
    return Training(
        events=tuple(events),
        special_tokens=tuple(special_tokens),
        algorithm=algorithm,
        stop_reason=stop_reason,
        seconds={"initial count": t1 - t0, "merge loop": t2 - t1},
        work=work,
        tie_break=tie_break,
    )


def steps(
    corpus: PreTokens,
    num_merges: int,
    *,
    algorithm: str = "heap",
    min_pair_frequency: int = 1,
    detail: bool = False,
    tie_break: str = "cs336",
) -> tuple[Trainer, Iterator[MergeEvent]]:
    """A trainer and its merge generator, for callers that stop it midway (time budgets, live charts)."""
    trainer = trainer_for(algorithm)(corpus.counts, corpus.sequence, tie_break=tie_break)
    return trainer, trainer.merges(num_merges, min_pair_frequency, detail)


def train_bpe(
    input_path: Paths,
    vocab_size: int,
    special_tokens: Sequence[str],
    *,
    algorithm: str = "heap",
    min_pair_frequency: int = 1,
    pretokenizer: str = "gpt2",
    workers: int | None = None,
    progress: Progress | None = None,
    text_field: str = "text",
    text_column: str = "text",
    tie_break: str = "cs336",
    split_lines: bool = False,
) -> tuple[Vocab, Merges]:
    """CS336's train_bpe: (vocab id -> bytes, merges in order).

    input_path is one path (as in CS336) or several paths and globs, of plain
    or compressed text, JSON Lines (text_field) or Parquet (text_column).
    tie_break picks whose merges to reproduce: "cs336" (default), "huggingface" or "rustbpe".
    split_lines: each line (newline kept) is a document, as HuggingFace's `Tokenizer.train(files)`
    reads files; with tie_break="huggingface" it reproduces that.
    """
    num_merges = check_settings(vocab_size, special_tokens, algorithm, min_pair_frequency, tie_break)
    check_pattern(pretokenizer)
    corpus = pretokenize_files(
        input_path,
        pattern=pretokenizer,
        special_tokens=special_tokens,
        workers=workers,
        keep_sequence=algorithm == "positions",
        progress=progress,
        text_field=text_field,
        text_column=text_column,
        split_lines=split_lines,
    )
    result = train(
        corpus, num_merges, algorithm=algorithm, special_tokens=special_tokens, min_pair_frequency=min_pair_frequency, tie_break=tie_break
    )
    return result.vocab, result.merges


def train_bpe_text(
    text: str | bytes,
    vocab_size: int,
    special_tokens: Sequence[str],
    *,
    algorithm: str = "heap",
    min_pair_frequency: int = 1,
    pretokenizer: str = "gpt2",
    tie_break: str = "cs336",
    split_lines: bool = False,
) -> tuple[Vocab, Merges]:
    """train_bpe for text held in memory (split_lines: each line is a document, see train_bpe)."""
    num_merges = check_settings(vocab_size, special_tokens, algorithm, min_pair_frequency, tie_break)
    check_pattern(pretokenizer)
    keep = algorithm == "positions"
    corpus = pretokenize(text, pattern=pretokenizer, special_tokens=special_tokens, keep_sequence=keep, split_lines=split_lines)
    result = train(
        corpus, num_merges, algorithm=algorithm, special_tokens=special_tokens, min_pair_frequency=min_pair_frequency, tie_break=tie_break
    )
    return result.vocab, result.merges


def train_from_counts(
    counts_path: str | os.PathLike,
    vocab_size: int,
    special_tokens: Sequence[str] | None = None,
    *,
    algorithm: str = "heap",
    min_pair_frequency: int = 1,
    pretokenizer: str | None = None,
    tie_break: str = "cs336",
) -> tuple[Vocab, Merges]:
    """train_bpe from a counts file written by `bpe count` (or save_counts): no text is read.

    special_tokens and pretokenizer default to the file's; given, they must be
    the ones the counts were made with, or a ValueError says which differs.
    Training from the counts of a text gives the merges of training on the text.
    """
    from .counts_file import check_request, load_counts

    specials = check_request(counts_path, pretokenizer, special_tokens)
    num_merges = check_settings(vocab_size, specials, algorithm, min_pair_frequency, tie_break)
    counts, info = load_counts(counts_path)
    corpus = PreTokens(counts, None, info.text_bytes)
    result = train(
        corpus, num_merges, algorithm=algorithm, special_tokens=specials, min_pair_frequency=min_pair_frequency, tie_break=tie_break
    )
    return result.vocab, result.merges
