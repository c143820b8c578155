"""Using a trained BPE: the encoder, the Tokenizer, tiktoken's interface, datasets of ids; and the SentencePiece family's tokenizer.

Reading order: encoder.py (the encoder a student reads) -> encode_c.py (the same, compiled) ->
tokenizer.py (the Tokenizer: CS336's interface, checking, loading) -> steps.py (encoding shown) ->
tiktoken_api.py, encodings.py (tiktoken's interface and module functions) -> encode_files.py (datasets).
sentencepiece_tokenizer.py: the SentencePieceTokenizer, what Tokenizer.load gives for a file of the SentencePiece
family (Llama 2's), with the same everyday interface over bpe/sentencepiece/'s encoders.
"""

from .tokenizer import Ancestry, EncodeStep, Tokenizer

__all__ = ["Ancestry", "EncodeStep", "SentencePieceTokenizer", "Tokenizer"]


def __getattr__(name: str) -> object:
    """SentencePieceTokenizer, imported when first asked for: bpe train and the byte-level family do without it (~30 ms)."""
    if name == "SentencePieceTokenizer":
        from .sentencepiece_tokenizer import SentencePieceTokenizer

        return SentencePieceTokenizer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
