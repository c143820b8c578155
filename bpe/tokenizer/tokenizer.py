"""The Tokenizer: a trained BPE's vocabulary and merges, checked, and what encodes and decodes with them.

The CS336 interface, exactly: ``Tokenizer(vocab, merges, special_tokens)`` with
ids taken from ``vocab`` as given (GPT-2's own order included),
``Tokenizer.from_files(vocab_path, merges_path, special_tokens)``, ``encode``,
``encode_iterable`` and ``decode``. ``Tokenizer.from_merges`` builds one in this
tool's own layout (bytes, merges in order, special tokens), ``from_training``
from a run, ``load`` from any file the format registry reads (files/formats.py),
``from_openai`` one of OpenAI's encodings. A file of the SentencePiece family
(a .model, Llama 2's tokenizer.json) loads as a SentencePieceTokenizer
(sentencepiece_tokenizer.py), with the same everyday interface; `family` tells
the two apart.

Encoding is encoder.py's three steps (special tokens, pre-tokens, merges by rank),
run by the compiled core where it is built (encode_c.py: the same ids, held so by
the property tests) and by encoder.py where it is not. The same tokens as replaying
the training merges in order (see `Teaching.bpe` for the one exception), and the
same ids as GPT-2, HuggingFace tokenizers and tiktoken given the same files.

decode() replaces bytes that are not valid UTF-8 with U+FFFD, as CS336 and
tiktoken do; decode_bytes() is lossless: decode_bytes(encode(b)) == b for all
bytes b (invalid UTF-8 is kept through surrogateescape), with any regex as the
pre-tokenizer too (the text between its matches is pre-tokenized as itself), except
with a pre-tokenizer that drops text by design (whitespace: PreTokenizer.lossless).

Special tokens, by default: a tokenizer encodes the special tokens it was given
as special wherever the text spells them, as CS336's Tokenizer and HuggingFace
do -- except OpenAI's encodings (from_openai, or OpenAI's own rank files), which
follow tiktoken (tiktoken_api.py): text that spells one of their special tokens is
refused with ValueError unless `allowed_special` allows it (user text that becomes a
control token is an injection risk), and encode_ordinary encodes it as plain text.
Each call can say otherwise, with tiktoken's keywords; `allowed_special=` given to
the constructor changes the tokenizer's default.

Text that is not clean UTF-8, as tiktoken treats it: a str's surrogate pair is
the character it stands for and a lone surrogate is U+FFFD (except U+DC80..U+DCFF,
which Python's surrogateescape makes of invalid bytes: each is that byte); bytes
whose invalid UTF-8 is at the end (a character cut short) are encoded as tiktoken's
_encode_bytes does, the last piece's tokens merged again with the loose bytes, and
invalid bytes anywhere else are kept, each byte its own, as training counted them.

Rooms beside it: encoder.py (the encoder a student reads), steps.py (encoding shown:
steps, ancestry), tiktoken_api.py (tiktoken's interface), encodings.py (tiktoken's
get_encoding). Not here: the file formats (files/) or training (train.py).
"""

from __future__ import annotations

import codecs
import re
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from random import Random
from typing import TYPE_CHECKING

import regex

from ..files import formats, load
from ..renamed import renamed
from ..text import pretokenize_c
from ..text.pretokenizers import DEFAULT, ENCODING, ERRORS, PreTokenizer, check_special_tokens, find_specials, pretokenizer_of
from ..train import Merges, Training, Vocab, build_vocab
from . import encode_c
from .encoder import Encoder
from .steps import Ancestry, EncodeStep, Teaching
from .tiktoken_api import END_OF_TEXT, TiktokenInterface, token_offsets

if TYPE_CHECKING:  # imported where a file of the SentencePiece family is loaded: bpe train and GPT-2's files do without it (~30 ms)
    from .sentencepiece_tokenizer import SentencePieceTokenizer

__all__ = ["END_OF_TEXT", "Ancestry", "EncodeStep", "Tokenizer", "token_offsets"]

BYTES = [bytes([b]) for b in range(256)]
MAX_ID = 1 << 32  # ids are below this: a pair of ids is looked up as one number, left << 32 | right
STREAM_CHUNK = 1 << 16  # encode_iterable encodes about this many characters at a time

# A safe place to cut text for streaming: a letter or digit followed by whitespace. No pre-token of a
# pre-tokenizer that cuts at spaces spans it (PreTokenizer.cut_at_space), and none looks across it; for a
# regex of the user's nothing is known, so text is cut only at special tokens.
_CUT = regex.compile(r"(?r)[\p{L}\p{N}](?=\s)")
_OPENAI: dict[tuple, Tokenizer] = {}  # OpenAI's encodings, loaded once per process (from_openai)
_OPENAI_LOCK = threading.RLock()  # re-entered: an encoding built on its base loads the base first


class Tokenizer(TiktokenInterface, Teaching):
    family = "byte-level"  # GPT-2's family; a SentencePieceTokenizer's is "sentencepiece"

    @renamed(pattern="pretokenizer")
    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        special_tokens: Sequence[str] | None = None,
        *,
        pretokenizer: str | PreTokenizer = DEFAULT,
        counts: Sequence[int | None] | None = None,
        allowed_special: str | Collection[str] = "all",
        name: str = "",
        ignore_merges: bool = False,
    ) -> None:
        """A tokenizer over any vocabulary: ids are the keys of vocab, as given.

        A special token already in vocab keeps its id; one that is not gets the
        next free id. A merge whose two tokens are in vocab must make a token that
        is too. A merge with a part that is not a token can never apply: it is kept
        in `merges` at its rank and listed in `inert` (CS336's harness reads GPT-2's
        header line '#version: 0.2' as the merge ('#version:', '0.2')).
        `counts` is each merge's count when it was made (None: unknown).
        `allowed_special` is encode()'s default: "all" (the special tokens given are
        special wherever the text spells them), or those of them that are; the rest
        are refused (tiktoken's disallowed_special="all"). `name` names it, as
        tiktoken's Encoding.name does ('cl100k_base'; '' for a tokenizer of yours).
        `pretokenizer` is a PreTokenizer, a name or a regex (pattern=, its old name, is still accepted).
        `ignore_merges` (HuggingFace's, Llama 3's): a pre-token that is itself a token of the vocabulary is
        that token, whatever the merges would make of it (with every merge: not with the first k).
        """
        self.pretokenizer = pretokenizer_of(pretokenizer)
        special_tokens = [] if special_tokens is None else special_tokens
        check_special_tokens(special_tokens)
        special_tokens = list(special_tokens)
        indexed = encode_c.index_vocab(vocab, merges)  # the checks and the ids below, compiled; None: run them here
        if indexed is not None:
            self.vocab, self.merges, self.ids = indexed
        else:
            self.vocab: Vocab = _checked_vocab(vocab)
            self.merges: Merges = _checked_merges(merges)
            self.ids: dict[bytes, int] = {}
            for i, token in sorted(self.vocab.items()):
                self.ids.setdefault(token, i)  # subtle: equal bytes under two ids share the first
        self.counts: tuple[int | None, ...] = _checked_counts(counts, len(self.merges))
        for token in special_tokens:
            data = token.encode(ENCODING)
            if data not in self.ids:
                new_id = max(self.vocab, default=-1) + 1
                if new_id >= MAX_ID:
                    raise ValueError(f"No id is left for special token {token!r}: ids must stay below 2**32.")
                self.vocab[new_id], self.ids[data] = data, new_id
        self.special_tokens = tuple(special_tokens)
        self.name = name
        self.allowed_special: frozenset[str] = frozenset()
        self.allowed_special = self._allowed(allowed_special)
        try:
            self._compiled = encode_c.encoder(self.ids, self.merges, self.pretokenizer)  # None: no compiled core
        except ValueError:  # a merge that makes no token: _inert_merges says which
            self._compiled = None
        self.inert = self._compiled.inert if self._compiled is not None else _inert_merges(self.merges, self.ids)
        # encoder.py's Encoder: the reference, and where the core is absent the encoder; where the core is built but has no
        # scanner for this pre-tokenizer (a regex of the user's), Python pre-tokenizes and the core merges each pre-token
        python = Encoder if self._compiled is None else _CoreMerging
        self.ignore_merges = bool(ignore_merges)
        whole = {t: i for t, i in self.ids.items() if t not in self._special_bytes} if self.ignore_merges else None
        self._python = python(self.ids, self.merges, self.inert, self.pretokenizer, whole)
        self._python.core = self._compiled  # None for the plain Encoder
        self._longest_special = max((len(t) for t in self.special_tokens), default=0)

    # -- building and loading ------------------------------------------------
    @classmethod
    @renamed(pattern="pretokenizer")
    def from_merges(
        cls,
        merges: Merges,
        special_tokens: Sequence[str] = (),
        pretokenizer: str | PreTokenizer = DEFAULT,
        *,
        counts: Sequence[int | None] | None = None,
    ) -> Tokenizer:
        """A tokenizer in this tool's id layout (bytes 0-255, merges in order, then the special tokens) from its merges."""
        load.check_merges(merges)
        merges = [(bytes(a), bytes(b)) for a, b in merges]
        return cls(build_vocab(merges, special_tokens), merges, special_tokens, pretokenizer=pretokenizer, counts=counts)

    @classmethod
    @renamed(pattern="pretokenizer")
    def from_training(cls, training: Training, pretokenizer: str | PreTokenizer | None = None) -> Tokenizer:
        """The tokenizer a training run made, with each merge's count.

        Its pre-tokenizer is the run's spec's, unless given: a run on counts made elsewhere (train(pretokenize(...)))
        knows only the counts, not what cut them.
        """
        counts = [e.count for e in training.events]
        pretokenizer = training.spec.pretokenizer if pretokenizer is None else pretokenizer
        return cls(training.vocab, training.merges, training.special_tokens, pretokenizer=pretokenizer, counts=counts)

    @classmethod
    @renamed(pattern="pretokenizer")
    def from_files(
        cls,
        vocab_filepath: str | Path,
        merges_filepath: str | Path,
        special_tokens: Sequence[str] | None = None,
        *,
        pretokenizer: str | PreTokenizer = DEFAULT,
    ) -> Tokenizer:
        """CS336's constructor from GPT-2-format files (vocab.json + merges.txt, or encoder.json + vocab.bpe).

        As with the constructor, the special tokens are the ones given: GPT-2's
        '<|endoftext|>' is special only when listed (load() finds it by itself).
        """
        vocab_path, merges_path = Path(vocab_filepath), Path(merges_filepath)
        texts = [load.read_text(p) for p in (vocab_path, merges_path)]
        loaded = load.parse_gpt2(*texts, str(vocab_path), str(merges_path))
        return cls(loaded.vocab, loaded.merges, special_tokens, pretokenizer=pretokenizer)

    @classmethod
    @renamed(pattern="pretokenizer")
    def load(
        cls, path: str | Path, *, pretokenizer: str | PreTokenizer | None = None, special_tokens: Sequence[str] | None = None
    ) -> Tokenizer | SentencePieceTokenizer:
        """Load any format the registry reads (a directory or one file); ValueError says what is wrong.

        `pretokenizer` is only used by formats that do not record it (GPT-2 files, .tiktoken; default gpt2);
        `special_tokens` are added to those the file declares. A SentencePiece .model, or a tokenizer.json of
        that family (Llama 2's, Mistral's), gives a SentencePieceTokenizer (`family` "sentencepiece").
        """
        loaded = formats.read(path, pretokenizer=pretokenizer)
        try:
            return cls.from_loaded(loaded, special_tokens=special_tokens)
        except ValueError as e:  # what the loader let through and the constructor refused: still name the file
            raise ValueError(f"{path}: {e}") from None

    @classmethod
    def from_loaded(cls, loaded: load.Loaded, *, special_tokens: Sequence[str] | None = None) -> Tokenizer | SentencePieceTokenizer:
        """The tokenizer a file held (formats.read, formats.read_uploads), with extra special tokens if given.

        A file of the SentencePiece family gives a SentencePieceTokenizer (which takes no extra special tokens).
        """
        if loaded.family == "sentencepiece":
            from .sentencepiece_tokenizer import SentencePieceTokenizer

            return SentencePieceTokenizer.from_loaded(loaded, special_tokens=special_tokens)
        extra = special_tokens or ()
        special_tokens = list(loaded.special_tokens) + [t for t in extra if t not in loaded.special_tokens]
        if loaded.vocab is None:
            return cls.from_merges(loaded.merges, special_tokens, loaded.pretokenizer, counts=loaded.counts)
        allowed = frozenset(extra) if loaded.encoding else "all"  # OpenAI's: tiktoken's default, but those asked for
        return cls(
            loaded.vocab,
            loaded.merges,
            special_tokens,
            pretokenizer=loaded.pretokenizer,
            counts=loaded.counts,
            allowed_special=allowed,
            name=loaded.encoding,
            ignore_merges=loaded.ignore_merges,
        )

    @classmethod
    def from_openai(cls, name: str, *, folder: str | Path | None = None, download: bool = True) -> Tokenizer:
        """One of OpenAI's encodings, by its name ('cl100k_base', 'o200k_harmony', ...) or a model's ('gpt-4o'), as tiktoken has it.

        Its files are found in `folder`, beside a checkout of this project (../shared), in
        tiktoken's cache, or downloaded from OpenAI when `download` (see openai.py); each is
        checked against OpenAI's sha256. Its special tokens follow tiktoken: refused in text
        unless allowed. Loaded once per process (cl100k_base takes about a second).
        """
        from ..files import openai

        encoding = openai.encoding_of(name)
        key = (encoding.name, None if folder is None else str(folder))
        with _OPENAI_LOCK:
            known = _OPENAI.get(key)
            if known is None:
                if encoding.base:  # o200k_harmony, p50k_edit: their base's ranks, taken from it rather than read again
                    base = cls.from_openai(encoding.base, folder=folder, download=download)
                    ranks, merges = {i: t for i, t in base.vocab.items() if t not in base._special_bytes}, base.merges
                else:
                    loaded = formats.read_uploads(openai.files_of(encoding, folder, download_missing=download))
                    ranks, merges = loaded.vocab, loaded.merges
                first: dict[int, str] = {}  # subtle: o200k_harmony names id 200018 twice (<|endofprompt|>, <|reserved_200018|>)
                for text, i in encoding.special_tokens.items():
                    first.setdefault(i, text)
                vocab = dict(ranks) | {i: text.encode(ENCODING) for i, text in first.items()}
                known = cls(vocab, merges, list(first.values()), pretokenizer=encoding.pretokenizer, allowed_special=(), name=encoding.name)
                for text, i in encoding.special_tokens.items():
                    if first[i] != text:
                        known._alias_special(text, i)
                _OPENAI[key] = known
        return known

    @cached_property
    def ranks(self) -> dict[tuple[bytes, bytes], int]:
        """Each merge's rank by its pair of tokens (the first rank, should a pair be listed twice)."""
        return {pair: rank for rank, pair in reversed(list(enumerate(self.merges))) if rank not in self.inert}

    def __reduce__(self):
        """Pickled as what builds it again (vocab, merges, special tokens, settings), never its caches: for worker processes."""
        first = [t for t in self.special_tokens if self.vocab.get(self.ids[t.encode(ENCODING)]) == t.encode(ENCODING)]
        aliases = [(t, self.ids[t.encode(ENCODING)]) for t in self.special_tokens if t not in first]
        settings = (self.pretokenizer, self.counts, sorted(self.allowed_special), self.name, self.ignore_merges)
        return _rebuild, (self.vocab, self.merges, first, settings, aliases)

    def _alias_special(self, token: str, i: int) -> None:
        """Another special token with an existing token's id (encoding gives i; decoding i gives the first name)."""
        check_special_tokens([*self.special_tokens, token])
        self.ids[token.encode(ENCODING)] = i
        self.special_tokens += (token,)
        self._longest_special = max(self._longest_special, len(token))
        self.__dict__.pop("_special_bytes", None)  # a cached_property: computed again

    @property
    def own_layout(self) -> bool:
        """Ids follow this tool's layout: the bytes in byte order, the merges in order, then the special tokens."""
        return self.vocab == build_vocab(self.merges, self.special_tokens)

    def save(self, directory: str | Path, k: int | None = None) -> list[Path]:
        """Write every format (with the first k merges) to directory; return the paths."""
        return formats.save(directory, self.files(k))

    def files(self, k: int | None = None) -> dict[str, str]:
        """Every format that can hold this tokenizer (with its first k merges), as {file name: text}.

        A tokenizer whose ids follow another tool's layout keeps them, in
        vocab.json and tokenizer.json (the plain JSON format cannot hold them).
        """
        k = self._limit(k)
        vocab = None if self.own_layout else self._vocab_of_first(k)
        kept = [rank for rank in range(k) if rank not in self.inert]  # a merge that never applies is not written
        merges, counts = [self.merges[r] for r in kept], [self.counts[r] for r in kept]
        return formats.files(merges, self.special_tokens, self.pretokenizer, counts, vocab=vocab, ignore_merges=self.ignore_merges)

    def _vocab_of_first(self, k: int) -> Vocab:
        kept = set(BYTES) | {a + b for a, b in self.merges[:k]} | {t.encode(ENCODING) for t in self.special_tokens}
        return {i: t for i, t in self.vocab.items() if t in kept}

    # -- encoding -------------------------------------------------------------
    def _limit(self, k: int | None) -> int:
        if k is None:
            return len(self.merges)
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValueError(f"k must be a whole number of merges, at least 0, not {k!r}.")
        return min(k, len(self.merges))

    def encode(
        self,
        text: str | bytes,
        k: int | None = None,
        *,
        allowed_special: str | Collection[str] | None = None,
        disallowed_special: str | Collection[str] = "all",
        dropout: float = 0.0,
        seed: int | Random | None = None,
    ) -> list[int]:
        """The ids of text; with k, only the first k merges are used.

        allowed_special: the special tokens encoded as special where the text spells
        them ("all", a set, or None for this tokenizer's default: see the module's
        docstring); disallowed_special: those whose text raises ValueError ("all":
        every special token not allowed; () none: they are encoded as plain text),
        exactly as tiktoken's Encoding.encode. Bytes may hold invalid UTF-8 (see the
        module's docstring); a str's surrogates are taken as tiktoken takes them.
        dropout: BPE-dropout, each merge skipped with this probability as HuggingFace's
        BPE(dropout=p) skips it (encoder.py's merge_dropout, in Python, never cached);
        seed: an int (the same ids for the same seed), a random.Random to draw from, or None.
        """
        limit = self._limit(k)
        allowed = self.allowed_special if allowed_special is None else self._allowed(allowed_special)
        if dropout:
            return self._encode_dropout(text, limit, allowed, disallowed_special, dropout, seed)
        if isinstance(text, (bytes, bytearray)):
            return self._encode_data(bytes(text), limit, allowed, disallowed_special)
        if not isinstance(text, str):
            raise ValueError(f"encode takes text (str or bytes), not {type(text).__name__}.")
        self._refuse(text, allowed, disallowed_special)
        return self._encode_text_or_surrogates(text, limit, allowed)

    def _encode_dropout(self, text, limit: int, allowed: frozenset[str], disallowed_special, p: float, seed) -> list[int]:
        """encode() with BPE-dropout: the readable encoder's merge_dropout for each pre-token (bytes read as surrogateescape)."""
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise ValueError(f"dropout is a probability, from 0 to 1, not {p!r}.")
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode(ENCODING, ERRORS)
        elif not isinstance(text, str):
            raise ValueError(f"encode takes text (str or bytes), not {type(text).__name__}.")
        self._refuse(text, allowed, disallowed_special)
        rng = seed if isinstance(seed, Random) else Random(seed)
        specials = {token: self.ids[token.encode(ENCODING)] for token in allowed}
        try:
            return self._python.encode(text, limit, specials, (float(p), rng))
        except UnicodeEncodeError:  # a lone surrogate, as tiktoken takes it: U+FFFD
            return self._python.encode(_as_tiktoken(text), limit, specials, (float(p), rng))

    def _encode_text(self, text: str, limit: int, allowed: frozenset[str]) -> list[int]:
        """Special tokens allowed kept whole (the longest first), the text between them pre-tokenized and merged."""
        compiled = self._encode_compiled(text, limit, allowed)
        if compiled is not None:
            return compiled
        specials = {token: self.ids[token.encode(ENCODING)] for token in allowed}
        try:
            return self._python.encode(text, limit, specials)
        except UnicodeEncodeError as e:  # a lone surrogate in a pre-token, which no bytes decode to
            raise _Surrogate(_surrogate_sentence(e.object[e.start])) from None

    def _encode_data(self, data: bytes, limit: int, allowed: frozenset[str], disallowed_special) -> list[int]:
        """Bytes: valid UTF-8 as its text; invalid bytes at the end as tiktoken's _encode_bytes; elsewhere each byte kept.

        subtle: tiktoken encodes the valid text, then takes the tokens of its last
        pre-token (and the all-whitespace tokens before it) back off, and merges
        their bytes with the loose bytes as one piece: b' \xec\x8b\xa4\xed' is one
        token in cl100k_base, where each invalid byte on its own would be three.
        """
        try:
            text = data.decode(ENCODING)
        except UnicodeDecodeError as e:
            text = data.decode(ENCODING, ERRORS)
            self._refuse(text, allowed, disallowed_special)
            tail = data[e.start :]
            if not _all_invalid(tail):  # invalid bytes with text after them: each byte kept, as training counted them
                compiled = self._encode_compiled(data, limit, allowed)  # the bytes as they are: the core keeps each invalid one
                return compiled if compiled is not None else self._encode_text(text, limit, allowed)
            valid = text[: len(text) - len(tail)]
            ids = self._encode_text(valid, limit, allowed)
            last = self._last_piece_length(valid, limit, allowed, ids)
            loose = self.decode_bytes(ids[len(ids) - last :]) + tail if last else tail
            return ids[: len(ids) - last] + list(self._word_ids(loose, limit))
        self._refuse(text, allowed, disallowed_special)
        return self._encode_text(text, limit, allowed)

    def _encode_run(self, texts: list, allowed_special, disallowed_special) -> list[list[int]]:
        """encode() of each text, in order (a batch's run of texts): where the core encodes, every str in one call to it."""
        allowed = self.allowed_special if allowed_special is None else self._allowed(allowed_special)
        limit = len(self.merges)
        compiled = self._compiled
        if compiled is None or compiled.kind < 0 or self.ignore_merges or not all(type(text) is str for text in texts):
            return [self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special) for text in texts]
        for text in texts:  # the first text in order that spells a disallowed special token is the error
            self._refuse(text, allowed, disallowed_special)
        found = compiled.encode_many(texts, limit, tuple(token.encode(ENCODING) for token in allowed))
        return [ids if ids is not None else self._encode_text_or_surrogates(text, limit, allowed) for ids, text in zip(found, texts)]

    def _encode_text_or_surrogates(self, text: str, limit: int, allowed: frozenset[str]) -> list[int]:
        """_encode_text, and a str with a lone surrogate as tiktoken takes it (a pair is its character, a lone one U+FFFD)."""
        try:
            return self._encode_text(text, limit, allowed)
        except _Surrogate:
            return self._encode_text(_as_tiktoken(text), limit, allowed)

    def _encode_compiled(self, text: str | bytes, limit: int, allowed: Collection[str], as_array: int = 0):
        """_encode_text in one call to the compiled core (encode_c.py), or None where the Python path encodes.

        None: no compiled core, or no compiled scanner for the pre-tokenizer; a str holding a lone surrogate
        that stands for no byte, or invalid bytes (U+DC80..U+DCFF) that would be read again as other UTF-8
        than they were (bytes are given as they are, and the core keeps each invalid byte as the Python path
        does); a byte the vocabulary lacks (the Python path says so in a sentence). as_array 4 or 2: the ids
        as a bytearray of native uint32 or uint16, not a list (encode_to_numpy, encode_files).
        """
        if self._compiled is None or self._compiled.kind < 0:
            return None
        specials = tuple(token.encode(ENCODING) for token in allowed)
        if self.ignore_merges and limit == len(self.merges):  # the core's scanner cuts; each pre-token is looked up whole first
            data = text if isinstance(text, bytes) else _escaped_bytes(text)
            if data is None or as_array:
                return None
            out: list[int] = []
            for piece in pretokenize_c.pretokens(data, self.pretokenizer, specials):
                out += (self.ids[piece],) if piece in specials else self._python.word_ids(piece, limit)
            return out
        ids = self._compiled.encode(text, limit, specials, as_array)  # a str as it is: Python's own UTF-8 of it
        if ids is None and isinstance(text, str):  # a surrogate: surrogateescape's invalid bytes go as those bytes
            data = _escaped_bytes(text)
            ids = None if data is None else self._compiled.encode(data, limit, specials, as_array)
        return ids

    def _last_piece_length(self, text: str, limit: int, allowed: frozenset[str], ids: list[int]) -> int:
        """How many of ids (text's) the last pre-token made, with the all-whitespace tokens before it (tiktoken's rule)."""
        if not ids:
            return 0
        segment = text
        for start, token in find_specials(text, allowed) if allowed else ():
            segment = text[start + len(token) :]
        if not segment:
            return 0  # the text ends with a special token
        last = None
        for last in self.pretokenizer.split(segment):  # noqa: B007  (the last pre-token is wanted)
            pass
        n = len(self._word_ids(self._word_bytes(last), limit)) if last is not None else 0
        special_ids = {self.ids[t.encode(ENCODING)] for t in self.special_tokens}

        def all_space(i: int) -> bool:
            return i not in special_ids and all(b in b" \n\t" for b in self.vocab[i])

        if n and all_space(ids[len(ids) - n]):
            while n < len(ids) and all_space(ids[len(ids) - n - 1]):
                n += 1
        return n

    def encode_iterable(
        self,
        iterable: Iterable[str | bytes],
        k: int | None = None,
        *,
        allowed_special: str | Collection[str] | None = None,
        disallowed_special: str | Collection[str] = "all",
    ) -> Iterator[int]:
        """The ids of a text given in pieces (a file's lines, say), lazily and in bounded memory.

        Pieces are gathered into chunks of about STREAM_CHUNK characters, each cut
        at a place no pre-token or special token spans (`_safe_cut`), so the ids
        are exactly those of encode() on the whole text, with the same keywords.
        Bytes are decoded incrementally, so a character split between two pieces is
        kept whole, and invalid bytes at the very end are taken as encode() takes them.
        subtle: without a regex (the 'none' pre-tokenizer) a document (the text between
        special tokens) is one pre-token and is held whole.
        """
        limit = self._limit(k)
        allowed = self.allowed_special if allowed_special is None else self._allowed(allowed_special)
        options = {"allowed_special": allowed, "disallowed_special": disallowed_special}
        given_bytes = False
        decoder = codecs.getincrementaldecoder(ENCODING)(ERRORS)
        pending: list[str] = []
        size, goal = 0, STREAM_CHUNK
        for piece in iterable:
            if isinstance(piece, (bytes, bytearray)):
                piece, given_bytes = decoder.decode(piece), True
            elif not isinstance(piece, str):
                raise ValueError(f"encode_iterable takes pieces of text (str or bytes), not {type(piece).__name__}.")
            pending.append(piece)
            size += len(piece)
            if size >= goal:
                text = "".join(pending)
                cut = self._safe_cut(text, allowed)
                if cut:
                    yield from self.encode(text[:cut], limit, **options)
                    text = text[cut:]
                    goal = STREAM_CHUNK
                else:
                    goal = 2 * len(text)  # no safe cut yet: wait for more rather than join again and again
                pending, size = [text], len(text)
        pending.append(decoder.decode(b"", final=True))
        rest = "".join(pending)
        if given_bytes:  # the last chunk as bytes again: invalid bytes at the end are encode()'s to take
            rest = rest.encode(ENCODING, ERRORS)
        yield from self.encode(rest, limit, **options)

    def _safe_cut(self, text: str, allowed: frozenset[str]) -> int:
        """The last place to cut text so that both halves encode as the whole does; 0 if there is none.

        A cut goes after a letter or digit that whitespace follows (not for the
        'none' pre-tokenizer), or just before a special token encoded as special
        (`allowed`; another one's text is text). It must leave room for any special
        token that could straddle it, and no occurrence may (so that a refused one
        is seen whole).
        """
        end = len(text) - max(self._longest_special - 1, 1)
        while end > 0:
            cut = 0
            if self.pretokenizer.cut_at_space:
                m = _CUT.search(text, 0, end)
                cut = m.end() if m else 0
            if allowed:
                starts = [start for start, _ in find_specials(text, allowed, max(cut, 0), end)]
                cut = max([cut] + starts)
            if cut <= 0:
                return 0
            straddle = self._straddling(text, cut)
            if straddle is None:
                return cut
            end = straddle  # look again before the special token that spans the cut
        return 0

    def _straddling(self, text: str, cut: int) -> int | None:
        """Where a special token occurrence that spans cut starts, or None."""
        for token in self.special_tokens:
            i = text.find(token, max(0, cut - len(token) + 1), cut + len(token) - 1)
            if 0 <= i < cut:
                return i
        return None

    def _word_ids(self, word: bytes, limit: int) -> tuple[int, ...]:
        """The ids of one pre-token with the first `limit` merges (by the compiled core where it is built), cached."""
        return self._python.word_ids(word, limit)

    def _word_bytes(self, piece: str | bytes) -> bytes:
        """A pre-token as bytes: a str's invalid bytes (U+DC80..U+DCFF) are those bytes; another lone surrogate is refused."""
        if isinstance(piece, (bytes, bytearray)):
            return bytes(piece)
        try:
            return piece.encode(ENCODING, ERRORS)
        except UnicodeEncodeError as e:
            raise _Surrogate(_surrogate_sentence(piece[e.start])) from None

    @cached_property
    def _special_bytes(self) -> frozenset[bytes]:
        return frozenset(t.encode(ENCODING) for t in self.special_tokens)

    # -- decoding -------------------------------------------------------------
    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The exact bytes of ids (lossless, invalid UTF-8 included)."""
        ids = list(ids)
        try:
            return b"".join([self.vocab[i] for i in ids])
        except (KeyError, TypeError):
            bad = next(i for i in ids if not isinstance(i, int) or i not in self.vocab)
            raise ValueError(f"Token id {bad!r} is not in the vocabulary (ids {min(self.vocab)}..{max(self.vocab)}).") from None

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """The text of ids; bytes that are not valid UTF-8 become U+FFFD, as in CS336 and tiktoken (or as `errors` says)."""
        return self.decode_bytes(ids).decode(ENCODING, errors)


class _CoreMerging(Encoder):
    """encoder.py's Encoder with each pre-token merged by the compiled core (the same ids; the Python path names a byte the vocabulary lacks)."""

    core = None

    def word_ids(self, word: bytes, limit: int) -> tuple[int, ...]:
        if self.whole is not None and limit == len(self.made) and word in self.whole:
            return (self.whole[word],)
        ids = self.core.merge(word, limit)
        return ids if ids is not None else super().word_ids(word, limit)


def _rebuild(vocab: Vocab, merges: Merges, special_tokens: list[str], settings: tuple, aliases: list[tuple[str, int]]) -> Tokenizer:
    """A pickled Tokenizer built again (see Tokenizer.__reduce__)."""
    pretokenizer, counts, allowed, name, ignore_merges = settings
    tok = Tokenizer(vocab, merges, special_tokens, pretokenizer=pretokenizer, counts=counts, name=name, ignore_merges=ignore_merges)
    for token, i in aliases:
        tok._alias_special(token, i)
    tok.allowed_special = frozenset(allowed)
    return tok


def _checked_vocab(vocab: Mapping[int, bytes]) -> Vocab:
    if not isinstance(vocab, Mapping):
        raise ValueError(f"vocab must map token ids to bytes, not {type(vocab).__name__}.")
    out: Vocab = {}
    for i, token in vocab.items():
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < MAX_ID:
            shown = repr(i) if not isinstance(i, int) or i.bit_length() < 100 else f"of {i.bit_length()} bits"
            raise ValueError(f"Token id {shown} must be a whole number from 0 to 2**32 - 1.")
        if not isinstance(token, (bytes, bytearray)) or not token:
            raise ValueError(f"Token {i} must be non-empty bytes, not {token!r}.")
        out[i] = bytes(token)
    return out


def _checked_merges(merges: Sequence[tuple[bytes, bytes]]) -> Merges:
    if not isinstance(merges, (list, tuple)):
        raise ValueError(f"merges must be a list of (bytes, bytes) pairs, not {type(merges).__name__}.")
    out: Merges = []
    for rank, pair in enumerate(merges):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(p, (bytes, bytearray)) and p for p in pair)):
            raise ValueError(f"merge {rank + 1} is not a pair of non-empty bytes: {pair!r}.")
        out.append((bytes(pair[0]), bytes(pair[1])))
    return out


def _checked_counts(counts: Sequence[int | None] | None, n: int) -> tuple[int | None, ...]:
    if counts is None:
        return (None,) * n
    if not isinstance(counts, (list, tuple)) or not all(c is None or (isinstance(c, int) and not isinstance(c, bool)) for c in counts):
        raise ValueError("counts must be a list of whole numbers (or None), one for each merge.")
    if len(counts) != n:
        raise ValueError(f"Got {len(counts)} counts for {n} merges.")
    return tuple(counts)


def _inert_merges(merges: Merges, ids: Mapping[bytes, int]) -> frozenset[int]:
    """The ranks of merges that can never apply, because a part is not a token; ValueError for one that makes no token.

    Encoding only ever holds tokens of the vocabulary, so a pair with a part outside
    it never occurs: like any other implementation that looks merges up by pair, this
    one skips it, and the other merges keep their ranks. A merge of two tokens
    whose result is not a token could apply and has no id: that is a broken file.
    """
    inert = set()
    for rank, (a, b) in enumerate(merges):
        if a not in ids or b not in ids:
            inert.add(rank)
        elif a + b not in ids:
            raise ValueError(
                f"Merge {rank + 1} ({load.show(a)} + {load.show(b)}) joins two tokens into {load.show(a + b)}, which is not in the vocabulary."
            )
    return frozenset(inert)


class _Surrogate(ValueError):
    """A lone surrogate that no bytes decode to: encode() then takes the text as tiktoken does."""


_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_LONE = re.compile("[\ud800-\udc7f\udd00-\udfff]")  # every surrogate but U+DC80..U+DCFF, surrogateescape's bytes


def _as_tiktoken(text: str) -> str:
    """tiktoken's fix-up of a str: each surrogate pair becomes its character, a lone surrogate U+FFFD.

    'a\ud83d\udc4db' -> 'a👍b'; 'a\ud83d' -> 'a\ufffd'. U+DC80..U+DCFF alone are kept: each is an invalid byte.
    """
    text = _PAIR.sub(lambda m: m.group().encode("utf-16", "surrogatepass").decode("utf-16"), text)
    return _LONE.sub("\ufffd", text)


def _all_invalid(data: bytes) -> bool:
    """No character of UTF-8 in data: each byte is invalid where it stands (b'\xed', b'\xe4\xb8')."""
    return all(0xDC80 <= ord(c) <= 0xDCFF for c in data.decode(ENCODING, ERRORS))


def _escaped_bytes(text: str) -> bytes | None:
    """A str's bytes, its U+DC80..U+DCFF each the invalid byte surrogateescape made it of; None where the bytes would read
    back as another text (escaped bytes that join into a character, which the Python path keeps apart) or a surrogate
    stands for no byte."""
    try:
        data = text.encode(ENCODING, ERRORS)
    except UnicodeEncodeError:
        return None
    return data if data.decode(ENCODING, ERRORS) == text else None


def _surrogate_sentence(bad: str) -> str:
    return (
        f"The text holds a lone surrogate U+{ord(bad):04X}, which no UTF-8 bytes decode to; "
        "only U+DC80..U+DCFF (invalid bytes kept by surrogateescape) can be encoded."
    )
