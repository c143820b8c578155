"""How a tokenizer encodes, as the pages show it: pre-tokens, the encoder's steps in one, a token's ancestry.

The one place the pages meet the library's step-by-step encoding: `steps`
turns Tokenizer.encode_steps into `Step`s (each with the parts it started
from), `ancestry` Tokenizer.ancestry into `Node`s, `pieces` Tokenizer.pre_tokens.

The encoder's loop, for one pre-token: list the adjacent pairs, look up each
pair's rank (its merge number: lower was learned earlier), merge every place the
lowest-ranked pair occurs, repeat until no pair is a merge. So merges apply in
the order they were *learned*, not by how often a pair occurs in the text, and
not left to right.

Not here: loading tokenizers (ui/real.py, ui/corpus.py), drawing (ui/views/encode.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from bpe import Tokenizer
from bpe.text.pretokenizers import ENCODING

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
    whole: bool = False  # a pre-token that is itself a token, taken whole without merging (HuggingFace's ignore_merges: Llama 3)


def pieces(tok: Tokenizer, text: str, k: int | None = None) -> list[Piece]:
    """The text cut as the tokenizer's encode cuts it (Tokenizer.pre_tokens): special tokens whole, the rest pre-tokenized, in order.

    With ignore_merges (and every merge), a pre-token that is a token of the vocabulary is that token: encode() takes it
    whole, so the walk must too (its merges may build it otherwise, or not at all).
    """
    special_bytes = {t.encode(ENCODING) for t in tok.special_tokens}
    whole = getattr(tok, "ignore_merges", False) and (k is None or k >= len(tok.merges))
    return [Piece(p, p in special_bytes, whole and p not in special_bytes and p in tok.ids) for p in tok.pre_tokens(text)]


def limit(tok: Tokenizer, k: int | None) -> int:
    return len(tok.merges) if k is None else max(0, min(k, len(tok.merges)))


def steps(tok: Tokenizer, word: bytes, k: int | None = None) -> list[Step]:
    """The encoder's steps in one pre-token (Tokenizer.encode_steps), with the first k merges (all when None); [] when nothing merges.

    b'lower' with merges l+o, lo+w: [Step((l,o,w,e,r), (0,None,None,None), 0, (lo,w,e,r)), Step((lo,w,e,r), (1,None,None), 1, (low,e,r))]
    """
    out, before = [], tuple(BYTES[b] for b in word)
    for step in tok.encode_steps(word, limit(tok, k)):
        if step.rank is None:  # the start: the bytes (a SentencePiece tokenizer's: the characters, or their bytes)
            before = tuple(step.parts)
            continue
        out.append(Step(before, tuple(step.pair_ranks), step.rank, tuple(step.parts)))
        before = tuple(step.parts)
    return out


def start(tok: Tokenizer, word: bytes, k: int | None = None) -> tuple[bytes, ...]:
    """What encoding one pre-token starts from: its bytes; for a SentencePiece tokenizer its characters (bytes where it has none)."""
    return tuple(tok.encode_steps(word, limit(tok, k))[0].parts)


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


def ancestry(tok: Tokenizer, token: bytes, k: int | None = None) -> Node | None:
    """The merge tree of a token of tok (Tokenizer.ancestry) with the first k merges: None when it is not one of its tokens.

    With merges l+o, lo+w: b'low' -> Node(low, 1, left=Node(lo, 0, left=l, right=o), right=w).
    """
    try:
        tree = tok.ancestry(token)
    except ValueError:
        return None
    if tree.rank is not None and tree.rank >= limit(tok, k):  # made later than merge k (its parts are earlier still)
        return None
    return _node(tree)


def _node(tree) -> Node:
    if not tree.parts:
        return Node(tree.token)
    left, right = tree.parts
    return Node(tree.token, tree.rank, tree.count, _node(left), _node(right))
