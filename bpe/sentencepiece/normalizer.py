"""SentencePiece's normalizer, exactly as sentencepiece 0.2.3 runs it (normalizer.cc: Normalizer::Normalize).

What SentencePiece does to a line before it trains on it or encodes it, in order:

1. **Rewrite by the character map.** At each position the longest key of the precompiled character map
   (`precompiled_charsmap`) that starts there is replaced by its value; where none starts, the character is copied.
   `nmt_nfkc`, the default, is NFKC plus a few rules for machine translation (control characters removed, odd
   spaces made ' '), compiled by Google into a double-array trie (Darts); `identity` has no map at all.
2. **Whitespace.** With `remove_extra_whitespaces` (the default) leading and trailing spaces go and runs of
   spaces become one. With `escape_whitespaces` (the default) every space becomes `▁` (U+2581).
3. **The dummy prefix.** With `add_dummy_prefix` (the default) a `▁` is put first, so that "world" and
   "hello world" both hold `▁world`; with `treat_whitespace_as_suffix` it goes last instead.

    >>> Normalizer().normalize("  Hello   ＷＯＲＬＤ ")
    '▁Hello▁WORLD'

Rules a student can check against normalizer.cc:

- The map works on UTF-8 bytes: a Darts trie (`CharsMap`) walked byte by byte from the position, every key that
  ends on the way is a match, and the longest of the first 32 wins (`kMaxTrieResultsSize`).
- Where no key matches, one character is copied; a byte that does not start a valid UTF-8 character becomes
  U+FFFD and only that byte is consumed, so `b"\\xe2\\x96"` (a cut-off `▁`) is two U+FFFD, not one as Python's
  `errors="replace"` gives. Surrogates (`b"\\xed\\xa0\\x80"`), overlong forms and code points over U+10FFFF are
  malformed too.
- A value may hold spaces ('①' is '1' but '½' is '1⁄2' and U+3000 is ' '), and may be empty (U+200B, U+0000..
  are removed): the whitespace rules run on what the map gives, so "a\\u3000\\u3000b" is "▁a▁b".
- subtle: a key can be longer than one character (a letter and its combining marks), so "e\\u0301" is one match
  ('é'), and `unicodedata.normalize("NFKC", ...)` is *not* the same function: nmt_nfkc removes controls, keeps
  some characters NFKC changes and was compiled from an older Unicode.
- subtle: leading spaces are skipped on the *map's output*: a line of only spaces, or of characters the map
  removes ("\\u200b"), normalizes to "" (the dummy prefix is added, then stripped as trailing whitespace).
- subtle: the training normalizer has no user-defined symbols; the encoder's does: a user-defined symbol in the
  text is copied as it is (not mapped), longest first (`Normalizer(user_defined=...)`).

What it does not do: HuggingFace's `Precompiled` normalizer, which applies the same map per grapheme cluster and
takes the *shortest* match (hf.py has it), or decoding (`▁` back to spaces: encoder.py).

The `nmt_nfkc` map ships with this package (nmt_nfkc.bin, Apache-2.0 data from sentencepiece 0.2.3; its licence
is nmt_nfkc.LICENSE beside it), so nothing here needs sentencepiece installed; `model_file.charsmap_of` reads the map a
`.model` file or a HuggingFace tokenizer.json carries.
"""

from __future__ import annotations

import functools
import sys
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .compiled import core as compiled_core

SPACE = "\u2581"  # ▁, what escape_whitespaces turns a space into
SPACE_BYTES = SPACE.encode()
REPLACEMENT_BYTES = "\ufffd".encode()  # what a malformed byte becomes
MAX_TRIE_RESULTS = 32  # normalizer.h kMaxTrieResultsSize: only the first 32 matches are looked at
NMT_NFKC = Path(__file__).with_name("nmt_nfkc.bin")
NAMES = ("nmt_nfkc", "identity")  # the maps this package knows by name


# ---------------------------------------------------------------------------
# UTF-8 as sentencepiece reads it (util.cc: DecodeUTF8)


def _trail(b: int) -> bool:
    return b & 0xC0 == 0x80


def valid_codepoint(c: int) -> bool:
    """util.h IsValidCodepoint: not a surrogate, at most U+10FFFF."""
    return c < 0xD800 or 0xE000 <= c <= 0x10FFFF


def char_length(data: bytes, pos: int) -> int:
    """The length of the valid UTF-8 character at data[pos], or 0 if it is malformed (sentencepiece's DecodeUTF8).

    b'a\\xc3\\xa9', 1 -> 2 ('é'); b'\\xe2\\x96', 0 -> 0 (cut off); b'\\xc0\\x80', 0 -> 0 (overlong NUL).
    """
    b0, n = data[pos], len(data) - pos
    if b0 < 0x80:
        return 1
    if n >= 2 and b0 & 0xE0 == 0xC0:
        b1 = data[pos + 1]
        if _trail(b1) and ((b0 & 0x1F) << 6 | (b1 & 0x3F)) >= 0x80:
            return 2
    elif n >= 3 and b0 & 0xF0 == 0xE0:
        b1, b2 = data[pos + 1], data[pos + 2]
        c = (b0 & 0x0F) << 12 | (b1 & 0x3F) << 6 | (b2 & 0x3F)
        if _trail(b1) and _trail(b2) and c >= 0x800 and valid_codepoint(c):
            return 3
    elif n >= 4 and b0 & 0xF8 == 0xF0:
        b1, b2, b3 = data[pos + 1], data[pos + 2], data[pos + 3]
        c = (b0 & 0x07) << 18 | (b1 & 0x3F) << 12 | (b2 & 0x3F) << 6 | (b3 & 0x3F)
        if _trail(b1) and _trail(b2) and _trail(b3) and c >= 0x10000 and valid_codepoint(c):
            return 4
    return 0


def as_bytes(text: str | bytes) -> bytes:
    """The bytes sentencepiece sees: a str as UTF-8 (a lone surrogate as its three malformed bytes), bytes as they are."""
    return text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")


def to_text(data: bytes | str) -> str:
    """Text as sentencepiece's trainer holds it: malformed bytes each made U+FFFD, one per byte (b'\\xe2\\x96' -> '\\ufffd\\ufffd')."""
    data = as_bytes(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    out, pos = [], 0
    while pos < len(data):
        n = char_length(data, pos)
        out.append(data[pos : pos + n].decode("utf-8") if n else "\ufffd")
        pos += n or 1
    return "".join(out)


# ---------------------------------------------------------------------------
# the precompiled character map: a Darts double-array trie + the values


class CharsMap:
    """A `precompiled_charsmap`: <trie size: 4 bytes, little-endian><Darts double array><values, each ended by NUL>.

    Each unit of the double array is 32 bits: a label (the byte that leads to it; a leaf's has bit 31 set), a
    has-leaf bit (bit 8: a key ends here) and an offset to its children (bits 10-31, shifted by 8 when bit 9 is
    set); a leaf's value (bits 0-30) is where its replacement starts among the values. The blob is checked as
    sentencepiece checks it (Normalizer::Init and Darts' validate), so a hostile one cannot send a walk out of
    the array: a broken blob is refused with one sentence.
    """

    def __init__(self, blob: bytes) -> None:
        if len(blob) <= 4:
            raise ValueError("The precompiled character map is broken: it is shorter than its own header.")
        size = int.from_bytes(blob[:4], "little")
        if size >= len(blob) - 4:
            raise ValueError("The precompiled character map is broken: its trie is longer than the map.")
        if size < 1024 or size % 1024:
            raise ValueError("The precompiled character map is broken: its trie's size is not a multiple of 1024 bytes.")
        units = array("I", blob[4 : 4 + size])
        if sys.byteorder == "big":
            units.byteswap()
        self.units = units
        self.values = bytes(blob[4 + size :])
        if not self.values.endswith(b"\0"):
            raise ValueError("The precompiled character map is broken: its values do not end with a NUL byte.")
        if not _valid(units, len(self.values)):
            raise ValueError("The precompiled character map is broken: its double-array trie does not hold together.")
        self.blob = bytes(blob)

    def matches(self, data: bytes, pos: int) -> list[tuple[int, int]]:
        """Every key that starts at data[pos], shortest first, as (length in bytes, where its value starts).

        Darts' commonPrefixSearch: walk the trie one byte at a time; a key ends where a unit has a leaf.
        """
        units = self.units
        node = _offset(units[0])
        found = []
        for i in range(pos, len(data)):
            c = data[i]
            node ^= c
            unit = units[node]
            if unit & 0x800000FF != c:  # label() != c: no key goes on with this byte
                break
            node ^= _offset(unit)
            if unit >> 8 & 1:
                found.append((i - pos + 1, units[node] & 0x7FFFFFFF))
        return found

    def value(self, start: int) -> bytes:
        """The replacement that starts at `start` among the values (up to its NUL)."""
        return self.values[start : self.values.index(b"\0", start)]

    def longest(self, data: bytes, pos: int) -> tuple[int, bytes] | None:
        """sentencepiece's choice at data[pos]: (bytes consumed, replacement) of the longest of the first 32 matches, or None."""
        found = self.matches(data, pos)[:MAX_TRIE_RESULTS]
        if not found:
            return None
        length, start = found[-1]  # shortest first, so the last is the longest
        return length, self.value(start)

    def rules(self) -> dict[bytes, bytes]:
        """Every key and its replacement (what spm's Decompile lists): for tests and for a student's curiosity.

        A unit i with label l is the child labelled l of the node whose children start at i ^ l, so the units are
        grouped by that once, and the walk from the root only visits what a search could reach.
        """
        units, out = self.units, {}
        children: dict[int, list[int]] = {}
        for i, unit in enumerate(units):
            if i and unit & 0x800000FF <= 0xFF:
                children.setdefault(i ^ (unit & 0xFF), []).append(i)
        stack = [(_offset(units[0]), b"")]
        while stack:
            base, key = stack.pop()
            for node in children.get(base, ()):
                unit = units[node]
                child, longer = node ^ _offset(unit), key + bytes([unit & 0xFF])
                if unit >> 8 & 1:
                    out[longer] = self.value(units[child] & 0x7FFFFFFF)
                stack.append((child, longer))
        return out


def _offset(unit: int) -> int:
    """Darts' offset(): bits 10-31, shifted left by 8 more when bit 9 is set."""
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


def _valid(units: array, max_value: int) -> bool:
    """Darts' DoubleArray::validate: every child a walk can reach lies inside the array, every value inside the values."""
    size = len(units)
    if size == 0:
        return False
    root = units[0]
    if root & 0x800000FF != 0 or root >> 8 & 1 or _offset(root) == 0 or (_offset(root) | 0xFF) >= size:
        return False
    for i in range(1, size):
        unit = units[i]
        if unit & 0x800000FF <= 0xFF:  # an inner unit
            child = i ^ _offset(unit)
            if (child | 0xFF) >= size:
                return False
            if unit >> 8 & 1 and units[child] & 0x800000FF <= 0xFF:  # its leaf must be a leaf unit
                return False
        elif (unit & 0x7FFFFFFF) >= max_value:
            return False
    return True


@functools.cache
def nmt_nfkc() -> CharsMap:
    """The `nmt_nfkc` map, read once from the package's copy (byte for byte the one every sentencepiece model holds)."""
    return CharsMap(NMT_NFKC.read_bytes())


def charsmap_named(name: str) -> CharsMap | None:
    """The map SentencePiece calls `name`: nmt_nfkc, or None for identity; any other name is refused."""
    if name == "identity":
        return None
    if name == "nmt_nfkc":
        return nmt_nfkc()
    raise ValueError(
        f"Unknown normalization {name!r}: this tool knows {' and '.join(NAMES)} (nfkc, nmt_nfkc_cf and nfkc_cf are not shipped)."
    )


# ---------------------------------------------------------------------------
# the normalizer


@dataclass(frozen=True)
class NormalizerSpec:
    """sentencepiece's NormalizerSpec: the map by name (and its blob) and the three whitespace switches.

    `precompiled_charsmap` is the blob itself (b"" for identity); NormalizerSpec.named("nmt_nfkc") fills it in.
    """

    name: str = "nmt_nfkc"
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True

    @classmethod
    def named(cls, name: str = "nmt_nfkc", **switches: bool) -> NormalizerSpec:
        charsmap = charsmap_named(name)
        return cls(name, charsmap.blob if charsmap else b"", **switches)

    def __repr__(self) -> str:  # the blob is 240 kB
        return (
            f"NormalizerSpec(name={self.name!r}, precompiled_charsmap=<{len(self.precompiled_charsmap):,} bytes>, "
            f"add_dummy_prefix={self.add_dummy_prefix}, remove_extra_whitespaces={self.remove_extra_whitespaces}, "
            f"escape_whitespaces={self.escape_whitespaces})"
        )


class Normalizer:
    """Normalizer::Normalize: text -> the string of characters SentencePiece trains on or encodes.

    Normalizer().normalize("  Hello   World ") -> '▁Hello▁World'
    Normalizer(NormalizerSpec.named("identity"), treat_whitespace_as_suffix=True).normalize("a b") -> 'a▁b▁'
    """

    def __init__(
        self, spec: NormalizerSpec | None = None, *, treat_whitespace_as_suffix: bool = False, user_defined: Iterable[str] = ()
    ) -> None:
        self.spec = spec if spec is not None else NormalizerSpec.named("nmt_nfkc")
        self.charsmap = CharsMap(self.spec.precompiled_charsmap) if self.spec.precompiled_charsmap else None
        if self.spec.name == "nmt_nfkc" and self.spec.precompiled_charsmap == nmt_nfkc().blob:
            self.charsmap = nmt_nfkc()  # the shared instance: parsed and checked once per process
        self.suffix = treat_whitespace_as_suffix
        # the encoder's PrefixMatcher: user-defined symbols are copied, not mapped (longest first)
        self.user_defined = tuple(sorted({u.encode() for u in user_defined if u}, key=len, reverse=True))
        self._space = SPACE_BYTES if self.spec.escape_whitespaces else b" "
        self._compiled = None  # the core's twin (bpe/c/spm.c), made when first used

    def prefix(self, data: bytes, pos: int) -> tuple[bytes, int]:
        """NormalizePrefix: (what the text at data[pos] becomes, how many bytes that consumed).

        b'\\xef\\xbc\\xa1b', 0 -> (b'A', 3) by nmt_nfkc; b'\\xe2\\x96', 0 -> (U+FFFD's bytes, 1).
        """
        for symbol in self.user_defined:
            if data.startswith(symbol, pos):
                return symbol, len(symbol)
        if self.charsmap is not None and (match := self.charsmap.longest(data, pos)) is not None:
            return match[1], match[0]
        n = char_length(data, pos)
        return (data[pos : pos + n], n) if n else (REPLACEMENT_BYTES, 1)

    def normalize_bytes(self, data: bytes) -> bytes:
        """Normalizer::Normalize on bytes (malformed UTF-8 allowed), by the compiled core where it is built; valid UTF-8."""
        compiled = self.compiled()
        return compiled.normalize(data) if compiled is not None else self.reference(data)

    def compiled(self):
        """The core's SpmNormalizer for this normalizer, or None where the core is absent."""
        if self._compiled is None:
            core = compiled_core()
            if core is None:
                return None
            charsmap = self.charsmap.blob if self.charsmap is not None else b""
            spec = self.spec
            self._compiled = core.SpmNormalizer(
                charsmap, spec.add_dummy_prefix, spec.remove_extra_whitespaces, spec.escape_whitespaces, self.suffix, self.user_defined
            )
        return self._compiled

    def reference(self, data: bytes) -> bytes:
        """The whole of Normalizer::Normalize on bytes, in Python: the readable twin of the compiled one."""
        spec, space = self.spec, self._space
        n, pos = len(data), 0
        # skip the leading spaces (as the map gives them)
        if spec.remove_extra_whitespaces:
            while pos < n:
                piece, consumed = self.prefix(data, pos)
                if piece != b" ":
                    break
                pos += consumed
        if pos == n:
            return b""
        out = bytearray()
        if not self.suffix and spec.add_dummy_prefix:
            out += space
        # map each prefix; drop the spaces that follow a space; spaces become ▁
        is_prev_space = spec.remove_extra_whitespaces
        while pos < n:
            piece, consumed = self.prefix(data, pos)
            if is_prev_space:
                piece = piece.lstrip(b" ")
            if piece:
                out += piece.replace(b" ", space)
                is_prev_space = piece.endswith(b" ")
            pos += consumed
            if not spec.remove_extra_whitespaces:
                is_prev_space = False
        # the trailing spaces go (the dummy prefix too, when nothing else is left)
        if spec.remove_extra_whitespaces:
            while out.endswith(space):
                del out[-len(space) :]
        if self.suffix and spec.add_dummy_prefix:
            out += space
        return bytes(out)

    def normalize(self, text: str | bytes) -> str:
        """normalize_bytes on text's UTF-8 (or on bytes as given), as a str."""
        return self.normalize_bytes(as_bytes(text)).decode("utf-8")
