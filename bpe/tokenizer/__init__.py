"""Using a trained BPE (the byte-level family): the encoder, the Tokenizer, tiktoken's interface, datasets of ids.

Reading order: encoder.py (the encoder a student reads) -> encode_c.py (the same, compiled) ->
tokenizer.py (the Tokenizer: CS336's interface, checking, loading) -> steps.py (encoding shown) ->
tiktoken_api.py, encodings.py (tiktoken's interface and module functions) -> encode_files.py (datasets).
"""

from .tokenizer import Ancestry, EncodeStep, Tokenizer

__all__ = ["Ancestry", "EncodeStep", "Tokenizer"]
