"""Pre-tokenization: split raw text into pre-tokens and count them.

What it does: cut the text at special tokens (they never join a merge), split each
piece with a regex (GPT-2's by default), and return the count of every unique
pre-token as bytes. Files are streamed in chunks cut at safe boundaries and
counted in worker processes; memory grows with the number of unique pre-tokens,
never with the size of the file.

What it does not do: merge anything. Trainers start from its `PreTokens`.

Invalid UTF-8 is kept: bytes are decoded with ``surrogateescape`` and encoded
back the same way, so every input byte reaches the trainer as itself.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import regex

PATTERNS: dict[str, str | None] = {
    "gpt2": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    "gpt4": r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    # subtle: whitespace is dropped, as in the textbook examples; this one is not lossless.
    "whitespace": r"""\S+""",
    # each document (the text between special tokens) is one sequence
    "none": None,
}

ENCODING = "utf-8"
ERRORS = "surrogateescape"  # invalid bytes become lone surrogates and come back unchanged

Progress = Callable[[int, int], None]  # (bytes done, bytes total)

# Below this size a file is counted in this process: a pool costs more than it saves.
PARALLEL_MIN_BYTES = 4 << 20
CHUNK_BYTES = 8 << 20


@dataclass(frozen=True)
class PreTokens:
    """Counts of unique pre-tokens, and optionally their order of occurrence."""

    counts: dict[bytes, int]
    sequence: tuple[bytes, ...] | None = None  # every occurrence, in text order
    n_bytes: int = 0  # size of the input, for compression figures


def check_pattern(pattern: str) -> None:
    if pattern not in PATTERNS:
        raise ValueError(f"Unknown pre-tokenizer {pattern!r}; choose one of {', '.join(PATTERNS)}.")


def check_special_tokens(special_tokens: Sequence[str]) -> None:
    if isinstance(special_tokens, (str, bytes)):
        raise ValueError("special_tokens must be a list of strings, not a single string.")
    for token in special_tokens:
        if not isinstance(token, str) or token == "":
            raise ValueError("A special token must be a non-empty string.")
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
    ordered = sorted(special_tokens, key=len, reverse=True)
    return regex.split("|".join(regex.escape(t) for t in ordered), text)


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

_compiled: dict[str, regex.Pattern] = {"gpt2": regex.compile(PATTERNS["gpt2"])}  # the default, ready at import


def _pattern(name: str) -> regex.Pattern:
    if name not in _compiled:
        _compiled[name] = regex.compile(PATTERNS[name])
    return _compiled[name]


def count_text(text: str, pattern: str = "gpt2") -> Counter[str]:
    """Pre-token counts of one special-token-free piece: 'a a' -> {'a': 1, ' a': 1}."""
    return count_parts([text], pattern)


def count_parts(parts: list[str], pattern: str = "gpt2") -> Counter[str]:
    """Pre-token counts over several special-token-free pieces of text.

    Counter.update on a list runs in C, so matches are counted in bulk; for gpt2
    the units are counted first and split afterwards (see _UNITS).
    """
    if pattern == "none":
        return Counter(part for part in parts if part)
    if pattern == "gpt2":
        units: Counter[str] = Counter()
        for part in parts:
            units.update(_UNITS.findall(part))
        return count_units(units)
    compiled, counts = _pattern(pattern), Counter()
    for part in parts:
        counts.update(compiled.findall(part))
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
        tokens += _compiled["gpt2"].findall("".join(unit for unit in units if not unit.isascii()))
    return tokens


def sequence_of_text(text: str, pattern: str = "gpt2") -> list[str]:
    """Pre-tokens of one special-token-free piece, in order."""
    if pattern == "none":
        return [text] if text else []
    return _pattern(pattern).findall(text)


def _to_bytes(counts: Counter[str]) -> Counter[bytes]:
    return Counter({token.encode(ENCODING, ERRORS): n for token, n in counts.items()})


def _count_decoded(text: str, pattern: str, special_tokens: Sequence[str]) -> Counter[bytes]:
    return _to_bytes(count_parts(split_on_special(text, special_tokens), pattern))


def _sequence_decoded(text: str, pattern: str, special_tokens: Sequence[str]) -> list[bytes]:
    return [token.encode(ENCODING, ERRORS) for part in split_on_special(text, special_tokens) for token in sequence_of_text(part, pattern)]


def decode(data: bytes) -> str:
    return data.decode(ENCODING, ERRORS)


def pretokenize(
    text: str | bytes,
    *,
    pattern: str = "gpt2",
    special_tokens: Sequence[str] = (),
    keep_sequence: bool = False,
) -> PreTokens:
    """Pre-tokenize text held in memory (str, or bytes in any encoding state)."""
    check_pattern(pattern)
    check_special_tokens(special_tokens)
    if isinstance(text, bytes):
        n_bytes, text = len(text), decode(text)
    else:
        try:
            n_bytes = len(text.encode(ENCODING, ERRORS))
        except UnicodeEncodeError as e:
            raise ValueError(
                f"The text holds a lone surrogate (U+{ord(text[e.start]):04X}) at character {e.start}: "
                "it is not a character and stands for no byte, so it cannot be trained on."
            ) from None
    counts = _count_decoded(text, pattern, special_tokens)
    sequence = tuple(_sequence_decoded(text, pattern, special_tokens)) if keep_sequence else None
    return PreTokens(dict(counts), sequence, n_bytes)


# ---------------------------------------------------------------------------
# files: chunk boundaries, then parallel counting

# A newline with printable ASCII on both sides is a boundary for every regex
# pattern here: no pre-token spans it, and no pattern looks across it.
_SAFE_NEWLINE = re.compile(rb"(?<=[!-~])\n(?=[!-~])")
_WINDOW = 1 << 16


def _find_boundary(f, start: int, stop: int, specials: list[bytes], pattern: str) -> int | None:
    """First safe cut at or after `start` and before `stop`, or None.

    A cut goes just before a special token, or else just after a safe newline.
    subtle: a cut must not fall inside a special token, and a special token found
    by a local search may itself sit inside another occurrence (tokens that
    overlap themselves, like 'aa' in 'aaa', or contain one another). A cut that
    no occurrence straddles is safe: the left-to-right split cannot jump over it.
    """
    longest = max((len(s) for s in specials), default=1)
    starts = re.compile(b"(?=" + b"|".join(re.escape(s) for s in specials) + b")") if specials else None
    pos = start
    while pos < stop:
        base = max(0, pos - longest)
        f.seek(base)
        window = f.read(pos - base + _WINDOW + longest)
        if len(window) <= pos - base:
            return None
        cuts = [m.start() for m in starts.finditer(window, pos - base)] if starts else []
        if pattern != "none":  # for 'none' only special tokens end a document
            cuts += [m.end() for m in _SAFE_NEWLINE.finditer(window, pos - base)]
        for cut in sorted(cuts):
            if not _straddled(window, cut, specials):
                return base + cut
        pos += _WINDOW
    return None


def _straddled(window: bytes, cut: int, specials: list[bytes]) -> bool:
    """Does an occurrence of a special token start before `cut` and end after it?"""
    for s in specials:
        i = window.find(s, max(0, cut - len(s) + 1))
        if 0 <= i < cut:
            return True
    return False


def chunk_boundaries(path: Path, special_tokens: Sequence[str], pattern: str, chunk_bytes: int) -> list[int]:
    """Byte offsets [0, ..., size] cutting the file into ~chunk_bytes pieces at safe places."""
    size = path.stat().st_size
    specials = [t.encode(ENCODING) for t in special_tokens]
    bounds = [0]
    with open(path, "rb") as f:
        guess = chunk_bytes
        while guess < size:
            cut = _find_boundary(f, guess, min(guess + chunk_bytes, size), specials, pattern)
            if cut is not None and cut > bounds[-1]:
                bounds.append(cut)
                guess = cut + chunk_bytes
            else:
                guess += chunk_bytes
    bounds.append(size)
    return bounds


def _count_chunk(job: tuple[str, int, int, str, tuple[str, ...]]) -> tuple[Counter[bytes], int]:
    path, start, end, pattern, special_tokens = job
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    return _count_decoded(decode(data), pattern, special_tokens), end - start


def default_workers() -> int:
    return os.cpu_count() or 1


def check_path(path: str | os.PathLike) -> Path:
    p = Path(path)
    if not p.exists():
        raise ValueError(f"No such file: {p}.")
    if p.is_dir():
        raise ValueError(f"{p} is a directory; give a text file.")
    return p


def pretokenize_file(
    path: str | os.PathLike,
    *,
    pattern: str = "gpt2",
    special_tokens: Sequence[str] = (),
    workers: int | None = None,
    keep_sequence: bool = False,
    progress: Progress | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> PreTokens:
    """Pre-tokenize a file of any size, in parallel when it is large enough."""
    check_pattern(pattern)
    check_special_tokens(special_tokens)
    p = check_path(path)
    workers = default_workers() if workers is None else workers
    if not isinstance(workers, int) or workers < 1:
        raise ValueError("workers must be a whole number of at least 1.")
    size = p.stat().st_size
    if keep_sequence:  # the order of occurrences is for the teaching algorithms: small inputs
        result = pretokenize(p.read_bytes(), pattern=pattern, special_tokens=special_tokens, keep_sequence=True)
        if progress:
            progress(size, size)
        return result

    if workers > 1 and size >= PARALLEL_MIN_BYTES:
        # enough chunks to keep every worker busy and the progress bar moving
        chunk_bytes = max(1 << 20, min(chunk_bytes, size // (workers * 4) + 1))
    bounds = chunk_boundaries(p, special_tokens, pattern, chunk_bytes)
    jobs = [(str(p), a, b, pattern, tuple(special_tokens)) for a, b in zip(bounds, bounds[1:])]
    total: Counter[bytes] = Counter()
    done = 0
    for counts, n in _map(jobs, workers if size >= PARALLEL_MIN_BYTES else 1):
        total.update(counts)
        done += n
        if progress:
            progress(done, size)
    if progress and not jobs:
        progress(0, 0)
    return PreTokens(dict(total), None, size)


def _map(jobs: list, workers: int) -> Iterable[tuple[Counter[bytes], int]]:
    if workers == 1 or len(jobs) == 1:
        yield from map(_count_chunk, jobs)
        return
    done: set[int] = set()
    try:
        # forkserver: safe to start from a threaded process such as the Streamlit server
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("forkserver")) as pool:
            futures = {pool.submit(_count_chunk, job): n for n, job in enumerate(jobs)}
            for future in as_completed(futures):
                result = future.result()
                done.add(futures[future])
                yield result
    except BrokenProcessPool:
        # subtle: a worker could not start (e.g. __main__ is <stdin>, which forkserver
        # cannot re-import); count what is left here rather than fail
        yield from map(_count_chunk, [job for n, job in enumerate(jobs) if n not in done])
