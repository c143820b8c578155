"""The SentencePiece family as HuggingFace `tokenizers` holds it: a tokenizer.json read, encoded and decoded exactly
as `tokenizers` 0.23 does, and written from a SentencePiece model as `transformers` converts one.

Llama 2's and Mistral's tokenizer.json are of this family: a BPE model with `byte_fallback` and `fuse_unk`, a
normalizer that puts '▁' first and turns spaces into '▁' (or a Metaspace pre-tokenizer doing the same), <s> put
first by the post-processor, and a decoder that undoes it all. How `tokenizers` encodes a text, step by step:

1. **Added tokens.** Every added token (<unk>, <s>, </s> ...) found in the raw text, leftmost and longest first,
   is one id; the text between them is encoded piece by piece, each on its own (added tokens marked `normalized`
   are looked for in the normalized text instead).
2. **Normalizer**, on each piece: Prepend ('▁' in front unless the piece is empty), Replace (a string or a
   regex: ' ' -> '▁', runs of spaces -> one), Precompiled (sentencepiece's character map -- see below), Strip.
3. **Pre-tokenizer**: none, or Metaspace (spaces to '▁', a '▁' in front unless there is one, and with `split`
   a cut before every '▁'), or a Split by a regex that isolates its matches.
4. **BPE by merge rank.** Each pre-token is cut into characters; a character not in the vocabulary becomes its
   UTF-8 bytes as <0xNN> pieces (`byte_fallback`), or <unk>, and a run of <unk> is one (`fuse_unk`); then the
   listed merge with the lowest rank is applied, leftmost first, until none applies. With `ignore_merges` a
   pre-token that is itself in the vocabulary is one token.
5. **Post-processor**: TemplateProcessing puts its special tokens (Llama's <s>) around the ids.

Decoding maps ids to tokens (special ones dropped by default), then runs the decoders: Replace ('▁' -> ' '),
ByteFallback (a run of <0xNN> tokens becomes its text, or one U+FFFD a byte if it is not UTF-8), Fuse (all into
one string), Strip (one ' ' off the start), Metaspace (every '▁' of the first token dropped, the others spaces).

- subtle: HuggingFace's merges and sentencepiece's scores disagree on some texts. sentencepiece merges any two
  symbols whose concatenation is a piece, best score first; `tokenizers` merges only the listed pairs. The files
  here are exact to `tokenizers`, not to sentencepiece (encoder.py is exact to sentencepiece).
- subtle: HuggingFace's `Precompiled` applies the character map per grapheme cluster and takes the *shortest*
  key that starts it, replacing the whole cluster (spm_precompiled's normalize_string); sentencepiece takes the
  longest key at each position. Grapheme clusters here are the `regex` module's \\X.
- subtle: so a tokenizer.json converted from a .model (tokenizer_json) encodes as sentencepiece does except where
  those two maps differ, on text that ends with a '▁' of its own (sentencepiece strips it as whitespace), and with
  treat_whitespace_as_suffix (the converter puts '▁' first regardless).

`tokenizer_json(model)` writes what `transformers`' SpmConverter.build_tokenizer_from_spm_proto makes of a
SentencePiece BPE model (the Precompiled map, whitespace Replaces, Metaspace, merges ranked by the merged piece's
score, byte_fallback and fuse_unk, the decoder), with <unk> and the control pieces as special added tokens and no
post-processor: so `tokenizers` encodes a text with it as sentencepiece does with the .model (add <s> yourself,
as sentencepiece's encode does not either).

`is_sentencepiece_family(document)` tells a tokenizer.json of this family from a byte-level one (the format registry
asks it), and a file from anywhere is checked part by part (`_check`) so that it is refused in one sentence.

Not here: byte-level tokenizer.json files (GPT-2's family: bpe/files/load.py), Unigram models, WordPiece.
"""

from __future__ import annotations

import base64
import heapq
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import regex

from ..atomic import write_text
from .compiled import SEED
from .compiled import core as compiled_core
from .model import CONTROL, NORMAL, UNKNOWN, USER_DEFINED, SentencePieceModel, byte_piece
from .normalizer import SPACE, CharsMap

MAX_FILE = 64 << 20  # bytes of a tokenizer.json read here
MAX_ID = 1 << 21  # ids below this (model_file.py's bound on pieces): Gemma's 256k are far below, and a list of every id stays small
_SURROGATE = regex.compile(r"[\ud800-\udfff]")


class TokenizerJsonError(ValueError):
    """A tokenizer.json this module cannot take; the message is one sentence."""


# ---------------------------------------------------------------------------
# normalizers, pre-tokenizers and decoders, each as tokenizers runs it


def _pattern(spec: object, what: str) -> regex.Pattern:
    """A tokenizers pattern, {"String": s} or {"Regex": r}, as a compiled regex."""
    if isinstance(spec, dict) and isinstance(spec.get("String"), str):
        return regex.compile(regex.escape(spec["String"]))
    if isinstance(spec, dict) and isinstance(spec.get("Regex"), str):
        try:
            return regex.compile(spec["Regex"])
        except regex.error as error:
            raise TokenizerJsonError(f"The {what}'s regex {spec['Regex']!r} does not compile here: {error}.") from None
    raise TokenizerJsonError(f"The {what}'s pattern is neither a String nor a Regex.")


class Precompiled:
    """tokenizers' Precompiled normalizer (spm_precompiled): the map per grapheme cluster, the shortest key first."""

    def __init__(self, blob: bytes) -> None:
        self.charsmap = CharsMap(blob)

    def transform(self, chunk: str) -> str | None:
        """The value of the shortest key that starts chunk (the walk stops at a NUL byte), or None."""
        data = chunk.encode()
        end = data.find(b"\0")
        found = self.charsmap.matches(data[: end if end >= 0 else len(data)], 0)
        return self.charsmap.value(found[0][1]).decode("utf-8", "replace") if found else None

    def __call__(self, text: str) -> str:
        out = []
        for grapheme in regex.findall(r"\X", text):
            if len(grapheme.encode()) < 6 and (norm := self.transform(grapheme)) is not None:
                out.append(norm)  # subtle: the whole cluster is replaced, marks after a mapped character included
                continue
            for ch in grapheme:
                norm = self.transform(ch)
                out.append(ch if norm is None else norm)
        return "".join(out)


def _replace(config: dict, what: str):
    """A Replace normalizer or decoder as a function str -> str: every match of the pattern, left to right, made content."""
    pattern, content = config.get("pattern"), str(config.get("content", ""))
    if isinstance(pattern, dict) and isinstance(pattern.get("String"), str) and pattern["String"]:
        old = pattern["String"]
        return lambda text: text.replace(old, content)  # the same as the regex of the escaped string, faster
    compiled = _pattern(pattern, what)
    literal = content.replace("\\", "\\\\")  # the content is literal: no group references
    return lambda text: compiled.sub(literal, text)


def normalizer_of(config: object):
    """A tokenizer.json normalizer as a function str -> str (None: no normalizer)."""
    if config is None:
        return None
    kind = config.get("type") if isinstance(config, dict) else None
    if kind == "Sequence":
        steps = [normalizer_of(c) for c in config.get("normalizers") or ()]
        steps = [s for s in steps if s is not None]

        def sequence(text: str) -> str:
            for step in steps:
                text = step(text)
            return text

        return sequence
    if kind == "Prepend":
        prefix = str(config.get("prepend", ""))
        return lambda text: prefix + text if text else text
    if kind == "Replace":
        return _replace(config, "Replace normalizer")
    if kind == "Precompiled":
        try:
            blob = base64.b64decode(config.get("precompiled_charsmap") or "", validate=True)
        except ValueError:
            raise TokenizerJsonError("The Precompiled normalizer's precompiled_charsmap is not base64.") from None
        return Precompiled(blob) if blob else None
    if kind == "Strip":
        left, right = bool(config.get("strip_left", True)), bool(config.get("strip_right", True))
        return lambda text: _strip(text, left, right)
    raise TokenizerJsonError(f"A {kind} normalizer is not of the SentencePiece family this tool reads.")


def _strip(text: str, left: bool, right: bool) -> str:
    if left:
        text = text.lstrip()
    if right:
        text = text.rstrip()
    return text


@dataclass(frozen=True)
class Metaspace:
    replacement: str = SPACE
    prepend_scheme: str = "always"  # always, first or never
    split: bool = True

    def __call__(self, piece: str, first: bool) -> list[str]:
        piece = piece.replace(" ", self.replacement)
        if (self.prepend_scheme == "always" or (self.prepend_scheme == "first" and first)) and not piece.startswith(self.replacement):
            piece = self.replacement + piece
        if not self.split:
            return [piece]
        return [p for p in regex.split(f"(?={regex.escape(self.replacement)})", piece) if p]  # the ▁ goes with what follows it


def pre_tokenizer_of(config: object) -> list:
    """The pre-tokenizer as a list of steps, each (piece, first) -> pieces ([] for none)."""
    if config is None:
        return []
    kind = config.get("type") if isinstance(config, dict) else None
    if kind == "Sequence":
        return [step for c in config.get("pretokenizers") or () for step in pre_tokenizer_of(c)]
    if kind == "Metaspace":
        scheme = config.get("prepend_scheme", "always")
        if config.get("add_prefix_space") is False:
            scheme = "never"
        replacement = config.get("replacement", SPACE)
        if scheme not in ("always", "first", "never") or not isinstance(replacement, str) or len(replacement) != 1:
            raise TokenizerJsonError("The Metaspace pre-tokenizer's replacement or prepend_scheme is not one tokenizers takes.")
        return [Metaspace(replacement, scheme, bool(config.get("split", True)))]
    if kind == "Split" and config.get("behavior") == "Isolated" and not config.get("invert"):
        pattern = _pattern(config.get("pattern"), "Split pre-tokenizer")
        return [lambda piece, first: [p for p in _isolate(pattern, piece) if p]]
    raise TokenizerJsonError(f"A {kind} pre-tokenizer is not of the SentencePiece family this tool reads.")


def _isolate(pattern: regex.Pattern, text: str) -> list[str]:
    out, at = [], 0
    for match in pattern.finditer(text):
        out += [text[at : match.start()], match.group()]
        at = match.end()
    return [*out, text[at:]]


def decoder_of(config: object) -> list:
    """The decoder as a list of steps, each tokens -> tokens ([] for none: tokens are joined with spaces)."""
    if config is None:
        return []
    kind = config.get("type") if isinstance(config, dict) else None
    if kind == "Sequence":
        return [step for c in config.get("decoders") or () for step in decoder_of(c)]
    if kind == "Replace":
        replace = _replace(config, "Replace decoder")
        return [lambda tokens: [replace(t) for t in tokens]]
    if kind == "ByteFallback":
        return [_byte_fallback]
    if kind == "Fuse":
        return [lambda tokens: ["".join(tokens)]]
    if kind == "Strip":
        content, start, stop = str(config.get("content", " ")), int(config.get("start", 0)), int(config.get("stop", 0))
        return [lambda tokens: [_strip_chars(t, content, start, stop) for t in tokens]]
    if kind == "Metaspace":
        replacement = config.get("replacement", SPACE)
        never = config.get("prepend_scheme") == "never" or config.get("add_prefix_space") is False
        # subtle: in the first token every replacement goes, not only the first one
        return [
            lambda tokens: [t.replace(replacement, "" if i == 0 and not never else " ") for i, t in enumerate(tokens)],
        ]
    raise TokenizerJsonError(f"A {kind} decoder is not of the SentencePiece family this tool reads.")


def _byte_fallback(tokens: list[str], errors: str = "") -> list[str]:
    out: list[str] = []
    queue = bytearray()

    def flush() -> None:
        if queue:
            try:
                out.append(queue.decode("utf-8", errors or "strict"))
            except UnicodeDecodeError:
                out.extend("\ufffd" * len(queue))
            queue.clear()

    for token in tokens:
        # a token of 6 bytes '<0x' XX '>', XX as Rust's u8::from_str_radix(_, 16) reads it (a '+' before one digit too)
        data = token.encode()
        if (
            len(data) == 6
            and data.startswith(b"<0x")
            and data.endswith(b">")
            and regex.fullmatch(rb"[0-9A-Fa-f]{2}|\+[0-9A-Fa-f]", data[3:5])
        ):
            queue.append(int(data[3:5], 16))
        else:
            flush()
            out.append(token)
    flush()
    return out


def _byte_fallback_raw(tokens: list[str]) -> list[str]:
    """ByteFallback keeping every byte: invalid UTF-8 as surrogateescape's surrogates (HFTokenizer.decode(raw=True))."""
    return _byte_fallback(tokens, "surrogateescape")


def _strip_chars(token: str, content: str, start: int, stop: int) -> str:
    begin = 0
    for i, ch in enumerate(token[:start]):
        if ch != content:
            break
        begin = i + 1
    end = len(token)
    for i in range(stop):
        index = len(token) - i - 1
        if index < 0 or token[index] != content:
            break
        end = index
    return token[begin:end] if begin <= end else ""


def is_sentencepiece_family(document: object) -> bool:
    """Is a tokenizer.json (parsed) of this family rather than GPT-2's byte-level BPE?

    This family's files have byte fallback, a Metaspace step, or a normalizer that prepends '▁' or writes spaces
    as '▁' (Llama 2's, Mistral's, those tokenizer_json writes); a byte-level file has a ByteLevel step and no
    byte fallback. A file with a ByteLevel step anywhere is byte-level (bpe/files/load.py reads it, or says why not).
    """
    if not isinstance(document, dict):
        return False
    found = _steps(document.get(part) for part in ("normalizer", "pre_tokenizer", "decoder"))
    kinds = {kind for step in found if isinstance(kind := step.get("type"), str)}
    if "ByteLevel" in kinds:
        return False
    model = document.get("model")
    if isinstance(model, dict) and model.get("byte_fallback") is True:
        return True
    return bool(kinds & {"Metaspace", "Prepend", "Precompiled"}) or any(
        step.get("type") == "Replace" and step.get("content") == SPACE for step in found
    )


def _steps(parts) -> list[dict]:
    """Every object nested in the parts (the steps of a normalizer, a pre-tokenizer, a decoder), depth first; no recursion."""
    found, stack = [], list(parts)
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            found.append(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return found


def _check(config: dict, model: dict, what: str) -> None:
    """Each part of a tokenizer.json that HFTokenizer reads is of the kind tokenizers writes; TokenizerJsonError names the first that is not.

    A file from anywhere (an upload) must be refused in one sentence, never with a KeyError deep inside.
    """

    def bad(part: str) -> TokenizerJsonError:
        return TokenizerJsonError(f"{what}'s {part} is not as HuggingFace tokenizers writes it.")

    def an_id(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < MAX_ID

    def text(value: object) -> bool:
        return isinstance(value, str) and (value.isascii() or not _SURROGATE.search(value))

    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not all(text(k) and an_id(v) for k, v in vocab.items()):
        raise TokenizerJsonError(f"{what}'s vocab is not a map of tokens to ids (whole numbers below {MAX_ID:,}).")
    merges = model.get("merges") or []
    if not isinstance(merges, list) or not all(
        (isinstance(m, list) and len(m) == 2 and all(text(t) for t in m)) or (text(m) and m.count(" ") == 1) for m in merges
    ):
        raise bad("model.merges")
    added = config.get("added_tokens") or []
    if not isinstance(added, list) or not all(isinstance(t, dict) and text(t.get("content")) and an_id(t.get("id")) for t in added):
        raise bad("added_tokens")
    for part in ("normalizer", "pre_tokenizer", "decoder"):
        for step in _steps([config.get(part)]):
            strings = ("prepend", "content", "replacement", "prepend_scheme", "behavior", "String", "Regex")
            if any(key in step and not text(step[key]) for key in strings):
                raise bad(part)
            if any(key in step and not (an_id(step[key]) and step[key] < 1 << 16) for key in ("start", "stop")):
                raise bad(part)
            lists = ("normalizers", "pretokenizers", "decoders")
            if any(key in step and not isinstance(step[key], list | None) for key in lists):
                raise bad(part)
    post = config.get("post_processor")
    if isinstance(post, dict) and post.get("type") == "TemplateProcessing":
        single, specials = post.get("single") or [], post.get("special_tokens") or {}
        if not isinstance(single, list) or not all(
            isinstance(item, dict) and all(isinstance(v, dict) and text(v.get("id", "")) for v in item.values()) for item in single
        ):
            raise bad("post_processor")
        if not isinstance(specials, dict) or not all(
            isinstance(v, dict) and isinstance(v.get("ids"), list) and all(an_id(i) for i in v["ids"]) for v in specials.values()
        ):
            raise bad("post_processor")


# ---------------------------------------------------------------------------
# the tokenizer


@dataclass(frozen=True)
class AddedToken:
    content: str
    id: int
    special: bool
    normalized: bool
    lstrip: bool = False
    rstrip: bool = False


class HFTokenizer:
    """A tokenizer.json of the SentencePiece family, encoded and decoded as `tokenizers` does.

    tok = HFTokenizer.load("../shared/llama2/tokenizer.json")
    tok.encode("Hello world")   # [1, 15043, 3186]: <s> first, as the post-processor puts it
    tok.decode([1, 15043, 3186])   # 'Hello world'
    """

    def __init__(self, config: dict, what: str = "The tokenizer.json") -> None:
        model = config.get("model")
        if not isinstance(model, dict) or model.get("type") != "BPE":
            kind = model.get("type") if isinstance(model, dict) else None
            raise TokenizerJsonError(f"{what} holds a {kind or 'missing'} model; this tool reads BPE models of the SentencePiece family.")
        if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
            raise TokenizerJsonError(f"{what} uses a subword prefix or suffix, which the SentencePiece family does not.")
        if model.get("dropout") not in (None, 0, 0.0):
            raise TokenizerJsonError(f"{what} has BPE dropout, which makes encoding random; this tool encodes without it.")
        _check(config, model, what)
        vocab = model.get("vocab")
        self.config = config  # the document as read: written back as it is (bpe.tokenizer's SentencePieceTokenizer.save)
        self.what = what
        self.vocab: dict[str, int] = dict(vocab)
        self.byte_fallback = bool(model.get("byte_fallback"))
        self.fuse_unk = bool(model.get("fuse_unk"))
        self.ignore_merges = bool(model.get("ignore_merges"))
        unk = model.get("unk_token")
        self.unk_id = self.vocab.get(unk) if isinstance(unk, str) else None
        if isinstance(unk, str) and self.unk_id is None:
            raise TokenizerJsonError(f"{what}'s unk_token {unk!r} is not in its vocab.")
        # merges: (left id, right id) -> (rank, new id); a pair listed twice keeps its last rank, as a Rust map built in order does
        self.merges: dict[tuple[int, int], tuple[int, int]] = {}
        for rank, merge in enumerate(model.get("merges") or ()):
            pair = merge.split(" ") if isinstance(merge, str) else merge
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise TokenizerJsonError(f"{what}'s merge number {rank} is not a pair of tokens.")
            a, b = pair
            if a not in self.vocab or b not in self.vocab or a + b not in self.vocab:
                raise TokenizerJsonError(f"{what}'s merge number {rank} ({a!r}, {b!r}) uses a token that is not in its vocab.")
            self.merges[(self.vocab[a], self.vocab[b])] = (rank, self.vocab[a + b])
        self.added = [
            AddedToken(
                t["content"], t["id"], bool(t.get("special")), bool(t.get("normalized", True)), bool(t.get("lstrip")), bool(t.get("rstrip"))
            )
            for t in config.get("added_tokens") or ()
        ]
        if any(t.get("single_word") for t in config.get("added_tokens") or ()):
            raise TokenizerJsonError(f"{what} has single_word added tokens, which this tool does not read.")
        self.id_to_token: dict[int, str] = {i: t for t, i in self.vocab.items()}
        self.id_to_token.update({t.id: t.content for t in self.added})
        self.normalize = normalizer_of(config.get("normalizer"))
        self.pre_tokenize = pre_tokenizer_of(config.get("pre_tokenizer"))
        self.decoders = decoder_of(config.get("decoder"))
        self.template = _template(config.get("post_processor"), what)
        self.byte_ids = [self.vocab.get(byte_piece(b)) for b in range(256)]
        self._raw = _alternation([t for t in self.added if not t.normalized])
        normalized = [
            AddedToken(self.normalize(t.content) if self.normalize else t.content, t.id, t.special, True)
            for t in self.added
            if t.normalized
        ]
        self._normalized = _alternation(normalized)
        self._normalized_ids = {t.content: t.id for t in normalized}
        self._n_ranks = len(model.get("merges") or ())
        self._compiled = None  # the core's HFBpe, made when first used (compiled())

    def __reduce__(self):
        """Pickled as its document (a worker process hands a file it read to the server): the steps are made again."""
        return HFTokenizer, (self.config, self.what)

    @classmethod
    def load(cls, path: str | Path) -> HFTokenizer:
        path = Path(path)
        try:
            if path.stat().st_size > MAX_FILE:
                raise TokenizerJsonError(f"{path} is over {MAX_FILE >> 20} MB; a tokenizer.json is at most that here.")
            config = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise TokenizerJsonError(f"Cannot read {path}: {getattr(error, 'strerror', None) or error}.") from None
        if not isinstance(config, dict):
            raise TokenizerJsonError(f"{path} is not a tokenizer.json (not a JSON object).")
        return cls(config, str(path))

    # -- encoding ------------------------------------------------------------
    def _split_raw(self, text: str) -> list[tuple[str, int | None, int]]:
        """AddedVocabulary.find_matches on the raw text: (piece, added token id or None, where it starts)."""
        if self._raw is None:
            return [(text, None, 0)]
        out, at = [], 0
        by_content = {t.content: t for t in self.added if not t.normalized}
        for match in self._raw.finditer(text):
            token = by_content[match.group()]
            start, stop = match.start(), match.end()
            if token.lstrip:
                start = max(at, len(text[:start].rstrip()))
            if token.rstrip:
                stop = len(text) - len(text[stop:].lstrip())
            if at < start:
                out.append((text[at:start], None, at))
            out.append((text[start:stop], token.id, start))
            at = stop
        if at < len(text) or not out:
            out.append((text[at:], None, at))
        return out

    def word(self, piece: str) -> list[int]:
        """BPE.merge_word: the characters' ids (bytes or <unk> for those not in the vocab), then the merges by rank.

        By the compiled core where it is built (bpe/c/spm.c HFBpe, the same ids), else in Python (`_merge`).
        """
        if self.ignore_merges and piece in self.vocab:
            return [self.vocab[piece]]
        compiled = self.compiled()
        if compiled is not None:
            return compiled.word(piece.encode())
        return [s for s, _ in self._merge(piece, None)]

    def compiled(self):
        """The core's HFBpe for this tokenizer's model, or None where the core is absent."""
        if self._compiled is None:
            core = compiled_core()
            if core is None:
                return None
            self._compiled = core.HFBpe(
                [(token.encode(), i) for token, i in self.vocab.items()],
                [(a, b, rank, made) for (a, b), (rank, made) in self.merges.items()],
                self._n_ranks,
                [-1 if i is None else i for i in self.byte_ids],
                -1 if self.unk_id is None else self.unk_id,
                self.fuse_unk,
                self.byte_fallback,
                SEED,
            )
        return self._compiled

    def symbols(self, piece: str) -> list[int]:
        """A pre-token's ids before any merge: its characters, a byte fallback's <0xNN> pieces, a run of <unk> fused."""
        return [s[0] for s in self._symbols(piece)]

    def _symbols(self, piece: str) -> list[list[int]]:
        symbols: list[list[int]] = []  # [id, length in bytes]
        unk: list[int] | None = None
        for ch in piece:
            n = len(ch.encode())
            if ch in self.vocab:
                if unk is not None:
                    symbols.append(unk)
                    unk = None
                symbols.append([self.vocab[ch], n])
                continue
            if self.byte_fallback and all(self.byte_ids[b] is not None for b in ch.encode()):
                # subtle: a pending <unk> is not added before these bytes, as tokenizers does it
                symbols.extend([self.byte_ids[b], 1] for b in ch.encode())
                continue
            if self.unk_id is not None:
                if unk is not None and self.fuse_unk:
                    unk[1] += n
                else:
                    if unk is not None:
                        symbols.append(unk)
                    unk = [self.unk_id, n]
        if unk is not None:
            symbols.append(unk)
        return symbols

    def _merge(self, piece: str, steps: list | None) -> list[tuple[int, int]]:
        symbols = self._symbols(piece)
        # Word.merge_all: a heap of (rank, position); an entry is stale if the pair there no longer makes its new id
        ids = [s[0] for s in symbols]
        alive = [True] * len(ids)
        nxt = list(range(1, len(ids) + 1))
        prev = list(range(-1, len(ids) - 1))
        if nxt:
            nxt[-1] = -1
        heap = []
        for i in range(len(ids) - 1):
            if (m := self.merges.get((ids[i], ids[i + 1]))) is not None:
                heap.append((m[0], i, m[1]))
        heapq.heapify(heap)
        while heap:
            rank, i, new_id = heapq.heappop(heap)
            if not alive[i] or nxt[i] == -1:
                continue
            j = nxt[i]
            m = self.merges.get((ids[i], ids[j]))
            if m is None or m[1] != new_id:
                continue
            ids[i] = new_id
            alive[j] = False
            nxt[i] = nxt[j]
            if nxt[j] != -1:
                prev[nxt[j]] = i
            if steps is not None:
                steps.append((tuple(ids[k] for k in range(len(ids)) if alive[k]), sum(alive[:i]), rank))
            if prev[i] != -1 and (m := self.merges.get((ids[prev[i]], ids[i]))) is not None:
                heapq.heappush(heap, (m[0], prev[i], m[1]))
            if nxt[i] != -1 and (m := self.merges.get((ids[i], ids[nxt[i]]))) is not None:
                heapq.heappush(heap, (m[0], i, m[1]))
        return [(ids[k], 0) for k in range(len(ids)) if alive[k]]

    def pre_tokens(self, text: str) -> list[tuple[str, int | None]]:
        """The text up to the model: (pre-token, None) to encode, or (added token, its id)."""
        out: list[tuple[str, int | None]] = []
        for piece, token, start in self._split_raw(text):
            if token is not None:
                out.append((piece, token))
                continue
            normalized = self.normalize(piece) if self.normalize else piece
            for k, (sub, sub_token) in enumerate(self._split_normalized(normalized)):
                if sub_token is not None:
                    out.append((sub, sub_token))
                    continue
                pieces = [sub] if sub else []
                for step in self.pre_tokenize:
                    pieces = [p for q in pieces for p in step(q, start == 0 and k == 0)]
                out.extend((p, None) for p in pieces)
        return out

    def _split_normalized(self, text: str) -> list[tuple[str, int | None]]:
        if self._normalized is None:
            return [(text, None)]
        out, at = [], 0
        for match in self._normalized.finditer(text):
            if at < match.start():
                out.append((text[at : match.start()], None))
            out.append((match.group(), self._normalized_ids[match.group()]))
            at = match.end()
        if at < len(text) or not out:
            out.append((text[at:], None))
        return out

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        """tokenizers' Tokenizer.encode(text).ids; a lone surrogate is refused, as tokenizers refuses it."""
        if not text.isascii() and _SURROGATE.search(text):
            found = _SURROGATE.search(text).group()
            raise ValueError(
                f"The text holds a lone surrogate (U+{ord(found):04X}), which is no character: HuggingFace tokenizers refuses such text too."
            )
        ids: list[int] = []
        for piece, token in self.pre_tokens(text):
            if token is not None:
                ids.append(token)
            elif piece:
                ids.extend(self.word(piece))
        if add_special_tokens and self.template is not None:
            before, after = self.template
            ids = [*before, *ids, *after]
        return ids

    def encode_steps(self, text: str) -> list[tuple[str, list[tuple[tuple[int, ...], int, int]]]]:
        """For each pre-token, its merges in order: (ids after the merge, where the merged token is, the merge's rank)."""
        return [(piece, self.word_steps(piece)) for piece, token in self.pre_tokens(text) if token is None and piece]

    def word_steps(self, piece: str) -> list[tuple[tuple[int, ...], int, int]]:
        """One pre-token's merges in order, by the Python path: (ids after the merge, where the merged token is, its rank)."""
        steps: list = []
        self._merge(piece, steps)
        return steps

    # -- decoding ------------------------------------------------------------
    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True, *, raw: bool = False) -> str:
        """tokenizers' Tokenizer.decode: ids to tokens (special added tokens skipped), then the decoders.

        raw: a run of byte pieces that is not UTF-8 keeps its bytes, each invalid one as the surrogate
        surrogateescape makes of it (U+DC80..U+DCFF), where tokenizers writes U+FFFD a byte: the text then
        encodes back (.encode("utf-8", "surrogateescape")) to the bytes the pieces stand for.
        """
        special = {t.id for t in self.added if t.special}
        tokens = []
        for i in ids:
            if skip_special_tokens and i in special:
                continue
            if i not in self.id_to_token:
                continue  # tokenizers leaves out an id it does not know
            tokens.append(self.id_to_token[i])
        if not self.decoders:
            return " ".join(tokens)
        for step in self.decoders:
            tokens = (_byte_fallback_raw if raw and step is _byte_fallback else step)(tokens)
        return "".join(tokens)


def _alternation(tokens: Sequence[AddedToken]) -> regex.Pattern | None:
    """Leftmost-longest matching of the tokens' contents (daachorse's MatchKind::LeftmostLongest), as one regex."""
    contents = sorted({t.content for t in tokens if t.content}, key=len, reverse=True)
    return regex.compile("|".join(regex.escape(c) for c in contents)) if contents else None


def _template(config: object, what: str) -> tuple[list[int], list[int]] | None:
    """TemplateProcessing's single template as (ids before the text, ids after it); None without a post-processor."""
    if config is None:
        return None
    if not isinstance(config, dict) or config.get("type") != "TemplateProcessing":
        kind = config.get("type") if isinstance(config, dict) else config
        raise TokenizerJsonError(f"{what} has a {kind} post-processor; this tool reads TemplateProcessing only.")
    specials = config.get("special_tokens") or {}
    before: list[int] = []
    after: list[int] = []
    seen_sequence = False
    for item in config.get("single") or ():
        if "Sequence" in item:
            seen_sequence = True
        elif "SpecialToken" in item:
            name = item["SpecialToken"].get("id")
            ids = (specials.get(name) or {}).get("ids")
            if not isinstance(ids, list):
                raise TokenizerJsonError(f"{what}'s post-processor names the special token {name!r} without its ids.")
            (after if seen_sequence else before).extend(ids)
    return before, after


# ---------------------------------------------------------------------------
# writing a tokenizer.json for a SentencePiece model


def hf_merges(model: SentencePieceModel) -> list[tuple[str, str]]:
    """The merges transformers derives from a BPE model's pieces: every split of a NORMAL piece into two NORMAL
    pieces, ranked by the merged piece's score (highest first), then its id, then the halves."""
    normal = {p.piece: (p.score, i) for i, p in enumerate(model.pieces) if p.type == NORMAL}
    ranked = []
    for token, (score, i) in normal.items():
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            if left in normal and right in normal:
                ranked.append((-score, i, left, right))
    ranked.sort()
    return [(left, right) for _, _, left, right in ranked]


def tokenizer_json(model: SentencePieceModel) -> dict:
    """The tokenizer.json transformers' SpmConverter.build_tokenizer_from_spm_proto makes of model (see the module docstring)."""
    spec = model.normalizer
    user_defined = [p.piece for p in model.pieces if p.type == USER_DEFINED]
    normalizers: list[dict] = []
    if spec.precompiled_charsmap:
        normalizers.append({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(spec.precompiled_charsmap).decode()})
    if spec.remove_extra_whitespaces:
        normalizers.append({"type": "Replace", "pattern": {"Regex": r"\A +| +\z"}, "content": ""})
        normalizers.append({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "})
    if spec.escape_whitespaces:
        normalizers.append({"type": "Replace", "pattern": {"String": " "}, "content": SPACE})
    if spec.add_dummy_prefix:
        normalizers.append({"type": "Replace", "pattern": {"Regex": r"\A▁"}, "content": "▁▁"})
    pre_tokenizers: list[dict] = []
    if spec.add_dummy_prefix:
        pre_tokenizers.append({"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "always", "split": False})
    if user_defined:
        pattern = "|".join(regex.escape(p) for p in sorted(user_defined, key=len, reverse=True))
        pre_tokenizers.append({"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False})
    decoders: list[dict] = [{"type": "Replace", "pattern": {"String": SPACE}, "content": " "}]
    if model.byte_fallback:
        decoders.append({"type": "ByteFallback"})
    if spec.add_dummy_prefix:
        decoders += [{"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]
    elif model.byte_fallback:
        decoders.append({"type": "Fuse"})
    special = [
        {"id": i, "content": p.piece, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
        for i, p in enumerate(model.pieces)
        if p.type in (UNKNOWN, CONTROL)
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": special,
        "normalizer": {"type": "Sequence", "normalizers": normalizers},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": pre_tokenizers} if pre_tokenizers else None,
        "post_processor": None,
        "decoder": {"type": "Sequence", "decoders": decoders},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": model.unk_piece if model.unk_piece in model.id_of else None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": True,
            "byte_fallback": model.byte_fallback,
            "ignore_merges": bool(user_defined),
            "vocab": {p.piece: i for i, p in enumerate(model.pieces)},
            "merges": [list(m) for m in hf_merges(model)],
        },
    }


def write_tokenizer_json(model: SentencePieceModel, path: str | Path) -> None:
    """Write tokenizer.json for model, atomically (bpe.atomic); tokenizers.Tokenizer.from_file(path) loads it."""
    write_text(path, json.dumps(tokenizer_json(model), ensure_ascii=False, indent=2) + "\n")
