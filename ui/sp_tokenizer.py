"""The pages' view of a SentencePiece-family tokenizer.json (Llama 2's, Mistral's): `PiecesTokenizer`.

The pages that set real tokenizers side by side (Real tokenizers, Quirks, Encode) were written for bpe.Tokenizer,
the byte-level family's; this gives bpe.sentencepiece.HFTokenizer (exact to HuggingFace `tokenizers` on these
files) the same everyday and teaching interface, in that family's own terms:

- a token's bytes (`vocab[i]`) are its piece's text in UTF-8, '▁' and all (b'\\xe2\\x96\\x81the' for ▁the: the
  character is part of the vocabulary, where GPT-2's files write Ġ for the space *byte*); a byte piece <0xNN> is
  its one byte, so a character that fell back to bytes is drawn as one dashed chip, as GPT's split characters are;
- `pre_tokens` are HuggingFace's: the added tokens cut out, the rest normalized ('▁' first, '▁' for each space),
  one piece, since these files have no pre-tokenizer;
- `encode_steps` walks HuggingFace's BPE by merge rank: the lowest-ranked pair merged, everywhere it occurs,
  left to right (`tokenizers` merges its occurrences one after the other; here they are one step, as on the
  byte-level pages); `ancestry` is how encoding the token's own text builds it;
- `encode` leaves out the <s> the post-processor puts first, as the byte-level tokenizers add nothing either.

    tok = PiecesTokenizer(Tokenizer.load("../shared/llama2/tokenizer.json").encoder)
    [tok.vocab[i] for i in tok.encode("Hello world")]   # [b'\\xe2\\x96\\x81Hello', b'\\xe2\\x96\\x81world']

- subtle: the library's SentencePieceTokenizer (Tokenizer.load) decodes a piece's bytes ('▁' as a space), as decoding
  must; the pages draw the piece itself, so they see it through this view. ui.real.load_sentencepiece builds it.

Not here: loading the file or choosing which tokenizers a page shows (ui/real.py).
"""

from __future__ import annotations

from functools import cached_property

from bpe.sentencepiece.hf import HFTokenizer
from bpe.tokenizer.steps import Ancestry, EncodeStep

FAMILY = "sentencepiece"


class PiecesTokenizer:
    """HFTokenizer with bpe.Tokenizer's interface where the pages use it (see the module docstring)."""

    family = FAMILY
    ignore_merges = False
    counts = None  # how often each merge's pair occurred when it was made: unknown, as for every real tokenizer

    def __init__(self, hf: HFTokenizer) -> None:
        self.hf = hf
        byte_ids = {i: b for b, i in enumerate(hf.byte_ids) if i is not None}
        self.vocab: dict[int, bytes] = {i: bytes([byte_ids[i]]) if i in byte_ids else t.encode() for i, t in hf.id_to_token.items()}
        self.special_tokens = [t.content for t in hf.added if t.special]
        self.by_rank = {rank: pair for pair, (rank, _) in hf.merges.items()}

    @cached_property
    def ids(self) -> dict[bytes, int]:
        """A token's bytes -> its id; a piece wins over a byte piece of the same byte (b'a' is the piece a, not <0x61>)."""
        found: dict[bytes, int] = {}
        for i, token in sorted(self.vocab.items(), key=lambda it: it[0] in self._byte_pieces):
            found.setdefault(token, i)
        return found

    @cached_property
    def _byte_pieces(self) -> frozenset[int]:
        return frozenset(i for i in self.hf.byte_ids if i is not None)

    @cached_property
    def merges(self) -> list[tuple[bytes, bytes]]:
        """The merges in rank order, as token bytes."""
        return [(self.vocab[a], self.vocab[b]) for rank, (a, b) in sorted(self.by_rank.items())]

    # -- everyday --------------------------------------------------------------
    def encode(self, text: str, k: int | None = None) -> list[int]:
        """The ids HuggingFace gives text, without the <s> its post-processor puts first; k: all merges (a real tokenizer)."""
        return self.hf.encode(text, add_special_tokens=False)

    def decode(self, ids: list[int]) -> str:
        return self.hf.decode(ids)

    def pieces(self, text: str | bytes, k: int | None = None) -> list[bytes]:
        text = text.decode("utf-8", "surrogateescape") if isinstance(text, bytes) else text
        return [self.vocab[i] for i in self.encode(text)]

    def pre_tokens(self, text: str | bytes) -> list[bytes]:
        """The pieces encode() merges inside: the added tokens found, and the normalized text between them."""
        text = text.decode("utf-8", "surrogateescape") if isinstance(text, bytes) else text
        return [piece.encode("utf-8", "surrogateescape") for piece, _ in self.hf.pre_tokens(text) if piece]

    # -- teaching --------------------------------------------------------------
    def encode_steps(self, piece: bytes | str, k: int | None = None) -> list[EncodeStep]:
        """HuggingFace's BPE on one pre-token, a step per rank: the start (its characters, or their bytes), then each rank merged
        everywhere it occurs, left to right, until no listed pair is left."""
        word = piece.decode("utf-8", "surrogateescape") if isinstance(piece, bytes) else piece
        added = {t.content: t.id for t in self.hf.added}
        if word in added:
            return [EncodeStep((self.vocab[added[word]],), None, (), ())]
        done: list = []
        final = self.hf._merge(word, done)  # subtle: the encoder's own loop (hf.py), its steps recorded
        ids = [i for i, _ in final]
        # each recorded step holds the ids after it: undo them, last first, to get the ids each started from
        befores = []
        for after, at, rank in reversed(done):
            a, b = self.by_rank[rank]
            ids = list(after[:at]) + [a, b] + list(after[at + 1 :])
            befores.append(tuple(ids))
        befores.reverse()
        start = befores[0] if befores else tuple(i for i, _ in final)
        steps = [EncodeStep(tuple(self.vocab[i] for i in start), None, (), ())]
        n = 0
        while n < len(done):  # consecutive merges of one rank are one step: every place it occurs
            rank, before = done[n][2], befores[n]
            at = []
            while n < len(done) and done[n][2] == rank:
                at.append(done[n][1] + len(at))  # each earlier one in the step is to its left
                n += 1
            ranks = tuple(self.hf.merges.get((x, y), (None,))[0] for x, y in zip(before, before[1:]))
            steps.append(EncodeStep(tuple(self.vocab[i] for i in done[n - 1][0]), rank, ranks, tuple(at)))
        return steps

    def ancestry(self, token: bytes | str | int) -> Ancestry:
        """How encoding the token's own text builds it: its merge tree down to characters (or bytes)."""
        if isinstance(token, int):
            token = self.vocab[token]
        elif isinstance(token, str):
            token = token.encode()
        if token not in self.ids:
            raise ValueError(f"{token.decode('utf-8', 'backslashreplace')!r} is not a token of this vocabulary.")
        text = token.decode("utf-8", "surrogateescape")
        if len(text) <= 1 or self.ids[token] in self._byte_pieces:
            return Ancestry(token, None, None)
        steps = self.encode_steps(text)
        trees = [Ancestry(t, None, None) for t in steps[0].parts]
        for step in steps[1:]:
            for at in reversed(step.at):  # right to left, so the places to its left stay where they are
                left, right = trees[at], trees[at + 1]
                trees[at : at + 2] = [Ancestry(left.token + right.token, step.rank, None, (left, right))]
        if len(trees) == 1 and trees[0].token == token:
            return trees[0]
        return Ancestry(token, None, None)  # no listed merges build it from its own text: the vocabulary holds it whole
