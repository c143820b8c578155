"""Reading a student's merges from the file they have: merges.txt, any tokenizer file, or Python's repr of the list.

Three kinds of file, told apart by name, then by content:
- a tokenizer file or folder in any format bpe.files.formats reads (tokenizer.json,
  vocab.json with merges.txt, encoder.json with vocab.bpe, a .tiktoken file, tokenizer.bpe.json);
- GPT-2's merges.txt: 'left right' per line in GPT-2's byte-to-unicode alphabet
  ('Ġ t' is b' ' + b't'), with or without its '#version' line (load.parse_merges_txt);
- Python literal pairs, as a CS336 trainer's merges print: one (b' t', b'he')
  per line, or the whole list, [(b' t', b'he'), (b' a', b'nd')].

Python literals are read by Python's own tokenizer, a flat scanner, and each
bytes literal alone by ast.literal_eval: nothing is evaluated as code, nothing
nested deeply enough to exhaust the parser, nothing unpickled (a pickle is
refused by name: it can run code). A bad file raises ValueError with one sentence
that names it.

Not here: what the merges mean (diagnose.py), or reading whole tokenizers (formats.py).
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Mapping
from pathlib import Path

from . import formats, load

Merge = tuple[bytes, bytes]

TOKENIZER_SUFFIXES = (".json", load.TIKTOKEN)  # a whole tokenizer, read by bpe.files.load
GPT2_NAMES = {name for pair in load.GPT2_PAIRS for name in pair}
PICKLE_SUFFIXES = (".pkl", ".pickle", ".pt", ".pth", ".npy", ".npz")
MAX_BYTES = 256 << 20  # a merges file of any real tokenizer is far smaller; a bigger one is not read into memory
FORMATS = f"GPT-2's merges.txt, Python pairs such as (b' t', b'he') one per line, or a tokenizer: {formats.upload_hint()}"


def read_merges(path: str | Path) -> list[Merge]:
    """The merges in a file or folder of any of the three kinds; ValueError names the file and what is wrong."""
    path = Path(path)
    if path.is_dir() or path.name.endswith(TOKENIZER_SUFFIXES) or path.name in GPT2_NAMES - {load.MERGES}:
        return formats.read(path).merges
    if not path.exists():
        raise ValueError(f"{path}: no such file or directory.")
    if not path.is_file():
        raise ValueError(f"{path}: not a regular file.")
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ValueError(f"{path}: {size / 1e6:,.0f} MB is too big for a list of merges (at most {MAX_BYTES >> 20} MB).")
        data = path.read_bytes()
    except OSError as e:
        raise ValueError(f"{path}: cannot be read ({e.strerror}).") from None
    return parse_merges(str(path), data)


def parse_uploads(files: Mapping[str, bytes]) -> list[Merge]:
    """The merges in uploaded files (name -> bytes): one file of any kind, or GPT-2's vocab.json with merges.txt."""
    if not files:
        raise ValueError(f"No file given: upload {FORMATS}.")
    if len(files) == 1:
        ((name, data),) = files.items()
        return parse_merges(name, data)
    return formats.read_uploads(dict(files)).merges


def parse_merges(name: str, data: bytes) -> list[Merge]:
    """The merges in one file given as bytes, of any of the three kinds."""
    base = Path(name).name
    if base.endswith(PICKLE_SUFFIXES) or data[:1] == b"\x80":  # pickle protocols 2 and up begin with 0x80
        raise ValueError(
            f"{name}: looks like a pickle, which this tool never opens (unpickling can run any code); "
            "write the merges as text: one (b'a', b'b') per line, or merges.txt."
        )
    if len(data) > MAX_BYTES:
        raise ValueError(f"{name}: {len(data) / 1e6:,.0f} MB is too big for a list of merges (at most {MAX_BYTES >> 20} MB).")
    if base.endswith(TOKENIZER_SUFFIXES) or base in GPT2_NAMES - {load.MERGES}:
        return formats.read_uploads({name: data}).merges
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{name}: not a text file (bad UTF-8 at byte {e.start:,}); expected {FORMATS}.") from None
    if "\0" in text:
        raise ValueError(f"{name}: holds NUL bytes, so it is not a text file; expected {FORMATS}.")
    start = text.lstrip()[:1]
    if not start:
        raise ValueError(f"{name}: the file is empty; expected {FORMATS}.")
    if start in "{":
        return formats.read_uploads({name: data}).merges  # a tokenizer.json under another name
    if start in "([" or _assigns(text):
        return literal_pairs(name, text)
    return load.parse_merges_txt(text if text.endswith("\n") else text + "\n", name)  # a last line without its newline is taken


def _assigns(text: str) -> bool:
    """'merges = [...]': a name assigned a list, as a script would print it."""
    head = text.lstrip().split("\n", 1)[0]
    name, eq, rest = head.partition("=")
    return bool(eq) and name.strip().isidentifier() and rest.lstrip()[:1] in ("[", "(")


# ---------------------------------------------------------------------------
# Python literal pairs


def literal_pairs(name: str, text: str) -> list[Merge]:
    """(b'a', b'b') per line, or a list of them (optionally 'merges = [...]'), read by tokens; ValueError says where.

    "[(b' t', b'he'), (b' a', b'nd')]" -> [(b' t', b'he'), (b' a', b'nd')]
    """
    merges: list[Merge] = []
    tokens = _significant(name, text)
    if len(tokens) >= 2 and tokens[0].type == tokenize.NAME and tokens[1].string == "=":
        tokens = tokens[2:]
    listed = bool(tokens) and tokens[0].string == "["
    if listed:
        if tokens[-1].string != "]":
            raise ValueError(f"{name}: the list is not closed with ']'; the file looks truncated.")
        tokens = tokens[1:-1]
    i = 0
    while i < len(tokens):
        merges.append(_pair(name, tokens, i, len(merges) + 1))
        i += 5 if tokens[i + 4].string == ")" else 6  # a trailing comma inside the pair is allowed
        if i < len(tokens) and tokens[i].string == ",":
            i += 1
    if not merges:
        raise ValueError(f"{name}: holds no pairs; expected one (b'a', b'b') per line.")
    return merges


def _significant(name: str, text: str) -> list[tokenize.TokenInfo]:
    """Python's tokens of text without line ends, comments and indentation; a tokenizing error as one sentence."""
    skip = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER, tokenize.ENCODING}
    try:
        return [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in skip]
    except tokenize.TokenError:
        raise ValueError(f"{name}: a bracket or a string is not closed; the file looks truncated.") from None
    except (SyntaxError, ValueError) as e:  # an unterminated string, bad indentation
        line = getattr(e, "lineno", None)
        raise ValueError(f"{name}: {'line ' + str(line) + ': ' if line else ''}not Python pairs ({getattr(e, 'msg', e)}).") from None


def _pair(name: str, tokens: list[tokenize.TokenInfo], i: int, n: int) -> Merge:
    """Merge n from tokens[i:]: '(' bytes ',' bytes [','] ')'."""
    shape = [t.string for t in tokens[i : i + 6]]
    where = f"{name}: line {tokens[i].start[0]}"
    ok = len(shape) >= 5 and shape[0] == "(" and shape[2] == "," and (shape[4] == ")" or shape[4:6] == [",", ")"])
    if not ok or tokens[i + 1].type != tokenize.STRING or tokens[i + 3].type != tokenize.STRING:
        found = " ".join(shape)[:60]
        raise ValueError(f"{where}: expected merge {n:,} as a pair of bytes such as (b' t', b'he'), found {found!r}.")
    return _bytes(where, tokens[i + 1].string), _bytes(where, tokens[i + 3].string)


def _bytes(where: str, literal: str) -> bytes:
    """One string token's value, which must be non-empty bytes (a single literal: safe to literal_eval)."""
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError):
        raise ValueError(f"{where}: {literal[:40]!r} is not a valid bytes literal.") from None
    if isinstance(value, str):
        raise ValueError(
            f"{where}: {literal[:40]} is text, not bytes; write tokens as bytes, such as b' t' (print(merges) of a CS336 trainer does)."
        )
    if not value:
        raise ValueError(f"{where}: an empty token (b''); every token of a merge has at least one byte.")
    return value
