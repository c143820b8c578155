"""Offline prose corpora: the docstrings and comments of Python's standard library.

What it does: `stdlib_prose` reads every ``.py`` file of the running
interpreter's standard library (``sysconfig.get_paths()["stdlib"]``) in sorted
path order, skipping test directories and ``site-packages``, and keeps only
the prose in it: docstrings (cleaned like ``inspect.cleandoc``, doctest
examples dropped) and comments (pragmas, shebangs, rulers, codec-table rows
such as ``0x41 -> LATIN CAPITAL LETTER A``, all-capitals and one-word
comments dropped). Each file becomes one document; documents are joined with
an ``<|endoftext|>`` line and the result is cut at a document boundary so that
it fits in ``max_bytes`` of UTF-8. The same interpreter gives the same text on
every call. The helpers (`find_python_files`, `read_python`, `extract_prose`,
`join_documents`) work on any Python tree, e.g. a ``site-packages``.

What it does not do: download, cache on disk, print, or keep code. It does not
use ``ast``/``tokenize``: over the whole standard library those take more
than 10 s, while one regular expression that skips string literals makes all
of `stdlib_prose` take about 1 s. The price is a heuristic for docstrings: a
string literal that starts a line, either at the top of a module (only
comments before it) or right after a line ending in ``:``. On the 3.11
standard library it finds all 8,581 docstrings ``ast.get_docstring`` finds,
plus 9 other strings (a string statement after ``if x:``, a dict value put on
the line after its key); it would miss a one-line ``def f(): "doc"``. Text is not deduplicated or Unicode-normalised; control
characters other than newline and tab are removed, and so is any literal
``<|endoftext|>`` inside a document.
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import sysconfig
import tokenize
from collections.abc import Iterable, Iterator
from pathlib import Path

END_OF_TEXT = "<|endoftext|>"
SEPARATOR = f"\n{END_OF_TEXT}\n"  # documents are separated by a line of their own
SKIP_DIRS = frozenset({"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__"})

# Comments and string literals in source order; everything else is code and is skipped.
# Triple-quoted alternatives come first so that ''' is not read as '' followed by '.
_TOKEN = re.compile(
    r"""
    (?P<comment>\#[^\n]*)
  | (?P<prefix>[rRbBuUfF]{0,2})
    (?P<literal>
        '''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''
      | \"\"\"[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*\"\"\"
      | '[^'\\\n]*(?:\\.[^'\\\n]*)*'
      | "[^"\\\n]*(?:\\.[^"\\\n]*)*"
    )
    """,
    re.VERBOSE | re.DOTALL,
)
_PRAGMA = re.compile(r"(?:type|noqa|pragma|pylint|fmt|isort|mypy|pyright|nosec|flake8)\b|-\*-|!", re.I)
_TABLE_ROW = re.compile(r"(?:0x|U\+)[0-9a-f]+\s*->", re.I)  # "0x41 -> LATIN CAPITAL LETTER A"
_TWO_WORDS = re.compile(r"[^\W\d_]{2,} [^\W\d_]{2,}")  # "the cat", not "x = f(y)"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_DOCSTRING_PREFIXES = frozenset({"", "r", "u"})


def stdlib_prose(max_bytes: int) -> str:
    """Docstrings and comments of the standard library, at most ``max_bytes`` of UTF-8.

    One document per source file, in sorted path order, joined by an
    ``<|endoftext|>`` line and cut at a document boundary (a prefix of the
    result for any larger ``max_bytes``). Python 3.11's standard library holds
    about 2.8 MB of prose; any larger cap returns all of it.
    """
    root = Path(sysconfig.get_paths()["stdlib"])
    documents = (extract_prose(read_python(path)) for path in find_python_files(root))
    return join_documents(documents, max_bytes)


def find_python_files(root: Path, skip_dirs: frozenset[str] = SKIP_DIRS) -> list[Path]:
    """All ``*.py`` files under ``root``, sorted by path, not entering ``skip_dirs``."""
    found: list[Path] = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [name for name in subdirs if name not in skip_dirs]
        found.extend(Path(directory, name) for name in files if name.endswith(".py"))
    return sorted(found, key=lambda path: path.relative_to(root).as_posix())


def read_python(path: Path) -> str:
    """The source of ``path`` decoded as Python does (coding cookie), or "" if unreadable."""
    try:
        with tokenize.open(path) as handle:
            return handle.read()
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
        return ""


def extract_prose(source: str) -> str:
    """The docstrings and comment blocks of one Python source, blank-line separated."""
    blocks = [block for block in collect_blocks(source) if block.strip()]
    return clean_text("\n\n".join(blocks))


def collect_blocks(source: str) -> Iterator[str]:
    """Yield each docstring, and each run of comments on consecutive lines, in order."""
    comments: list[str] = []
    last_comment_line = -2
    line = 0  # number of newlines before the current token
    position = 0
    previous = ""  # last significant character of code; "" at the top, "S" after a string
    for match in _TOKEN.finditer(source):
        start = match.start()
        line += source.count("\n", position, start)
        code = source[position:start].strip()
        if code:
            previous = code[-1]
        position = match.end()
        comment = match.group("comment")
        if comment is not None:
            text = tidy_comment(comment)
            if text is not None:
                if line != last_comment_line + 1 and comments:
                    yield "\n".join(comments)
                    comments = []
                comments.append(text)
            last_comment_line = line  # a dropped line (a URL, a pragma) does not split a block
            continue
        prefix = match.group("prefix")
        if previous in ("", ":") and prefix.lower() in _DOCSTRING_PREFIXES and starts_line(source, start):
            if comments:
                yield "\n".join(comments)
                comments = []
            yield drop_doctests(inspect.cleandoc(evaluate(prefix, match.group("literal"))))
        line += match.group("literal").count("\n")
        previous = "S"
    if comments:
        yield "\n".join(comments)


def starts_line(source: str, start: int) -> bool:
    """True if only indentation precedes ``start`` on its line."""
    line_start = source.rfind("\n", 0, start) + 1
    return not source[line_start:start].strip()


def tidy_comment(comment: str) -> str | None:
    """The prose of one ``#`` comment, or None for pragmas, rulers, codec-table rows,
    all-capitals and code-like remarks."""
    text = comment.lstrip("#").strip()
    if _PRAGMA.match(text) or _TABLE_ROW.match(text) or not _TWO_WORDS.search(text):
        return None
    if text.isupper():  # character names in codec maps ("LATIN CAPITAL LETTER A"), shouting
        return None
    return text


def evaluate(prefix: str, literal: str) -> str:
    """The value of a string literal; its raw body if it cannot be evaluated."""
    quote = 3 if literal[:3] in ('"""', "'''") else 1
    body = literal[quote:-quote]
    if "\\" not in body:
        return body
    try:
        value = ast.literal_eval(prefix + literal)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return body
    return value if isinstance(value, str) else body


def drop_doctests(text: str) -> str:
    """Remove ``>>>`` examples and their output (up to the next blank line)."""
    kept: list[str] = []
    in_example = False
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith(">>>"):
            in_example = True
        elif not stripped:
            in_example = False
        if not in_example and (stripped or (kept and kept[-1].strip())):
            kept.append(line)  # no run of blank lines where an example was
    return "\n".join(kept).strip()


def clean_text(text: str) -> str:
    """Unify newlines; drop control characters and literal end-of-text markers."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text).replace(END_OF_TEXT, "").strip()


def join_documents(documents: Iterable[str], max_bytes: int) -> str:
    """Join non-empty documents with `SEPARATOR`, stopping before ``max_bytes`` is exceeded.

    Lone surrogates (from odd string escapes) become "?" so the result is valid UTF-8.
    """
    if max_bytes < 0:
        raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
    separator = SEPARATOR.encode()
    parts: list[bytes] = []
    size = 0
    for document in documents:
        if not document:
            continue
        data = document.encode("utf-8", "replace")
        needed = len(data) + (len(separator) if parts else 0)
        if size + needed > max_bytes:
            break
        parts.append(data)
        size += needed
    return separator.join(parts).decode("utf-8")
