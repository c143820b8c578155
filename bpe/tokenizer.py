"""Using a trained tokenizer: encode text to ids, decode ids back to text, save and load.

Encoding cuts out special tokens (kept whole), pre-tokenizes the rest with the
training pattern, and inside each pre-token applies merges by rank: the
lowest-ranked pair present is merged everywhere, left to right, until no merge
applies. This gives the same tokens as replaying the training merges in order
(see `Tokenizer.bpe` for the one exception), and the same tokens as GPT-2,
HuggingFace tokenizers and tiktoken given the same merges.

decode(encode(x)) == x for every string without lone surrogates, and for every
string decoded from bytes with surrogateescape (that is how invalid UTF-8 is
kept) -- except with the 'whitespace' pre-tokenizer, which drops whitespace by
design. decode_bytes(encode(b)) == b for all bytes b.

Not here: the file formats (export.py) or training (train.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import regex

from . import export
from .pretokenize import ENCODING, ERRORS, check_pattern, check_special_tokens, sequence_of_text
from .train import Merges, Training, build_vocab

BYTES = [bytes([b]) for b in range(256)]
CACHE_CAP = 200_000  # (pre-token, k) -> tokens; cleared when full


class Tokenizer:
    def __init__(
        self,
        merges: Merges,
        special_tokens: Sequence[str] = (),
        pattern: str = "gpt2",
        *,
        counts: Sequence[int | None] | None = None,
    ) -> None:
        check_pattern(pattern)
        check_special_tokens(special_tokens)
        export.check_merges(merges)
        self.merges = [(bytes(a), bytes(b)) for a, b in merges]
        self.special_tokens = tuple(special_tokens)
        self.pattern = pattern
        # the winning pair's count when each merge was made (None: not recorded, e.g. loaded from merges.txt)
        self.counts: tuple[int | None, ...] = tuple(counts) if counts is not None else (None,) * len(self.merges)
        if len(self.counts) != len(self.merges):
            raise ValueError(f"Got {len(self.counts)} counts for {len(self.merges)} merges.")
        self.vocab = build_vocab(self.merges, special_tokens)
        self.ids: dict[bytes, int] = {}
        for i, token in self.vocab.items():
            self.ids.setdefault(token, i)  # subtle: equal bytes from two merges share the first id
        self.ranks = {pair: rank for rank, pair in reversed(list(enumerate(self.merges)))}
        ordered = sorted(self.special_tokens, key=len, reverse=True)
        self._special = regex.compile("(" + "|".join(regex.escape(t) for t in ordered) + ")") if ordered else None
        self._cache: dict[tuple[bytes, int], tuple[bytes, ...]] = {}

    # -- building, saving, loading ------------------------------------------
    @classmethod
    def from_merges(
        cls, merges: Merges, special_tokens: Sequence[str] = (), pattern: str = "gpt2", *, counts: Sequence[int | None] | None = None
    ) -> Tokenizer:
        """A tokenizer in this tool's id layout (bytes, merges in order, specials) from its merges."""
        return cls(merges, special_tokens, pattern, counts=counts)

    @classmethod
    def from_training(cls, training: Training, pattern: str = "gpt2") -> Tokenizer:
        """The tokenizer a training run made, with each merge's count."""
        return cls.from_merges(training.merges, training.special_tokens, pattern, counts=[e.count for e in training.events])

    @classmethod
    def load(cls, path: str | Path, *, pattern: str | None = None) -> Tokenizer:
        """Load any format export.py writes (a directory or one file); ValueError says what is wrong.

        `pattern` is only needed for vocab.json + merges.txt, which do not record it (default gpt2).
        """
        saved = export.load(path, pattern=pattern)
        return cls.from_merges(saved.merges, saved.special_tokens, saved.pattern, counts=saved.counts)

    def save(self, directory: str | Path, k: int | None = None) -> list[Path]:
        """Write every format (with the first k merges) to directory; return the paths."""
        k = self._limit(k)
        return export.save_all(directory, self.merges[:k], self.special_tokens, self.pattern, self.counts[:k])

    # -- encoding -------------------------------------------------------------
    def _limit(self, k: int | None) -> int:
        if k is None:
            return len(self.merges)
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValueError(f"k must be a whole number of merges, at least 0, not {k!r}.")
        return min(k, len(self.merges))

    def bpe(self, word: bytes, k: int | None = None) -> tuple[bytes, ...]:
        """Split one pre-token with the first k merges (all when k is None).

        With merges [(b'l', b'o'), (b'lo', b'w')]: b'lower' -> (b'low', b'e', b'r').

        subtle: merges are matched by their bytes, as GPT-2 and HuggingFace do.
        When two merges make the same bytes (b'a'+b'bc' and b'ab'+b'c'), a later
        pair can then look like an earlier one, and this can differ from what the
        trainer did with its ids. Trainers rarely produce such twins.
        """
        limit = self._limit(k)
        key = (word, limit)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        parts = [BYTES[b] for b in word]
        for _, merged in self.merge_steps(word, limit):
            parts = merged
        result = tuple(parts)
        if len(self._cache) >= CACHE_CAP:
            self._cache.clear()
        self._cache[key] = result
        return result

    def merge_steps(self, word: bytes, k: int | None = None) -> Iterator[tuple[int, list[bytes]]]:
        """Each merge that encoding applies to word, in order: (its rank, the tokens after it).

        b'lower' with merges l+o, lo+w -> (0, [lo, w, e, r]), then (1, [low, e, r])
        """
        limit = self._limit(k)
        parts = [BYTES[b] for b in word]
        get = self.ranks.get
        while len(parts) > 1:
            # the lowest rank among adjacent pairs; `limit` means "no merge"
            ranks = [get(pair, limit) for pair in zip(parts, parts[1:])]
            rank = min(ranks)
            if rank >= limit:
                return
            parts = _merge(parts, ranks, rank)
            yield rank, parts

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
                out.extend(self.bpe(_to_bytes(token), k))
        return out

    def encode(self, text: str | bytes, k: int | None = None) -> list[int]:
        return [self.ids[p] for p in self.pieces(text, k)]

    def token_counts(self, words: Mapping[bytes, int], k: int | None = None) -> Counter[bytes]:
        """How often each token occurs when pre-token counts are encoded with the first k merges.

        {b'low': 5, b'lower': 2} with merges l+o, lo+w -> {b'low': 7, b'e': 2, b'r': 2}
        """
        counts: Counter[bytes] = Counter()
        for word, n in words.items():
            for token in self.bpe(word, k):
                counts[token] += n
        return counts

    # -- decoding -------------------------------------------------------------
    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        try:
            return b"".join(self.vocab[i] for i in ids)
        except (KeyError, TypeError):
            bad = next(i for i in ids if not isinstance(i, int) or i not in self.vocab)
            raise ValueError(f"Token id {bad!r} is not in the vocabulary (0..{len(self.vocab) - 1}).") from None

    def decode(self, ids: Sequence[int]) -> str:
        return self.decode_bytes(ids).decode(ENCODING, ERRORS)


def _merge(parts: list[bytes], ranks: list[int], rank: int) -> list[bytes]:
    """Join every pair of the given rank, left to right, without overlaps.

    [a, a, a] with ranks [0, 0] for (a, a) -> [aa, a]
    """
    out: list[bytes] = []
    i, n = 0, len(parts)
    while i < n:
        if i < n - 1 and ranks[i] == rank:
            out.append(parts[i] + parts[i + 1])
            i += 2
        else:
            out.append(parts[i])
            i += 1
    return out


def _to_bytes(token: str) -> bytes:
    try:
        return token.encode(ENCODING, ERRORS)
    except UnicodeEncodeError as e:
        bad = token[e.start]
        raise ValueError(
            f"The text holds a lone surrogate U+{ord(bad):04X}, which no UTF-8 bytes decode to; "
            "only U+DC80..U+DCFF (invalid bytes kept by surrogateescape) can be encoded."
        ) from None
