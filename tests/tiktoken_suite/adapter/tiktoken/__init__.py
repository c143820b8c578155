"""`import tiktoken`, for tiktoken's own tests (../../tests, copied unchanged from openai/tiktoken 0.14.0): this
library's module functions under tiktoken's names, nothing emulated.

`get_encoding` and the rest are bpe's own (bpe/tokenizer/encodings.py), and every Encoding they give is a
bpe.Tokenizer, whose methods and attributes are tiktoken's (bpe/tokenizer/tiktoken_api.py). Files come from
../shared or tiktoken's cache, never a download (BPE_DOWNLOAD=0, set by ../../test_tiktoken_suite.py): a test
that needs an encoding whose files are not on this machine (p50k_base) is skipped by ../conftest.py, saying so.
"""

from bpe import Encoding, encoding_for_model, encoding_name_for_model, get_encoding, list_encoding_names

__all__ = ["Encoding", "encoding_for_model", "encoding_name_for_model", "get_encoding", "list_encoding_names"]
