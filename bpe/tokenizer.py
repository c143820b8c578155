"""Using a trained tokenizer: encode text to ids and decode ids back to text.

Encoding cuts out special tokens (kept whole), pre-tokenizes the rest with the
training pattern, and inside each pre-token applies merges by rank: the
lowest-ranked pair present is merged everywhere, until no merge applies. This
gives the same tokens as replaying the training merges in order.

decode(encode(x)) == x for every string, invalid UTF-8 included (kept as
lone surrogates by surrogateescape) -- except with the 'whitespace'
pre-tokenizer, which drops whitespace by design.
"""

from __future__ import annotations

from collections.abc import Sequence

import regex

from .pretokenize import ENCODING, ERRORS, check_pattern, check_special_tokens, sequence_of_text
from .train import Merges, build_vocab


class Tokenizer:
    def __init__(self, merges: Merges, special_tokens: Sequence[str] = (), pattern: str = "gpt2") -> None:
        check_pattern(pattern)
        check_special_tokens(special_tokens)
        self.merges = list(merges)
        self.special_tokens = tuple(special_tokens)
        self.pattern = pattern
        self.vocab = build_vocab(self.merges, special_tokens)
        self.ids: dict[bytes, int] = {}
        for i, token in self.vocab.items():
            self.ids.setdefault(token, i)  # subtle: equal bytes from two merges share the first id
        self.ranks = {pair: rank for rank, pair in reversed(list(enumerate(self.merges)))}
        ordered = sorted(self.special_tokens, key=len, reverse=True)
        self._special = regex.compile("(" + "|".join(regex.escape(t) for t in ordered) + ")") if ordered else None
        self._cache: dict[tuple[bytes, int], tuple[bytes, ...]] = {}

    def bpe(self, word: bytes, k: int | None = None) -> tuple[bytes, ...]:
        """Split one pre-token with the first k merges (all when k is None).

        With merges [(b'l', b'o'), (b'lo', b'w')]: b'lower' -> (b'low', b'e', b'r').
        """
        limit = len(self.merges) if k is None else k
        key = (word, limit)
        if key in self._cache:
            return self._cache[key]
        parts = [bytes([b]) for b in word]
        ranks = self.ranks
        while len(parts) > 1:
            # the applicable merge with the lowest rank
            best = min(range(len(parts) - 1), key=lambda i: ranks.get((parts[i], parts[i + 1]), limit))
            pair = (parts[best], parts[best + 1])
            if ranks.get(pair, limit) >= limit:
                break
            merged, i = [], 0
            while i < len(parts):
                if i + 1 < len(parts) and (parts[i], parts[i + 1]) == pair:
                    merged.append(parts[i] + parts[i + 1])
                    i += 2
                else:
                    merged.append(parts[i])
                    i += 1
            parts = merged
        result = tuple(parts)
        if len(self._cache) < 200_000:
            self._cache[key] = result
        return result

    def pieces(self, text: str | bytes, k: int | None = None) -> list[bytes]:
        """The tokens of text as bytes, in order."""
        if isinstance(text, bytes):
            text = text.decode(ENCODING, ERRORS)
        out: list[bytes] = []
        chunks = self._special.split(text) if self._special else [text]
        for n, chunk in enumerate(chunks):
            if n % 2 == 1:  # a special token, kept whole
                out.append(chunk.encode(ENCODING))
                continue
            for token in sequence_of_text(chunk, self.pattern):
                out.extend(self.bpe(token.encode(ENCODING, ERRORS), k))
        return out

    def encode(self, text: str | bytes, k: int | None = None) -> list[int]:
        return [self.ids[p] for p in self.pieces(text, k)]

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        try:
            return b"".join(self.vocab[i] for i in ids)
        except KeyError as e:
            raise ValueError(f"Token id {e.args[0]} is not in the vocabulary (0..{len(self.vocab) - 1}).") from None

    def decode(self, ids: Sequence[int]) -> str:
        return self.decode_bytes(ids).decode(ENCODING, ERRORS)
