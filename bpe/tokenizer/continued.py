"""Continuing a tokenizer's training on more text: every existing id and merge kept, new merges after them.

What "continuing" means here (the semantics, stated once): the new text is pre-tokenized as the
tokenizer pre-tokenizes (its pre-tokenizer, its special tokens), and each pre-token is encoded with
the tokenizer's merges, as the tokenizer encodes it. Training then goes on from those token
sequences, under the tie-break rule asked for, exactly as a run that had made those merges on this
text would go on: the trainer starts with the merges' tokens already made (numbered as such a run
numbers them -- bytes 0-255, then the merges in order -- so a tie breaks alike), and each new merge
is the pair of tokens with the highest count in the new text's counts after every merge so far.
So continuing from the first k merges of a run on the same text gives exactly that run's remaining
merges (tests/test_continued.py holds it so, under every rule and trainer).

    merges l+o, lo+w; new text 'lower lower newer':
    pre-tokens 'lower' ×2 -> low e r, ' newer' -> ' ' n e w e r; the most frequent pair now is (e, r): merge 3

The new tokenizer has every id of the old one (special tokens too), its merges first and in order,
then the new merges, whose tokens take the ids after the old vocabulary's largest; extra special
tokens go after those. vocab_size is the new vocabulary's size, all of it.

What it does not do: change an existing token or merge, or learn from the old text (only the new
text's counts are used: the old merges stay whatever these counts would have chosen).

    more = continue_training(Tokenizer.load("gpt2/"), "more/*.jsonl.zst", 60_000)
    more.save("gpt2-more/")

Underneath it is the files' content (load.Loaded) that is continued, not a built Tokenizer: `bpe train --from`
reads the files, trains, and writes the new files without building either tokenizer (~0.1 s of a 1 s run).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

from ..data.count import Paths, count_with
from ..events import MergeEvent
from ..files import formats
from ..files.load import Loaded, show
from ..rule import rule_for
from ..spec import TrainSpec
from ..text.pretokenize import PreTokens, Progress
from ..train import Merges, Run, build_vocab, check_spec
from ..trainer import made_tokens, paused_gc

if TYPE_CHECKING:  # built only when asked for (Continued.tokenizer): bpe train --from reads and writes files
    from .tokenizer import Tokenizer


@dataclass(frozen=True)
class Continued:
    """A continued training: the new tokenizer's content, the merges added, and what each phase took."""

    grown: Loaded  # the new tokenizer's vocabulary, merges, special tokens, pre-tokenizer and counts
    added: Merges  # the new merges, in order
    counts: tuple[int, ...]  # each new merge's count
    stop_reason: str
    trained_by: str  # which trainer made them ('heap_c (compiled)', ...)
    seconds: dict[str, float] = field(default_factory=dict)  # per phase (when no phase context was given)
    words: int = 0  # unique pre-tokens of the new text

    @cached_property
    def tokenizer(self) -> Tokenizer:
        from .tokenizer import Tokenizer

        return Tokenizer.from_loaded(self.grown)

    def files(self) -> dict[str, str]:
        """Every format that can hold the new tokenizer, as {file name: text} (formats.save writes them)."""
        g = self.grown
        own = g.vocab == build_vocab(g.merges, g.special_tokens)
        return formats.files(g.merges, g.special_tokens, g.pretokenizer, g.counts, vocab=None if own else g.vocab)


def continue_training(
    tok: Tokenizer,
    input_path: Paths,
    vocab_size: int,
    *,
    special_tokens: Sequence[str] = (),
    workers: int | None = None,
    progress: Progress | None = None,
    **settings,
) -> Tokenizer:
    """tok trained on the text of input_path (paths and globs of any format) until it has vocab_size tokens; see the module's docstring.

    The other keyword arguments are TrainSpec's: tie_break, algorithm, min_pair_frequency, text_field,
    text_column, split_lines (the pre-tokenizer is tok's). special_tokens: more of them, added last.
    """
    spec = continuing_spec(tok, special_tokens, **settings)
    counted = count_with(input_path, spec.reading(), workers, progress)
    return continue_from_counts(tok, counted.counts, vocab_size, spec).tokenizer


def continuing_spec(tok: Tokenizer | Loaded, special_tokens: Sequence[str] = (), spec: TrainSpec | None = None, **settings) -> TrainSpec:
    """The spec a continuation counts and trains under: tok's pre-tokenizer and special tokens (then the new ones given)."""
    if "pretokenizer" in settings or "pattern" in settings:
        raise ValueError("Continuing a tokenizer pre-tokenizes as the tokenizer does: leave the pre-tokenizer out.")
    specials = list(tok.special_tokens) + [t for t in special_tokens if t not in tok.special_tokens]
    return TrainSpec.of(spec, **settings).but(pretokenizer=tok.pretokenizer, special_tokens=tuple(specials))


def continue_from_counts(
    tok: Tokenizer | Loaded,
    counts: Mapping[bytes, int],
    vocab_size: int,
    spec: TrainSpec,
    *,
    on_merge: Callable[[MergeEvent], None] | None = None,
    phase: Callable[[str], AbstractContextManager] | None = None,
) -> Continued:
    """tok (a Tokenizer, or a file's content: formats.read) trained on pre-token counts made with its pre-tokenizer and
    special tokens (continuing_spec's).

    on_merge sees each new merge's event; phase(name) wraps each phase (the CLI's measures its time and
    memory; by default each phase's seconds go to Continued.seconds).
    """
    seconds: dict[str, float] = {}
    phase = phase or timer(seconds)
    base = content(tok)
    extra = [t for t in spec.special_tokens if t not in base.special_tokens]
    if spec.pretokenizer.regex != base.pretokenizer.regex:
        raise ValueError(
            f"These counts were pre-tokenized with {spec.pretokenizer.name}, the tokenizer pre-tokenizes with {base.pretokenizer.name}: "
            "continuing needs the tokenizer's own."
        )
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise ValueError(f"vocab_size must be a whole number, not {vocab_size!r}.")
    new = vocab_size - len(base.vocab) - len(extra)
    if new <= 0:
        raise ValueError(
            f"vocab_size {vocab_size:,} leaves no room for a new merge: the tokenizer already has {len(base.vocab):,} tokens"
            + (f", and {len(extra)} special token(s) are added" if extra else "")
            + "."
        )
    check_spec(spec, 256 + len(spec.special_tokens) + 1)  # the rule, the algorithm, the min pair frequency
    merged = applying(base)
    try:
        internal = made_tokens(merged, rule_for(spec.tie_break).reuses_tokens)
    except ValueError as e:
        raise ValueError(f"{base.encoding or 'This tokenizer'} cannot be continued: {e}") from None
    events: list[MergeEvent] = []

    def made(event: MergeEvent) -> None:
        events.append(event)
        if on_merge is not None:
            on_merge(event)

    with paused_gc():
        # each pre-token encoded with the merges (train.Run: encode_words, or the compiled heap in C), then its pairs counted
        with phase("initial count"):
            going = Run(PreTokens(counts, None, 0), len(internal) - 256 + new, spec, merged=merged)
        with phase("merges"):
            going.until(on_merge=made)
            stop_reason, trained_by = going.stop_reason, going.trained_by
            del going
    added = [(e.left, e.right) for e in events]
    counts_made = tuple(e.count for e in events)
    return Continued(grown(base, added, counts_made, extra), added, counts_made, stop_reason, trained_by, seconds, len(counts))


def content(tok: Tokenizer | Loaded) -> Loaded:
    """A tokenizer's content as a file holds it, with its vocabulary (ids) always given."""
    if isinstance(tok, Loaded):
        return tok if tok.vocab is not None else replace(tok, vocab=tok.full_vocab)
    return Loaded(list(tok.merges), tuple(tok.special_tokens), tok.pretokenizer, tuple(tok.counts), dict(tok.vocab), encoding=tok.name)


def applying(base: Loaded) -> Merges:
    """The merges that can apply: a merge with a part that is no token never does (Tokenizer.inert), and is left out."""
    tokens = set(base.vocab.values())
    merged = []
    for rank, (a, b) in enumerate(base.merges):
        if a in tokens and b in tokens:
            if a + b not in tokens:
                raise ValueError(
                    f"Merge {rank + 1} ({show(a)} + {show(b)}) joins two tokens into {show(a + b)}, which is not in the vocabulary."
                )
            merged.append((a, b))
    return merged


def timer(seconds: dict[str, float]) -> Callable[[str], AbstractContextManager]:
    """A phase(name) that adds each phase's seconds to `seconds`."""

    @contextmanager
    def phase(name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        seconds[name] = time.perf_counter() - start

    return phase


def grown(base: Loaded, added: Merges, counts: Sequence[int], extra: Sequence[str]) -> Loaded:
    """base with the merges added after its own: their tokens take the ids after its largest; extra special tokens go last."""
    vocab = dict(base.vocab)
    known = set(vocab.values())
    next_id = max(vocab) + 1
    for left, right in added:
        if left + right not in known:  # (the huggingface rule may reuse a token: then no new id)
            vocab[next_id] = left + right
            known.add(left + right)
            next_id += 1
    for token in extra:
        if token.encode("utf-8") not in known:
            vocab[next_id] = token.encode("utf-8")
            next_id += 1
    old_counts = base.counts if base.counts is not None else (None,) * len(base.merges)
    return Loaded(
        list(base.merges) + list(added),
        tuple(base.special_tokens) + tuple(extra),
        base.pretokenizer,
        tuple(old_counts) + tuple(counts),
        vocab,
    )
