"""Training a SentencePiece BPE model in one call: the compiled trainer where the core is built, else the readable one.

    model = train(["corpus.txt"], SentencePieceSpec(vocab_size=8000, byte_fallback=True))

trainer.py is the reference a student reads (the phases and the merge loop); trainer_c.py runs the same merges
in C (held equal by tests/test_core_sentencepiece.py). This file only chooses, as bpe/train.py does for the
byte-level trainers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from .compiled import core as compiled_core
from .model import SentencePieceModel
from .spec import SentencePieceSpec
from .trainer import Trainer, prepare, read_lines, select, strip_line_end
from .trainer_c import CompiledTrainer, prepare_compiled, prepare_files


def train(
    inputs: Sequence[str | Path] = (),
    spec: SentencePieceSpec | None = None,
    *,
    sentences: Iterable[str | bytes] | None = None,
    compiled: bool | None = None,
) -> SentencePieceModel:
    """Train a SentencePiece BPE model on text files (one sentence a line) or on sentences given one by one.

    train(["corpus.txt"], SentencePieceSpec(vocab_size=1000)) -> SentencePieceModel (1,000 pieces)
    Sentences given one by one lose their trailing '\\r' and '\\n', as sentencepiece's Python `sentence_iterator`
    strips them (a file's lines keep their '\\r', as spm_train reads them). compiled: the core's trainer
    (trainer_c.py) or this file's; None: the core's where it is built. The same model either way.
    """
    spec = spec or SentencePieceSpec()
    if (sentences is None) == (not inputs):
        raise ValueError("Give the text either as files or as sentences, not both and not neither.")
    if compiled is None:
        compiled = compiled_core() is not None
    if compiled:
        if sentences is None:
            corpus = prepare_files(inputs, spec)  # the core reads the files: no bytes object a line
        else:
            corpus = prepare_compiled(select(map(strip_line_end, sentences), spec), spec)
        trainer: Trainer = CompiledTrainer(corpus, spec)
    else:
        lines = select(read_lines(inputs) if sentences is None else map(strip_line_end, sentences), spec)
        trainer = Trainer(prepare(lines, spec), spec)
    for _ in trainer.merges():
        pass
    return trainer.model()
