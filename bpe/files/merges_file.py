"""Reading a student's merges from the file they have: merges.txt, any tokenizer file, Python's repr of the list, or JSON.

Four kinds of file, told apart by name, then by content:
- a tokenizer file or folder in any format bpe.files.formats reads (tokenizer.json,
  vocab.json with merges.txt, encoder.json with vocab.bpe, a .tiktoken file, tokenizer.bpe.json);
- GPT-2's merges.txt: 'left right' per line in GPT-2's byte-to-unicode alphabet
  ('Ġ t' is b' ' + b't'), with or without its '#version' line (load.parse_merges_txt);
  one written in another byte form (latin-1 or UTF-8 text, raw spaces) is refused
  with GPT-2's form of its first wrong line;
- Python literal pairs, as a CS336 trainer's merges print: one (b' t', b'he')
  per line, or the whole list, [(b' t', b'he'), (b' a', b'nd')];
- a JSON list of pairs: [["Ġt", "he"], ...] in GPT-2's form (as tokenizer.json's
  merges), [[[32, 116], [104, 101]], ...] as byte values, or ["Ġt he", ...].

Python literals are read by a small scanner of the bytes of the file, pair by
pair, never the whole file at once (a 50 MB file of pairs is 3 million of them;
Python's own tokenizer held every token, 5 GB): each bytes literal's length is
bounded before it is read (MAX_LITERAL), its escapes checked and decoded by
codecs.escape_decode, and anything else -- a number, a name, a call, nesting --
is refused at its first character. Nothing is evaluated as code, nothing
unpickled (a pickle is refused by name: it can run code). A list of more than
MAX_MERGES pairs is refused. A bad file raises ValueError with one sentence
that names it.

Not here: what the merges mean (diagnose.py), or reading whole tokenizers (formats.py).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Mapping
from pathlib import Path

from ..text.gpt2_bytes import char_to_byte, from_unicode, to_unicode
from . import formats, load

Merge = tuple[bytes, bytes]

PICKLE_SUFFIXES = (".pkl", ".pickle", ".pt", ".pth", ".npy", ".npz")
MAX_BYTES = 256 << 20  # a merges file of any real tokenizer is far smaller; a bigger one is not read into memory
MAX_MERGES = 1_000_000  # the largest real tokenizers have a few hundred thousand merges (o200k_base: 199,998)
MAX_LITERAL = 4096  # characters of one bytes literal between its quotes: a 1,024-byte token written as \xNN escapes
EXPECTED = (
    f"GPT-2's merges.txt, Python pairs such as (b' t', b'he') one per line, a JSON list of pairs, or a tokenizer: {formats.upload_hint()}"
)
GPT2_FORM = (
    "GPT-2's merges.txt writes every byte as one character of its byte-to-unicode table, a space as 'Ġ' and a newline as 'Ċ' "
    "(b' t' + b'he' is the line 'Ġt he')"
)
WRITE_IT = "write it with bpe.text.gpt2_bytes.to_unicode, or as Python pairs (b' t', b'he') one per line"


def read_merges(path: str | Path) -> list[Merge]:
    """The merges in a file or folder of any of the kinds; ValueError names the file and what is wrong."""
    path = Path(path)
    if path.is_dir() or formats.claims(path.name):
        return byte_level_merges(formats.read(path), str(path))
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
        raise ValueError(f"No file given: upload {EXPECTED}.")
    if len(files) == 1:
        ((name, data),) = files.items()
        return parse_merges(name, data)
    return byte_level_merges(formats.read_uploads(dict(files)), ", ".join(files))


def byte_level_merges(loaded: formats.Loaded, name: str) -> list[Merge]:
    """A tokenizer's merges of bytes; one of the SentencePiece family, whose pieces are characters, is refused in one sentence."""
    if loaded.family != "byte-level":
        raise ValueError(
            f"{name}: a SentencePiece tokenizer, whose pieces are made of characters, not bytes; "
            "this compares byte-level merges (GPT-2's family)."
        )
    return loaded.merges


def parse_merges(name: str, data: bytes) -> list[Merge]:
    """The merges in one file given as bytes, of any of the kinds."""
    base = Path(name).name
    if base.endswith(PICKLE_SUFFIXES) or data[:1] == b"\x80":  # pickle protocols 2 and up begin with 0x80
        raise ValueError(
            f"{name}: looks like a pickle, which this tool never opens (unpickling can run any code); "
            "write the merges as text: one (b'a', b'b') per line, or merges.txt."
        )
    if len(data) > MAX_BYTES:
        raise ValueError(f"{name}: {len(data) / 1e6:,.0f} MB is too big for a list of merges (at most {MAX_BYTES >> 20} MB).")
    first = _WHITE.match(data).end()  # subtle: no data.lstrip(), which copies a file of many megabytes
    start = data[first : first + 1]
    if start == b"[" and _json_list(data, first):
        return json_pairs(name, data)
    if formats.claims(base):
        return byte_level_merges(formats.read_uploads({name: data}), name)
    if b"\0" in data:
        raise ValueError(f"{name}: holds NUL bytes, so it is not a text file; expected {EXPECTED}.")
    if not start:
        raise ValueError(f"{name}: the file is empty; expected {EXPECTED}.")
    if start == b"{":
        return byte_level_merges(formats.read_uploads({name: data}), name)  # a tokenizer.json under another name
    if start in b"([" or _assigns(data, first):
        return literal_pairs(name, data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{name}: not a text file (bad UTF-8 at byte {e.start:,}); expected {EXPECTED}.") from None
    return merges_txt(name, text)


def _assigns(data: bytes, first: int) -> bool:
    """'merges = [...]': a name assigned a list, as a script would print it (at the file's first significant byte)."""
    return _ASSIGNS.match(data, first) is not None


def _too_many(name: str, n: int) -> ValueError:
    return ValueError(f"{name}: holds more than {MAX_MERGES:,} merges; the largest real tokenizers have a few hundred thousand.")


# ---------------------------------------------------------------------------
# GPT-2's merges.txt

_NOT_GPT2 = re.compile("[^" + re.escape("".join(char_to_byte())) + " ]")  # a character GPT-2's table does not have


def merges_txt(name: str, text: str) -> list[Merge]:
    """merges.txt in GPT-2's form; one in another byte form gets a sentence with GPT-2's form of its first wrong line."""
    if text.count("\n") > MAX_MERGES + 1:
        raise _too_many(name, MAX_MERGES)
    try:
        return load.parse_merges_txt(text if text.endswith("\n") else text + "\n", name)  # a last line without its newline is taken
    except ValueError as e:
        other = other_form(name, text)
        if other:
            raise ValueError(other) from None
        raise e from None


def other_form(name: str, text: str) -> str:
    """A sentence for a merges.txt written in another byte form (latin-1 or UTF-8 text: raw spaces, characters outside
    GPT-2's table), saying GPT-2's form of its first such line; '' when it is not that."""
    for n, line in enumerate(text.split("\n"), start=1):
        if (n == 1 and line.startswith("#version")) or not line:
            continue
        parts = line.split(" ", 2)
        found = _NOT_GPT2.search(line)
        outside = found.group() if found else None
        if outside is None and len(parts) == 2 and all(parts):
            continue
        guess = _as_written(line) if len(line) <= MAX_LITERAL else ""
        if outside is None and not guess:
            return ""  # one token, or three: not a byte form (load's sentence says what is wrong)
        said = f" GPT-2's form of that line is {guess!r}." if guess else ""
        what = f"{outside!r} (U+{ord(outside):04X}) is not one of its characters" if outside is not None else "a token holds a space"
        return (
            f"{name}: line {n} is {line[:60]!r}, which is not GPT-2's form: {what}. {GPT2_FORM}; this file seems to write "
            f"bytes as latin-1 or UTF-8 text.{said} Write it again with bpe.text.gpt2_bytes.to_unicode, or as Python pairs "
            "(b' t', b'he') one per line."
        )
    return ""


def _as_written(line: str) -> str:
    """GPT-2's form of a line written as text, when it reads one way only: the one space that leaves two tokens, each
    beginning with its spaces (GPT-2's pre-tokens do), in latin-1 when every character is a byte, else UTF-8."""
    cuts = [m.start() for m in re.finditer(" ", line)]
    splits = [
        (line[:i], line[i + 1 :])
        for i in cuts
        if line[:i] and line[i + 1 :] and " " not in line[:i].lstrip(" ") and " " not in line[i + 1 :].lstrip(" ")
    ]
    if len(splits) != 1:
        return ""
    encoding = "latin-1" if all(ord(c) < 256 for c in line) else "utf-8"
    left, right = (to_unicode(part.encode(encoding)) for part in splits[0])
    return f"{left} {right}"


# ---------------------------------------------------------------------------
# a JSON list of pairs


def _json_list(data: bytes, first: int) -> bool:
    """Whether a file whose first significant byte (at first) is '[' is JSON: the next one starts a JSON value (a list
    or a string), where a Python list of pairs has '(' (or b', for a list of lists of bytes)."""
    after = _WHITE.match(data, first + 1).end()
    return data[after : after + 1] in (b"[", b'"', b"]")


def json_pairs(name: str, data: bytes) -> list[Merge]:
    """[["Ġt", "he"], ...] (GPT-2's form), [[[32, 116], [104, 101]], ...] (byte values) or ["Ġt he", ...]; ValueError says which pair."""
    if data.count(b",") > 3 * MAX_MERGES:
        raise _too_many(name, MAX_MERGES)
    try:
        listed = json.loads(data)
    except RecursionError:
        raise ValueError(f"{name}: not valid JSON (nested too deeply); expected a list of pairs.") from None
    except ValueError as e:  # json's errors, and int()'s refusal of a number of more than 4,300 digits
        raise ValueError(f"{name}: not valid JSON ({getattr(e, 'msg', str(e)[:80])}); expected a list of pairs.") from None
    if not isinstance(listed, list) or not listed:
        raise ValueError(f'{name}: holds no pairs; expected a list of pairs such as [["Ġt", "he"], ...].')
    if len(listed) > MAX_MERGES:
        raise _too_many(name, MAX_MERGES)
    merges = []
    for n, pair in enumerate(listed, start=1):
        if isinstance(pair, str):
            pair = pair.split(" ")
        if not (isinstance(pair, list) and len(pair) == 2):
            raise ValueError(f'{name}: pair {n:,} is {json.dumps(pair)[:60]}, not a pair of two tokens such as ["Ġt", "he"].')
        merges.append((_json_token(name, n, pair[0]), _json_token(name, n, pair[1])))
    return merges


def _json_token(name: str, n: int, token: object) -> bytes:
    if isinstance(token, list) and token and all(isinstance(b, int) and not isinstance(b, bool) and 0 <= b < 256 for b in token):
        return bytes(token)
    if isinstance(token, str) and token:
        try:
            return from_unicode(token)
        except ValueError:
            raise ValueError(
                f"{name}: pair {n:,} holds {token[:40]!r}, which is not in GPT-2's form: {GPT2_FORM}; or write each token as "
                "its byte values, [[32, 116], [104, 101]]."
            ) from None
    raise ValueError(f"{name}: pair {n:,} holds {json.dumps(token)[:40]}, not a token: a non-empty string or a list of byte values.")


# ---------------------------------------------------------------------------
# Python literal pairs

_SPACE = re.compile(rb"(?:[ \t\f\r\n]+|#[^\n]*)*")  # whitespace and comments
_WHITE = re.compile(rb"[ \t\f\r\n]*")
_PREFIX = re.compile(rb"([bB][rR]?|[rR][bB]|[uUrRfF]|[fF][rR]|[rR][fF])?(['\"])")  # a string literal's prefix and quote
_BODY = {q: re.compile(rb"(?:[^" + q + rb"\\\n]|\\[^\n])*") for q in (b"'", b'"')}  # up to its closing quote
_ESCAPE = re.compile(rb"\\(?:[\\'\"abfnrtv]|x[0-9a-fA-F]{2}|[0-7]{1,3})")  # the escapes a bytes literal may hold
_BIG_OCTAL = re.compile(rb"\\(?:\\|[4-7][0-7]{2})")  # an escaped backslash, or an octal escape above 0o377
_NAME = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNS = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*[ \t]*=[ \t]*[\[(]")
_PAIR = re.compile(  # the common case, one match a pair: ( literal , literal [,] )
    rb"\(\s*((?:[bB][rR]?|[rR][bB])(?:'(?:[^'\\\n]|\\[^\n]){0,%d}'|\"(?:[^\"\\\n]|\\[^\n]){0,%d}\"))"
    rb"\s*,\s*((?:[bB][rR]?|[rR][bB])(?:'(?:[^'\\\n]|\\[^\n]){0,%d}'|\"(?:[^\"\\\n]|\\[^\n]){0,%d}\"))\s*,?\s*\)" % ((MAX_LITERAL,) * 4)
)


def literal_pairs(name: str, data: bytes) -> list[Merge]:
    """(b'a', b'b') per line, or a list of them (optionally 'merges = [...]'), read pair by pair; ValueError says where.

    b"[(b' t', b'he'), (b' a', b'nd')]" -> [(b' t', b'he'), (b' a', b'nd')]
    """
    if data.count(b"(") > 2 * MAX_MERGES:  # before reading any: each pair has one (and a token seldom holds one)
        raise _too_many(name, MAX_MERGES)
    scan = Scanner(name, data)
    scan.skip()
    head = _NAME.match(data, scan.pos)
    if head:  # merges = [...]
        scan.pos = head.end()
        scan.skip()
        scan.expect(b"=", "'=' after the name")
        scan.skip()
    listed = scan.take(b"[")
    merges: list[Merge] = []
    made: dict[tuple[bytes, bytes], Merge] = {}  # each pair once, each token once (scan.tokens): a list of repeats stays small
    while True:
        scan.skip()
        if scan.pos >= len(data):
            if listed:
                raise ValueError(f"{name}: the list is not closed with ']'; the file looks truncated.")
            break
        if listed and scan.take(b"]"):
            scan.skip()
            if scan.pos < len(data):
                raise ValueError(f"{scan.where()}: more after the list's closing ']', {scan.shown()}.")
            break
        pair = scan.pair(len(merges) + 1)
        merges.append(made.setdefault(pair, pair))
        if len(merges) > MAX_MERGES:
            raise _too_many(name, MAX_MERGES)
        scan.skip()
        scan.take(b",")
    if not merges:
        raise ValueError(f"{name}: holds no pairs; expected one (b'a', b'b') per line.")
    return merges


class Scanner:
    """A position in the file's bytes, and how to read a pair of bytes literals there (or say, in one sentence, why not)."""

    def __init__(self, name: str, data: bytes) -> None:
        self.name, self.data, self.pos = name, data, 0
        self.tokens: dict[bytes, bytes] = {}  # a literal as written -> its bytes: read once, held once

    def where(self, pos: int | None = None) -> str:
        line = self.data.count(b"\n", 0, self.pos if pos is None else pos) + 1
        return f"{self.name}: line {line:,}"

    def shown(self, pos: int | None = None) -> str:
        """What is at pos, for a sentence: at most 40 characters of it."""
        pos = self.pos if pos is None else pos
        text = self.data[pos : pos + 40].decode("utf-8", "replace").split("\n")[0]
        return f"found {text!r}" if text else "found the end of the file"

    def skip(self) -> None:
        self.pos = _SPACE.match(self.data, self.pos).end()

    def take(self, char: bytes) -> bool:
        if self.data[self.pos : self.pos + 1] == char:
            self.pos += 1
            return True
        return False

    def expect(self, char: bytes, what: str) -> None:
        if not self.take(char):
            raise ValueError(f"{self.where()}: expected {what}, {self.shown()}.")

    def pair(self, n: int) -> Merge:
        """Merge n: '(' bytes ',' bytes [','] ')' -- one regex match in the common case, else step by step to say what is wrong."""
        fast = _PAIR.match(self.data, self.pos)
        if fast:
            start = self.pos
            self.pos = fast.end()
            return self.token(fast.group(1), start), self.token(fast.group(2), start)
        wrong = f"{self.where()}: expected merge {n:,} as a pair of bytes such as (b' t', b'he'), {self.shown()}."
        if not self.take(b"("):
            raise ValueError(wrong)
        parts = []
        for i in range(2):
            self.skip()
            parts.append(self.literal(wrong))
            self.skip()
            if i == 0 and not self.take(b","):
                raise ValueError(wrong if self.pos < len(self.data) else self.truncated())
        if self.take(b","):
            self.skip()
        if not self.take(b")"):
            raise ValueError(wrong if self.pos < len(self.data) else self.truncated())
        return parts[0], parts[1]

    def truncated(self) -> str:
        return f"{self.name}: a bracket or a string is not closed; the file looks truncated."

    def literal(self, wrong: str) -> bytes:
        """The bytes literal at pos, its length bounded before it is read; any other token is `wrong`.

        Adjacent literals are one, as Python joins them: b'ab' b'c' is b'abc' (and b'0' b'' is b'0').
        """
        start = self.pos
        value = self.one_literal(wrong)
        while True:
            before = self.pos
            self.skip()
            if not _PREFIX.match(self.data, self.pos):
                self.pos = before
                break
            value += self.one_literal(wrong)
        if not value:
            raise ValueError(f"{self.where(start)}: an empty token (b''); every token of a merge has at least one byte.")
        return value

    def one_literal(self, wrong: str) -> bytes:
        """One string literal at pos, which must be bytes: its value (b'' allowed: literal() checks what they join to)."""
        start = self.pos
        prefix = _PREFIX.match(self.data, start)
        if not prefix:
            raise ValueError(wrong if start < len(self.data) else self.truncated())
        quote = prefix.group(2)
        if self.data[prefix.end() : prefix.end() + 2] == quote * 2:
            raise ValueError(f"{self.where()}: a triple-quoted string; write each token as repr() prints it, such as b' t'.")
        body = _BODY[quote].match(self.data, prefix.end(), min(len(self.data), prefix.end() + MAX_LITERAL + 1))
        end = body.end()
        if end - prefix.end() > MAX_LITERAL:
            raise ValueError(
                f"{self.where()}: a string literal of more than {MAX_LITERAL:,} characters; a token of a merges list is far shorter."
            )
        if self.data[end : end + 1] != quote:
            raise ValueError(
                f"{self.where()}: a string is not closed on its line{'' if end < len(self.data) else '; the file looks truncated'}."
            )
        self.pos = end + 1
        written = self.data[start : self.pos]
        if b"b" not in (prefix.group(1) or b"").lower():
            raise ValueError(
                f"{self.where(start)}: {written[:40].decode('utf-8', 'replace')} is text, not bytes; write tokens as bytes, "
                "such as b' t' (print(merges) of a CS336 trainer does)."
            )
        return self.token(written, start, empty=True)

    def token(self, written: bytes, start: int, empty: bool = False) -> bytes:
        """A bytes literal's value, from what is written (prefix and quotes included); cached, so each is read once.

        empty: b'' is let through (a part of literals joined, which literal() checks as a whole)."""
        value = self.tokens.get(written)
        if value is None:
            try:
                value = self.tokens[written] = _bytes(written, empty)
            except ValueError as e:
                raise ValueError(f"{self.where(start)}: {e}") from None  # subtle: the line is counted only for a sentence
        return value


def _bytes(written: bytes, empty: bool = False) -> bytes:
    """The value of one bytes literal, written with its prefix and quotes (b'\\xc3', rb'a\\b'): its escapes checked
    against Python's, then decoded by codecs.escape_decode; never evaluated. ValueError says what is wrong, not where."""
    raw = b"r" in written[:2].lower()
    body = written[written.index(written[-1:]) + 1 : -1]
    if not body.isascii():
        raise ValueError(f"{_shown(written)} is not a valid bytes literal: bytes literals hold only ASCII characters.")
    if raw or b"\\" not in body:
        value = body
    else:
        unknown = b"\\" in _ESCAPE.sub(b"", body)  # a backslash no escape of Python's explains
        octal = any(m.group() != b"\\\\" for m in _BIG_OCTAL.finditer(body))  # \400 to \777: not a byte
        if unknown or octal:
            raise ValueError(f"{_shown(written)} is not a valid bytes literal.")
        value = codecs.escape_decode(body)[0]
    if not value and not empty:
        raise ValueError("an empty token (b''); every token of a merge has at least one byte.")
    return value


def _shown(written: bytes) -> str:
    return repr(written[:40].decode("utf-8", "replace"))
