"""Pre-tokenization, the readable reference: split text into pre-tokens and count them in Python.

What it does: cut the text at special tokens (they never join a merge), split each
piece with a pre-tokenizer (GPT-2's regex by default: pretokenizers.py names them),
and count every unique pre-token. `PythonTally` counts text that arrives in pieces:
it keeps counts, never the text, so its memory grows with the number of unique
pieces, never with the size of the input.

What it does not do: name the pre-tokenizers or find special tokens (pretokenizers.py),
choose among the compiled engines (tally.py: the core's scanners, gigatoken, or this
file), read files (data/inputs.py), count in parallel (data/count.py), or merge anything.

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

from .pretokenizers import DEFAULT, ENCODING, ERRORS, GPT2, PreTokenizer, pretokenizer_of, split_on_special

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

_GPT2 = regex.compile(GPT2.regex)  # the default, ready at import


def count_text(text: str, pretokenizer: str | PreTokenizer = DEFAULT) -> Counter[str]:
    """Pre-token counts of one special-token-free piece: 'a a' -> {'a': 1, ' a': 1}."""
    return count_parts([text], pretokenizer)


def count_parts(parts: Iterable[str], pretokenizer: str | PreTokenizer = DEFAULT) -> Counter[str]:
    """Pre-token counts over several special-token-free pieces of text: ['a a', 'a'] -> {'a': 2, ' a': 1}."""
    tally = PythonTally(pretokenizer)
    tally.add_parts(parts)
    return tally.tokens()


class PythonTally:
    """Pre-token counts of special-token-free text that arrives in pieces, counted in Python; the text is not kept.

    Counter.update on a list runs in C, so matches are counted in bulk. For a
    pre-tokenizer whose pre-tokens never cross a GPT-2 unit (see _UNITS: GPT-2's)
    it counts units and splits each unique unit only when asked for `tokens()`,
    once however often it was seen:

        t = PythonTally(GPT2); t.add_parts(["it is", "it", "is"])
        t.tokens() -> {'it': 2, ' is': 1, 'is': 1}
    """

    def __init__(self, pretokenizer: str | PreTokenizer = DEFAULT, split_lines: bool = False) -> None:
        self.pretokenizer = pretokenizer_of(pretokenizer)
        self.split_lines = split_lines  # each line (newline kept) of a part is a document of its own
        self.pieces: Counter[str] = Counter()  # units, whole documents (no regex), or pre-tokens

    def add_parts(self, parts: Iterable[str]) -> None:
        """Count special-token-free parts."""
        pieces, pretokenizer = self.pieces, self.pretokenizer
        if self.split_lines:
            parts = [line for part in parts for line in lines_of(part)]
        if pretokenizer.regex is None:
            pieces.update(part for part in parts if part)
            return
        split = _UNITS.findall if pretokenizer.units else pretokenizer.split
        for part in parts:
            pieces.update(split(part))

    def tokens(self) -> Counter[str]:
        """The pre-token counts so far (units are split now)."""
        return count_units(self.pieces) if self.pretokenizer.units else self.pieces

    def counts(self) -> dict[bytes, int]:
        """tokens() as bytes, as trainers take them."""
        return {token.encode(ENCODING, ERRORS): n for token, n in self.tokens().items()}


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


def sequence_of_text(text: str, pretokenizer: str | PreTokenizer = DEFAULT) -> list[str]:
    """Pre-tokens of one special-token-free piece, in order."""
    return pretokenizer_of(pretokenizer).split(text)


def sequence_bytes(text: str, pretokenizer: str | PreTokenizer, special_tokens: Sequence[str], split_lines: bool = False) -> list[bytes]:
    """Pre-tokens of a document as bytes, in order: 'a b<|s|>c' -> [b'a', b' b', b'c'].

    With split_lines each line (newline kept) is a document of its own.
    """
    parts, split = split_on_special(text, special_tokens), pretokenizer_of(pretokenizer).split
    if split_lines:
        parts = [line for part in parts for line in lines_of(part)]
    return [token.encode(ENCODING, ERRORS) for part in parts for token in split(part)]


def decode(data: bytes) -> str:
    return data.decode(ENCODING, ERRORS)


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
