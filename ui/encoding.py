"""How a tokenizer encodes, as the pages show it: pre-tokens, the encoder's steps in one, a token's ancestry.

The one place the pages meet the library's step-by-step encoding: `steps`
turns Tokenizer.encode_steps (or, on a library without it, Tokenizer.merge_steps
and the rank table) into `Step`s, and `ancestry` builds a token's merge tree.

The encoder's loop, for one pre-token: list the adjacent pairs, look up each
pair's rank (its merge number: lower was learned earlier), merge every place the
lowest-ranked pair occurs, repeat until no pair is a merge. So merges apply in
the order they were *learned*, not by how often a pair occurs in the text, and
not left to right.

Not here: loading tokenizers (ui/real.py, ui/corpus.py), drawing (ui/encode_views.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from bpe import Tokenizer
from bpe.pretokenize import ENCODING, ERRORS, sequence_of_text

BYTES = [bytes([b]) for b in range(256)]


@dataclass(frozen=True)
class Step:
    """One step of the encoder in one pre-token: every place of the lowest-ranked pair merged."""

    before: tuple[bytes, ...]  # the parts before the step
    ranks: tuple[int | None, ...]  # the rank of each adjacent pair of `before` (0-based; None: not a merge, or beyond k)
    rank: int  # the rank applied (0-based, as in the merges list)
    parts: tuple[bytes, ...]  # the parts after the step

    @property
    def pair(self) -> tuple[bytes, bytes]:
        i = self.ranks.index(self.rank)
        return self.before[i], self.before[i + 1]


@dataclass(frozen=True)
class Piece:
    """A pre-token (or a special token, kept whole) of the text."""

    data: bytes
    special: bool = False


def pieces(tok: Tokenizer, text: str) -> list[Piece]:
    """The text cut as the tokenizer's encode cuts it: special tokens whole, the rest by its pre-tokenizer, in order."""
    out: list[Piece] = []
    if tok.special_tokens:
        ordered = sorted(tok.special_tokens, key=len, reverse=True)
        chunks = regex.split("(" + "|".join(regex.escape(t) for t in ordered) + ")", text)
    else:
        chunks = [text]
    for n, chunk in enumerate(chunks):
        if n % 2:
            out.append(Piece(chunk.encode(ENCODING), True))
        elif chunk:
            out += [Piece(p.encode(ENCODING, ERRORS)) for p in sequence_of_text(chunk, tok.pattern)]
    return out


def limit(tok: Tokenizer, k: int | None) -> int:
    return len(tok.merges) if k is None else max(0, min(k, len(tok.merges)))


def pair_ranks(tok: Tokenizer, parts: tuple[bytes, ...], k: int) -> tuple[int | None, ...]:
    ranks = tok.ranks
    out = []
    for a, b in zip(parts, parts[1:]):
        r = ranks.get((a, b))
        out.append(r if r is not None and r < k else None)
    return tuple(out)


def steps(tok: Tokenizer, word: bytes, k: int | None = None) -> list[Step]:
    """The encoder's steps in one pre-token, with the first k merges (all when None); [] when nothing merges.

    b'lower' with merges l+o, lo+w: [Step((l,o,w,e,r), (0,None,None,None), 0, (lo,w,e,r)), Step((lo,w,e,r), (1,None,None), 1, (low,e,r))]
    """
    k = limit(tok, k)
    before = tuple(BYTES[b] for b in word)
    if hasattr(tok, "encode_steps"):  # the library's own, once it has it: only its parts and rank are read
        done = [(s.rank, s.parts) for s in tok.encode_steps(word, k=k) if s.rank is not None]
    else:
        done = list(tok.merge_steps(word, k))
    out = []
    for rank, parts in done:
        out.append(Step(before, pair_ranks(tok, before, k), rank, tuple(parts)))
        before = tuple(parts)
    return out


def final(tok: Tokenizer, word: bytes, k: int | None = None) -> tuple[bytes, ...]:
    """The tokens of one pre-token: the last step's parts (the bytes when nothing merges)."""
    done = steps(tok, word, k)
    return done[-1].parts if done else tuple(BYTES[b] for b in word)


# ---------------------------------------------------------------------------
# a token's ancestry: the merges that built it, down to bytes


@dataclass(frozen=True)
class Node:
    token: bytes
    rank: int | None = None  # the merge that made it (None: a byte, or a special token)
    count: int | None = None  # how often the pair occurred when it was merged (our own runs only)
    left: Node | None = None
    right: Node | None = None

    @property
    def depth(self) -> int:
        return 1 + max(self.left.depth, self.right.depth) if self.left and self.right else 1

    @property
    def leaves(self) -> int:
        return self.left.leaves + self.right.leaves if self.left and self.right else 1


_made_by: dict[int, tuple[Tokenizer, dict[bytes, int]]] = {}  # id(tokenizer) -> (it, token -> rank of the merge that made it)


def made_by(tok: Tokenizer) -> dict[bytes, int]:
    """token -> the rank of the merge that made it; built once per tokenizer (tokenizers are shared and never change)."""
    known = _made_by.get(id(tok))
    if known is None or known[0] is not tok:
        table: dict[bytes, int] = {}
        for rank, (a, b) in enumerate(tok.merges):
            table.setdefault(a + b, rank)
        if len(_made_by) >= 8:
            _made_by.clear()
        known = _made_by[id(tok)] = (tok, table)
    return known[1]


def ancestry(tok: Tokenizer, token: bytes, k: int | None = None) -> Node | None:
    """The merge tree of a token of tok (with the first k merges): None when it is not one of its tokens.

    With merges l+o, lo+w: b'low' -> Node(low, 1, left=Node(lo, 0, left=l, right=o), right=w).
    """
    k = limit(tok, k)
    table = made_by(tok)
    if token not in table or table[token] >= k:
        if len(token) == 1 or token.decode(ENCODING, ERRORS) in tok.special_tokens:
            return Node(token)
        return None
    return _tree(tok, token, table)


def _tree(tok: Tokenizer, token: bytes, table: dict[bytes, int]) -> Node:
    rank = table.get(token)
    if rank is None:
        return Node(token)
    a, b = tok.merges[rank]
    return Node(token, rank, tok.counts[rank], _tree(tok, a, table), _tree(tok, b, table))
