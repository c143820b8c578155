"""A SentencePiece model as data: its pieces (each a string, a score and a type) and the specs it carries.

What sentencepiece's ModelProto holds, without protobuf: `pieces` in id order, the `normalizer` spec (the
character map and the whitespace switches the encoder needs), and the `trainer_spec` fields as they were written
(model_type, vocab_size, byte_fallback, the meta pieces' names...), keyed by their proto names.

    model.pieces[5]          # Piece(piece='▁t', score=-2.0, type=1)
    model.id_of["▁the"]      # its id
    model.byte_fallback      # True: unknown characters become <0xNN> pieces

The types (ModelProto.SentencePiece.Type): NORMAL 1 (a piece the encoder may make), UNKNOWN 2 (<unk>), CONTROL 3
(<s>, </s>: an id, never made from text), USER_DEFINED 4 (always one piece, matched in the raw text), UNUSED 5
(merged, then split again into its halves), BYTE 6 (<0x00>..<0xFF>, for byte fallback).

Not here: reading and writing the file (model_file.py), training (trainer.py), encoding (encoder.py).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .normalizer import NormalizerSpec

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
TYPE_NAMES = {NORMAL: "normal", UNKNOWN: "unknown", CONTROL: "control", USER_DEFINED: "user-defined", UNUSED: "unused", BYTE: "byte"}
UNIGRAM, BPE, WORD, CHAR = 1, 2, 3, 4
MODEL_TYPES = {UNIGRAM: "unigram", BPE: "bpe", WORD: "word", CHAR: "char"}


def byte_piece(b: int) -> str:
    """The piece byte fallback writes for byte b: 65 -> '<0x41>' (model_interface.cc ByteToPiece)."""
    return f"<0x{b:02X}>"


@dataclass(frozen=True, slots=True)
class Piece:
    piece: str
    score: float
    type: int = NORMAL


@dataclass(frozen=True, eq=False)
class SentencePieceModel:
    """A model: pieces in id order, the normalizer spec, and the trainer spec's fields (proto names -> values)."""

    pieces: tuple[Piece, ...]
    normalizer: NormalizerSpec
    trainer_spec: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pieces", tuple(self.pieces))
        object.__setattr__(self, "trainer_spec", MappingProxyType(dict(self.trainer_spec)))

    def _spec(self, name: str, default: object) -> object:
        value = self.trainer_spec.get(name)
        return default if value is None else value

    @property
    def model_type(self) -> int:
        return int(self._spec("model_type", UNIGRAM))  # the proto's default is UNIGRAM

    @property
    def byte_fallback(self) -> bool:
        return bool(self._spec("byte_fallback", False))

    @property
    def treat_whitespace_as_suffix(self) -> bool:
        return bool(self._spec("treat_whitespace_as_suffix", False))

    @property
    def unk_piece(self) -> str:
        return str(self._spec("unk_piece", "") or "<unk>")

    @property
    def bos_piece(self) -> str:
        return str(self._spec("bos_piece", "") or "<s>")

    @property
    def eos_piece(self) -> str:
        return str(self._spec("eos_piece", "") or "</s>")

    @property
    def pad_piece(self) -> str:
        return str(self._spec("pad_piece", "") or "<pad>")

    @property
    def unk_surface(self) -> str:
        return str(self._spec("unk_surface", " \u2047 "))

    @functools.cached_property
    def id_of(self) -> dict[str, int]:
        """piece -> id (a piece listed twice keeps its first id; model_file refuses such a file anyway)."""
        ids: dict[str, int] = {}
        for i, p in enumerate(self.pieces):
            ids.setdefault(p.piece, i)
        return ids

    def __len__(self) -> int:
        return len(self.pieces)

    def __repr__(self) -> str:
        kind = MODEL_TYPES.get(self.model_type, str(self.model_type))
        return f"SentencePieceModel({kind}, {len(self.pieces):,} pieces, normalizer {self.normalizer.name!r}, byte_fallback={self.byte_fallback})"
