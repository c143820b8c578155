"""A thin stand-in for the `tiktoken` package: its public names over bpe.Tokenizer, so that tiktoken's own tests
(../../tests, copied unchanged from openai/tiktoken 0.14.0) run against this library.

Everything an Encoding does is the Tokenizer's own method of the same name (Tokenizer speaks tiktoken's
interface); the adapter only adds what tiktoken keeps private (`_encode_bytes`, which is encode_ordinary of
bytes, `_special_tokens`, `_mergeable_ranks`, `_pat_str`) and pickling by name. Files come from ../shared
or tiktoken's cache, never a download: an encoding whose files are not on this machine (p50k_base,
p50k_edit) makes the test that needs it skip, saying so.
"""

from __future__ import annotations

import pytest

from bpe import Tokenizer
from bpe.files import load, openai

__all__ = ["Encoding", "encoding_for_model", "encoding_name_for_model", "get_encoding", "list_encoding_names"]


class Encoding:
    def __init__(self, name, *, pat_str, mergeable_ranks, special_tokens, explicit_n_vocab=None, _tokenizer=None):
        if _tokenizer is None:
            vocab = {rank: token for token, rank in mergeable_ranks.items()} | {i: t.encode() for t, i in special_tokens.items()}
            merges = load.merges_from_ranks(mergeable_ranks)
            _tokenizer = Tokenizer(vocab, merges, list(special_tokens), pretokenizer=pat_str, allowed_special=(), name=name)
        self._tok, self.name, self._pat_str = _tokenizer, name, pat_str
        self._mergeable_ranks, self._special_tokens = mergeable_ranks, dict(special_tokens)

    def __getattr__(self, attr):
        return getattr(self._tok, attr)

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r} (bpe.Tokenizer)>"

    def _encode_bytes(self, data: bytes) -> list[int]:
        return self._tok.encode_ordinary(data)

    def __getstate__(self):
        if _REGISTRY.get(self.name) is self:
            return self.name
        return {
            "name": self.name,
            "pat_str": self._pat_str,
            "mergeable_ranks": self._mergeable_ranks,
            "special_tokens": self._special_tokens,
        }

    def __setstate__(self, value) -> None:
        if isinstance(value, str):
            self.__dict__ = get_encoding(value).__dict__
            return
        self.__init__(**value)


_REGISTRY: dict[str, Encoding] = {}


def get_encoding(name: str) -> Encoding:
    if name not in _REGISTRY:
        try:
            tok = Tokenizer.from_openai(name, download=False)
        except ValueError as e:
            if "downloading is off" in str(e):
                pytest.skip(f"not applicable offline: {e}")
            raise
        ranks = {token: i for i, token in tok.vocab.items() if token not in tok._special_bytes}
        special_ids = {t: tok.ids[t.encode()] for t in tok.special_tokens}
        pattern = openai.ENCODINGS[name].pretokenizer
        _REGISTRY[name] = Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=special_ids, _tokenizer=tok)
    return _REGISTRY[name]


def list_encoding_names() -> list[str]:
    return list(openai.ENCODINGS)


def encoding_name_for_model(model_name: str) -> str:
    try:
        return openai.encoding_of(model_name).name
    except ValueError as e:
        raise KeyError(str(e)) from None


class _Named:
    """An encoding known by name, loaded at first use (encoding_for_model's tests only read the name)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, attr):
        return getattr(get_encoding(self.name), attr)


def encoding_for_model(model_name: str):
    return _Named(encoding_name_for_model(model_name))
