"""Byte-pair-encoding training, four ways, with identical results; and a tokenizer for any BPE vocabulary.

The package in rooms, lowest first (a module imports from its own room and the rooms before it:
tests/test_layers.py holds it so):

    base       renamed, atomic, memory, core/ + c/ (the compiled core)   helpers every room uses
    text/      pretokenizers -> pretokenize -> tally (+ pretokenize_c, gigatoken, gpt2_bytes)   text -> pre-tokens
    data/      inputs -> count (+ counts_file, ray_count, corpora)       inputs of every format, counted at scale
    training   rule -> spec -> events -> trainer -> naive, positions, parent_set, heap (+ heap_c) -> train
               (the teaching core, at the top of the package: what a student opens first)
    sentencepiece/  normalizer -> spec -> trainer -> model, model_file -> encoder, hf   the SentencePiece family
               (Llama 2's): trained, read, written and encoded as sentencepiece and HuggingFace do
    files/     formats, load, export, merges_file, ids, openai           every tokenizer file format, read and written
    tokenizer/ encoder -> tokenizer (+ encode_c, steps, tiktoken_api, encodings, encode_files, ray_encode, continued)   using a tokenizer;
               sentencepiece_tokenizer: the SentencePiece family's, with the same interface (Tokenizer.load gives it)
    lab/       race, sweep, references, threshold, vocabulary, ladder, diagnose  measuring and explaining
    cli        the command line

The package imports no UI library; pyarrow, zstandard and ray only when a
Parquet, .zst or counts file or a cluster is used.
"""

from .data.count import count_inputs, pretokenize_file, pretokenize_files
from .events import MergeDetail, MergeEvent
from .lab.diagnose import Diagnosis, diagnose
from .rule import RULES, TIE_BREAKS, TieChoice, explain_tie
from .spec import TrainSpec
from .text.pretokenize import PreTokens
from .text.pretokenizers import PRETOKENIZERS, PreTokenizer, register
from .text.tally import pretokenize
from .train import ALGORITHMS, StoppedEarly, Training, build_vocab, train, train_bpe, train_bpe_text, train_from_counts, train_spec

__all__ = [
    "ALGORITHMS",
    "Diagnosis",
    "PRETOKENIZERS",
    "PreTokenizer",
    "RULES",
    "TIE_BREAKS",
    "MergeDetail",
    "MergeEvent",
    "PreTokens",
    "StoppedEarly",
    "TieChoice",
    "TrainSpec",
    "Tokenizer",
    "SentencePieceTokenizer",
    "Encoding",
    "get_encoding",
    "encoding_for_model",
    "encoding_name_for_model",
    "list_encoding_names",
    "Training",
    "build_vocab",
    "count_inputs",
    "diagnose",
    "explain_tie",
    "pretokenize",
    "pretokenize_file",
    "pretokenize_files",
    "register",
    "train",
    "train_bpe",
    "train_bpe_text",
    "train_from_counts",
    "train_spec",
]


# imported when first asked for: `bpe train` does without the tokenizer (~20 ms of start-up)
_TOKENIZER = ("Tokenizer", "SentencePieceTokenizer")
_TIKTOKEN = ("Encoding", "get_encoding", "encoding_for_model", "encoding_name_for_model", "list_encoding_names")  # `import bpe as tiktoken`


def __getattr__(name: str) -> object:
    """bpe.Tokenizer, and tiktoken's module functions (bpe.get_encoding, ...), imported when first asked for."""
    if name in _TOKENIZER:
        from . import tokenizer

        return getattr(tokenizer, name)
    if name in _TIKTOKEN:
        from .tokenizer import encodings

        return getattr(encodings, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
