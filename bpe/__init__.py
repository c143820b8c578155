"""Byte-pair-encoding training, four ways, with identical results; and a tokenizer for any BPE vocabulary.

Reading order: pretokenize -> rule -> events -> trainer -> naive, positions,
parent_set, heap -> train -> tokenizer -> load, export -> threshold, race -> cli.
The package imports no UI library.
"""

from .events import MergeDetail, MergeEvent
from .pretokenize import PATTERNS, PreTokens, pretokenize, pretokenize_file
from .rule import RULES, TIE_BREAKS, TieChoice, explain_tie
from .tokenizer import Tokenizer
from .train import ALGORITHMS, Training, build_vocab, train, train_bpe, train_bpe_text

__all__ = [
    "ALGORITHMS",
    "PATTERNS",
    "RULES",
    "TIE_BREAKS",
    "MergeDetail",
    "MergeEvent",
    "PreTokens",
    "TieChoice",
    "Tokenizer",
    "Training",
    "build_vocab",
    "explain_tie",
    "pretokenize",
    "pretokenize_file",
    "train",
    "train_bpe",
    "train_bpe_text",
]
