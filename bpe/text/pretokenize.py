"""Pre-tokenization: split raw text into pre-tokens and count them.

What it does: cut the text at special tokens (they never join a merge), split each
piece with a regex (GPT-2's by default), and return the count of every unique
pre-token as bytes. `Tally` does the same for text that arrives in pieces
(documents, chunks of a file): it keeps counts, never the text, so its memory
grows with the number of unique pieces, never with the size of the input.

What it does not do: name the pre-tokenizers or find special tokens (patterns.py
does, for this file and compiled.py), read files (inputs.py), count in parallel
(count.py), or merge anything. Trainers start from its `PreTokens`. This is the reference path:
where a compiled pre-tokenizer gives exactly its counts, `Tally` hands the text to it
instead -- the compiled core's (pretokenize_c.py: the named pre-tokenizers, any bytes),
or without it gigatoken's (compiled.py: GPT-2's regex, valid UTF-8).

Invalid UTF-8 is kept: bytes are decoded with ``surrogateescape`` and encoded
back the same way, so every input byte reaches the trainer as itself.
"""

from __future__ import annotations

import operator
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import filterfalse

import regex

from . import gigatoken as fast
from . import pretokenize_c as core

# The registry of pre-tokenizers and the special-token helpers live in patterns.py, below this file and
# compiled.py; they are imported here too, where users have long found them (from bpe.text.pretokenize import PATTERNS).
from .pretokenizers import (  # noqa: F401
    ALIASES,
    DEFAULT_PATTERN,
    ENCODING,
    ERRORS,
    PATTERN_HELP,
    PATTERNS,
    check_pattern,
    check_special_tokens,
    find_specials,
    pattern_name,
    regex_of,
    split_on_special,
)

Progress = Callable[[int, int], None]  # (bytes done, bytes total)


@dataclass(frozen=True)
class PreTokens:
    """Counts of unique pre-tokens, and optionally their order of occurrence."""

    counts: Mapping[bytes, int]  # a dict; or a counts file's CountedWords (counts_file.py)
    sequence: tuple[bytes, ...] | None = None  # every occurrence, in text order
    n_bytes: int = 0  # size of the input, for compression figures


_LINE = re.compile(r"[^\n]*\n|[^\n]+")


def lines_of(text: str) -> list[str]:
    """Each line with its newline kept, as HuggingFace's `Tokenizer.train(files)` reads a file: 'a\n\nb' -> ['a\n', '\n', 'b'].

    Only '\n' ends a line ('\r\n' ends with '\r\n'; a lone '\r' does not end one), as in Rust's `lines_with_ending`.
    """
    return _LINE.findall(text)


# ---------------------------------------------------------------------------
# counting one piece of text

# GPT-2's regex needs the `regex` module for \p{L} and \p{N}, and is slow; and
# most of its work is repeated, since the same words come back again and again.
# So for gpt2 the text is first cut into coarser *units* with the built-in `re`:
# a unit is a word (a run of non-whitespace) with all the whitespace before it
# (' the', '\n    foo()'), or the whitespace that ends the text. The units are
# counted, and each unique unit is split into pre-tokens once. Why this is exact:
# - every unit boundary is a GPT-2 boundary: each falls between a non-space
#   character and a space, and no GPT-2 pre-token holds a space after a non-space;
# - GPT-2 never looks past the end of a unit: a unit ends in a non-space, no
#   match stretches from a non-space into the space after it, and GPT-2's
#   lookahead (?!\S) only checks the character after whitespace, inside the unit;
# - so each unit splits alone as it does in the text, and units that begin with
#   whitespace can be glued back together and split in one call (count_units).
# subtle: `re` and `regex` disagree on what \s is (\x1c-\x1f), so _UNITS spells
# out regex's whitespace; a test checks the list against every character.
_WHITESPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
_WHITESPACE += "\u2028\u2029\u202f\u205f\u3000"
_UNITS = re.compile(f"[{_WHITESPACE}]*[^{_WHITESPACE}]+|[{_WHITESPACE}]+")
# On ASCII the GPT-2 pattern can use ASCII classes and the faster `re`, with
# identical pre-tokens (re.ASCII's \s is regex's \s on ASCII).
_ASCII_GPT2 = re.compile(r"""'(?:[sdmt]|ll|ve|re)| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""", re.ASCII)

_GPT2 = regex.compile(PATTERNS["gpt2"])  # the default, ready at import
_compiled: dict[str, Callable[[str], list[str]]] = {}


def _pattern(name: str) -> Callable[[str], list[str]]:
    """The pre-tokens of a pre-tokenizer's regex: its whole matches (even when the regex has groups), and for
    a regex of the user's also the text between them (see `_with_gaps`)."""
    finder = _compiled.get(name)
    if finder is None:
        compiled = regex.compile(regex_of(name))
        matches = compiled.findall if compiled.groups == 0 else lambda text: [m.group() for m in compiled.finditer(text)]
        # gpt2, cl100k and o200k match every character (nothing is left between matches); whitespace drops it by design
        finder = matches if ALIASES.get(name, name) in PATTERNS else _with_gaps(compiled, matches)
        if len(_compiled) > 64:  # regexes typed by users: keep a few
            _compiled.clear()
        _compiled[name] = finder
    return finder


def _with_gaps(compiled: regex.Pattern, matches: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """A finder that keeps the text a regex leaves between its matches, each stretch a pre-token of its own.

    With r'\\w+': 'the cat.' -> ['the', ' ', 'cat', '.'], where findall gives ['the', 'cat'].
    This is HuggingFace's Split(pattern, behavior='isolated'); tiktoken drops that text,
    and so would we, silently: no byte of the input may be lost. Empty matches (a regex
    like 'a*(?=b)' can make them) are dropped: they hold no byte.
    """

    def finder(text: str) -> list[str]:
        tokens = matches(text)
        if sum(map(len, tokens)) == len(text) and "" not in tokens:
            return tokens  # the matches cover the text: at findall's speed
        out, pos = [], 0
        for m in compiled.finditer(text):
            start, end = m.span()
            if start > pos:
                out.append(text[pos:start])
            if end > start:
                out.append(m.group())
            pos = end
        if pos < len(text):
            out.append(text[pos:])
        return out

    return finder


def count_text(text: str, pattern: str = DEFAULT_PATTERN) -> Counter[str]:
    """Pre-token counts of one special-token-free piece: 'a a' -> {'a': 1, ' a': 1}."""
    return count_parts([text], pattern)


def count_parts(parts: list[str], pattern: str = DEFAULT_PATTERN) -> Counter[str]:
    """Pre-token counts over several special-token-free pieces of text: ['a a', 'a'] -> {'a': 2, ' a': 1}."""
    tally = Tally(pattern)
    tally.add_parts(parts)
    return tally.tokens()


class Tally:
    """Pre-token counts of text that arrives in pieces; the text itself is not kept.

    Each piece given to `add` is a document: special tokens are cut out and no
    pre-token spans two pieces. Counter.update on a list runs in C, so matches
    are counted in bulk. For gpt2 it counts *units* (see _UNITS) and splits each
    unique unit only when asked for `tokens()`, once however often it was seen:

        t = Tally("gpt2"); t.add(["it is", "it<|s|>is"], ["<|s|>"])
        t.counts() -> {b'it': 2, b' is': 1, b'is': 1}

    Where a compiled path is exact `add` counts with it instead, and `counts()`
    adds both up: the compiled core's pre-tokenizer (pretokenize_c.py) for the named
    pre-tokenizers and any bytes, or, where the core is absent, gigatoken's
    (compiled.py) for GPT-2's on valid UTF-8 with gigatoken installed.
    """

    def __init__(self, pattern: str = DEFAULT_PATTERN, split_lines: bool = False, compiled: bool = True) -> None:
        self.pattern = pattern
        self.split_lines = split_lines  # each line (newline kept) of a part is a document of its own
        self.pieces: Counter[str] = Counter()  # units for gpt2, whole documents for none, else pre-tokens
        # the compiled paths where they are exact: the core's counter, else gigatoken (compiled.py) and its counts as
        # bytes; what they counted, why not the rest
        self.library, self.unavailable = compiled_path(pattern) if compiled else ("", "the Python path was asked for")
        self.core = core.counter(pattern) if self.library == core.LIBRARY else None
        self.fast: dict[bytes, int] = {}
        self.compiled_bytes = 0
        self.python_why: set[str] = set()  # why text went to the Python path

    def add(self, documents: Iterable[str | bytes], special_tokens: Sequence[str] = ()) -> None:
        """Count documents: text, or bytes (UTF-8 or not) as read from a file."""
        if self.core is not None:
            documents = self._add_core(documents, special_tokens)
        elif self.unavailable is None:
            documents = self._add_compiled(documents, special_tokens)
        elif documents:
            self.python_why.add(self.unavailable)
        for document in documents:
            if isinstance(document, bytes):
                document = decode(document)
            self.add_parts(split_on_special(document, special_tokens) if special_tokens else (document,))

    def _add_core(self, documents: Iterable[str | bytes], special_tokens: Sequence[str]) -> list[str]:
        """Count with the compiled core; return the documents left to the Python path (a str holding a surrogate)."""
        tokens = tuple(token.encode(ENCODING) for token in special_tokens)
        rest = []
        for document in documents:
            if isinstance(document, str):
                try:
                    document = document.encode(ENCODING)
                except UnicodeEncodeError:  # surrogateescape's, from bytes decoded here; bytes are given as they are
                    rest.append(document)
                    self.python_why.add("text holding a surrogate")
                    continue
            self.core.add(document, tokens, self.split_lines)
            self.compiled_bytes += len(document)
        return rest

    def _add_compiled(self, documents: Iterable[str | bytes], special_tokens: Sequence[str]) -> list[str | bytes]:
        """Count with the compiled path what it counts exactly; return the documents left to the Python path."""
        encoded, rest = [], []
        for document in documents:
            if isinstance(document, str):
                try:
                    document = document.encode(ENCODING)
                except UnicodeEncodeError:  # a surrogate: bytes that were not UTF-8
                    rest.append(document)
                    self.python_why.add("not valid UTF-8")
                    continue
            encoded.append(document)
        exact = []
        for document, why in zip(encoded, fast.refusals(encoded) if encoded else []):
            if why is None:
                exact.append(document)
            else:
                rest.append(document)
                self.python_why.add(why)
        if not exact:
            return rest
        data = exact[0] if len(exact) == 1 else fast.SEPARATOR.join(exact)
        counted = fast.count_utf8(data, special_tokens, self.split_lines, joined=len(exact) > 1)
        if self.fast:
            total, get = self.fast, self.fast.get
            for token, n in counted:
                total[token] = get(token, 0) + n
        else:
            self.fast = dict(counted)
        self.compiled_bytes += len(data) - len(exact) + 1
        return rest

    def add_parts(self, parts: Iterable[str]) -> None:
        """Count special-token-free parts."""
        pieces = self.pieces
        if self.split_lines:
            parts = [line for part in parts for line in lines_of(part)]
        if self.pattern == "none":
            pieces.update(part for part in parts if part)
            return
        finder = _UNITS.findall if self.pattern == "gpt2" else _pattern(self.pattern)
        for part in parts:
            pieces.update(finder(part))

    def tokens(self) -> Counter[str]:
        """The Python path's pre-token counts so far (for patterns other than gpt2, the tally's own counter)."""
        return count_units(self.pieces) if self.pattern == "gpt2" else self.pieces

    def counts(self) -> dict[bytes, int]:
        """tokens() as bytes, as trainers take them (with what the compiled path counted)."""
        if self.core is not None:  # the core's counts join gigatoken's place (only one of the two counts)
            self.fast, self.core = self.core.counts(), None
        counts = {token.encode(ENCODING, ERRORS): n for token, n in self.tokens().items()}
        if not counts:
            return self.fast  # not copied: a tally is done with once it is counted
        get = counts.get
        for token, n in self.fast.items():
            counts[token] = get(token, 0) + n
        return counts


def compiled_path(pattern: str) -> tuple[str, str | None]:
    """Which compiled pre-tokenizer counts this pattern's pre-tokens: (its name, None), or ("", why none can).

    The compiled core's (pretokenize_c.py) where it is built; else gigatoken's (compiled.py), GPT-2's pattern only.
    """
    why = core.unavailable(pattern)
    if why is None:
        return core.LIBRARY, None
    if fast.unavailable(pattern) is None:
        return fast.LIBRARY, None
    if pattern_name(pattern) == "gpt2" or regex_of(pattern) == PATTERNS["gpt2"]:
        return "", f"{why}; {fast.unavailable(pattern)}"
    return "", why


def count_units(units: Counter[str]) -> Counter[str]:
    """GPT-2 pre-token counts from unit counts: {' it.': 2, '\\n\\nok': 1} -> {' it': 2, '.': 2, '\\n': 2, 'ok': 1}.

    Units seen equally often are glued together and split in one call, and
    their pre-tokens counted that many times.
    """
    counts: Counter[str] = Counter()
    by_count: dict[int, list[str]] = {}
    for unit, n in units.items():
        if unit[-1] in _WHITESPACE:  # the whitespace that ends a text: one pre-token
            counts[unit] += n
        elif unit[0] in _WHITESPACE:  # ' word' or '\n  word'
            by_count.setdefault(n, []).append(unit)
        else:  # subtle: a text's first word has no whitespace in front; glued, it would join the word before
            for token in split_gpt2([unit]):
                counts[token] += n
    for n, group in by_count.items():
        tokens = split_gpt2(group)
        if n == 1:
            counts.update(tokens)
        else:
            for token, k in Counter(tokens).items():
                counts[token] += k * n
    return counts


def split_gpt2(units: list[str]) -> list[str]:
    """GPT-2 pre-tokens of units glued together: [' it.', '\\n\\nok'] -> [' it', '.', '\\n', '\\n', 'ok'].

    ASCII units take the fast `re` pattern; the order of pre-tokens is not kept.
    """
    ascii_units = [unit for unit in units if unit.isascii()]
    tokens = _ASCII_GPT2.findall("".join(ascii_units))
    if len(ascii_units) < len(units):
        tokens += _GPT2.findall("".join(unit for unit in units if not unit.isascii()))
    return tokens


def sequence_of_text(text: str, pattern: str = DEFAULT_PATTERN) -> list[str]:
    """Pre-tokens of one special-token-free piece, in order."""
    if pattern == "none":
        return [text] if text else []
    return _pattern(pattern)(text)


def _count_decoded(
    text: str | bytes, pattern: str, special_tokens: Sequence[str], split_lines: bool = False, compiled: bool = True
) -> dict[bytes, int]:
    tally = Tally(pattern, split_lines, compiled)
    tally.add([text], special_tokens)
    return tally.counts()


def sequence_bytes(text: str, pattern: str, special_tokens: Sequence[str], split_lines: bool = False) -> list[bytes]:
    """Pre-tokens of a document as bytes, in order: 'a b<|s|>c' -> [b'a', b' b', b'c'].

    With split_lines each line (newline kept) is a document of its own.
    """
    parts = split_on_special(text, special_tokens)
    if split_lines:
        parts = [line for part in parts for line in lines_of(part)]
    return [token.encode(ENCODING, ERRORS) for part in parts for token in sequence_of_text(part, pattern)]


def decode(data: bytes) -> str:
    return data.decode(ENCODING, ERRORS)


def pretokenize(
    text: str | bytes,
    *,
    pattern: str = DEFAULT_PATTERN,
    special_tokens: Sequence[str] = (),
    keep_sequence: bool = False,
    split_lines: bool = False,
    compiled: bool = True,
) -> PreTokens:
    """Pre-tokenize text held in memory (str, or bytes in any encoding state).

    With split_lines each line (newline kept) is a document: no pre-token spans a line end.
    compiled=False counts with the Python path only, even where compiled.py's is exact.
    """
    check_pattern(pattern)
    check_special_tokens(special_tokens)
    if isinstance(text, bytes):
        n_bytes = len(text)
        if not keep_sequence:  # counted from the bytes: the compiled path needs no str
            return PreTokens(_count_decoded(text, pattern, special_tokens, split_lines, compiled), None, n_bytes)
        text = decode(text)
    else:
        try:
            n_bytes = len(text.encode(ENCODING, ERRORS))
        except UnicodeEncodeError as e:
            raise ValueError(
                f"The text holds a lone surrogate (U+{ord(text[e.start]):04X}) at character {e.start}: "
                "it is not a character and stands for no byte, so it cannot be trained on."
            ) from None
    counts = _count_decoded(text, pattern, special_tokens, split_lines, compiled)
    sequence = tuple(sequence_bytes(text, pattern, special_tokens, split_lines)) if keep_sequence else None
    return PreTokens(counts, sequence, n_bytes)


# ---------------------------------------------------------------------------
# what the counts say about the input

NOT_TEXT_SHARE = 0.10  # NUL bytes and invalid UTF-8 above this share of the bytes: probably not text


def not_text(counts: Mapping[bytes, int]) -> str | None:
    """A sentence when the counted bytes are mostly not text (NUL bytes, invalid UTF-8), else None.

    {b'\\x00\\x00': 9, b'ok': 1} -> '... of its 20 bytes, 90% are NUL bytes (a binary file?).' One pass over
    the unique pre-tokens, not the text: ASCII and valid UTF-8 are checked in C.
    """
    compiled = getattr(counts, "compiled", None)  # a counts file's columns held by the core: it adds them up
    sums = compiled.sums() if compiled is not None else None
    if sums is not None:
        total, nul, invalid = sums
    else:
        # each sum a loop in C where it can be (0.12 s for 400,000 tokens as one Python loop): most tokens are ASCII
        # without NUL bytes, and the rest are checked together before one by one
        total = sum(map(operator.mul, map(len, counts), counts.values()))  # len(token) * n for each
        nul = sum(token.count(0) * counts[token] for token in counts if 0 in token)
        invalid = sum(invalid_bytes(token) * counts[token] for token in not_utf8(counts))
    if not total or nul + invalid < NOT_TEXT_SHARE * total:
        return None
    found = [f"{share:.0%} {what}" for share, what in ((nul / total, "are NUL bytes"), (invalid / total, "are not valid UTF-8")) if share]
    return f"the input does not look like text: of its {total:,} bytes, {' and '.join(found)} (a binary file?)."


def not_utf8(tokens: Iterable[bytes]) -> list[bytes]:
    """The tokens that are not valid UTF-8: [b'ok', b'\xff', b'\xc3\xa9'] -> [b'\xff'].

    The non-ASCII ones are decoded together first, joined by a newline (a sequence cut short before it, or
    continued after it, is invalid either way), and one by one only when that fails.
    """
    others = list(filterfalse(bytes.isascii, tokens))
    try:
        b"\n".join(others).decode(ENCODING)
        return []
    except UnicodeDecodeError:
        return [token for token in others if invalid_bytes(token)]


def invalid_bytes(token: bytes) -> int:
    """How many of the token's bytes are not valid UTF-8: b'a\xffb\xc3' -> 2 (each a lone surrogate once decoded as read)."""
    return sum(1 for c in token.decode(ENCODING, ERRORS) if "\udc80" <= c <= "\udcff")
