"""Using a tokenizer: encode text to ids, decode ids back to text, save and load.

The CS336 interface, exactly: ``Tokenizer(vocab, merges, special_tokens)`` with
ids taken from ``vocab`` as given (GPT-2's own order included),
``Tokenizer.from_files(vocab_path, merges_path, special_tokens)``, ``encode``,
``encode_iterable`` and ``decode``. ``Tokenizer.from_merges`` builds one in this
tool's own layout (bytes, merges in order, special tokens), ``from_training``
from a run, ``load`` from any file load.py reads.

Encoding cuts out special tokens (kept whole, the longest first), pre-tokenizes
the rest with the pattern, and inside each pre-token applies merges by rank:
the lowest-ranked pair present is merged everywhere, left to right, until no
merge applies. This gives the same tokens as replaying the training merges in
order (see `Tokenizer.bpe` for the one exception), and the same ids as GPT-2,
HuggingFace tokenizers and tiktoken given the same files.

decode() replaces bytes that are not valid UTF-8 with U+FFFD, as CS336 and
tiktoken do; decode_bytes() is lossless: decode_bytes(encode(b)) == b for all
bytes b (invalid UTF-8 is kept through surrogateescape), with any regex as the
pre-tokenizer too (the text between its matches is pre-tokenized as itself), except
with the named 'whitespace' pre-tokenizer, which drops whitespace by design.

tiktoken's interface too, with tiktoken's meanings: ``encode(text,
allowed_special=..., disallowed_special=...)``, ``encode_ordinary``,
``encode_batch``, ``encode_ordinary_batch``, ``decode_with_offsets``,
``decode_single_token_bytes``, ``encode_single_token``, ``n_vocab``,
``eot_token`` and the rest, and ``Tokenizer.from_openai("cl100k_base")`` (or a
model's name, "gpt-4o") for OpenAI's own encodings.

Special tokens, by default: a tokenizer encodes the special tokens it was given
as special wherever the text spells them, as CS336's Tokenizer and HuggingFace
do -- except OpenAI's encodings (from_openai, or OpenAI's own rank files), which
follow tiktoken: text that spells one of their special tokens is refused with
ValueError unless `allowed_special` allows it (user text that becomes a control
token is an injection risk), and encode_ordinary encodes it as plain text. Each
call can say otherwise, with tiktoken's keywords; `allowed_special=` given to the
constructor changes the tokenizer's default.

Text that is not clean UTF-8, as tiktoken treats it: a str's surrogate pair is
the character it stands for and a lone surrogate is U+FFFD (except U+DC80..U+DCFF,
which Python's surrogateescape makes of invalid bytes: each is that byte); bytes
whose invalid UTF-8 is at the end (a character cut short) are encoded as tiktoken's
_encode_bytes does, the last piece's tokens merged again with the loose bytes, and
invalid bytes anywhere else are kept, each byte its own, as training counted them.

Not here: the file formats (formats.py, load.py, export.py) or training (train.py).
"""

from __future__ import annotations

import codecs
import re
import threading
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from heapq import heapify, heappop, heappush
from pathlib import Path

import regex

from . import encode_c, formats, load, pretokenize_c
from .patterns import DEFAULT_PATTERN, ENCODING, ERRORS, check_pattern, check_special_tokens, find_specials, pattern_name
from .pretokenize import _UNITS, sequence_of_text, split_gpt2
from .train import Merges, Training, Vocab, build_vocab

BYTES = [bytes([b]) for b in range(256)]
END_OF_TEXT = "<|endoftext|>"  # the end-of-text token of GPT-2 and OpenAI's encodings (tiktoken's eot_token)
MAX_ID = 1 << 32  # ids are below this: a pair of ids is looked up as one number, left << 32 | right
CACHE_CAP = 200_000  # cached pre-tokens (and GPT-2 units); cleared when full
LONG_WORD = 64  # pre-tokens longer than this are merged with a heap: O(n log n), not O(n^2)
STREAM_CHUNK = 1 << 16  # encode_iterable encodes about this many characters at a time

# A safe place to cut text for streaming: a letter or digit followed by whitespace.
# No pre-token of gpt2, cl100k, o200k or whitespace spans it, and none looks across it;
# for a regex of the user's nothing is known, so text is cut only at special tokens.
_CUT = regex.compile(r"(?r)[\p{L}\p{N}](?=\s)")
CUT_AT_SPACE = ("gpt2", "cl100k", "o200k", "whitespace")
_OPENAI: dict[tuple, Tokenizer] = {}  # OpenAI's encodings, loaded once per process (from_openai)
_OPENAI_LOCK = threading.RLock()  # re-entered: an encoding built on its base loads the base first


@dataclass(frozen=True)
class EncodeStep:
    """One step of encoding a pre-token: every occurrence of the lowest-ranked pair merged.

    The first step of a list is the start (the bytes): rank None, no pairs before it.
    """

    parts: tuple[bytes, ...]  # the tokens after this step
    rank: int | None  # the merge applied (0-based, as in the merges list); None for the start
    pair_ranks: tuple[int | None, ...]  # the rank of each adjacent pair before this step; None: not a merge (within k)
    at: tuple[int, ...]  # where it merged: the left part's index in the parts before this step
    count: int | None = None  # the merge's count when it was made, when the tokenizer knows it


@dataclass(frozen=True)
class Ancestry:
    """How a token was built: a tree of merges down to bytes.

    b'low' with merges l+o, lo+w -> low (rank 1) <- [lo (rank 0) <- [l, o], w]
    """

    token: bytes
    rank: int | None  # the merge that made it; None for a byte or a special token
    count: int | None  # that merge's count when it was made, when known
    parts: tuple[Ancestry, ...] = ()  # (left, right) for a merge, () for a byte or a special token

    def nodes(self) -> Iterator[Ancestry]:
        """Every node, the token first, then its left tree, then its right."""
        yield self
        for part in self.parts:
            yield from part.nodes()

    @property
    def depth(self) -> int:
        """Merges on the longest path down to a byte: a byte is 0, l+o is 1."""
        return 1 + max(part.depth for part in self.parts) if self.parts else 0


class Tokenizer:
    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        special_tokens: Sequence[str] | None = None,
        *,
        pattern: str = DEFAULT_PATTERN,
        counts: Sequence[int | None] | None = None,
        allowed_special: str | Collection[str] = "all",
        name: str = "",
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
        """
        check_pattern(pattern)
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
        self.pattern = pattern
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
            self._compiled = encode_c.encoder(self.ids, self.merges, pattern)  # None: the Python path encodes (no compiled core)
        except ValueError:  # a merge that makes no token: _inert_merges says which
            self._compiled = None
        self.inert = self._compiled.inert if self._compiled is not None else _inert_merges(self.merges, self.ids)
        self._byte_ids = {b: self.ids[BYTES[b]] for b in range(256) if BYTES[b] in self.ids}
        self._longest_special = max((len(t) for t in self.special_tokens), default=0)
        self._words: dict[tuple[bytes, int], tuple[int, ...]] = {}  # (pre-token, merges used) -> ids
        self._units: dict[str, tuple[int, ...]] = {}  # GPT-2 unit -> ids, with every merge

    # -- building, saving, loading ------------------------------------------
    @classmethod
    def from_merges(
        cls,
        merges: Merges,
        special_tokens: Sequence[str] = (),
        pattern: str = DEFAULT_PATTERN,
        *,
        counts: Sequence[int | None] | None = None,
    ) -> Tokenizer:
        """A tokenizer in this tool's id layout (bytes 0-255, merges in order, then the special tokens) from its merges."""
        load.check_merges(merges)
        merges = [(bytes(a), bytes(b)) for a, b in merges]
        return cls(build_vocab(merges, special_tokens), merges, special_tokens, pattern=pattern, counts=counts)

    @classmethod
    def from_training(cls, training: Training, pattern: str = DEFAULT_PATTERN) -> Tokenizer:
        """The tokenizer a training run made, with each merge's count."""
        merges = training.merges
        counts = [e.count for e in training.events]
        return cls(training.vocab, merges, training.special_tokens, pattern=pattern, counts=counts)

    @classmethod
    def from_files(
        cls,
        vocab_filepath: str | Path,
        merges_filepath: str | Path,
        special_tokens: Sequence[str] | None = None,
        *,
        pattern: str = DEFAULT_PATTERN,
    ) -> Tokenizer:
        """CS336's constructor from GPT-2-format files (vocab.json + merges.txt, or encoder.json + vocab.bpe).

        As with the constructor, the special tokens are the ones given: GPT-2's
        '<|endoftext|>' is special only when listed (load() finds it by itself).
        """
        vocab_path, merges_path = Path(vocab_filepath), Path(merges_filepath)
        texts = [load.read_text(p) for p in (vocab_path, merges_path)]
        loaded = load.parse_gpt2(*texts, str(vocab_path), str(merges_path))
        return cls(loaded.vocab, loaded.merges, special_tokens, pattern=pattern)

    @classmethod
    def load(cls, path: str | Path, *, pattern: str | None = None, special_tokens: Sequence[str] | None = None) -> Tokenizer:
        """Load any format load.py reads (a directory or one file); ValueError says what is wrong.

        `pattern` is only used by formats that do not record it (GPT-2 files, .tiktoken; default gpt2);
        `special_tokens` are added to those the file declares.
        """
        loaded = formats.read(path, pattern=pattern)
        try:
            return cls.from_loaded(loaded, special_tokens=special_tokens)
        except ValueError as e:  # what the loader let through and the constructor refused: still name the file
            raise ValueError(f"{path}: {e}") from None

    @classmethod
    def from_loaded(cls, loaded: load.Loaded, *, special_tokens: Sequence[str] | None = None) -> Tokenizer:
        """The tokenizer a file held (formats.read, formats.read_uploads), with extra special tokens if given."""
        extra = special_tokens or ()
        special_tokens = list(loaded.special_tokens) + [t for t in extra if t not in loaded.special_tokens]
        if loaded.vocab is None:
            return cls.from_merges(loaded.merges, special_tokens, loaded.pattern, counts=loaded.counts)
        allowed = frozenset(extra) if loaded.encoding else "all"  # OpenAI's: tiktoken's default, but those asked for
        return cls(
            loaded.vocab,
            loaded.merges,
            special_tokens,
            pattern=loaded.pattern,
            counts=loaded.counts,
            allowed_special=allowed,
            name=loaded.encoding,
        )

    @classmethod
    def from_openai(cls, name: str, *, folder: str | Path | None = None, download: bool = True) -> Tokenizer:
        """One of OpenAI's encodings, by its name ('cl100k_base', 'o200k_harmony', ...) or a model's ('gpt-4o'), as tiktoken has it.

        Its files are found in `folder`, beside a checkout of this project (../shared), in
        tiktoken's cache, or downloaded from OpenAI when `download` (see openai.py); each is
        checked against OpenAI's sha256. Its special tokens follow tiktoken: refused in text
        unless allowed. Loaded once per process (cl100k_base takes about a second).
        """
        from . import openai

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
                known = cls(vocab, merges, list(first.values()), pattern=encoding.pattern, allowed_special=(), name=encoding.name)
                for text, i in encoding.special_tokens.items():
                    if first[i] != text:
                        known._alias_special(text, i)
                _OPENAI[key] = known
        return known

    @cached_property
    def ranks(self) -> dict[tuple[bytes, bytes], int]:
        """Each merge's rank by its pair of tokens (the first rank, should a pair be listed twice)."""
        return {pair: rank for rank, pair in reversed(list(enumerate(self.merges))) if rank not in self.inert}

    @cached_property
    def _ranks(self) -> dict[int, int]:
        """The merges as ids, for the Python path's merging: (left id << 32 | right id) -> rank."""
        return {self.ids[a] << 32 | self.ids[b]: rank for (a, b), rank in self.ranks.items()}

    @cached_property
    def _made(self) -> list[int]:
        """rank -> the id its merge makes (-1: it never applies)."""
        return [-1 if rank in self.inert else self.ids[a + b] for rank, (a, b) in enumerate(self.merges)]

    def __reduce__(self):
        """Pickled as what builds it again (vocab, merges, special tokens, settings), never its caches: for worker processes."""
        first = [t for t in self.special_tokens if self.vocab.get(self.ids[t.encode(ENCODING)]) == t.encode(ENCODING)]
        aliases = [(t, self.ids[t.encode(ENCODING)]) for t in self.special_tokens if t not in first]
        settings = (self.pattern, self.counts, sorted(self.allowed_special), self.name)
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
        return formats.files(merges, self.special_tokens, self.pattern, counts, vocab=vocab)

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
    ) -> list[int]:
        """The ids of text; with k, only the first k merges are used.

        allowed_special: the special tokens encoded as special where the text spells
        them ("all", a set, or None for this tokenizer's default: see the module's
        docstring); disallowed_special: those whose text raises ValueError ("all":
        every special token not allowed; () none: they are encoded as plain text),
        exactly as tiktoken's Encoding.encode. Bytes may hold invalid UTF-8 (see the
        module's docstring); a str's surrogates are taken as tiktoken takes them.
        """
        limit = self._limit(k)
        allowed = self.allowed_special if allowed_special is None else self._allowed(allowed_special)
        if isinstance(text, (bytes, bytearray)):
            return self._encode_bytes(bytes(text), limit, allowed, disallowed_special)
        if not isinstance(text, str):
            raise ValueError(f"encode takes text (str or bytes), not {type(text).__name__}.")
        self._refuse(text, allowed, disallowed_special)
        try:
            return self._encode_text(text, limit, allowed)
        except _Surrogate:  # as tiktoken: a surrogate pair is its character, a lone surrogate U+FFFD
            return self._encode_text(_as_tiktoken(text), limit, allowed)

    def encode_ordinary(self, text: str | bytes, k: int | None = None) -> list[int]:
        """The ids of text with every special token's text encoded as plain text (tiktoken's encode_ordinary).

        Bytes with invalid UTF-8 at the end are encoded as tiktoken's _encode_bytes does.
        """
        return self.encode(text, k, allowed_special=(), disallowed_special=())

    def encode_batch(
        self,
        texts: Sequence[str | bytes],
        *,
        num_threads: int = 8,
        allowed_special: str | Collection[str] | None = None,
        disallowed_special: str | Collection[str] = "all",
    ) -> list[list[int]]:
        """encode() of each text, in order, on num_threads threads (as tiktoken's encode_batch)."""
        return self._batch(
            lambda t: self.encode(t, allowed_special=allowed_special, disallowed_special=disallowed_special), texts, num_threads
        )

    def encode_ordinary_batch(self, texts: Sequence[str | bytes], *, num_threads: int = 8) -> list[list[int]]:
        """encode_ordinary() of each text, in order, on num_threads threads (as tiktoken's encode_ordinary_batch)."""
        return self._batch(self.encode_ordinary, texts, num_threads)

    def encode_to_numpy(self, text: str | bytes, **options):
        """encode() as a NumPy array of uint32 (tiktoken's encode_to_numpy): made by the compiled core where it encodes."""
        import numpy as np

        if isinstance(text, str) and set(options) <= {"allowed_special", "disallowed_special"}:
            allowed_special = options.get("allowed_special")
            allowed = self.allowed_special if allowed_special is None else self._allowed(allowed_special)
            self._refuse(text, allowed, options.get("disallowed_special", "all"))
            ids = self._encode_compiled(text, len(self.merges), allowed, as_array=4)
            if ids is not None:
                return np.frombuffer(ids, dtype=np.uint32)
        return np.array(self.encode(text, **options), dtype=np.uint32)

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of the token whose text (or bytes) this is, special tokens included; KeyError if it is none."""
        data = text_or_bytes.encode(ENCODING) if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        return self.ids[data]

    @staticmethod
    def _batch(encode, texts, num_threads: int) -> list[list[int]]:
        if num_threads <= 1 or len(texts) <= 1:
            return [encode(t) for t in texts]
        with ThreadPoolExecutor(num_threads) as pool:
            return list(pool.map(encode, texts))

    def _allowed(self, allowed_special: str | Collection[str]) -> frozenset[str]:
        if allowed_special == "all":
            return frozenset(self.special_tokens)
        if isinstance(allowed_special, str) or not all(isinstance(t, str) for t in allowed_special):
            raise ValueError(f'allowed_special is "all" or a set of special tokens, not {allowed_special!r}.')
        unknown = sorted(set(allowed_special) - set(self.special_tokens))
        if unknown:
            raise ValueError(
                f"{unknown[0]!r} is not a special token of this tokenizer ({', '.join(self.special_tokens) or 'it has none'})."
            )
        return frozenset(allowed_special)

    def _refuse(self, text: str, allowed: frozenset[str], disallowed_special: str | Collection[str]) -> None:
        """Raise ValueError, as tiktoken does, where text spells a disallowed special token."""
        if disallowed_special == "all":
            disallowed = set(self.special_tokens) - allowed
        elif isinstance(disallowed_special, str):
            raise ValueError(f'disallowed_special is "all" or a set of special tokens, not {disallowed_special!r}.')
        else:
            disallowed = set(disallowed_special)
        found = next(find_specials(text, disallowed), None) if disallowed else None
        if found is not None:
            token = found[1]
            raise ValueError(
                f"Encountered text corresponding to disallowed special token {token!r}.\n"
                "If you want this text to be encoded as a special token, "
                f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
                f"If you want this text to be encoded as normal text, disable the check for this token "
                f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
                "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
            )

    def _encode_text(self, text: str, limit: int, allowed: frozenset[str]) -> list[int]:
        """Special tokens allowed kept whole (the longest first), the text between them pre-tokenized and merged."""
        compiled = self._encode_compiled(text, limit, allowed)
        if compiled is not None:
            return compiled
        out: list[int] = []
        pos = 0
        for start, token in find_specials(text, allowed) if allowed else ():
            if start > pos:
                self._encode_ordinary(text[pos:start], limit, out)
            out.append(self.ids[token.encode(ENCODING)])  # a special token, kept whole
            pos = start + len(token)
        if pos < len(text):
            self._encode_ordinary(text[pos:], limit, out)
        return out

    def _encode_bytes(self, data: bytes, limit: int, allowed: frozenset[str], disallowed_special) -> list[int]:
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

    def _encode_compiled(self, text: str | bytes, limit: int, allowed: Collection[str], as_array: int = 0):
        """_encode_text in one call to the compiled core (encode_c.py), or None where the Python path encodes.

        None: no compiled core, or no compiled pre-tokenizer for the pattern; a str holding a surrogate
        (its invalid bytes, U+DC80..U+DCFF, would be read again as UTF-8: bytes are given as they are,
        and the core keeps each invalid byte as the Python path does); a byte the vocabulary lacks (the
        Python path says so in a sentence). as_array 4 or 2: the ids as a bytearray of native uint32 or uint16, not a list.
        """
        if self._compiled is None or self._compiled.kind < 0:
            return None
        specials = tuple(token.encode(ENCODING) for token in allowed)
        return self._compiled.encode(text, limit, specials, as_array)

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
        for last in sequence_of_text(segment, self.pattern):  # noqa: B007  (the last pre-token is wanted)
            pass
        n = len(self._word_ids(_to_bytes(last), limit)) if last is not None else 0
        special_ids = {self.ids[t.encode(ENCODING)] for t in self.special_tokens}

        def all_space(i: int) -> bool:
            return i not in special_ids and all(b in b" \n\t" for b in self.vocab[i])

        if n and all_space(ids[len(ids) - n]):
            while n < len(ids) and all_space(ids[len(ids) - n - 1]):
                n += 1
        return n

    def _encode_ordinary(self, text: str, limit: int, out: list[int]) -> None:
        """Append the ids of a text without special tokens to out.

        For gpt2 with every merge the text is cut into units (a word with the
        whitespace before it, see pretokenize._UNITS): no GPT-2 pre-token crosses
        a unit, so each unique unit is split and merged once and its ids cached.
        """
        if self.pattern == "gpt2" and limit == len(self.merges):
            units = self._units
            for unit in _UNITS.findall(text):
                ids = units.get(unit)
                if ids is None:
                    ids = ()
                    for token in split_gpt2([unit]):
                        ids += self._word_ids(_to_bytes(token), limit)
                    if len(units) >= CACHE_CAP:
                        units.clear()
                    units[unit] = ids
                out += ids
            return
        for token in sequence_of_text(text, self.pattern):
            out += self._word_ids(_to_bytes(token), limit)

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
        subtle: with the 'none' pre-tokenizer a document (the text between special
        tokens) is one pre-token and is held whole.
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
            if pattern_name(self.pattern) in CUT_AT_SPACE:
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
        """The ids of one pre-token with the first `limit` merges, cached."""
        key = (word, limit)
        ids = self._words.get(key)
        if ids is None and self._compiled is not None:
            ids = self._compiled.merge(word, limit)  # None: a byte the vocabulary lacks, which the Python path names
        if ids is None:
            start = self._byte_ids_of(word)
            ids = tuple(self._merge_long(start, limit) if len(start) > LONG_WORD else self._merge_short(start, limit))
            if len(self._words) >= CACHE_CAP:
                self._words.clear()
            self._words[key] = ids
        return ids

    def _byte_ids_of(self, word: bytes) -> list[int]:
        byte_ids = self._byte_ids
        try:
            return [byte_ids[b] for b in word]
        except KeyError:
            bad = next(b for b in word if b not in byte_ids)
            raise ValueError(_unknown_byte(word, bad)) from None

    def bpe(self, word: bytes, k: int | None = None) -> tuple[bytes, ...]:
        """Split one pre-token with the first k merges (all when k is None).

        With merges [(b'l', b'o'), (b'lo', b'w')]: b'lower' -> (b'low', b'e', b'r').

        subtle: merges are matched by their bytes, as GPT-2 and HuggingFace do
        (each distinct token has one id here). When two merges make the same
        bytes (b'a'+b'bc' and b'ab'+b'c'), a later pair can then look like an
        earlier one, and this can differ from what a trainer would do with ids.
        Training never makes such twins (see Trainer.mint), but a hand-made merge
        list can.
        """
        return tuple(self.vocab[i] for i in self._word_ids(word, self._limit(k)))

    def merge_steps(self, word: bytes, k: int | None = None) -> Iterator[tuple[int, list[bytes]]]:
        """Each merge that encoding applies to word, in order: (its rank, the tokens after it).

        b'lower' with merges l+o, lo+w -> (0, [lo, w, e, r]), then (1, [low, e, r])
        """
        vocab, ids = self.vocab, self._byte_ids_of(word)
        for rank in self._rounds(ids, self._limit(k)):
            yield rank, [vocab[i] for i in ids]

    def encode_steps(self, piece: bytes | str, k: int | None = None) -> list[EncodeStep]:
        """Encoding one pre-token step by step, as GPT-2's encoder does, with the first k merges.

        Start from the bytes; at each step look up the rank of every adjacent pair,
        take the lowest, and merge it everywhere it occurs, left to right; stop when
        no pair is a merge. With merges [l+o, lo+w] b'lower' gives three steps:
        (l, o, w, e, r) from the bytes, then rank 0 at 0 -> (lo, w, e, r), then rank 1 at 0 -> (low, e, r).
        The last step's parts are encode()'s tokens; ranks come out in increasing order.
        subtle: a whole piece is taken as one pre-token: cut text with pre_tokens() first. A special
        token is one step, itself.
        """
        limit = self._limit(k)
        word = _to_bytes(piece) if isinstance(piece, str) else bytes(piece)
        if word in self._special_bytes:
            return [EncodeStep((word,), None, (), ())]
        self._byte_ids_of(word)  # one sentence for a byte the vocabulary lacks
        parts = [BYTES[b] for b in word]
        steps = [EncodeStep(tuple(parts), None, (), ())]
        ranks = self.ranks
        while len(parts) > 1:
            pair_ranks = [ranks.get(pair) for pair in zip(parts, parts[1:])]
            pair_ranks = [r if r is not None and r < limit else None for r in pair_ranks]
            rank = min((r for r in pair_ranks if r is not None), default=None)
            if rank is None:
                break
            merged, at, i = [], [], 0
            while i < len(parts):
                if i < len(pair_ranks) and pair_ranks[i] == rank:
                    at.append(i)
                    merged.append(parts[i] + parts[i + 1])
                    i += 2  # subtle: 'a a a' with a+a merges the first two only, as encode does
                else:
                    merged.append(parts[i])
                    i += 1
            parts = merged
            steps.append(EncodeStep(tuple(parts), rank, tuple(pair_ranks), tuple(at), self.counts[rank]))
        return steps

    def pre_tokens(self, text: str | bytes) -> list[bytes]:
        """The pieces encode() merges inside, in order: special tokens whole, the rest pre-tokenized.

        With special token <|e|>: 'hi you<|e|>' -> [b'hi', b' you', b'<|e|>'].
        """
        if self._compiled is not None and self._compiled.kind >= 0:
            try:
                data = text if isinstance(text, bytes) else text.encode(ENCODING)
                return pretokenize_c.pretokens(data, self.pattern, self._special_bytes)
            except UnicodeEncodeError:  # a surrogate: the Python path takes it
                pass
        if isinstance(text, bytes):
            text = text.decode(ENCODING, ERRORS)
        out: list[bytes] = []
        pos = 0
        for start, token in find_specials(text, self.special_tokens) if self.special_tokens else ():
            out += [_to_bytes(t) for t in sequence_of_text(text[pos:start], self.pattern)]
            out.append(token.encode(ENCODING))
            pos = start + len(token)
        out += [_to_bytes(t) for t in sequence_of_text(text[pos:], self.pattern)]
        return out

    @cached_property
    def _special_bytes(self) -> frozenset[bytes]:
        return frozenset(t.encode(ENCODING) for t in self.special_tokens)

    @cached_property
    def made_by(self) -> dict[bytes, int]:
        """The rank of the merge that makes each merged token (the first, should two make the same bytes)."""
        return {a + b: rank for rank, (a, b) in reversed(list(enumerate(self.merges))) if rank not in self.inert}

    def ancestry(self, token: bytes | str | int) -> Ancestry:
        """A token's merge tree down to bytes: given as bytes, as text, or by id.

        Each node carries the rank of its merge and that merge's count when it was
        made (counts are known for a run of this tool, None for other tools' files).
        """
        if isinstance(token, int) and not isinstance(token, bool):
            if token not in self.vocab:
                raise ValueError(f"Token id {token} is not in the vocabulary (ids {min(self.vocab)}..{max(self.vocab)}).")
            token = self.vocab[token]
        elif isinstance(token, str):
            token = _to_bytes(token)
        if not isinstance(token, (bytes, bytearray)) or bytes(token) not in self.ids:
            raise ValueError(f"{_shown(token)} is not a token of this vocabulary; type it exactly, leading space included.")
        return self._tree(bytes(token))

    def _tree(self, token: bytes) -> Ancestry:
        rank = self.made_by.get(token)
        if rank is None:  # a byte or a special token
            return Ancestry(token, None, None)
        left, right = self.merges[rank]
        return Ancestry(token, rank, self.counts[rank], (self._tree(left), self._tree(right)))

    def _merge_short(self, ids: list[int], limit: int) -> list[int]:
        ids = list(ids)
        for _ in self._rounds(ids, limit):
            pass
        return ids

    def _rounds(self, ids: list[int], limit: int) -> Iterator[int]:
        """Merge by rank, in place: each round joins every pair of the lowest rank present, left to right.

        Yields each round's rank. [97, 97, 97] with (97, 97) -> 256 as rank 0: one round, [256, 97].
        Only the two pairs beside a merge change, so ranks are looked up there, not for the whole word.
        subtle: the pair a merge creates never has the rank being merged (it holds the new token), so
        the next occurrence of that rank is searched for to the right only.
        """
        get, made = self._ranks.get, self._made
        ranks = [get(a << 32 | b, limit) for a, b in zip(ids, ids[1:])]  # ranks[i]: the pair (ids[i], ids[i + 1])
        while ranks:
            rank = min(ranks)
            if rank >= limit:
                return
            new = made[rank]
            i = ranks.index(rank)
            more = ranks.count(rank) > 1
            while True:
                ids[i : i + 2] = [new]
                del ranks[i]
                if i:
                    ranks[i - 1] = get(ids[i - 1] << 32 | new, limit)
                if i < len(ranks):
                    ranks[i] = get(new << 32 | ids[i + 1], limit)
                if not more or rank not in ranks:  # an overlap ('a a a') can use up the next occurrence
                    break
                i = ranks.index(rank, i + 1)
            yield rank

    def _merge_long(self, ids: list[int], limit: int) -> list[int]:
        """_merge_short for a long pre-token, in O(n log n): a heap of (rank, position) over a linked list.

        Each round takes every position holding the lowest rank present and
        merges them left to right, skipping those an earlier merge of the round
        used up -- the same rounds as _rounds, without its O(n) list edits.
        """
        get, made = self._ranks.get, self._made
        parts: list[int] = list(ids)
        n = len(parts)
        if n < 2:
            return parts
        nxt, prv = list(range(1, n + 1)), list(range(-1, n - 1))
        nxt[-1] = -1
        heap = [(r, i) for i in range(n - 1) if (r := get(parts[i] << 32 | parts[i + 1], limit)) < limit]
        heapify(heap)
        while heap:
            rank = heap[0][0]
            sites = []
            while heap and heap[0][0] == rank:
                sites.append(heappop(heap)[1])
            for i in sorted(sites):
                j = nxt[i] if parts[i] >= 0 else -1
                if j < 0 or get(parts[i] << 32 | parts[j], limit) != rank:
                    continue  # used up earlier in this round, or changed since it was pushed
                parts[i], parts[j] = made[rank], -1
                after = nxt[j]
                nxt[i] = after
                if after >= 0:
                    prv[after] = i
                    if (r := get(parts[i] << 32 | parts[after], limit)) < limit:
                        heappush(heap, (r, i))
                before = prv[i]
                if before >= 0 and (r := get(parts[before] << 32 | parts[i], limit)) < limit:
                    heappush(heap, (r, before))
        return [p for p in parts if p >= 0]

    def pieces(self, text: str | bytes, k: int | None = None) -> list[bytes]:
        """The tokens of text as bytes, in order."""
        vocab = self.vocab
        return [vocab[i] for i in self.encode(text, k)]

    def token_counts(self, words: Mapping[bytes, int], k: int | None = None) -> Counter[bytes]:
        """How often each token occurs when pre-token counts are encoded with the first k merges.

        {b'low': 5, b'lower': 2} with merges l+o, lo+w -> {b'low': 7, b'e': 2, b'r': 2}
        """
        counts: Counter[bytes] = Counter()
        for word, n in words.items():
            for token in self.bpe(word, k):
                counts[token] += n
        return counts

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

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token, special tokens included; KeyError if it is none (tiktoken's)."""
        return self.vocab[token]

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> list[bytes]:
        """Each token's bytes: [31373, 995] -> [b'hello', b' world'] with GPT-2."""
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text, and where each token starts in it (an index of a character), as tiktoken's decode_with_offsets.

        A token that starts inside a character (its first byte continues a UTF-8
        sequence) starts at that character. Raises ValueError, as tiktoken does,
        when the tokens do not decode to valid UTF-8.
        """
        token_bytes = self.decode_tokens_bytes(tokens)
        return b"".join(token_bytes).decode(ENCODING, "strict"), token_offsets(token_bytes)

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8) -> list[str]:
        return self._batch(lambda ids: self.decode(ids, errors), batch, num_threads)

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        return self._batch(self.decode_bytes, batch, num_threads)

    # -- what tiktoken's Encoding says about itself ------------------------------
    @property
    def special_tokens_set(self) -> set[str]:
        return set(self.special_tokens)

    @property
    def eot_token(self) -> int:
        """The id of <|endoftext|>; KeyError if this tokenizer has none (as tiktoken)."""
        if END_OF_TEXT not in self.special_tokens:
            raise KeyError(END_OF_TEXT)
        return self.ids[END_OF_TEXT.encode(ENCODING)]

    @property
    def max_token_value(self) -> int:
        return max(self.vocab)

    @property
    def n_vocab(self) -> int:
        """max_token_value + 1, as tiktoken counts it (a vocabulary with gaps counts them)."""
        return self.max_token_value + 1

    def is_special_token(self, token: int) -> bool:
        return token in self.vocab and self.vocab[token] in self._special_bytes

    def token_byte_values(self) -> list[bytes]:
        """Every token's bytes but the special tokens', sorted (tiktoken's)."""
        return sorted(t for t in set(self.vocab.values()) if t not in self._special_bytes)


def token_offsets(token_bytes: Iterable[bytes]) -> list[int]:
    """Where each token starts in the text the tokens decode to, in characters (tiktoken's decode_with_offsets).

    A token whose first byte continues a character starts at that character:
    [b'a', b'\xf0\x9f', b'\x99\x82'] ('a🙂', the emoji in two tokens) -> [0, 1, 1].
    """
    text_len, offsets = 0, []
    for token in token_bytes:
        offsets.append(max(0, text_len - (0x80 <= token[0] < 0xC0)))
        text_len += sum(1 for c in token if not 0x80 <= c < 0xC0)
    return offsets


def _rebuild(vocab: Vocab, merges: Merges, special_tokens: list[str], settings: tuple, aliases: list[tuple[str, int]]) -> Tokenizer:
    """A pickled Tokenizer built again (see Tokenizer.__reduce__)."""
    pattern, counts, allowed, name = settings
    tok = Tokenizer(vocab, merges, special_tokens, pattern=pattern, counts=counts, name=name)
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


def _to_bytes(token: str) -> bytes:
    try:
        return token.encode(ENCODING, ERRORS)
    except UnicodeEncodeError as e:
        bad = token[e.start]
        raise _Surrogate(
            f"The text holds a lone surrogate U+{ord(bad):04X}, which no UTF-8 bytes decode to; "
            "only U+DC80..U+DCFF (invalid bytes kept by surrogateescape) can be encoded."
        ) from None


def _shown(token: object) -> str:
    if isinstance(token, (bytes, bytearray)):
        return repr(bytes(token).decode(ENCODING, "backslashreplace")[:40])
    return repr(token)[:40]


def _unknown_byte(word: bytes, byte: int) -> str:
    shown = word.decode(ENCODING, "backslashreplace")
    return f"The text holds byte 0x{byte:02x} (in {shown[:40]!r}), which this tokenizer's vocabulary lacks, so it cannot be encoded."
