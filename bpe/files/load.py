"""Reading tokenizer files from any tool: GPT-2, HuggingFace, tiktoken, and this tool's own.

- GPT-2: vocab.json (or encoder.json) maps each token, written through the
  byte-to-unicode table, to its id; merges.txt (or vocab.bpe) lists the merges
  in order. Ids are taken as given, in any order (GPT-2's own numbers the bytes
  '!' first). A vocab entry that is neither a byte nor made by a merge
  ('<|endoftext|>') is a special token. The pre-tokenizer is not recorded.
- HuggingFace tokenizer.json with a byte-level BPE model, as `tokenizers` writes
  it (after training, or by this tool): vocab, merges, and the added tokens as
  special tokens; the pre-tokenizer must be one this tool knows (text/pretokenizers.py).
- tiktoken rank files (``.tiktoken``): one 'base64-token rank' per line; a
  token's rank is its id. The merges are not stored: each token is split the
  way tiktoken would build it from lower-ranked tokens (`merges_from_ranks`).
- This tool's plain JSON (tokenizer.bpe.json, see export.py), the only one with
  each merge's count.
- The SentencePiece family (bpe/sentencepiece/ reads it): a .model file (binary,
  SentencePiece's ModelProto), or a tokenizer.json with byte fallback and '▁' for
  a space (Llama 2's, Mistral's). Its Loaded holds the family's encoder; the
  fields of byte-level BPE (merges, vocab) stay empty.

Everything is parsed from text (JSON or lines), or from protobuf's wire format
read by hand (a .model); nothing is unpickled or evaluated. A bad file raises
ValueError("<file>: <what is wrong>"), one sentence.

Not here: which files a format is, or finding the format of a folder, a file or
an upload (formats.py); writing files (export.py); encoding (tokenizer.py).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import hmac
import json
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from heapq import heapify, heappop, heappush
from pathlib import Path
from typing import TYPE_CHECKING

from .. import atomic
from ..text.gpt2_bytes import from_unicode, gpt2_pairs, gpt2_vocab, to_unicode
from ..text.pretokenizers import DEFAULT, PRETOKENIZERS, PreTokenizer, check_special_tokens, pretokenizer_of
from ..train import build_vocab
from . import openai

if TYPE_CHECKING:  # imported where a file of the family is read: bpe train and bpe encode of GPT-2's files do without it
    from ..sentencepiece.encoder import Encoder
    from ..sentencepiece.hf import HFTokenizer

Vocab = dict[int, bytes]
Merges = list[tuple[bytes, bytes]]

FORMAT, VERSION = "bpe-workbench", 1
MAX_ID = 1 << 32  # ids and ranks are below this (the Tokenizer looks a pair of ids up as one number)
PLAIN, HF, VOCAB, MERGES = "tokenizer.bpe.json", "tokenizer.json", "vocab.json", "merges.txt"
GPT2_PAIRS = ((VOCAB, MERGES), ("encoder.json", "vocab.bpe"))  # (vocab, merges) names, this tool's and OpenAI's
TIKTOKEN = ".tiktoken"
SPM_MODEL, SPM_MODEL_FORMAT = "tokenizer.model", "sentencepiece"  # a SentencePiece model's file name, and its format's key


@dataclass(frozen=True)
class Loaded:
    """What a tokenizer file holds."""

    merges: Merges
    special_tokens: tuple[str, ...] = ()
    pretokenizer: PreTokenizer = DEFAULT
    counts: tuple[int | None, ...] | None = None  # None when the format does not record them
    vocab: Vocab | None = None  # id -> bytes, special tokens included; None: this tool's layout, derived from the merges
    format: str = "workbench"  # a key of formats.FORMATS
    encoding: str = ""  # the OpenAI encoding a .tiktoken file is, recognised by its sha256 ("o200k_base"); "" otherwise
    recorded: bool | None = None  # whether the files record the pre-tokenizer; None: as its format does (formats.Format)
    # HuggingFace's ignore_merges (Llama 3): a pre-token that is itself a token is that token, no merge applied
    ignore_merges: bool = False
    # the SentencePiece family's encoder (bpe.sentencepiece: an Encoder from a .model, an HFTokenizer from a
    # tokenizer.json of that family); None for the byte-level family, which the fields above describe
    sentencepiece: Encoder | HFTokenizer | None = None

    @property
    def family(self) -> str:
        """'byte-level' (GPT-2's: merges of bytes) or 'sentencepiece' (Llama 2's: pieces of characters, '▁' for a space)."""
        return "byte-level" if self.sentencepiece is None else "sentencepiece"

    def __post_init__(self) -> None:
        object.__setattr__(self, "pretokenizer", pretokenizer_of(self.pretokenizer))  # given by name or regex: resolved once

    # derived when first asked for, then kept: formats.files hands one Loaded to every format's writer

    @cached_property
    def full_vocab(self) -> Vocab:
        """id -> bytes, special tokens included: the ids the files give, else this tool's layout, derived from the merges."""
        return self.vocab if self.vocab is not None else build_vocab(self.merges, self.special_tokens)

    @cached_property
    def gpt2_vocab(self) -> dict[str, int]:
        """Each token as GPT-2 writes it -> its id: vocab.json's table, and tokenizer.json's."""
        return gpt2_vocab(self.full_vocab, self.special_tokens)

    @cached_property
    def gpt2_merges(self) -> list[tuple[str, str]]:
        """The merges as GPT-2 writes them: merges.txt's lines, and tokenizer.json's pairs."""
        return gpt2_pairs(self.merges)


def check_merges(merges: Merges) -> None:
    """Every merge joins two tokens that exist before it; raise ValueError naming the first that does not."""
    known = {bytes([i]) for i in range(256)}
    for rank, pair in enumerate(merges):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(p, (bytes, bytearray)) for p in pair)):
            raise ValueError(f"merge {rank + 1} is not a pair of bytes: {pair!r}.")
        for part in pair:
            if bytes(part) not in known:
                raise ValueError(
                    f"merge {rank + 1} ({show(pair[0])} + {show(pair[1])}) uses {show(part)}, "
                    "which is neither a byte nor made by an earlier merge."
                )
        known.add(bytes(pair[0]) + bytes(pair[1]))


def show(token: bytes) -> str:
    """A token as GPT-2 writes it, quoted: b' the' -> "'Ġthe'"."""
    return repr(to_unicode(bytes(token)))


# ---------------------------------------------------------------------------
# GPT-2: vocab.json + merges.txt (or encoder.json + vocab.bpe)


def parse_gpt2(vocab_text: str, merges_text: str, vocab_name: str = VOCAB, merges_name: str = MERGES) -> Loaded:
    """GPT-2-format files, given as text; ids as the vocab file gives them."""
    merges = parse_merges_txt(merges_text, merges_name)
    table = parse_json(vocab_text, vocab_name)
    if not isinstance(table, dict):
        raise ValueError(f"{vocab_name}: expected a JSON object mapping tokens to ids, got {_kind(table)}.")
    vocab, special_tokens = _vocab_and_special_tokens(table, merges, vocab_name)
    _check_merges_in_vocab(vocab, merges, vocab_name, merges_name)
    return Loaded(merges, special_tokens, "gpt2", None, vocab, "gpt2")


def parse_merges_txt(text: str, name: str = MERGES) -> Merges:
    """merges.txt: an optional '#version' line, then 'left right' per line in GPT-2's byte-to-unicode form."""
    if not text:
        raise ValueError(f"{name}: the file is empty; even a tokenizer with no merges has a '#version' line.")
    if not text.endswith("\n"):
        raise ValueError(f"{name}: the last line does not end with a newline; the file looks truncated.")
    merges: Merges = []
    for n, line in enumerate(text.split("\n"), start=1):
        if (n == 1 and line.startswith("#version")) or not line:
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"{name}: line {n} should be two tokens separated by one space, got {line[:60]!r}.")
        merges.append(_decode_pair(name, f"line {n}", parts))
    return merges


def _vocab_and_special_tokens(table: dict, merges: Merges, name: str) -> tuple[Vocab, tuple[str, ...]]:
    """A token -> id table as id -> bytes; entries that are neither a byte nor a merge's token are special tokens."""
    made = {bytes([i]) for i in range(256)} | {a + b for a, b in merges}
    vocab: Vocab = {}
    found: list[tuple[int, str]] = []  # (id, special token)
    for key, i in table.items():
        if not _is_int(i) or not 0 <= i < MAX_ID:
            raise ValueError(f"{name}: the id of {_shown(key)} must be a whole number from 0 to 2**32 - 1, not {_shown(i)}.")
        if not _is_text(key):
            raise ValueError(f"{name}: token {_shown(key)} holds a lone surrogate (a \\ud800-style escape), which is not text.")
        if i in vocab:
            raise ValueError(f"{name}: id {i} is given to two tokens, {to_unicode(vocab[i])!r} and {key!r}.")
        try:
            token = from_unicode(key)
        except ValueError:
            token = None
        if token is None or token not in made:
            found.append((i, key))
            token = key.encode("utf-8")
        vocab[i] = token
    ordered = tuple(key for _, key in sorted(found))
    _wrap(name, check_special_tokens, ordered)
    return vocab, ordered


def _check_merges_in_vocab(vocab: Vocab, merges: Merges, vocab_name: str, merges_name: str) -> None:
    tokens = set(vocab.values())
    for rank, (a, b) in enumerate(merges):
        for token in (a, b, a + b):
            if token not in tokens:
                if vocab_name == merges_name:
                    raise ValueError(f"{vocab_name}: merge {rank + 1} ({show(a)} + {show(b)}) needs {show(token)}, which its vocab lacks.")
                raise ValueError(
                    f"{vocab_name}: merge {rank + 1} of {merges_name} ({show(a)} + {show(b)}) needs {show(token)}, "
                    "which is not in the vocabulary; the two files do not belong together (or one is truncated)."
                )


# ---------------------------------------------------------------------------
# HuggingFace tokenizer.json


def parse_hf(text: str, name: str = HF) -> Loaded:
    """A tokenizer.json holding a byte-level BPE model; ids as the file gives them."""
    return parse_hf_document(parse_json(text, name), name)


def parse_hf_document(document: object, name: str = HF) -> Loaded:
    """parse_hf of the file's JSON, parsed already."""
    if not isinstance(document, dict):
        raise ValueError(f"{name}: expected a JSON object, got {_kind(document)}.")
    model = _field(name, document, "model", dict)
    if model.get("type") != "BPE":
        raise ValueError(f"{name}: model type is {model.get('type')!r}; only BPE models can be loaded.")
    for option in ("continuing_subword_prefix", "end_of_word_suffix", "dropout"):
        if model.get(option) not in (None, ""):
            raise ValueError(f"{name}: model.{option} is {model[option]!r}; this tool supports plain byte-level BPE only.")
    if model.get("byte_fallback"):
        raise ValueError(f"{name}: model.byte_fallback is true; this tool supports plain byte-level BPE only.")
    ignore_merges = model.get("ignore_merges", False)
    if not isinstance(ignore_merges, bool):
        raise ValueError(f"{name}: model.ignore_merges should be true or false, not {_shown(ignore_merges)}.")
    if document.get("normalizer") not in (None, {"type": "Sequence", "normalizers": []}):
        kind = document["normalizer"].get("type") if isinstance(document["normalizer"], dict) else document["normalizer"]
        raise ValueError(f"{name}: it normalizes text first ({kind}); this tool encodes text as it is, so it cannot match.")
    pretokenizer = _hf_pretokenizer(name, document.get("pre_tokenizer"))
    merges = []
    for n, item in enumerate(_field(name, model, "merges", list), start=1):
        pair = item.split(" ") if isinstance(item, str) else item
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) and p for p in pair)):
            raise ValueError(f"{name}: merge {n} should be two tokens, got {item!r}.")
        merges.append(_decode_pair(name, f"merge {n}", pair))
    table = dict(_field(name, model, "vocab", dict))
    added = _field(name, document, "added_tokens", list)
    seen = set()
    for token in added:
        if not (isinstance(token, dict) and isinstance(token.get("content"), str) and _is_int(token.get("id"))):
            raise ValueError(f"{name}: each added token needs a string 'content' and a whole-number 'id', got {_shown(token)}.")
        if token["content"] in seen:
            raise ValueError(f"{name}: added token {_shown(token['content'])} is listed twice.")
        seen.add(token["content"])
        flags = [flag for flag in ("single_word", "lstrip", "rstrip") if token.get(flag)]
        if flags:
            raise ValueError(f"{name}: added token {token['content']!r} sets {flags[0]}; this tool matches special tokens exactly.")
        if table.get(token["content"], token["id"]) != token["id"]:
            raise ValueError(
                f"{name}: added token {_shown(token['content'])} has id {_shown(token['id'])}, but the vocab gives it {_shown(table[token['content']])}."
            )
        table[token["content"]] = token["id"]
    vocab, special_tokens = _vocab_and_special_tokens(table, merges, name)
    declared = {t["content"] for t in added}
    extra = [s for s in special_tokens if s not in declared]
    if extra:
        raise ValueError(f"{name}: vocab entry {extra[0]!r} is neither a byte, nor made by a merge, nor an added token.")
    _check_merges_in_vocab(vocab, merges, name, name)
    ordered = tuple(t["content"] for t in sorted(added, key=lambda t: t["id"]))
    return Loaded(merges, ordered, pretokenizer, None, vocab, "huggingface", ignore_merges=ignore_merges)


def _hf_pretokenizer(name: str, pre: object) -> PreTokenizer:
    """The pre-tokenizer a tokenizer.json's pre_tokenizer is: each registered one's own form (PreTokenizer.hf), or a regex."""
    for pretokenizer in PRETOKENIZERS.values():
        if pre == pretokenizer.hf():
            return pretokenizer
    if isinstance(pre, dict) and pre.get("type") == "ByteLevel":
        if pre.get("add_prefix_space"):
            raise ValueError(f"{name}: its ByteLevel pre-tokenizer adds a space before the text (add_prefix_space); this tool does not.")
        byte_level = next(p for p in PRETOKENIZERS.values() if p.byte_level)
        return byte_level if pre.get("use_regex", True) else pretokenizer_of("none")
    # a Split by a regex that keeps every match (Isolated), then ByteLevel without its regex
    steps = pre.get("pretokenizers") if isinstance(pre, dict) and pre.get("type") == "Sequence" else None
    if isinstance(steps, list) and len(steps) == 2 and all(isinstance(s, dict) for s in steps):
        split, byte_level = steps
        regex = split.get("pattern", {}).get("Regex") if isinstance(split.get("pattern"), dict) else None
        behavior = (split.get("behavior"), bool(split.get("invert")))
        keeps = behavior in (("Isolated", False), ("Removed", True))
        plain = byte_level.get("type") == "ByteLevel" and not byte_level.get("use_regex", True) and not byte_level.get("add_prefix_space")
        if split.get("type") == "Split" and isinstance(regex, str) and keeps and plain:
            if behavior == ("Removed", True):  # only the matches are kept: a registered regex that drops the gaps too
                named = next((p for p in PRETOKENIZERS.values() if p.regex == regex), None)
                if named is not None:
                    return named
            # any other regex is taken as it is: its gaps kept (where 'Removed' drops them), or a registered one that keeps them
            return _wrap(name, pretokenizer_of, regex)
    raise ValueError(
        f"{name}: pre_tokenizer {json.dumps(pre)[:120]} is not one this tool knows; "
        "expected ByteLevel (gpt2), or a Split by a regex that keeps its matches followed by ByteLevel without its regex."
    )


# ---------------------------------------------------------------------------
# the SentencePiece family: a .model file, or a tokenizer.json of that family (Llama 2's, Mistral's)


def parse_sentencepiece_model(data: bytes, name: str = SPM_MODEL) -> Loaded:
    """A SentencePiece .model file (BPE; a unigram model is refused in one sentence), encoded as sentencepiece does."""
    from ..sentencepiece.encoder import Encoder
    from ..sentencepiece.model_file import parse_model

    return _sentencepiece(Encoder(parse_model(data, name)), SPM_MODEL_FORMAT)


def parse_sentencepiece_json(document: dict, name: str = HF) -> Loaded:
    """A tokenizer.json of the SentencePiece family (bpe.sentencepiece.hf), encoded as HuggingFace tokenizers does."""
    from ..sentencepiece.hf import HFTokenizer

    try:
        return _sentencepiece(HFTokenizer(document, name), "huggingface")
    except ValueError as e:  # a step's sentence (the character map's) does not name the file: say which
        message = str(e)
        raise ValueError(message if name in message else f"{name}: {message[0].lower()}{message[1:]}") from None


def _sentencepiece(encoder: Encoder | HFTokenizer, fmt: str) -> Loaded:
    """The Loaded of the family: its encoder, and its meta pieces (<unk>, <s>, </s>, ...) as the special tokens."""
    from ..sentencepiece.model import CONTROL, UNKNOWN

    if hasattr(encoder, "model"):  # a .model: <unk> and the control pieces, in id order
        specials = tuple(p.piece for p in encoder.model.pieces if p.type in (UNKNOWN, CONTROL))
    else:  # a tokenizer.json: its special added tokens
        specials = tuple(t.content for t in sorted(encoder.added, key=lambda t: t.id) if t.special)
    return Loaded([], specials, DEFAULT, None, None, fmt, recorded=True, sentencepiece=encoder)


# ---------------------------------------------------------------------------
# tiktoken rank files


# OpenAI's rank files, by the sha256 tiktoken checks (openai.py): a file that is one of them gets its
# pre-tokenizer and special tokens (with their ids), which a rank file does not record.
OPENAI_ENCODINGS: dict[str, tuple[str, str, dict[str, int]]] = {
    sha256: (encoding.name, encoding.pretokenizer, encoding.special_tokens) for sha256, encoding in openai.RANK_FILES.items()
}


def parse_tiktoken(text: str, name: str = "tokenizer.tiktoken") -> Loaded:
    """'base64-token rank' per line; the rank is the id, and the merges are recovered from the ranks.

    One of OpenAI's own files (OPENAI_ENCODINGS) also gets its pre-tokenizer and special tokens.
    """
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    known = OPENAI_ENCODINGS.get(digest)
    compiled = _parse_tiktoken_compiled(text, digest if known else None)
    taken, merges = compiled if compiled is not None else _parse_tiktoken(text, name)
    if known is None:
        return Loaded(merges, (), DEFAULT, None, dict(taken), "tiktoken")
    encoding, pretokenizer, special_ids = known
    vocab = dict(taken) | {i: token.encode("utf-8") for token, i in special_ids.items()}
    return Loaded(merges, tuple(special_ids), pretokenizer_of(pretokenizer), None, vocab, "tiktoken", encoding)


TIKTOKEN_SPEC = "bpe-workbench-tiktoken"  # the format of the .tiktoken.json this tool writes beside its rank file (export.py)


def parse_tiktoken_spec(loaded: Loaded, text: str, name: str, ranks_text: str) -> Loaded:
    """A rank file's tokenizer with what its .tiktoken.json (export.tiktoken_files) adds: the pre-tokenizer and the special tokens.

    The .json names the sha256 of the rank file it belongs to; another rank file is refused.
    """
    document = parse_json(text, name)
    encoding = document.get("encoding") if isinstance(document, dict) and document.get("format") == TIKTOKEN_SPEC else None
    if not isinstance(encoding, dict) or document.get("version") != 1:
        raise ValueError(f"{name}: not the .tiktoken.json this tool writes (format {TIKTOKEN_SPEC!r}, version 1).")
    if document.get("sha256") != hashlib.sha256(ranks_text.encode("utf-8")).hexdigest():
        raise ValueError(f"{name}: it describes another rank file (its sha256 differs); the two files do not belong together.")
    spelled = document.get("pattern")  # subtle: the file format's key for the pre-tokenizer, kept for files already written
    if not isinstance(spelled, str):
        raise ValueError(f"{name}: 'pattern' should be a pre-tokenizer's name or a regex.")
    pretokenizer = _wrap(name, pretokenizer_of, spelled)
    specials = encoding.get("special_tokens")
    if not isinstance(specials, dict) or not all(isinstance(t, str) and _is_int(i) and 0 <= i < MAX_ID for t, i in specials.items()):
        raise ValueError(f"{name}: 'special_tokens' should map each special token to a whole-number id.")
    _wrap(name, check_special_tokens, list(specials))
    vocab = dict(loaded.vocab or {})
    for token, i in specials.items():
        if i in vocab:
            raise ValueError(f"{name}: special token {token!r} has id {i}, which the rank file gives {show(vocab[i])}.")
        vocab[i] = token.encode("utf-8")
    return Loaded(loaded.merges, tuple(specials), pretokenizer, None, vocab, loaded.format, loaded.encoding, recorded=True)


def cache_folder() -> Path | None:
    """Where this tool keeps what it builds between runs: BPE_CACHE, else $XDG_CACHE_HOME/bpe-workbench, else
    ~/.cache/bpe-workbench; None when BPE_CACHE is off (or 0, none). The app's server keeps its work there too
    (serve/disk.py, through serve/settings.py)."""
    configured = os.environ.get("BPE_CACHE", "")
    if configured.lower() in ("off", "0", "none"):
        return None
    return Path(configured) if configured else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "bpe-workbench"


def private_folder(folder: Path) -> bool:
    """Whether folder is this user's and no one else may enter it (0700): what lets this tool trust what it kept there.

    The rule for every cache of this tool: the library's merges here, the app's work in serve/disk.py.
    """
    try:
        info = folder.stat()
    except OSError:
        return False
    return info.st_uid == os.getuid() and not stat.S_IMODE(info.st_mode) & 0o077


def own_file(path: Path, *, secret: bool = False) -> bool:
    """Whether path is a regular file (not a link) of this user's that no one else may write (secret: nor read)."""
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and not stat.S_IMODE(info.st_mode) & (0o077 if secret else 0o022)


def merges_cache(digest: str) -> Path | None:
    """Where the merges recovered from the rank file with this sha256 are kept (None: BPE_CACHE=off).

    Only OpenAI's own files are cached (four at most, 1.6 MB for o200k_base): recovering their merges is
    two thirds of loading them. See _kept_merges for what is read back, and when.
    """
    folder = cache_folder()
    return None if folder is None else folder / f"merges-{digest}.bin"


KEY_FILE = ".merges.key"  # in the cache folder: this user's secret, which the kept merges are signed with (a '.' name: never trimmed)


def _merges_key(folder: Path, *, make: bool) -> bytes | None:
    """This user's secret for the merges kept in folder, made when asked and missing; None where it cannot be trusted."""
    path = folder / KEY_FILE
    if not own_file(path, secret=True):
        if not make:
            return None
        atomic.write_bytes(path, os.urandom(32), mode=0o600)
    with contextlib.suppress(OSError):
        key = path.read_bytes()
        return key if len(key) == 32 else None
    return None


def _signature(key: bytes, digest: str, pairs: bytes) -> bytes:
    """A keyed digest of the merges kept for the rank file with this sha256: only this user's secret makes it."""
    signed = hashlib.blake2b(bytes.fromhex(digest), key=key, digest_size=32, person=b"bpe-merges-v1")
    signed.update(pairs)
    return signed.digest()


def _kept_merges(digest: str) -> bytes | None:
    """The merges kept for the rank file with this sha256 (each merge's parts as places in the file), or None.

    Read only when this user kept them: from a folder only this user may enter, a file only this user may
    write, signed with this user's secret (_signature). So merges that are plausible but wrong (another
    split of a token into two lower-ranked tokens, which the core's check cannot tell from tiktoken's) or
    another user's file are never used: the merges are recovered again, and kept anew.
    """
    path = merges_cache(digest)
    if path is None or not private_folder(path.parent) or not own_file(path):
        return None
    key = _merges_key(path.parent, make=False)
    if key is None:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    signature, pairs = data[:32], data[32:]
    return pairs if len(data) > 32 and hmac.compare_digest(signature, _signature(key, digest, pairs)) else None


def _keep_merges(digest: str, pairs: bytes) -> None:
    """Keep the merges recovered from the rank file with this sha256, signed; a folder that is not private keeps nothing."""
    path = merges_cache(digest)
    if path is None:
        return
    with contextlib.suppress(OSError, atomic.OutputError):  # a read-only home, a full disk: the next load recovers them again
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if private_folder(path.parent) and (key := _merges_key(path.parent, make=True)) is not None:
            atomic.write_bytes(path, _signature(key, digest, pairs) + pairs, mode=0o600)


def _parse_tiktoken_compiled(text: str, digest: str | None = None) -> tuple[dict[int, bytes], Merges] | None:
    """(rank -> token, merges) read by the compiled core (bpe/c/ranks.c), or None where _parse_tiktoken must read the
    file: no core, or anything but the plain form OpenAI's files have (it reads those, or says what is wrong).

    With the rank file's sha256, the merges come from what an earlier load kept (_kept_merges; the core checks
    each merge's parts too), and are kept when they were recovered.
    """
    from ..core import core  # read when called: a test may switch it off (monkeypatch bpe.core.core)

    if core is None:
        return None
    from ..text.pretokenize_c import SEED

    found = core.load_ranks(text, SEED, _kept_merges(digest) if digest is not None else None)
    if found is None:
        return None
    tokens, ranks, merges, fresh = found
    if digest is not None and fresh is not None:
        _keep_merges(digest, fresh)
    return dict(zip(ranks, tokens)), merges


def _parse_tiktoken(text: str, name: str) -> tuple[dict[int, bytes], Merges]:
    """(rank -> token, merges), each line checked: a sentence for the first that is wrong."""
    ranks: dict[bytes, int] = {}
    taken: dict[int, bytes] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2 or not (parts[1].isascii() and parts[1].isdigit()):
            raise ValueError(f"{name}: line {n} should be a base64 token and a rank, got {line[:60]!r}.")
        if len(parts[1]) > 10 or int(parts[1]) >= MAX_ID:
            raise ValueError(f"{name}: line {n}: rank {parts[1][:20]}{'...' if len(parts[1]) > 20 else ''} is not below 2**32.")
        try:
            token = base64.b64decode(parts[0], validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"{name}: line {n}: {parts[0][:40]!r} is not base64.") from None
        rank = int(parts[1])
        if token in ranks:
            raise ValueError(f"{name}: line {n}: token {show(token)} is listed twice.")
        if rank in taken:
            raise ValueError(f"{name}: line {n}: rank {rank} is given to two tokens, {show(taken[rank])} and {show(token)}.")
        ranks[token], taken[rank] = rank, token
    if not ranks:
        raise ValueError(f"{name}: the file holds no tokens.")
    return taken, _wrap(name, merges_from_ranks, ranks)


def merges_from_ranks(ranks: Mapping[bytes, int]) -> Merges:
    """The merges a tiktoken rank table implies, in rank order.

    A token of two or more bytes is built by tiktoken from lower-ranked tokens:
    encoding its bytes with only the tokens ranked below it must leave exactly
    two pieces, and those are its merge. {a: 0, b: 1, c: 2, ab: 3, abc: 4} ->
    [(a, b), (ab, c)]. Raises ValueError for a token that cannot be built so.
    """
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise ValueError(f"byte 0x{missing[0]:02x} has no rank; a byte-level BPE ranks all 256 bytes.")
    merges: Merges = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) < 2:
            continue
        parts = _rank_merge(token, ranks, rank)
        if len(parts) != 2:
            raise ValueError(f"token {show(token)} (rank {rank}) cannot be made by joining two tokens of lower rank.")
        merges.append((parts[0], parts[1]))
    return merges


def _rank_merge(token: bytes, ranks: Mapping[bytes, int], below: int) -> list[bytes]:
    """tiktoken's byte-pair merge of token, using only ranks below `below`: join the lowest-ranked pair (the leftmost of equals), repeat.

    b'abc' with {ab: 3, bc: 5}, below 6 -> [b'ab', b'c']. In O(n log n): a heap of
    (rank, position) over a linked list of parts, entries checked when popped
    (a rescan of every pair after each join is O(n^2): 11 s for one 20 KB token).
    """
    parts = [token[i : i + 1] for i in range(len(token))]
    n = len(parts)
    nxt, prv = list(range(1, n + 1)), list(range(-1, n - 1))
    nxt[-1] = -1

    def rank_at(i: int) -> int:
        j = nxt[i]
        return ranks.get(parts[i] + parts[j], below) if j >= 0 else below

    heap = [(r, i) for i in range(n - 1) if (r := rank_at(i)) < below]
    heapify(heap)
    while heap:
        rank, i = heappop(heap)
        if parts[i] is None or rank_at(i) != rank:
            continue  # joined into a left neighbour, or its pair changed since it was pushed
        j = nxt[i]
        parts[i], parts[j] = parts[i] + parts[j], None
        nxt[i] = nxt[j]
        if nxt[i] >= 0:
            prv[nxt[i]] = i
            if (r := rank_at(i)) < below:
                heappush(heap, (r, i))
        if prv[i] >= 0 and (r := rank_at(prv[i])) < below:
            heappush(heap, (r, prv[i]))
    return [p for p in parts if p is not None]


# ---------------------------------------------------------------------------
# this tool's plain JSON, with counts


def parse_plain(text: str, name: str = PLAIN) -> Loaded:
    document = parse_json(text, name)
    if not isinstance(document, dict):
        raise ValueError(f"{name}: expected a JSON object, got {_kind(document)}.")
    if document.get("format") != FORMAT:
        raise ValueError(f"{name}: 'format' should be {FORMAT!r}, got {document.get('format')!r}.")
    if document.get("version") != VERSION:
        raise ValueError(f"{name}: version {document.get('version')!r} is not supported (this tool reads version {VERSION}).")
    pretokenizer = _wrap(name, pretokenizer_of, _field(name, document, "pattern", str))  # the file format's key for it
    special_tokens = _field(name, document, "special_tokens", list)
    _wrap(name, check_special_tokens, special_tokens)
    merges, counts = [], []
    for n, row in enumerate(_field(name, document, "merges", list), start=1):
        if not isinstance(row, dict):
            raise ValueError(f"{name}: merge {n} should be an object with 'left', 'right' and 'count', got {_kind(row)}.")
        left, right = (_token_bytes(name, n, row, side) for side in ("left", "right"))
        count = row.get("count")
        if count is not None and (not _is_int(count) or count < 1):
            raise ValueError(f"{name}: merge {n} has count {count!r}; a count is a whole number of at least 1 (or null).")
        merges.append((left, right))
        counts.append(count)
    _wrap(name, check_merges, merges)
    return Loaded(merges, tuple(special_tokens), pretokenizer, tuple(counts))


def _token_bytes(name: str, n: int, row: dict, side: str) -> bytes:
    value = row.get(side)
    if isinstance(value, str):
        try:
            data = bytes.fromhex(value)
        except ValueError:
            data = b""
        if data and len(value) == 2 * len(data):
            return data
    elif isinstance(value, list) and value and all(_is_int(b) and 0 <= b < 256 for b in value):
        return bytes(value)
    raise ValueError(f"{name}: merge {n} '{side}' should be non-empty hex (\"6c6f\") or a list of byte values, got {value!r}.")


# ---------------------------------------------------------------------------
# reading safely


def read_text(path: Path) -> str:
    """A file's UTF-8 text, or a ValueError naming the file (a device such as /dev/zero is refused, not read forever)."""
    return decode_text(str(path), read_bytes(path))


def read_bytes(path: Path) -> bytes:
    """A file's bytes, or a ValueError naming the file (a device is refused, not read forever)."""
    try:
        if path.is_char_device() or path.is_block_device():
            raise ValueError(f"{path}: a device, not a file.")
        return path.read_bytes()
    except OSError as e:
        raise ValueError(f"{path}: cannot be read ({e.strerror}).") from None


def decode_text(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{name}: not UTF-8 text (bad byte at offset {e.start}).") from None


def parse_json(text: str, name: str) -> object:
    if not text.strip():
        raise ValueError(f"{name}: the file is empty.")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        hint = " The file looks truncated: it stops before the JSON is closed." if text.rstrip()[-1] not in "}]" else ""
        raise ValueError(f"{name}: not valid JSON ({e.msg}: line {e.lineno}, column {e.colno}).{hint}") from None
    except RecursionError:
        raise ValueError(f"{name}: the JSON is nested too deeply to be a tokenizer.") from None
    except ValueError:  # Python's limit on the digits of an integer (4,300), the only other ValueError of json.loads
        raise ValueError(f"{name}: it holds a number of thousands of digits; no tokenizer has one.") from None


def _decode_pair(name: str, where: str, parts: Sequence[str]) -> tuple[bytes, bytes]:
    """A merge's two tokens from GPT-2 byte-to-unicode text, or a ValueError saying where."""
    try:
        return from_unicode(parts[0]), from_unicode(parts[1])
    except ValueError as e:
        raise ValueError(f"{name}: {where}: {e} Tokens are written with GPT-2's byte-to-unicode table.") from None


def _field(name: str, document: dict, field: str, kind: type):
    if field not in document:
        raise ValueError(f"{name}: the '{field}' field is missing.")
    value = document[field]
    if not isinstance(value, kind):
        raise ValueError(f"{name}: '{field}' should be {_kind(kind())}, got {_kind(value)}.")
    return value


def _kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number", bool: "true/false"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def _is_text(value: object) -> bool:
    """A str that UTF-8 can encode: no lone surrogate (JSON's "\\ud800" escape makes one)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(value: object) -> str:
    """A value for a message: short, and printable even when it holds a lone surrogate or a huge number."""
    if isinstance(value, int) and value.bit_length() > 64:
        return f"a number of {len(str(value)) if value.bit_length() < 10_000 else 'thousands of'} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _wrap(name: str, check, value):
    """Run a check (or a parse); put the file name in front of its sentence."""
    try:
        return check(value)
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None
