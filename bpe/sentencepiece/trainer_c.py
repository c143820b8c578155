"""The SentencePiece trainer compiled: trainer.py's phases 2 and 3 in C (bpe/c/spm.c), handing out the same events.

Same normalization, cuts, coverage, words and counts, the same symbols, positions and lazy heap, the same
PieceMerge per merge: tests/test_core_sentencepiece.py holds the two equal on generated corpora and options
(also under ASan/UBSan). What it leaves out is the interpreter: on 12 MB of text in many scripts, trainer.py
takes minutes, this takes about a second (BENCHMARKS.md).

    corpus = prepare_files(paths, spec)           # or prepare_compiled(select(read_lines(paths), spec), spec)
    trainer = CompiledTrainer(corpus, spec)
    for merge in trainer.merges(): ...      # as Trainer.merges
    model = trainer.model()

The characters are still chosen by Python (trainer.choose_characters: a sort of a few thousand), from the counts
the core made. Not here: detail. `merges(detail=True)` hands the run to the Python trainer on the same corpus (the
`reference`), which records what the step page shows -- the same merges. Where the core is absent, `train`
runs the Python trainer (compiled.py says why the core may be absent).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from .compiled import SEED, core, script_bytes
from .spec import SentencePieceSpec
from .trainer import Corpus, Lines, PieceMerge, Trainer, choose_characters, meta_pieces


def threads(spec: SentencePieceSpec) -> int:
    """The threads that normalize and count: num_threads, as sentencepiece's, but no more than the machine's processors."""
    return max(1, min(spec.num_threads, os.cpu_count() or 1, 16))


def prepare_compiled(lines: Lines, spec: SentencePieceSpec) -> Corpus:
    """trainer.prepare in the core: a Corpus whose words the core's SpmCorpus holds (corpus.compiled)."""
    corpus = _corpus(spec)
    corpus.add_lines(lines.lines)
    return _words(corpus, lines, spec)


def prepare_files(paths: Sequence[str | Path], spec: SentencePieceSpec) -> Corpus:
    """read_lines, select and prepare in the core: the files read and their lines filtered in C (corpus.lines.kept)."""
    corpus = _corpus(spec)
    try:
        kept, empty, too_long, reserved = corpus.add_files([str(p) for p in paths], spec.max_sentence_length, spec.input_sentence_size)
    except OSError as error:
        raise ValueError(f"Cannot read {error.filename}: {error.strerror or error}.") from None
    return _words(corpus, Lines((), empty, too_long, reserved, read=kept), spec)


def _corpus(spec: SentencePieceSpec):
    compiled = core()
    if compiled is None:
        raise ValueError("The compiled SentencePiece trainer is not available: the core is not built here.")
    charsmap = spec.normalizer_spec().precompiled_charsmap
    pieces = sorted({piece.encode() for piece, _ in meta_pieces(spec).values()}, key=len, reverse=True)
    return compiled.SpmCorpus(
        charsmap,
        spec.add_dummy_prefix,
        spec.remove_extra_whitespaces,
        spec.treat_whitespace_as_suffix,
        pieces,
        spec.pretokenization_delimiter.encode(),
        SEED,
        threads(spec),
    )


def _words(corpus, lines: Lines, spec: SentencePieceSpec) -> Corpus:
    """The characters chosen by coverage (in Python, from the core's counts), then the words made by the core."""
    counts = {chr(c): n for c, n in corpus.char_counts().items()}
    required, dropped, total, covered = choose_characters(counts, spec, len(meta_pieces(spec)))
    keep = b"".join(ord(c).to_bytes(4, "little") for c, _ in required)
    corpus.make_words(keep, spec.split_by_whitespace, spec.treat_whitespace_as_suffix, spec.allow_whitespace_only_pieces)
    return Corpus(
        words=(),
        required=required,
        dropped=dropped,
        characters=total,
        coverage=covered / total,
        lines=lines,
        compiled=corpus,
        split=spec.split_by_whitespace,
    )


class CompiledTrainer(Trainer):
    """Trainer's merge loop in the core: merges() yields the same PieceMerge events, model() the same model."""

    reference = Trainer

    def __init__(self, corpus: Corpus, spec: SentencePieceSpec) -> None:
        compiled = core()
        if compiled is None:
            raise ValueError("The compiled SentencePiece trainer is not available: the core is not built here.")
        # not Trainer.__init__: the core holds the symbols, the positions and the heap
        self.spec, self.corpus, self.meta = spec, corpus, meta_pieces(spec)
        self.merged: list[tuple[str, int]] = []
        self.stop_reason = ""
        self._python: Trainer | None = None
        words = corpus.compiled if corpus.compiled is not None else list(corpus.words)
        self._core = compiled.SpmTrainer(
            words,
            script_bytes(),
            spec.max_sentencepiece_length,
            spec.split_digits,
            spec.split_by_number,
            spec.split_by_unicode_script,
            spec.split_by_whitespace,
            spec.treat_whitespace_as_suffix,
            spec.allow_whitespace_only_pieces,
            SEED,
        )

    def merges(self, detail: bool = False) -> Iterator[PieceMerge]:
        """Trainer.merges, one C step a merge; with detail, the Python trainer's run (the same merges)."""
        if detail:
            yield from self._reference_merges()
            return
        ids = iter(i for i in range(self.spec.vocab_size) if i not in self.meta)
        max_merges = max(0, self.spec.vocab_size - len(self.meta) - len(self.corpus.required))
        step = self._core.step
        while len(self.merged) < max_merges:
            event = step()
            if event.__class__ is int:
                self.stop_reason = "no candidates left"
                return
            left, right, frequency, runner_left, runner_right, runner_frequency, occurrences, dropped = event
            self.merged.append((left + right, frequency))
            yield PieceMerge(
                rank=len(self.merged) - 1,
                left=left,
                right=right,
                id=next(ids),
                frequency=frequency,
                runner_up=(runner_left, runner_right) if runner_left is not None else None,
                runner_up_frequency=runner_frequency,
                occurrences=occurrences,
                dropped=dropped,
            )
        self.stop_reason = "vocab_size"

    def _reference_merges(self) -> Iterator[PieceMerge]:
        if self.merged:
            raise ValueError("Detail is recorded from the first merge: make a new trainer and ask for detail=True.")
        self._python = Trainer(replace(self.corpus), self.spec)
        yield from self._python.merges(detail=True)
        self.merged, self.stop_reason = self._python.merged, self._python.stop_reason
