"""Pre-tokenization: split raw text into pre-tokens and count them.

What it does: cut the text at special tokens (they never join a merge), split each
piece with a regex (GPT-2's by default), and return the count of every unique
pre-token as bytes. `Tally` does the same for text that arrives in pieces
(documents, chunks of a file): it keeps counts, never the text, so its memory
grows with the number of unique pieces, never with the size of the input.

What it does not do: read files (inputs.py), count in parallel (count.py), or
merge anything. Trainers start from its `PreTokens`. This is the reference path:
where compiled.py's Rust pre-tokenizer gives exactly its counts (GPT-2's regex,
valid UTF-8), `Tally` hands the text to it instead.

Invalid UTF-8 is kept: bytes are decoded with ``surrogateescape`` and encoded
back the same way, so every input byte reaches the trainer as itself.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import regex

DEFAULT_PATTERN = "gpt2"  # the pre-tokenizer a setting means when it names none: the one default, used everywhere

# The named pre-tokenizers. Any other string is taken as a regex (tiktoken's `pat_str`):
# the pre-tokens are its matches, in order (findall), and text between matches is dropped.
PATTERNS: dict[str, str | None] = {
    # GPT-2's (r50k_base, p50k_base); tiktoken's r50k_pat_str is an equivalent, faster spelling
    "gpt2": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    # GPT-4's (cl100k_base): digits in threes, newlines apart. subtle: tiktoken now spells it with possessive
    # quantifiers and '\s++$'; under Python's regex that spelling makes '\n  ' at the end of a text one
    # pre-token, where tiktoken's own encoder makes two. This older spelling encodes as tiktoken does.
    "cl100k": r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    # GPT-4o's (o200k_base), tiktoken's pat_str exactly: a word is cut before a capital ("camelCase"),
    # contractions stay on their word, and a '/' after punctuation joins it.
    "o200k": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
    # subtle: whitespace is dropped, as in the textbook examples; this one is not lossless.
    "whitespace": r"""\S+""",
    # each document (the text between special tokens) is one sequence
    "none": None,
}
ALIASES = {"gpt4": "cl100k"}  # older names that keep working
# What the app and the CLI say about each choice.
PATTERN_HELP = {
    "gpt2": "GPT-2's regex: words with their leading space, numbers and punctuation apart.",
    "cl100k": "GPT-4's (cl100k_base) regex: numbers in threes, newlines kept apart (also called gpt4).",
    "o200k": "GPT-4o's (o200k_base) regex: words also cut before a capital, contractions kept on the word.",
    "whitespace": "Split at whitespace and drop it (the textbook version; not lossless).",
    "none": "No pre-tokenization: a whole document is one sequence.",
}
_NAME = regex.compile(r"[A-Za-z0-9_-]+")  # a string like this is a (mistyped) name, not a regex


ENCODING = "utf-8"
ERRORS = "surrogateescape"  # invalid bytes become lone surrogates and come back unchanged

Progress = Callable[[int, int], None]  # (bytes done, bytes total)


@dataclass(frozen=True)
class PreTokens:
    """Counts of unique pre-tokens, and optionally their order of occurrence."""

    counts: dict[bytes, int]
    sequence: tuple[bytes, ...] | None = None  # every occurrence, in text order
    n_bytes: int = 0  # size of the input, for compression figures


def check_pattern(pattern: str) -> None:
    """A pre-tokenizer is a name (PATTERNS, ALIASES) or a regex; raise ValueError with one sentence otherwise."""
    regex_of(pattern)


def regex_of(pattern: str) -> str | None:
    """The regex of a pre-tokenizer: 'gpt4' -> GPT-4's regex, 'none' -> None, any other regex -> itself.

    A plain word that is not a name ('gtp2') is refused rather than taken as a regex
    matching that word; so is a regex that does not compile or matches the empty string.
    """
    if not isinstance(pattern, str):
        raise ValueError(f"A pre-tokenizer is a name or a regex string, not {type(pattern).__name__}.")
    name = ALIASES.get(pattern, pattern)
    if name in PATTERNS:
        return PATTERNS[name]
    choices = ", ".join([*PATTERNS, *ALIASES])
    if _NAME.fullmatch(pattern) or not pattern:
        raise ValueError(f"Unknown pre-tokenizer {pattern!r}; choose one of {choices}, or give a regex.")
    try:
        compiled = regex.compile(pattern)
    except (regex.error, OverflowError, RecursionError) as e:
        raise ValueError(f"The pre-tokenizer regex {pattern[:60]!r} does not compile: {e}.") from None
    if compiled.search("") is not None:
        raise ValueError(f"The pre-tokenizer regex {pattern[:60]!r} matches the empty string, so it would make empty pre-tokens.")
    return pattern


def pattern_name(pattern: str) -> str:
    """The name a pre-tokenizer is shown by: 'gpt4' -> 'cl100k', a named one -> itself, a regex -> 'regex'."""
    name = ALIASES.get(pattern, pattern)
    return name if name in PATTERNS else "regex"


def check_special_tokens(special_tokens: Sequence[str]) -> None:
    if isinstance(special_tokens, (str, bytes)):
        raise ValueError("special_tokens must be a list of strings, not a single string.")
    if not isinstance(special_tokens, (list, tuple)):
        raise ValueError(f"special_tokens must be a list of strings, not {type(special_tokens).__name__}.")
    for token in special_tokens:
        if not isinstance(token, str) or token == "":
            raise ValueError("A special token must be a non-empty string.")
        try:
            token.encode(ENCODING)
        except UnicodeEncodeError as e:
            raise ValueError(
                f"Special token {token[:40]!r} holds a lone surrogate (U+{ord(token[e.start]):04X}), which is not a character."
            ) from None
    seen = set()
    for token in special_tokens:
        if token in seen:
            raise ValueError(f"Special token {token!r} is listed twice.")
        seen.add(token)


def split_on_special(text: str, special_tokens: Sequence[str]) -> list[str]:
    """Cut text at special tokens and drop them: 'a<|e|>b' -> ['a', 'b'].

    subtle: longest first, so '<|e|><|e|>' as one token wins over '<|e|>'.
    """
    if not special_tokens:
        return [text]
    parts, pos = [], 0
    for start, token in find_specials(text, special_tokens):
        parts.append(text[pos:start])
        pos = start + len(token)
    parts.append(text[pos:])
    return parts


def find_specials(text: str, special_tokens: Sequence[str], start: int = 0, stop: int | None = None) -> Iterator[tuple[int, str]]:
    """(where, which) of each special token in text[start:stop], left to right, not overlapping.

    What `regex` finds with the alternation of the tokens, longest first (so the
    longer of two that start at one place wins): 'x<|e|><|e|>' with ['<|e|>',
    '<|e|><|e|>'] -> [(1, '<|e|><|e|>')]. subtle: str.find, not the regex engine,
    which retries a long repetitive token ('a' * 5000) at every position of text
    like it: O(n * m) and worse, where str.find is linear.
    """
    stop = len(text) if stop is None else stop
    ordered = sorted(set(special_tokens), key=len, reverse=True)
    found = {token: text.find(token, start, stop) for token in ordered}  # each token's next occurrence (-1: none left)
    pos = start
    while True:
        best, which = -1, ""
        for token in ordered:
            i = found[token]
            if 0 <= i < pos:  # passed over: look again from here
                i = found[token] = text.find(token, pos, stop)
            if i >= 0 and (best < 0 or i < best):  # a tie keeps the earlier, longer token
                best, which = i, token
        if best < 0:
            return
        yield best, which
        pos = best + len(which)


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
    """The findall of a pre-tokenizer's regex (whole matches, even when the regex has groups)."""
    finder = _compiled.get(name)
    if finder is None:
        compiled = regex.compile(regex_of(name))
        finder = compiled.findall if compiled.groups == 0 else lambda text: [m.group() for m in compiled.finditer(text)]
        if len(_compiled) > 64:  # regexes typed by users: keep a few
            _compiled.clear()
        _compiled[name] = finder
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

    Where compiled.py's path is exact (GPT-2's pre-tokenizer, valid UTF-8,
    gigatoken installed) `add` counts with it instead, and `counts()` adds both up.
    """

    def __init__(self, pattern: str = DEFAULT_PATTERN, split_lines: bool = False, compiled: bool = True) -> None:
        from . import compiled as fast

        self.pattern = pattern
        self.split_lines = split_lines  # each line (newline kept) of a part is a document of its own
        self.pieces: Counter[str] = Counter()  # units for gpt2, whole documents for none, else pre-tokens
        # the compiled path (compiled.py) where it is exact: its counts as bytes, what it counted, why not the rest
        self.unavailable = fast.unavailable(pattern) if compiled else "the Python path was asked for"
        self.fast: dict[bytes, int] = {}
        self.compiled_bytes = 0
        self.python_why: set[str] = set()  # why text went to the Python path

    def add(self, documents: Iterable[str | bytes], special_tokens: Sequence[str] = ()) -> None:
        """Count documents: text, or bytes (UTF-8 or not) as read from a file."""
        if self.unavailable is None:
            documents = self._add_compiled(documents, special_tokens)
        elif documents:
            self.python_why.add(self.unavailable)
        for document in documents:
            if isinstance(document, bytes):
                document = decode(document)
            self.add_parts(split_on_special(document, special_tokens) if special_tokens else (document,))

    def _add_compiled(self, documents: Iterable[str | bytes], special_tokens: Sequence[str]) -> list[str | bytes]:
        """Count with the compiled path what it counts exactly; return the documents left to the Python path."""
        from . import compiled as fast

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
        counts = {token.encode(ENCODING, ERRORS): n for token, n in self.tokens().items()}
        if not counts:
            return self.fast  # not copied: a tally is done with once it is counted
        get = counts.get
        for token, n in self.fast.items():
            counts[token] = get(token, 0) + n
        return counts


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
