"""The SentencePiece family's tokenizer, with the everyday interface of the byte-level Tokenizer: what Tokenizer.load
returns for a .model file or a tokenizer.json of the family (Llama 2's, Mistral's).

    tok = Tokenizer.load("../shared/llama2/tokenizer.json")    # a SentencePieceTokenizer: tok.family == "sentencepiece"
    tok.encode("Hello world")                                   # [15043, 3186]
    tok.encode("Hello world", add_special_tokens=True)          # [1, 15043, 3186]: <s> first, as HuggingFace's post-processor puts it
    tok.decode([1, 15043, 3186])                                # 'Hello world'
    tok.pieces[15043], tok.vocab[15043]                         # ('▁Hello', b' Hello')

Whose ids: encoding follows the tool whose file it is (`follows`): a .model as sentencepiece 0.2.3's
SentencePieceProcessor (bpe/sentencepiece/encoder.py: merges by piece score), a tokenizer.json as HuggingFace
`tokenizers` (bpe/sentencepiece/hf.py: merges by rank). The two agree on most text, not all (hf.py says where).

- encode(text): no <s> by default, as CS336's and tiktoken's encode add nothing; add_special_tokens=True adds what
  HuggingFace's post-processor adds (Llama 2's and Mistral's: <s> first; nothing for a tokenizer.json without one),
  and for a .model the bos piece first, as sentencepiece's encode(add_bos=True) and transformers' LlamaTokenizer do.
  Bytes are taken as they are by a .model (sentencepiece reads malformed UTF-8 as U+FFFD a byte); a tokenizer.json
  takes text, so bytes are decoded first, invalid UTF-8 as U+FFFD (Python's errors="replace").
- Special tokens (<unk>, <s>, </s>, ...): a tokenizer.json encodes their text as their ids wherever the text spells
  them, as `tokenizers` does; a .model encodes it as text, as sentencepiece does (only user-defined pieces are
  matched in text there).
- encode_iterable(lines): text given in pieces is read as lines: each line (cut at '\\n', which is not encoded) is
  encoded on its own, as spm_encode encodes a file, and the ids follow one another. Exactly:
  [i for line in text.split("\\n") (less the empty one after a last '\\n') for i in encode(line)]. A line is held
  whole. This family works on sentences: a whole file as one text would be one word to merge.
- decode(ids) is the tool's: '▁' back to spaces, the first one dropped, byte pieces joined into characters (U+FFFD
  for bytes that are not UTF-8), special tokens skipped (skip_special_tokens=False writes them). decode_bytes keeps
  the bytes of byte pieces as they are, invalid UTF-8 included; it is not lossless as the byte-level one is, since
  the normalizer changed the text before encoding (spaces, NFKC).
- vocab: each id's bytes as decoding writes them in the middle of a text ('▁the' -> b' the', '<0x0A>' -> b'\\n',
  '<s>' -> b'<s>'); ids is its inverse (bytes -> id, the first id where two pieces give the same bytes); pieces
  names every id as the file does ('▁the', '<0x0A>'), and piece_ids is its inverse.

Not here: training (bpe/sentencepiece/), the byte-level family (tokenizer.py), the files (files/formats.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..files import formats, load
from ..sentencepiece.encoder import Encoder
from ..sentencepiece.hf import HFTokenizer
from ..sentencepiece.model import BYTE, CONTROL, NORMAL, UNKNOWN, SentencePieceModel
from ..sentencepiece.normalizer import SPACE
from .tiktoken_api import _batch

_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")  # a byte piece's name: '<0x0A>'
_STREAMED_DECODERS = {"Replace", "ByteFallback", "Fuse", "Strip", "Metaspace", "Sequence"}  # see decode_blocks


@dataclass(frozen=True)
class PieceStep:
    """One step of encoding a word: the symbols after it. A word's first step is its start (at, id, score and rank None)."""

    symbols: tuple[str, ...]  # the pieces after this step, as the file names them ('▁the', '<0xF0>')
    at: int | None  # where the merged symbol is in `symbols`
    id: int | None  # the piece it made
    score: float | None  # a .model's: the piece's score (the encoder merges the highest first)
    rank: int | None  # a tokenizer.json's: the merge's rank (the lowest first); with neither, the word was taken whole


@dataclass(frozen=True)
class EncodedWord:
    """What the merges of one word did: the start, each merge, and the word's ids."""

    text: str  # what the merges ran on: a .model's normalized text, or one pre-token of a tokenizer.json
    steps: tuple[PieceStep, ...]
    ids: tuple[int, ...]  # its ids: unknown symbols as <unk> or bytes, UNUSED pieces split again
    special: bool = False  # a special token of a tokenizer.json, cut out of the text before the normalizer


class SentencePieceTokenizer:
    """A tokenizer of the SentencePiece family (a .model, or a tokenizer.json of the family); see the module docstring.

    Attributes: family ("sentencepiece"), follows ("sentencepiece" or "tokenizers": whose ids it gives), name,
    model (the SentencePieceModel of a .model or of training; None for a tokenizer.json), encoder (the family's
    encoder underneath: bpe.sentencepiece's Encoder or HFTokenizer), pieces, piece_ids, vocab, ids,
    special_tokens, n_vocab, max_token_value, eot_token.
    """

    family = "sentencepiece"

    def __init__(self, encoder: Encoder | HFTokenizer, *, name: str = "") -> None:
        if not isinstance(encoder, (Encoder, HFTokenizer)):
            raise ValueError(f"A SentencePieceTokenizer is made of an Encoder or an HFTokenizer, not {type(encoder).__name__}.")
        self.encoder = encoder
        self.name = name
        self.model: SentencePieceModel | None = encoder.model if isinstance(encoder, Encoder) else None
        self.follows = "sentencepiece" if self.model is not None else "tokenizers"
        if self.model is not None:
            self.pieces: list[str] = list(encoder.pieces)
            kinds = encoder.types
            self.special_tokens: tuple[str, ...] = tuple(p for p, t in zip(self.pieces, kinds, strict=True) if t in (UNKNOWN, CONTROL))
            byte_ids = {i for i, t in enumerate(kinds) if t == BYTE}
        else:
            self.pieces = [""] * (max(encoder.id_to_token, default=-1) + 1)
            for i, token in encoder.id_to_token.items():
                self.pieces[i] = token
            self.special_tokens = tuple(t.content for t in sorted(encoder.added, key=lambda t: t.id) if t.special)
            byte_ids = {i for i, p in enumerate(self.pieces) if _BYTE_TOKEN.fullmatch(p) and i not in self._special_ids}
        self.piece_ids: dict[str, int] = {}
        for i, piece in enumerate(self.pieces):
            if piece:
                self.piece_ids.setdefault(piece, i)
        specials = set(self.special_tokens)
        self.vocab: dict[int, bytes] = {}
        for i, piece in enumerate(self.pieces):
            if not piece:
                continue
            if i in byte_ids:
                self.vocab[i] = bytes([int(piece[3:5], 16)])
            elif piece in specials:
                self.vocab[i] = piece.encode()
            else:
                self.vocab[i] = piece.replace(SPACE, " ").encode()
        self.ids: dict[bytes, int] = {}
        for i, token in self.vocab.items():
            self.ids.setdefault(token, i)
        self._byte_ids = frozenset(byte_ids)

    # -- building and loading ------------------------------------------------
    @classmethod
    def from_model(cls, model: SentencePieceModel, *, name: str = "") -> SentencePieceTokenizer:
        """The tokenizer of a SentencePiece BPE model (bpe.sentencepiece.train's, or read_model's)."""
        return cls(Encoder(model), name=name)

    @classmethod
    def from_loaded(cls, loaded: load.Loaded, *, special_tokens: Sequence[str] | None = None) -> SentencePieceTokenizer:
        """The tokenizer a file of the family held (formats.read, formats.read_uploads)."""
        if loaded.sentencepiece is None:
            raise ValueError("This is a byte-level tokenizer; Tokenizer.from_loaded makes it.")
        extra = [t for t in special_tokens or () if t not in loaded.special_tokens]
        if extra:
            raise ValueError(
                f"A SentencePiece tokenizer's special tokens are its meta pieces ({', '.join(loaded.special_tokens) or 'none'}); "
                f"{extra[0]!r} cannot be added."
            )
        return cls(loaded.sentencepiece)

    def __reduce__(self):
        """Pickled as its file (a worker of bpe encode builds it again): its encoder pickles as the .model or the tokenizer.json."""
        return SentencePieceTokenizer, (self.encoder,), {"name": self.name}

    def __setstate__(self, state: dict) -> None:
        self.name = state["name"]

    def __repr__(self) -> str:
        where = "a .model, as sentencepiece" if self.model is not None else "a tokenizer.json, as HuggingFace tokenizers"
        return f"SentencePieceTokenizer({self.name or 'unnamed'}: {len(self.vocab):,} pieces from {where} encodes)"

    # -- saving ----------------------------------------------------------------
    def files(self) -> formats.Texts:
        """Every file that holds it: tokenizer.model (bytes; from a .model or training) and tokenizer.json."""
        return formats.files_of(self._loaded)

    def save(self, directory: str | Path) -> list[Path]:
        """Write its files to directory as formats.save does (all or nothing, a manifest last); return the paths."""
        return formats.save(directory, self.files())

    @cached_property
    def _loaded(self) -> load.Loaded:
        fmt = load.SPM_MODEL_FORMAT if self.model is not None else "huggingface"
        return load.Loaded([], self.special_tokens, format=fmt, recorded=True, sentencepiece=self.encoder)

    # -- what it is ------------------------------------------------------------
    @property
    def max_token_value(self) -> int:
        return len(self.pieces) - 1

    @property
    def n_vocab(self) -> int:
        """max_token_value + 1, as tiktoken counts it."""
        return len(self.pieces)

    @property
    def eot_token(self) -> int:
        """The id of the end-of-text piece, </s> (the model's eos piece); KeyError if it has none (as tiktoken's eot_token)."""
        if self.model is not None:
            if self.encoder.eos_id < 0:
                raise KeyError(self.model.eos_piece)
            return self.encoder.eos_id
        if "</s>" not in self.special_tokens:
            raise KeyError("</s>")
        return self.piece_ids["</s>"]

    @cached_property
    def _special_ids(self) -> frozenset[int]:
        if self.model is not None:
            return frozenset(self.piece_ids[t] for t in self.special_tokens)
        return frozenset(t.id for t in self.encoder.added if t.special)

    # -- encoding -------------------------------------------------------------
    def encode(self, text: str | bytes, *, add_special_tokens: bool = False) -> list[int]:
        """The ids of text, as the tool whose file it is gives them (see the module docstring).

        add_special_tokens=True adds what HuggingFace's post-processor adds (Llama 2's, Mistral's: <s> first),
        or for a .model its bos piece first (sentencepiece's add_bos); False (the default) adds nothing.
        """
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text) if self.model is not None else bytes(text).decode("utf-8", "replace")
        elif not isinstance(text, str):
            raise ValueError(f"encode takes text (str or bytes), not {type(text).__name__}.")
        if self.model is not None:
            return self.encoder.encode(text, add_bos=add_special_tokens)
        return self.encoder.encode(text, add_special_tokens)

    def encode_batch(self, texts: Sequence[str | bytes], *, num_threads: int = 8, add_special_tokens: bool = False) -> list[list[int]]:
        """encode() of each text, in order, on num_threads threads."""
        return _batch(lambda t: self.encode(t, add_special_tokens=add_special_tokens), texts, num_threads)

    def encode_iterable(self, iterable: Iterable[str | bytes], *, add_special_tokens: bool = False) -> Iterator[int]:
        """The ids of text given in pieces, read as lines: each line encoded on its own, its '\\n' not encoded.

        Pieces may be cut anywhere (a file's blocks, its lines with their '\\n'); they are all str or all bytes.
        The same ids as encode() of each line, one line after another (see the module docstring).
        """
        carry: str | bytes | None = None
        for piece in iterable:
            if not isinstance(piece, (str, bytes, bytearray)):
                raise ValueError(f"encode_iterable takes pieces of text (str or bytes), not {type(piece).__name__}.")
            piece = bytes(piece) if isinstance(piece, bytearray) else piece
            if carry is None:
                carry = piece[:0]
            elif type(piece) is not type(carry):
                raise ValueError("encode_iterable takes pieces that are all str or all bytes, not a mix of the two.")
            newline = "\n" if isinstance(piece, str) else b"\n"
            *lines, carry = (carry + piece).split(newline)
            for line in lines:
                yield from self.encode(line, add_special_tokens=add_special_tokens)
        if carry:
            yield from self.encode(carry, add_special_tokens=add_special_tokens)

    def encode_steps(self, text: str) -> list[EncodedWord]:
        """Encoding shown: each word the merges ran on, from its start through each merge in order.

        A .model's encoder merges the whole normalized text as one word, the piece of highest score first; a
        tokenizer.json's merges each pre-token on its own, the merge of lowest rank first, and its special
        tokens are words of their own. The words' ids, one after another, are encode(text)'s.
        """
        if self.model is not None:
            return self._encode_steps_by_score(text)
        words = []
        hf = self.encoder
        for piece, token in hf.pre_tokens(text):
            if token is not None:
                words.append(EncodedWord(piece, (PieceStep((piece,), None, None, None, None),), (token,), special=True))
                continue
            if not piece:
                continue
            start = PieceStep(tuple(self.pieces[i] for i in hf.symbols(piece)), None, None, None, None)
            if hf.ignore_merges and piece in hf.vocab:  # a pre-token that is a piece is that piece, no merge
                whole = PieceStep((piece,), 0, hf.vocab[piece], None, None)
                words.append(EncodedWord(piece, (start, whole), (hf.vocab[piece],)))
                continue
            steps = [start] + [
                PieceStep(tuple(self.pieces[i] for i in ids), at, ids[at], None, rank) for ids, at, rank in hf.word_steps(piece)
            ]
            words.append(EncodedWord(piece, tuple(steps), tuple(hf.word(piece))))
        return words

    def _encode_steps_by_score(self, text: str) -> list[EncodedWord]:
        normalized, merges = self.encoder.encode_steps(text)
        if not normalized:
            return []
        start = PieceStep(tuple(s for s, _ in self.encoder.symbols(normalized)), None, None, None, None)
        steps = [PieceStep(tuple(s.symbols), s.at, s.id, s.score, None) for s in merges]
        return [EncodedWord(normalized, (start, *steps), tuple(self.encode(text)))]

    # -- decoding -------------------------------------------------------------
    def decode(self, ids: Iterable[int], *, skip_special_tokens: bool = True) -> str:
        """The text of ids, as the tool decodes them (sentencepiece's DecodeIds, or tokenizers' decode).

        skip_special_tokens=False writes the special tokens' text ('<s> Hello</s>', as tokenizers does; sentencepiece
        has no such option and writes nothing for them). An id outside the vocabulary is refused in one sentence.
        """
        return self._decode(self._checked(ids), skip_special_tokens, raw=False)

    def decode_bytes(self, ids: Iterable[int], *, skip_special_tokens: bool = True) -> bytes:
        """decode()'s text as UTF-8, with the bytes of byte pieces kept as they are where they are not UTF-8."""
        return self._decode(self._checked(ids), skip_special_tokens, raw=True).encode("utf-8", "surrogateescape")

    def decode_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8, skip_special_tokens: bool = True) -> list[str]:
        return _batch(lambda ids: self.decode(ids, skip_special_tokens=skip_special_tokens), batch, num_threads)

    def decode_blocks(self, blocks: Iterable[Sequence[int]], *, skip_special_tokens: bool = True) -> Iterator[bytes]:
        """decode_bytes of every block's ids one after another, a block at a time (bpe decode of a dataset).

        The bytes are those of decode_bytes(all the ids): a run of byte pieces is held until it ends, and a block
        after the first is decoded behind one piece of plain text (`_lead`), whose text is then cut off, so that
        the first piece's rules (the dummy prefix dropped) apply once. A tokenizer.json whose decoders are not all
        of this family's (Strip at the end, say) is decoded whole.
        """
        lead = self._lead
        if lead is None:
            yield self.decode_bytes([i for block in blocks for i in _ints(block)], skip_special_tokens=skip_special_tokens)
            return
        lead_text = self._decode([lead], skip_special_tokens, raw=True)
        pending: list[int] = []
        started = False  # has the text begun: the ids after it are no longer the first (see _starts)
        for block in blocks:
            ids = pending + self._checked(_ints(block))
            cut = len(ids)
            while cut and self._joins_next(ids[cut - 1], skip_special_tokens):
                cut -= 1
            head, pending = ids[:cut], ids[cut:]
            if head:
                yield self._decode_after(head, started, lead, lead_text, skip_special_tokens)
                started = started or self._starts(head, skip_special_tokens)
        if pending:
            yield self._decode_after(pending, started, lead, lead_text, skip_special_tokens)

    def _decode_after(self, ids: list[int], started: bool, lead: int, lead_text: str, skip: bool) -> bytes:
        text = self._decode([lead, *ids], skip, raw=True)[len(lead_text) :] if started else self._decode(ids, skip, raw=True)
        return text.encode("utf-8", "surrogateescape")

    def _starts(self, ids: list[int], skip: bool) -> bool:
        """Did these ids begin the text, so that what follows is decoded as not first?

        sentencepiece: once something is written (a leading '▁' alone writes nothing, and the next is still first);
        tokenizers: once a token is decoded at all (its decoders treat the first token, and the text's first character).
        """
        if self.model is not None:
            return bool(self._decode(ids, skip, raw=True))
        return any(not (skip and i in self._special_ids) for i in ids)

    def _joins_next(self, i: int, skip: bool) -> bool:
        """May id i join with the ids after it when decoded: a byte piece (and for tokenizers a special token skipped between two)?"""
        return i in self._byte_ids or (self.model is None and skip and i in self._special_ids)

    @cached_property
    def _lead(self) -> int | None:
        """A piece of plain text with no '▁' first that decodes the same before anything (decode_blocks); None: decode whole."""
        if self.model is None:
            decoder = self.encoder.config.get("decoder")
            steps = decoder.get("decoders", []) if isinstance(decoder, dict) and decoder.get("type") == "Sequence" else [decoder]
            for step in steps:
                if step is not None and not (isinstance(step, dict) and step.get("type") in _STREAMED_DECODERS):
                    return None
                if isinstance(step, dict) and step.get("type") == "Strip" and (step.get("stop", 0) or step.get("start", 0) > 1):
                    return None
        kinds = self.encoder.types if self.model is not None else None
        for i, piece in enumerate(self.pieces):
            plain = kinds[i] == NORMAL if kinds is not None else piece and i not in self._special_ids and i not in self._byte_ids
            if plain and not piece.startswith(SPACE) and piece.isalnum():
                text = self._decode([i], True, raw=True)
                if text and self._decode([i, i], True, raw=True) == text + text:
                    return i
        return None

    def _decode(self, ids: list[int], skip: bool, raw: bool) -> str:
        if self.model is not None:
            return self.encoder.decode(ids, controls=not skip, raw=raw)
        return self.encoder.decode(ids, skip, raw=raw)

    def _checked(self, ids: Iterable[int]) -> list[int]:
        ids = list(ids)
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(self.pieces) or not self.pieces[i]:
                raise ValueError(f"Token id {i!r} is not in the vocabulary (ids 0..{len(self.pieces) - 1}).")
        return ids


def _ints(block: Sequence[int]) -> list[int]:
    """A block of ids as Python ints (a NumPy array's too)."""
    return block.tolist() if hasattr(block, "tolist") else list(block)
