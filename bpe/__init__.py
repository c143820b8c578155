"""Byte-pair-encoding training, four ways, with identical results.

Reading order: pretokenize -> rule -> events -> trainer -> naive, positions,
parent_set, heap -> train -> tokenizer -> export -> threshold, race -> cli.
The package imports no UI library.
"""

from .events import MergeDetail, MergeEvent
from .pretokenize import PATTERNS, PreTokens, pretokenize, pretokenize_file
from .train import ALGORITHMS, Training, build_vocab, train, train_bpe, train_bpe_text

__all__ = [
    "ALGORITHMS",
    "PATTERNS",
    "MergeDetail",
    "MergeEvent",
    "PreTokens",
    "Training",
    "build_vocab",
    "pretokenize",
    "pretokenize_file",
    "train",
    "train_bpe",
    "train_bpe_text",
]
