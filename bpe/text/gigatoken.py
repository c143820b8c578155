"""Pre-tokenization at compiled speed: GPT-2 pre-token counts from gigatoken, where they are exact.

What it does: count the GPT-2 pre-tokens of UTF-8 text with gigatoken's Rust
pre-tokenizer (`gigatoken_rs.pretokenized_counts`, about ten times the Python
path's speed on one core), and say when it cannot, so that `tally.Tally`
counts that text with the Python path instead. Where it is used its counts are
the Python path's exactly: tests/test_compiled.py compares the two on generated
text over all of Unicode and on real corpora.

When the Python path counts instead (`unavailable` says why for a pre-tokenizer,
`refusal` for a text):
- gigatoken is not installed (it is optional: ``pip install .[fast]``), is not
  the version checked here (VERSION), or ``BPE_COMPILED=0`` is set;
- a pre-tokenizer other than GPT-2's: gigatoken 0.10 counts only GPT-2's
  pre-tokens (it splits cl100k and o200k only inside its encoder);
- text that is not valid UTF-8: gigatoken splits invalid bytes its own way
  (b'ab\\xffcd' -> b'ab', b'\\xffcd'), the Python path keeps each as a lone
  surrogate that stands apart (b'ab', b'\\xff', b'cd');
- text holding a character whose class (letter, number, space, other) gigatoken's
  Unicode tables and the `regex` module's disagree on: characters added in the
  newest Unicode versions (DISAGREE, measured for the `regex` version CHECKED_REGEX).

What it does not do: read files, or run in parallel. gigatoken runs on one
thread in each process (count.py's worker processes are the parallelism), so
there is never a pool of threads inside a pool of processes.

    counts = count_utf8(b"it is<|endoftext|>it", ["<|endoftext|>"])  # -> [(b'it', 2), (b' is', 1)] (any order)
"""

from __future__ import annotations

import codecs
import os
import re
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache

from .pretokenizers import ENCODING, PreTokenizer, find_specials, pretokenizer_of

VERSION = "0.10.0"  # the gigatoken whose pre-tokens the tests compared with ours
CHECKED_REGEX = "2026.11.15"  # the `regex` whose Unicode tables DISAGREE was measured against
LIBRARY = f"gigatoken {VERSION}"
# subtle: 0xff never occurs in UTF-8, so it can end documents without ever being text.
SEPARATOR = b"\xff"

# Code point ranges (first, last) that gigatoken 0.10.0 (ICU's tables) and regex 2026.11.15 put in different
# classes of GPT-2's regex, all unassigned in Unicode 14 (new characters). Made by `python benchmarks/unicode_tables.py`.
# fmt: off
DISAGREE: tuple[tuple[int, int], ...] = (
    (0x0558, 0x0558), (0x058B, 0x058C), (0x208F, 0x208F), (0x209D, 0x209F), (0xA7DD, 0xA7DD), (0xA7E2, 0xA7E2),
    (0xAB6C, 0xAB6D), (0x107BB, 0x107BF), (0x10ED9, 0x10EEE), (0x11B0A, 0x11B0A), (0x11DF1, 0x11DF1), (0x1246F, 0x1246F),
    (0x12475, 0x1247F), (0x12550, 0x12686), (0x18CD6, 0x18CDA), (0x18D1F, 0x18D20), (0x18E00, 0x19191), (0x191A0, 0x191D2),
    (0x1B123, 0x1B128), (0x1B168, 0x1B168), (0x1D6A6, 0x1D6A6), (0x1DF1F, 0x1DF24), (0x1DF2B, 0x1DF81), (0x1DF90, 0x1DF96),
    (0x1DFCD, 0x1DFFF), (0x2B81E, 0x2B81E), (0x3D000, 0x3FC3F),
)
# fmt: on


# ---------------------------------------------------------------------------
# whether the compiled path can count


@lru_cache(maxsize=1)
def _library():
    """(gigatoken's Rust module or None, why not)."""
    if os.environ.get("BPE_COMPILED", "1") == "0":
        return None, "BPE_COMPILED=0 is set"
    try:
        from importlib.metadata import version

        import gigatoken.gigatoken_rs as rs
    except ImportError:
        return None, "gigatoken is not installed (pip install .[fast])"
    found = version("gigatoken")
    if found != VERSION:
        return None, f"gigatoken {found} is installed, and only {VERSION} was checked against the Python path"
    import regex

    if regex.__version__ != CHECKED_REGEX:
        return None, f"regex {regex.__version__} is installed, and only {CHECKED_REGEX}'s Unicode tables were compared with gigatoken's"
    return rs, ""


def unavailable(pretokenizer: str | PreTokenizer) -> str | None:
    """Why gigatoken cannot count with this pre-tokenizer, in a few words; None when it can."""
    rs, why = _library()
    if rs is None:
        return why
    if not pretokenizer_of(pretokenizer).gigatoken:
        return f"{LIBRARY} counts only the gpt2 pre-tokenizer's pre-tokens"
    return None


def refusal(data: bytes) -> str | None:
    """Why the compiled path would not count this text exactly, in a few words; None when it would."""
    return refusals([data])[0]


def refusals(documents: Sequence[bytes]) -> list[str | None]:
    """refusal() of each document.

    Pure ASCII passes at once (checked in C, a word at a time). Otherwise Python's own
    UTF-8 decoder -- the Python path's definition of valid -- reads it a slice at a time
    (no str of a whole shard is kept), and a regex looks for the characters in DISAGREE in
    the non-ASCII bytes alone: the ASCII ones deleted from valid UTF-8 leave its other
    characters whole, and they are a few percent of most text.
    """
    return [None if document.isascii() else _refusal(document) for document in documents]


_ASCII = bytes(range(128))
# bytes decoded at a time; subtle: small enough that each str made stays in the processor's cache
# (64 KB: 0.016 s for the 48 MB corpus; 4 MB slices take 4x longer, faulting in fresh pages for every str)
_SLICE = 1 << 16


def _refusal(document: bytes) -> str | None:
    view, start, end = memoryview(document), 0, len(document)
    try:
        while start < end:
            # 3 bytes more, so that a character begun in the slice ends in it; the decoder stops before one that does not
            stop = start + _SLICE + 3
            _, used = codecs.utf_8_decode(view[start:stop], "strict", stop >= end)
            start += used
    except UnicodeDecodeError:
        return "not valid UTF-8"
    if DISAGREE and _disagree_class().search(document.translate(None, _ASCII).decode(ENCODING)):
        return "characters whose Unicode class gigatoken and regex disagree on"
    return None


@lru_cache(maxsize=1)
def _disagree_class() -> re.Pattern[str]:
    return re.compile("[" + "".join(f"\\U{first:08x}-\\U{last:08x}" for first, last in DISAGREE) + "]")


# ---------------------------------------------------------------------------
# counting


def count_utf8(data: bytes, special_tokens: Sequence[str] = (), split_lines: bool = False, joined: bool = True) -> list[tuple[bytes, int]]:
    """GPT-2 pre-token counts of UTF-8 text, special tokens cut out: as pretokenize.pretokenize's, as pairs.

    The caller checks `refusal(data)` first. SEPARATOR bytes end documents (joined=False: there are none).
    With split_lines each line (newline kept) is a document of its own.
    """
    separator = SEPARATOR
    if len(special_tokens) == 1 and not joined and not split_lines and not _overlaps_itself(special_tokens[0]):
        # gigatoken cuts at its one separator as str.split does: no copy of the text needed
        separator = special_tokens[0].encode(ENCODING)
    elif special_tokens:
        data = cut_specials(data, special_tokens)
    if split_lines:
        data = data.replace(b"\n", b"\n" + SEPARATOR)
    rs, _ = _library()
    with _lock, _one_thread(), _quiet_stderr():
        return rs.pretokenized_counts(data, separator)


def _overlaps_itself(token: str) -> bool:
    """'aa' does ('aaa' holds two overlapping ones), '<|endoftext|>' does not: then every way of finding it agrees."""
    return any(token[:n] == token[-n:] for n in range(1, len(token)))


def cut_specials(data: bytes, special_tokens: Sequence[str]) -> bytes:
    """Every special token replaced by SEPARATOR: b'a<|e|>b' -> b'a\\xffb'.

    The same occurrences as patterns.split_on_special finds in the decoded text:
    in valid UTF-8 a token's bytes can only match at a character boundary, and
    of two tokens found at one place the longer (in bytes, so in characters) wins.
    """
    tokens = [token.encode(ENCODING) for token in special_tokens]
    if len(tokens) == 1:
        return data.replace(tokens[0], SEPARATOR)
    pieces, pos = [], 0
    for start, token in find_specials(data, tokens):
        pieces.append(data[pos:start])
        pos = start + len(token)
    pieces.append(data[pos:])
    return SEPARATOR.join(pieces)


_lock = threading.Lock()  # one call at a time: the stderr and environment changes below are process-wide
_started = False


@contextmanager
def _one_thread() -> Iterator[None]:
    """subtle: gigatoken counts on rayon's global thread pool, which reads RAYON_NUM_THREADS once, at its
    first use in the process: set it to 1 for that first call only (HuggingFace's tokenizers in the
    same process keep their own pool and setting)."""
    global _started
    if _started:
        yield
        return
    saved = os.environ.get("RAYON_NUM_THREADS")
    os.environ["RAYON_NUM_THREADS"] = "1"
    try:
        yield
    finally:
        _started = True
        if saved is None:
            del os.environ["RAYON_NUM_THREADS"]
        else:
            os.environ["RAYON_NUM_THREADS"] = saved


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """subtle: pretokenized_counts prints two lines of timing to file descriptor 2 from Rust on every call;
    they would break the CLI's progress lines, so the descriptor points at /dev/null during the call."""
    sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


# ---------------------------------------------------------------------------
# measuring where gigatoken's Unicode tables and regex's differ


def class_of_regex(text: str) -> list[str]:
    """The class GPT-2's regex gives each character: 'L' letter, 'N' number, 'S' whitespace, 'O' other."""
    import regex

    classes = ["O"] * len(text)
    for name, pattern in (("L", r"\p{L}"), ("N", r"\p{N}"), ("S", r"\s")):
        for match in regex.finditer(pattern, text):
            classes[match.start()] = name
    return classes


def class_of_gigatoken(text: str) -> list[str]:
    """The class gigatoken gives each character, seen from how it splits 'aXa', '1X1' and '!X!':
    one pre-token means X is a letter, a number, or other; none of these means whitespace."""
    classes = []
    found = {}
    for glue in "a1!":
        data = SEPARATOR.join((glue + c + glue).encode(ENCODING) for c in text)
        rs, _ = _library()
        with _lock, _one_thread(), _quiet_stderr():
            found[glue] = dict(rs.pretokenized_counts(data, SEPARATOR))
    for c in text:
        name = "S"
        for glue, label in (("a", "L"), ("1", "N"), ("!", "O")):
            if (glue + c + glue).encode(ENCODING) in found[glue]:
                name = label
        classes.append(name)
    return classes


def disagreements() -> tuple[tuple[int, int], ...]:
    """Ranges of code points (every one but the surrogates) that gigatoken and regex class differently."""
    points = [c for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    text = "".join(map(chr, points))
    ranges: list[tuple[int, int]] = []
    for c, ours, theirs in zip(points, class_of_regex(text), class_of_gigatoken(text)):
        if ours != theirs:
            if ranges and ranges[-1][1] == c - 1:
                ranges[-1] = (ranges[-1][0], c)
            else:
                ranges.append((c, c))
    return tuple(ranges)
