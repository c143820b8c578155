"""Encoding shown, for the classroom: a pre-token's steps, a token's ancestry, the pieces encode() merges inside.

What it does: replay the encoder's own loop (`Encoder.rounds`, encoder.py) and record each round,
so what the Encode page shows is the code that runs; build a token's merge tree down to bytes;
list a text's pre-tokens. A mixin of `Tokenizer` (tokenizer.py), which supplies its vocabulary,
merges, counts and encoder.

    tok.encode_steps(b"lower")  # (l, o, w, e, r) -> rank 0 at 0 -> (lo, w, e, r) -> rank 1 at 0 -> (low, e, r)
    tok.ancestry(b"low")        # low (rank 1) <- [lo (rank 0) <- [l, o], w]

Not here: encoding itself (encoder.py, encode_c.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from random import Random

from ..text import pretokenize_c
from ..text.pretokenizers import ENCODING, ERRORS, find_specials


@dataclass(frozen=True)
class EncodeStep:
    """One step of encoding a pre-token: every occurrence of the lowest-ranked pair merged.

    The first step of a list is the start (the bytes): rank None, no pairs before it.
    """

    parts: tuple[bytes, ...]  # the tokens after this step
    rank: int | None  # the merge applied (0-based, as in the merges list); None for the start
    pair_ranks: tuple[int | None, ...]  # the rank of each adjacent pair before this step; None: not a merge (within k)
    at: tuple[int, ...]  # where it merged: the left part's index in the parts before this step
    count: int | None = None  # the merge's count when it was made, when the tokenizer knows it


@dataclass(frozen=True)
class Ancestry:
    """How a token was built: a tree of merges down to bytes.

    b'low' with merges l+o, lo+w -> low (rank 1) <- [lo (rank 0) <- [l, o], w]
    """

    token: bytes
    rank: int | None  # the merge that made it; None for a byte or a special token
    count: int | None  # that merge's count when it was made, when known
    parts: tuple[Ancestry, ...] = ()  # (left, right) for a merge, () for a byte or a special token

    def nodes(self) -> Iterator[Ancestry]:
        """Every node, the token first, then its left tree, then its right."""
        yield self
        for part in self.parts:
            yield from part.nodes()

    @property
    def depth(self) -> int:
        """Merges on the longest path down to a byte: a byte is 0, l+o is 1."""
        return 1 + max(part.depth for part in self.parts) if self.parts else 0


class Teaching:
    """What the classroom asks of a tokenizer (a mixin of Tokenizer)."""

    def encode_steps(self, piece: bytes | str, k: int | None = None) -> list[EncodeStep]:
        """Encoding one pre-token step by step, as GPT-2's encoder does, with the first k merges.

        Start from the bytes; at each step look up the rank of every adjacent pair,
        take the lowest, and merge it everywhere it occurs, left to right; stop when
        no pair is a merge. With merges [l+o, lo+w] b'lower' gives three steps:
        (l, o, w, e, r) from the bytes, then rank 0 at 0 -> (lo, w, e, r), then rank 1 at 0 -> (low, e, r).
        The last step's parts are encode()'s tokens; ranks come out in increasing order.
        subtle: a whole piece is taken as one pre-token: cut text with pre_tokens() first. A special
        token is one step, itself.
        """
        limit = self._limit(k)
        word = self._word_bytes(piece)
        if word in self._special_bytes:
            return [EncodeStep((word,), None, (), ())]
        encoder, vocab = self._python, self.vocab
        ids = encoder.start(word)  # one sentence for a byte the vocabulary lacks
        steps = [EncodeStep(tuple(vocab[i] for i in ids), None, (), ())]
        rounds = encoder.rounds(ids, limit)  # the encoder's own loop: it merges ids in place, a round per next()
        while True:
            pair_ranks = tuple(_within(encoder.ranks.get(a << 32 | b), limit) for a, b in zip(ids, ids[1:]))
            done = next(rounds, None)
            if done is None:
                return steps
            rank, at = done
            steps.append(EncodeStep(tuple(vocab[i] for i in ids), rank, pair_ranks, tuple(at), self.counts[rank]))

    def merge_steps(self, word: bytes, k: int | None = None) -> Iterator[tuple[int, list[bytes]]]:
        """Each merge that encoding applies to word, in order: (its rank, the tokens after it).

        b'lower' with merges l+o, lo+w -> (0, [lo, w, e, r]), then (1, [low, e, r])
        """
        ids = self._python.start(word)
        for rank, _ in self._python.rounds(ids, self._limit(k)):
            yield rank, [self.vocab[i] for i in ids]

    def bpe(self, word: bytes, k: int | None = None) -> tuple[bytes, ...]:
        """Split one pre-token with the first k merges (all when k is None).

        With merges [(b'l', b'o'), (b'lo', b'w')]: b'lower' -> (b'low', b'e', b'r').

        subtle: merges are matched by the ids of their parts, as GPT-2 and HuggingFace match them by
        their text (each distinct token has one id here). When two merges make the same bytes
        (b'a'+b'bc' and b'ab'+b'c'), a later pair can then look like an earlier one, and this can
        differ from what a trainer would do with ids. Training never makes such twins (see
        Trainer.mint), but a hand-made merge list can.
        """
        return tuple(self.vocab[i] for i in self._word_ids(word, self._limit(k)))

    def pieces(self, text: str | bytes, k: int | None = None) -> list[bytes]:
        """The tokens of text as bytes, in order."""
        vocab = self.vocab
        return [vocab[i] for i in self.encode(text, k)]

    def segmentations(
        self, word: str | bytes, dropout: float, samples: int = 1000, seed: int = 0, k: int | None = None
    ) -> list[tuple[tuple[bytes, ...], int]]:
        """A word's segmentations under BPE-dropout (encode's dropout=), each with how many of `samples` gave it, the most first.

        b'low' with merges l+o, lo+w, dropout 0.5, 1000 samples -> about [((b'l', b'o', b'w'), 500),
        ((b'low',), 250), ((b'lo', b'w'), 250)]. The samples draw from one random.Random(seed): the same list each time.
        """
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"samples must be a whole number of at least 1, not {samples!r}.")
        rng = Random(seed)
        found: Counter[tuple[bytes, ...]] = Counter()
        for _ in range(samples):
            ids = self.encode(word, k, allowed_special=(), disallowed_special=(), dropout=dropout, seed=rng)
            found[tuple(self.vocab[i] for i in ids)] += 1
        return sorted(found.items(), key=lambda item: (-item[1], len(item[0]), item[0]))

    def token_counts(self, words: Mapping[bytes, int], k: int | None = None) -> Counter[bytes]:
        """How often each token occurs when pre-token counts are encoded with the first k merges.

        {b'low': 5, b'lower': 2} with merges l+o, lo+w -> {b'low': 7, b'e': 2, b'r': 2}
        """
        counts: Counter[bytes] = Counter()
        for word, n in words.items():
            for token in self.bpe(word, k):
                counts[token] += n
        return counts

    def pre_tokens(self, text: str | bytes) -> list[bytes]:
        """The pieces encode() merges inside, in order: special tokens whole, the rest pre-tokenized.

        With special token <|e|>: 'hi you<|e|>' -> [b'hi', b' you', b'<|e|>'].
        """
        if self._compiled is not None and self._compiled.kind >= 0:
            try:
                data = text if isinstance(text, bytes) else text.encode(ENCODING)
                return pretokenize_c.pretokens(data, self.pretokenizer, self._special_bytes)
            except UnicodeEncodeError:  # a surrogate: the Python path takes it
                pass
        if isinstance(text, bytes):
            text = text.decode(ENCODING, ERRORS)
        out: list[bytes] = []
        pos = 0
        for start, token in find_specials(text, self.special_tokens) if self.special_tokens else ():
            out += [self._word_bytes(t) for t in self.pretokenizer.split(text[pos:start])]
            out.append(token.encode(ENCODING))
            pos = start + len(token)
        out += [self._word_bytes(t) for t in self.pretokenizer.split(text[pos:])]
        return out

    @cached_property
    def made_by(self) -> dict[bytes, int]:
        """The rank of the merge that makes each merged token (the first, should two make the same bytes)."""
        return {a + b: rank for rank, (a, b) in reversed(list(enumerate(self.merges))) if rank not in self.inert}

    def ancestry(self, token: bytes | str | int) -> Ancestry:
        """A token's merge tree down to bytes: given as bytes, as text, or by id.

        Each node carries the rank of its merge and that merge's count when it was
        made (counts are known for a run of this tool, None for other tools' files).
        """
        if isinstance(token, int) and not isinstance(token, bool):
            if token not in self.vocab:
                raise ValueError(f"Token id {token} is not in the vocabulary (ids {min(self.vocab)}..{max(self.vocab)}).")
            token = self.vocab[token]
        elif isinstance(token, str):
            token = self._word_bytes(token)
        if not isinstance(token, (bytes, bytearray)) or bytes(token) not in self.ids:
            raise ValueError(f"{_shown(token)} is not a token of this vocabulary; type it exactly, leading space included.")
        return self._tree(bytes(token))

    def _tree(self, token: bytes) -> Ancestry:
        rank = self.made_by.get(token)
        if rank is None:  # a byte or a special token
            return Ancestry(token, None, None)
        left, right = self.merges[rank]
        return Ancestry(token, rank, self.counts[rank], (self._tree(left), self._tree(right)))


def _within(rank: int | None, limit: int) -> int | None:
    return rank if rank is not None and rank < limit else None


def _shown(token: object) -> str:
    if isinstance(token, (bytes, bytearray)):
        return repr(bytes(token).decode(ENCODING, "backslashreplace")[:40])
    return repr(token)[:40]
