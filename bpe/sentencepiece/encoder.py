"""Encoding and decoding with a SentencePiece BPE model, exactly as sentencepiece 0.2.3's SentencePieceProcessor does.

How a line becomes ids (sentencepiece_processor.cc EncodeOptimized, bpe_model.cc SampleEncode):

1. **Normalize** (normalizer.py), the model's user-defined pieces copied as they are.
2. **Symbols.** The normalized text is cut into characters, except that a user-defined piece found there (longest
   first) is one symbol that never merges.
3. **Merge by score.** Every adjacent pair of symbols whose concatenation is a piece the encoder may make
   (NORMAL, USER_DEFINED or UNUSED: never <unk>, a control or a byte piece) goes on a heap, keyed by that piece's
   score; the best (highest score, then the leftmost) is merged and the pairs it makes with its neighbours are
   looked up. Scores are -(rank) for a trained model, so this is "lowest merge rank first", but it is the
   vocabulary that decides, not a list of merges: any two symbols whose concatenation is a piece may merge.
4. **Resegment.** A piece of type UNUSED was only a step: it is split back into the two symbols that made it.
5. **Unknowns.** A symbol that is no piece is <unk>: with byte fallback it becomes its UTF-8 bytes as <0xNN>
   pieces; without, a run of unknown symbols is fused into one <unk>.

    enc = Encoder(read_model("tokenizer.model"))
    enc.encode("Hello world")        # [15043, 3186] with Llama 2's tokenizer.model
    enc.decode([15043, 3186])        # 'Hello world'
    enc.encode_steps("Hello")        # each merge the encoder made, in order

- subtle: the heap compares scores as sentencepiece does, through their bit patterns as integers: equal to
  comparing the floats, except that -0.0 counts as below +0.0 (the first merged piece's score is -0.0).
- subtle: decoding strips one '▁' from the start of the first pieces (the dummy prefix) while nothing has been
  written yet, turns every other '▁' into a space, turns byte pieces back into bytes (a malformed sequence
  becomes U+FFFD a byte), writes <unk> as ' ⁇ ' (unk_surface) and control pieces as nothing.

Not here: HuggingFace's encoding of the same family from a tokenizer.json (hf.py), which merges by a list of
merges instead of by the vocabulary.
"""

from __future__ import annotations

import heapq
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .compiled import SEED
from .compiled import core as compiled_core
from .model import BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED, SentencePieceModel, byte_piece
from .normalizer import SPACE, Normalizer, as_bytes, char_length

MAX_RESEGMENT_DEPTH = 100  # bpe_model.cc kMaxBpeResegmentDepth: a hostile model's chain of UNUSED pieces stops there


def score_key(score: float) -> int:
    """SymbolPairComparator's order of float32 scores, as one int: higher key, better score; -0.0 just below +0.0.

    The comparator reads the float's bits as an int32: for two negatives the larger int is the smaller float.
    """
    (bits,) = struct.unpack("<i", struct.pack("<f", score))
    return bits if bits >= 0 else -1 - (bits & 0x7FFFFFFF)


@dataclass(frozen=True, slots=True)
class EncodeStep:
    """One merge the encoder made: the symbols after it, which one it made, and the piece's id and score."""

    symbols: tuple[str, ...]
    at: int  # the index in `symbols` of the merged symbol
    id: int
    score: float


class Encoder:
    """A SentencePiece BPE model's encoder and decoder (SentencePieceProcessor's EncodeAsIds and DecodeIds)."""

    def __init__(self, model: SentencePieceModel) -> None:
        self.model = model
        self.pieces = [p.piece for p in model.pieces]
        self.types = [p.type for p in model.pieces]
        self.keys = [score_key(p.score) for p in model.pieces]
        # every piece, the reserved ones too (InitializePieces(use_reserved_id_map=false)); the first id wins
        self.ids: dict[str, int] = {}
        for i, p in enumerate(model.pieces):
            if not (p.piece == "\0" and p.type == UNUSED):
                self.ids.setdefault(p.piece, i)
        self.unk_id = next((i for i, t in enumerate(self.types) if t == UNKNOWN), -1)
        self.mergeable = {i for i, t in enumerate(self.types) if t in (NORMAL, USER_DEFINED, UNUSED)}
        user_defined = [p.piece for p in model.pieces if p.type == USER_DEFINED]
        self.user_defined = sorted(set(user_defined), key=len, reverse=True)
        self.normalizer = Normalizer(
            model.normalizer, treat_whitespace_as_suffix=model.treat_whitespace_as_suffix, user_defined=user_defined
        )
        self.byte_ids = [self.ids.get(byte_piece(b), self.unk_id) for b in range(256)]
        self.bos_id = self._control_id(model.bos_piece)
        self.eos_id = self._control_id(model.eos_piece)
        self._compiled = None  # the core's SpmEncoder, made when first used (compiled())

    def __reduce__(self):
        """Pickled as its .model's bytes (a worker process hands a file it read to the server): the compiled twin is made again."""
        from .model_file import model_bytes

        return _encoder_of, (model_bytes(self.model),)

    def _control_id(self, piece: str) -> int:
        i = self.ids.get(piece, -1)
        return i if i >= 0 and self.types[i] == CONTROL else -1

    # -- encoding ------------------------------------------------------------
    def symbols(self, normalized: str) -> list[tuple[str, bool]]:
        """The normalized text cut into (symbol, frozen): characters, and user-defined pieces whole and frozen."""
        out: list[tuple[str, bool]] = []
        i = 0
        while i < len(normalized):
            for piece in self.user_defined:
                if normalized.startswith(piece, i):
                    out.append((piece, True))
                    i += len(piece)
                    break
            else:
                out.append((normalized[i], False))
                i += 1
        return out

    def _mergeable(self, piece: str) -> int:
        """The id of piece if the encoder may make it, else -1 (PieceToIdNoReserved, then the unk/reserved check)."""
        i = self.ids.get(piece, -1)
        return i if i in self.mergeable else -1

    def merge(self, normalized: str, steps: list[EncodeStep] | None = None) -> list[tuple[str, int]]:
        """SampleEncode with no dropout: (symbol, id) after every merge by score, UNUSED pieces split again.

        A symbol that is no piece the encoder may make has the <unk> id (-1 where the model has no <unk>).
        """
        cut = self.symbols(normalized)
        if not cut:
            return []
        text = [s for s, _ in cut]
        frozen = [f for _, f in cut]
        n = len(text)
        prev = list(range(-1, n - 1))
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        heap: list[tuple[int, int, int, int]] = []  # (-score key, left, right, length of the pair when pushed)
        unused: dict[str, tuple[str, str]] = {}  # rev_merge: an UNUSED piece -> the two symbols that made it

        def push(left: int, right: int) -> None:
            if left == -1 or right == -1 or frozen[left] or frozen[right]:
                return
            piece = text[left] + text[right]
            i = self._mergeable(piece)
            if i < 0:
                return
            heapq.heappush(heap, (-self.keys[i], left, right, len(piece)))
            if self.types[i] == UNUSED:
                unused[piece] = (text[left], text[right])

        for left in range(n - 1):
            push(left, left + 1)
        while heap:
            _, left, right, size = heapq.heappop(heap)
            # an entry is stale when either symbol has changed since it was pushed
            if not text[left] or not text[right] or len(text[left]) + len(text[right]) != size:
                continue
            text[left] += text[right]
            text[right] = ""
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prev[nxt[right]] = left
            if steps is not None:
                alive = [j for j in range(n) if text[j]]
                i = self.ids[text[left]]
                steps.append(EncodeStep(tuple(text[j] for j in alive), alive.index(left), i, self.model.pieces[i].score))
            push(prev[left], left)
            push(left, nxt[left])
        out: list[tuple[str, int]] = []
        i = 0
        while i != -1:
            self._resegment(text[i], unused, out, 0)
            i = nxt[i]
        return out

    def _resegment(self, piece: str, unused: dict[str, tuple[str, str]], out: list[tuple[str, int]], depth: int) -> None:
        """bpe_model.cc resegment: a piece of type UNUSED is split into the symbols that made it, recursively."""
        i = self.ids.get(piece, -1)
        if depth > MAX_RESEGMENT_DEPTH:
            out.append((piece, i))  # as sentencepiece stops: the piece as it is
        elif i == self.unk_id or i not in self.mergeable:
            out.append((piece, self.unk_id))
        elif self.types[i] != UNUSED:
            out.append((piece, i))
        elif piece not in unused:
            out.append((piece, self.unk_id))
        else:
            left, right = unused[piece]
            self._resegment(left, unused, out, depth + 1)
            self._resegment(right, unused, out, depth + 1)

    def encode(self, text: str | bytes, *, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """The ids SentencePieceProcessor.encode gives text (bytes: as they are, malformed UTF-8 allowed).

        By the compiled core where it is built (bpe/c/spm.c, the same ids), else by `reference`.
        """
        compiled = self.compiled()
        if compiled is not None:
            return compiled.encode(as_bytes(text), add_bos, add_eos)
        return self.reference(text, add_bos=add_bos, add_eos=add_eos)

    def reference(self, text: str | bytes, *, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """encode in Python: normalize, merge by score, resegment, then the unknowns."""
        return self._ids(self.merge(self.normalizer.reference(as_bytes(text)).decode("utf-8")), add_bos, add_eos)

    def compiled(self):
        """The core's SpmEncoder for this model, or None where the core is absent."""
        if self._compiled is None:
            core = compiled_core()
            if core is None:
                return None
            spec = self.model.normalizer
            self._compiled = core.SpmEncoder(
                [(piece.encode(), i) for piece, i in self.ids.items()],
                bytes(min(max(t, 0), 255) for t in self.types),
                self.keys,
                self.normalizer.charsmap.blob if self.normalizer.charsmap is not None else b"",
                spec.add_dummy_prefix,
                spec.remove_extra_whitespaces,
                spec.escape_whitespaces,
                self.model.treat_whitespace_as_suffix,
                [p.encode() for p in self.user_defined],
                self.unk_id,
                self.bos_id,
                self.eos_id,
                self.model.byte_fallback,
                self.byte_ids,
                SEED,
            )
        return self._compiled

    def _ids(self, pieces: Iterable[tuple[str, int]], add_bos: bool, add_eos: bool) -> list[int]:
        ids = [self.bos_id] if add_bos and self.bos_id >= 0 else []
        byte_fallback = self.model.byte_fallback
        previous_unknown = False
        for piece, i in pieces:
            unknown = i == self.unk_id or (i >= 0 and self.types[i] == UNKNOWN)
            if unknown and byte_fallback:
                ids.extend(self.byte_ids[b] for b in piece.encode())
            elif not (unknown and previous_unknown):  # a run of unknown symbols is one <unk>
                ids.append(i)
            previous_unknown = unknown
        if add_eos and self.eos_id >= 0:
            ids.append(self.eos_id)
        return ids

    def encode_as_pieces(self, text: str | bytes) -> list[str]:
        """The pieces of encode(text), as SentencePieceProcessor.encode(out_type=str) names them."""
        out: list[str] = []
        previous_unknown = False
        for piece, i in self.merge(self.normalizer.normalize(as_bytes(text))):
            unknown = i == self.unk_id or (i >= 0 and self.types[i] == UNKNOWN)
            if unknown and self.model.byte_fallback:
                out.extend(byte_piece(b) for b in piece.encode())
            elif unknown and previous_unknown:
                out[-1] += piece
            else:
                out.append(piece)
            previous_unknown = unknown
        return out

    def encode_steps(self, text: str | bytes) -> tuple[str, list[EncodeStep]]:
        """(the normalized text, each merge the encoder made in order): what the Encode page steps through."""
        normalized = self.normalizer.normalize(as_bytes(text))
        steps: list[EncodeStep] = []
        self.merge(normalized, steps)
        return normalized, steps

    # -- decoding ------------------------------------------------------------
    def decode(self, ids: Sequence[int], *, controls: bool = False, raw: bool = False) -> str:
        """DecodeIds: the text the ids stand for; an id outside the vocabulary is refused in one sentence.

        Not sentencepiece's, for bpe decode: controls writes a control piece (<s>, </s>) as its text, where
        sentencepiece writes nothing; raw keeps the bytes of byte pieces that are not UTF-8, each invalid one as
        the surrogate surrogateescape makes of it, where sentencepiece writes U+FFFD.
        """
        spec = self.model.normalizer
        out: list[str] = []
        written = False  # detokenized is not empty
        queue = bytearray()
        at_start = True  # is_bos_ws: the dummy prefix may still be ahead

        def flush() -> None:
            nonlocal written
            if queue:
                out.append(_bytes_as_text(bytes(queue), raw))
                written = written or bool(out[-1])
                queue.clear()

        for i in ids:
            if not 0 <= i < len(self.pieces):
                raise ValueError(f"Cannot decode id {i}: the vocabulary has ids 0 to {len(self.pieces) - 1}.")
            piece, kind = self.pieces[i], self.types[i]
            if kind == BYTE:
                queue.append(int(piece[3:5], 16))
                continue
            flush()
            if written:
                at_start = False
            if kind == CONTROL:
                if controls:
                    out.append(piece)
                    written = written or bool(piece)
                continue
            stripped = False
            if at_start and (spec.add_dummy_prefix or spec.remove_extra_whitespaces):
                if piece.startswith(SPACE):
                    piece, stripped = piece[1:], True
                if spec.remove_extra_whitespaces:
                    stripped = False
            if i == self.unk_id or kind == UNKNOWN:
                text = self.model.unk_surface
            else:
                text = piece.replace(SPACE, " ")
            out.append(text)
            written = written or bool(text)
            if stripped or written:
                at_start = False
        flush()
        return "".join(out)


def _encoder_of(data: bytes) -> Encoder:
    """An Encoder built again from its .model's bytes (Encoder.__reduce__)."""
    from .model_file import parse_model

    return Encoder(parse_model(data))


def _bytes_as_text(data: bytes, raw: bool = False) -> str:
    """Byte pieces' bytes as text: each malformed byte U+FFFD (ProcessByteQueue); raw: its surrogateescape surrogate."""
    out, pos = [], 0
    while pos < len(data):
        n = char_length(data, pos)
        out.append(data[pos : pos + n].decode("utf-8") if n else chr(0xDC00 + data[pos]) if raw else "\ufffd")
        pos += n or 1
    return "".join(out)
