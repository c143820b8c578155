"""Reading and writing SentencePiece's `.model` files (a serialized ModelProto) by hand, without protobuf.

The file is protobuf's wire format, which is small enough to write out here: a message is a run of fields, each
a key (field number * 8 + wire type, as a varint) and then its value -- a varint (type 0: ints, bools, enums;
a negative int32 is ten bytes), eight or four little-endian bytes (types 1 and 5: a float is 5), or a varint
length and that many bytes (type 2: strings, bytes, and messages inside messages). sentencepiece_model.proto:

    ModelProto      1 pieces (repeated SentencePiece)  2 trainer_spec  3 normalizer_spec  5 denormalizer_spec
    SentencePiece   1 piece (string)  2 score (float)  3 type (enum, NORMAL 1 when absent)
    NormalizerSpec  1 name  2 precompiled_charsmap  3 add_dummy_prefix  4 remove_extra_whitespaces  5 escape_whitespaces
    TrainerSpec     3 model_type  4 vocab_size  10 character_coverage  35 byte_fallback ... (TRAINER_FIELDS)

A field that is absent takes the proto's default (model_type: UNIGRAM; add_dummy_prefix: true ...), so a writer
writes only what differs from the default, in field-number order, as protobuf's C++ does: `write_model` of a
model trained here is byte for byte the file sentencepiece writes for the same settings.

Reading is for files from anywhere, so it is bounded and says no in one sentence: at most 64 MB, pieces under
8,000 bytes (sentencepiece's own limit), UTF-8, none empty or twice, one <unk>, all 256 byte pieces when
byte_fallback is on, a character map that holds together; and a model that is not BPE (a unigram model, most
often) is refused, since only BPE is encoded here; so is a model of over 2,097,152 pieces. Unknown fields are
skipped, as protobuf skips them.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Iterator
from pathlib import Path

from ..atomic import write_bytes
from .model import BPE, BYTE, MODEL_TYPES, NORMAL, UNKNOWN, UNUSED, Piece, SentencePieceModel, byte_piece
from .normalizer import CharsMap, NormalizerSpec

MAX_FILE = 64 << 20  # bytes: Llama 2's tokenizer.model is 0.5 MB, Gemma's (256k pieces) 4 MB
MAX_PIECE = 8000  # bytes in a piece (model_interface.cc kMaxPieceSize)
MAX_PIECES = 1 << 21  # pieces in a model: Gemma's 256k is far below; a file of millions of tiny pieces is refused
VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5

# TrainerSpec's fields: name -> (number, kind); kinds: str, bytes, int (int32/int64/uint64/enum), bool, float, strs (repeated)
TRAINER_FIELDS: dict[str, tuple[int, str]] = {
    "input": (1, "strs"),
    "model_prefix": (2, "str"),
    "model_type": (3, "int"),
    "vocab_size": (4, "int"),
    "accept_language": (5, "strs"),
    "self_test_sample_size": (6, "int"),
    "input_format": (7, "str"),
    "character_coverage": (10, "float"),
    "input_sentence_size": (11, "int"),
    "mining_sentence_size": (12, "int"),
    "training_sentence_size": (13, "int"),
    "seed_sentencepiece_size": (14, "int"),
    "shrinking_factor": (15, "float"),
    "num_threads": (16, "int"),
    "num_sub_iterations": (17, "int"),
    "max_sentence_length": (18, "int"),
    "shuffle_input_sentence": (19, "bool"),
    "max_sentencepiece_length": (20, "int"),
    "split_by_unicode_script": (21, "bool"),
    "split_by_whitespace": (22, "bool"),
    "split_by_number": (23, "bool"),
    "treat_whitespace_as_suffix": (24, "bool"),
    "split_digits": (25, "bool"),
    "allow_whitespace_only_pieces": (26, "bool"),
    "control_symbols": (30, "strs"),
    "user_defined_symbols": (31, "strs"),
    "vocabulary_output_piece_score": (32, "bool"),
    "hard_vocab_limit": (33, "bool"),
    "use_all_vocab": (34, "bool"),
    "byte_fallback": (35, "bool"),
    "required_chars": (36, "str"),
    "unk_id": (40, "int"),
    "bos_id": (41, "int"),
    "eos_id": (42, "int"),
    "pad_id": (43, "int"),
    "unk_surface": (44, "str"),
    "unk_piece": (45, "str"),
    "bos_piece": (46, "str"),
    "eos_piece": (47, "str"),
    "pad_piece": (48, "str"),
    "train_extremely_large_corpus": (49, "bool"),
    "enable_differential_privacy": (50, "bool"),
    "differential_privacy_noise_level": (51, "float"),
    "differential_privacy_clipping_threshold": (52, "int"),
    "pretokenization_delimiter": (53, "str"),
    "seed_sentencepieces_file": (54, "str"),
    "auto_character_coverage": (55, "bool"),
}
_BY_NUMBER = {number: (name, kind) for name, (number, kind) in TRAINER_FIELDS.items()}


class ModelFileError(ValueError):
    """A .model file that cannot be read; the message is one sentence naming it."""


# ---------------------------------------------------------------------------
# the wire format


def _varint(value: int) -> bytes:
    """A varint: 7 bits a byte, low first, the high bit set on all but the last; a negative int as its 64-bit two's complement."""
    value &= (1 << 64) - 1
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _field(number: int, kind: str, value: object) -> bytes:
    """One field, encoded: _field(4, 'int', 8000) -> b' \\xc0>'."""
    if kind in ("str", "bytes"):
        data = value.encode() if isinstance(value, str) else bytes(value)
        return _key(number, LENGTH) + _varint(len(data)) + data
    if kind == "strs":
        return b"".join(_field(number, "str", item) for item in value)
    if kind == "float":
        return _key(number, FIXED32) + struct.pack("<f", value)
    if kind in ("int", "bool"):
        return _key(number, VARINT) + _varint(int(value))
    raise AssertionError(kind)


def _fields(data: bytes, what: str) -> Iterator[tuple[int, int, object]]:
    """(field number, wire type, value) of each field of a message: a varint as int, fixed as bytes, length-delimited as bytes."""
    pos, n = 0, len(data)
    while pos < n:
        key, pos = _read_varint(data, pos, what)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ModelFileError(f"{what} is not a SentencePiece model: it has a field numbered 0.")
        if wire == VARINT:
            value, pos = _read_varint(data, pos, what)
        elif wire in (FIXED64, FIXED32):
            size = 8 if wire == FIXED64 else 4
            if pos + size > n:
                raise ModelFileError(f"{what} is cut off inside a field.")
            value, pos = data[pos : pos + size], pos + size
        elif wire == LENGTH:
            size, pos = _read_varint(data, pos, what)
            if pos + size > n:
                raise ModelFileError(f"{what} is cut off inside a field.")
            value, pos = data[pos : pos + size], pos + size
        else:
            raise ModelFileError(f"{what} is not a SentencePiece model: it has a field of wire type {wire}.")
        yield number, wire, value


def _read_varint(data: bytes, pos: int, what: str) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ModelFileError(f"{what} is cut off inside a number.")
        if shift >= 64:
            raise ModelFileError(f"{what} is not a SentencePiece model: a number in it is longer than ten bytes.")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value & ((1 << 64) - 1), pos


def _int32(value: int) -> int:
    """A varint read back as a signed int (int32 -1 is written as 2**64 - 1)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _text(value: object, what: str, field: str) -> str:
    if not isinstance(value, bytes):
        raise ModelFileError(f"{what} is not a SentencePiece model: its {field} is not a string.")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelFileError(f"{what} has a {field} that is not UTF-8.") from None


# ---------------------------------------------------------------------------
# writing


def model_bytes(model: SentencePieceModel) -> bytes:
    """The ModelProto of a model, serialized as protobuf's C++ does (fields in number order, defaults left out)."""
    out = bytearray()
    for p in model.pieces:
        body = _field(1, "str", p.piece) + _field(2, "float", p.score)
        if p.type != NORMAL:
            body += _field(3, "int", p.type)
        out += _field(1, "bytes", body)
    trainer = b"".join(
        _field(number, kind, model.trainer_spec[name])
        for name, (number, kind) in sorted(TRAINER_FIELDS.items(), key=lambda item: item[1][0])
        if name in model.trainer_spec
    )
    out += _field(2, "bytes", trainer)
    out += _field(3, "bytes", normalizer_bytes(model.normalizer))
    return bytes(out)


def normalizer_bytes(spec: NormalizerSpec) -> bytes:
    """A NormalizerSpec: its name and map always (an empty map for identity, as sentencepiece writes it), switches when off."""
    out = _field(1, "str", spec.name) + _field(2, "bytes", spec.precompiled_charsmap)
    for number, on in ((3, spec.add_dummy_prefix), (4, spec.remove_extra_whitespaces), (5, spec.escape_whitespaces)):
        if not on:
            out += _field(number, "bool", False)
    return out


def write_model(model: SentencePieceModel, path: str | Path) -> None:
    """Write tokenizer.model, atomically (bpe.atomic): SentencePieceProcessor(model_file=path) loads it."""
    write_bytes(path, model_bytes(model))


# ---------------------------------------------------------------------------
# reading


def read_model(path: str | Path) -> SentencePieceModel:
    """A SentencePiece BPE model from a .model file; anything else is refused with one sentence (ModelFileError)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE:
            raise ModelFileError(f"{path} is {size / 2**20:,.0f} MB; a SentencePiece model is at most {MAX_FILE >> 20} MB here.")
        data = path.read_bytes()
    except OSError as error:
        raise ModelFileError(f"Cannot read {path}: {error.strerror or error}.") from None
    return parse_model(data, str(path))


def parse_model(data: bytes, what: str = "The model") -> SentencePieceModel:
    """parse_model(open('tokenizer.model', 'rb').read()) -> SentencePieceModel; refusals as in read_model."""
    if len(data) > MAX_FILE:
        raise ModelFileError(f"{what} is over {MAX_FILE >> 20} MB; a SentencePiece model is at most that here.")
    if not data:
        raise ModelFileError(f"{what} is empty, not a SentencePiece model.")
    pieces: list[Piece] = []
    trainer: dict[str, object] = {}
    normalizer = NormalizerSpec(name="", precompiled_charsmap=b"")
    for number, wire, value in _fields(data, what):
        if number == 1 and wire == LENGTH:
            if len(pieces) >= MAX_PIECES:
                raise ModelFileError(f"{what} has more than {MAX_PIECES:,} pieces; this tool reads models of at most that many.")
            pieces.append(_piece(value, what))
        elif number == 2 and wire == LENGTH:
            trainer.update(_trainer(value, what))
        elif number == 3 and wire == LENGTH:
            normalizer = _normalizer(value, what)
        elif number in (1, 2, 3):
            raise ModelFileError(f"{what} is not a SentencePiece model: field {number} has the wrong type.")
    if trainer.get("byte_fallback"):  # SentencePieceProcessor::Load: a "\0" piece beside <0x00> is made UNUSED
        pieces = [Piece(p.piece, p.score, UNUSED) if p.piece == "\0" else p for p in pieces]
    model = SentencePieceModel(tuple(pieces), normalizer, trainer)
    check_model(model, what)
    return model


def _piece(data: bytes, what: str) -> Piece:
    piece, score, kind = None, 0.0, NORMAL
    for number, wire, value in _fields(data, what):
        if number == 1 and wire == LENGTH:
            if len(value) >= MAX_PIECE:
                raise ModelFileError(f"{what} has a piece of {len(value):,} bytes; sentencepiece refuses pieces of {MAX_PIECE:,} or more.")
            piece = _text(value, what, "piece")
        elif number == 2 and wire == FIXED32:
            score = struct.unpack("<f", value)[0]
        elif number == 3 and wire == VARINT:
            kind = _int32(value)
    if not piece:
        raise ModelFileError(f"{what} has an empty piece; sentencepiece refuses such a model.")
    return Piece(piece, score, kind)


def _trainer(data: bytes, what: str) -> dict[str, object]:
    fields: dict[str, object] = {}
    for number, wire, value in _fields(data, what):
        if number not in _BY_NUMBER:
            continue
        name, kind = _BY_NUMBER[number]
        expected = {"str": LENGTH, "strs": LENGTH, "bytes": LENGTH, "float": FIXED32, "int": VARINT, "bool": VARINT}[kind]
        if wire != expected:
            raise ModelFileError(f"{what} is not a SentencePiece model: its trainer_spec.{name} has the wrong type.")
        if kind == "strs":
            fields[name] = (*fields.get(name, ()), _text(value, what, f"trainer_spec.{name}"))
        elif kind == "str":
            fields[name] = _text(value, what, f"trainer_spec.{name}")
        elif kind == "float":
            fields[name] = struct.unpack("<f", value)[0]
        elif kind == "bool":
            fields[name] = bool(value)
        else:
            fields[name] = _int32(value)
    return fields


def _normalizer(data: bytes, what: str) -> NormalizerSpec:
    name, charsmap, switches = "", b"", {}
    for number, wire, value in _fields(data, what):
        if number == 1 and wire == LENGTH:
            name = _text(value, what, "normalizer name")
        elif number == 2 and wire == LENGTH:
            charsmap = bytes(value)
        elif number in (3, 4, 5) and wire == VARINT:
            switches[("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces")[number - 3]] = bool(value)
    return NormalizerSpec(name=name, precompiled_charsmap=charsmap, **switches)


def check_model(model: SentencePieceModel, what: str = "The model") -> None:
    """What sentencepiece checks when it loads a model (ModelInterface::InitializePieces, Normalizer::Init), for BPE models."""
    kind = model.model_type
    if kind != BPE:
        name = MODEL_TYPES.get(kind, f"type {kind}")
        raise ModelFileError(f"{what} is a {name} model; this tool reads SentencePiece BPE models only (model_type=bpe).")
    if not model.pieces:
        raise ModelFileError(f"{what} has no pieces.")
    seen: set[str] = set()
    unk = -1
    bytes_found: set[int] = set()
    byte_ids = {byte_piece(b): b for b in range(256)}
    for i, p in enumerate(model.pieces):
        if p.type not in (1, 2, 3, 4, 5, 6):
            raise ModelFileError(f"{what} has a piece of unknown type {p.type} (id {i}).")
        if p.piece == "\0" and p.type == UNUSED:
            continue
        if "\0" in p.piece:
            raise ModelFileError(f"{what} has a piece with a NUL character (id {i}).")
        if p.piece in seen:
            raise ModelFileError(f"{what} defines the piece {p.piece!r} twice.")
        seen.add(p.piece)
        if p.type == UNKNOWN:
            if unk >= 0:
                raise ModelFileError(f"{what} defines <unk> twice (ids {unk} and {i}).")
            unk = i
        if p.type == BYTE:
            if not model.byte_fallback:
                raise ModelFileError(f"{what} has the byte piece {p.piece} although byte_fallback is off.")
            if p.piece not in byte_ids:
                raise ModelFileError(f"{what} has an invalid byte piece {p.piece!r}.")
            bytes_found.add(byte_ids[p.piece])
    if unk < 0 and not model.byte_fallback:
        raise ModelFileError(f"{what} has no <unk> piece (and no byte fallback).")
    if model.byte_fallback and len(bytes_found) != 256:
        raise ModelFileError(f"{what} has byte_fallback on but only {len(bytes_found)} of the 256 byte pieces.")
    if model.normalizer.precompiled_charsmap:
        try:
            CharsMap(model.normalizer.precompiled_charsmap)
        except ValueError as error:
            raise ModelFileError(f"{what}: {error}") from None


# ---------------------------------------------------------------------------
# a normalizer's character map, from a .model or a tokenizer.json


def charsmap_of(path: str | Path) -> CharsMap | None:
    """The character map a SentencePiece `.model` or a HuggingFace `tokenizer.json` carries (None: it has none).

    In a tokenizer.json the map is a `Precompiled` normalizer's `precompiled_charsmap`, base64, possibly inside
    a `Sequence`.
    """
    path = Path(path)
    if path.suffix == ".json":
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"Cannot read {path}: {error}.") from None
        blob = _precompiled(config.get("normalizer") if isinstance(config, dict) else None)
        return CharsMap(blob) if blob else None
    spec = read_model(path).normalizer
    return CharsMap(spec.precompiled_charsmap) if spec.precompiled_charsmap else None


def _precompiled(normalizer: object) -> bytes | None:
    if not isinstance(normalizer, dict):
        return None
    if normalizer.get("type") == "Precompiled":
        try:
            return base64.b64decode(normalizer.get("precompiled_charsmap") or "", validate=True)
        except ValueError:
            raise ValueError("The tokenizer.json's precompiled_charsmap is not base64.") from None
    for inner in normalizer.get("normalizers") or ():
        if (found := _precompiled(inner)) is not None:
            return found
    return None
