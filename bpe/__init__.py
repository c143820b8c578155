"""Byte-pair-encoding training, four ways, with identical results; and a tokenizer for any BPE vocabulary.

Reading order: patterns -> pretokenize -> compiled -> inputs -> count -> rule -> spec -> events -> trainer ->
naive, positions, parent_set, heap -> train -> tokenizer -> load, export, formats ->
threshold, race -> sweep, references -> diagnose, merges_file -> counts_file, ray_count, memory -> cli.
The package imports no UI library; pyarrow, zstandard and ray only when a
Parquet, .zst or counts file or a cluster is used.
"""

from .data.count import count_inputs, pretokenize_file, pretokenize_files
from .events import MergeDetail, MergeEvent
from .lab.diagnose import Diagnosis, diagnose
from .rule import RULES, TIE_BREAKS, TieChoice, explain_tie
from .spec import TrainSpec
from .text.pretokenize import PreTokens, pretokenize
from .text.pretokenizers import PATTERNS
from .train import ALGORITHMS, StoppedEarly, Training, build_vocab, train, train_bpe, train_bpe_text, train_from_counts, train_spec

__all__ = [
    "ALGORITHMS",
    "Diagnosis",
    "PATTERNS",
    "RULES",
    "TIE_BREAKS",
    "MergeDetail",
    "MergeEvent",
    "PreTokens",
    "StoppedEarly",
    "TieChoice",
    "TrainSpec",
    "Tokenizer",
    "Training",
    "build_vocab",
    "count_inputs",
    "diagnose",
    "explain_tie",
    "pretokenize",
    "pretokenize_file",
    "pretokenize_files",
    "train",
    "train_bpe",
    "train_bpe_text",
    "train_from_counts",
    "train_spec",
]


def __getattr__(name: str) -> object:
    """bpe.Tokenizer, imported when first asked for: `bpe train` does without it (~20 ms of start-up)."""
    if name == "Tokenizer":
        from .tokenizer.tokenizer import Tokenizer

        return Tokenizer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
