"""tiktoken's module functions, answered by our Tokenizer: get_encoding, encoding_for_model, Encoding(...).

What it does: what `import tiktoken` gives at the top of a module, so that code written for tiktoken
runs on this library by changing its import (`import bpe as tiktoken`); tiktoken's own test suite
runs this way (tests/test_tiktoken_suite.py):

    enc = get_encoding("cl100k_base")  # a Tokenizer, loaded once per process (Tokenizer.from_openai)
    encoding_for_model("gpt-4o").name  # 'o200k_base'
    Encoding("mine", pat_str=enc._pat_str, mergeable_ranks=enc._mergeable_ranks, special_tokens={"<|x|>": 100_000})

Not here: finding OpenAI's files (files/openai.py) or the Encoding methods (tiktoken_api.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..files import load, openai
from .tokenizer import Tokenizer


def get_encoding(encoding_name: str) -> Tokenizer:
    """One of OpenAI's encodings by its name ('cl100k_base', 'o200k_base', 'gpt2', ...), as tiktoken.get_encoding.

    Its files come from this machine or OpenAI's servers (Tokenizer.from_openai says where it looks);
    an unknown name is a ValueError listing the known ones (tiktoken's is too).
    """
    if encoding_name not in openai.ENCODINGS:
        raise ValueError(f"Unknown encoding {encoding_name!r}; the known ones are {', '.join(openai.ENCODINGS)}.")
    return Tokenizer.from_openai(encoding_name)


def encoding_name_for_model(model_name: str) -> str:
    """The encoding a model uses ('gpt-4o' -> 'o200k_base'); KeyError for a model tiktoken does not know, as tiktoken."""
    try:
        return openai.encoding_of(model_name).name
    except ValueError as e:
        raise KeyError(str(e)) from None


def encoding_for_model(model_name: str) -> Tokenizer:
    """The encoding a model uses, loaded: get_encoding(encoding_name_for_model(model_name))."""
    return get_encoding(encoding_name_for_model(model_name))


def list_encoding_names() -> list[str]:
    """The names get_encoding knows."""
    return list(openai.ENCODINGS)


def Encoding(  # noqa: N802  (tiktoken's name for its class, called as a constructor)
    name: str,
    *,
    pat_str: str,
    mergeable_ranks: Mapping[bytes, int],
    special_tokens: Mapping[str, int],
    explicit_n_vocab: int | None = None,
) -> Tokenizer:
    """A Tokenizer from what tiktoken.Encoding takes: each token's bytes and rank (its id), the regex, the special tokens.

    The merges are recovered from the ranks, as tiktoken's own merging implies them; the special tokens
    follow tiktoken (refused in text unless allowed). pat_str is taken as our pre-tokenizer of that regex
    (GPT-2's, cl100k's and o200k's regexes as this library spells them: `enc._pat_str`).
    """
    vocab = {rank: bytes(token) for token, rank in mergeable_ranks.items()} | {i: t.encode() for t, i in special_tokens.items()}
    if explicit_n_vocab is not None and len(vocab) != explicit_n_vocab:
        raise ValueError(f"explicit_n_vocab is {explicit_n_vocab}, but the ranks and special tokens hold {len(vocab)} tokens.")
    merges = load.merges_from_ranks(dict(mergeable_ranks))
    return Tokenizer(vocab, merges, list(special_tokens), pretokenizer=pat_str, allowed_special=(), name=name)
