"""Saving a trained tokenizer in the formats other tools load, and loading them back.

Three formats, all derived from the merges (the vocab is never stored on its own):

- GPT-2: vocab.json maps each token, written through the byte-to-unicode table,
  to its id; merges.txt lists the merges in order, one 'left right' per line.
  Special tokens are stored as their own text. The pre-tokenizer is not recorded.
- HuggingFace tokenizer.json: a byte-level BPE model that `tokenizers.Tokenizer.from_file`
  loads and that encodes exactly as we do (see `hf_pre_tokenizer` for the patterns).
- Plain JSON (tokenizer.bpe.json): this tool's own, the only one that also records
  each merge's count when it was made:
  {"format": "bpe-workbench", "version": 1, "pattern": "gpt2", "special_tokens": [...],
   "merges": [{"left": "6c", "right": "6f", "count": 7}, ...]}   (bytes as hex)

Ids always follow one layout: the 256 bytes in byte order, one id per merge in
order, then the special tokens. Loaders check that a file follows it, so files
written by other tools (GPT-2's own vocab.json numbers bytes differently) are
refused with a sentence rather than loaded with wrong ids.

Loading never unpickles or evaluates anything: JSON and text only, and every
field is checked. A bad file raises ValueError("<file>: <what is wrong>").

Not here: encoding (tokenizer.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .gpt2_bytes import from_unicode, to_unicode
from .pretokenize import PATTERNS, check_pattern, check_special_tokens
from .train import build_vocab

Vocab = dict[int, bytes]
Merges = list[tuple[bytes, bytes]]

FORMAT, VERSION = "bpe-workbench", 1
PLAIN, HF, VOCAB, MERGES = "tokenizer.bpe.json", "tokenizer.json", "vocab.json", "merges.txt"


@dataclass(frozen=True)
class Saved:
    """What a tokenizer file holds."""

    merges: Merges
    special_tokens: tuple[str, ...] = ()
    pattern: str = "gpt2"
    counts: tuple[int | None, ...] | None = None  # None when the format does not record them


def check_merges(merges: Merges) -> None:
    """Every merge joins two tokens that exist before it; raise ValueError naming the first that does not."""
    known = {bytes([i]) for i in range(256)}
    for rank, pair in enumerate(merges):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(p, (bytes, bytearray)) for p in pair)):
            raise ValueError(f"merge {rank + 1} is not a pair of bytes: {pair!r}.")
        for part in pair:
            if bytes(part) not in known:
                raise ValueError(
                    f"merge {rank + 1} ({_show(pair[0])} + {_show(pair[1])}) uses {_show(part)}, "
                    "which is neither a byte nor made by an earlier merge."
                )
        known.add(bytes(pair[0]) + bytes(pair[1]))


def _show(token: bytes) -> str:
    return repr(to_unicode(bytes(token)))


# ---------------------------------------------------------------------------
# GPT-2: vocab.json + merges.txt


def gpt2_vocab_json(vocab: Vocab, special_tokens: Sequence[str] = ()) -> str:
    specials = {t.encode("utf-8") for t in special_tokens}
    table = {}
    for i, token in sorted(vocab.items()):
        # subtle: two merges can make the same bytes; JSON keeps the first id
        key = token.decode("utf-8") if token in specials else to_unicode(token)
        table.setdefault(key, i)
    return json.dumps(table, ensure_ascii=False, indent=1)


def gpt2_merges_txt(merges: Merges) -> str:
    lines = ["#version: 0.2"] + [f"{to_unicode(a)} {to_unicode(b)}" for a, b in merges]
    return "\n".join(lines) + "\n"


def save_gpt2(directory: str | Path, vocab: Vocab, merges: Merges, special_tokens: Sequence[str] = ()) -> list[Path]:
    """Write directory/vocab.json and directory/merges.txt; return their paths."""
    out = _directory(directory)
    vocab_path, merges_path = out / VOCAB, out / MERGES
    vocab_path.write_text(gpt2_vocab_json(vocab, special_tokens), encoding="utf-8")
    merges_path.write_text(gpt2_merges_txt(merges), encoding="utf-8")
    return [vocab_path, merges_path]


def load_gpt2(directory: str | Path) -> tuple[Merges, tuple[str, ...]]:
    """Read directory/merges.txt and directory/vocab.json: (merges, special tokens)."""
    folder = Path(directory)
    vocab_path, merges_path = folder / VOCAB, folder / MERGES
    for path in (merges_path, vocab_path):
        if not path.is_file():
            raise ValueError(f"{folder}: no {path.name} here; a GPT-2 tokenizer is vocab.json and merges.txt side by side.")
    merges = _read_merges_txt(merges_path)
    table = _read_json(vocab_path)
    if not isinstance(table, dict):
        raise ValueError(f"{vocab_path}: expected a JSON object mapping tokens to ids, got {_kind(table)}.")
    for key, i in table.items():
        if not _is_int(i) or i < 0:
            raise ValueError(f"{vocab_path}: the id of {key!r} must be a whole number, not {i!r}.")
    first_special = 256 + len(merges)
    specials = tuple(key for key, i in sorted(table.items(), key=lambda kv: kv[1]) if i >= first_special)
    _check_ids(vocab_path, {k: i for k, i in table.items() if i < first_special}, merges, specials, table)
    return merges, specials


def _read_merges_txt(path: Path) -> Merges:
    text = _read_text(path)
    if not text:
        raise ValueError(f"{path}: the file is empty; even a tokenizer with no merges has a '#version' line.")
    if not text.endswith("\n"):
        raise ValueError(f"{path}: the last line does not end with a newline; the file looks truncated.")
    merges: Merges = []
    for n, line in enumerate(text.split("\n"), start=1):
        if (n == 1 and line.startswith("#version")) or not line:
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"{path}: line {n} should be two tokens separated by one space, got {line[:60]!r}.")
        merges.append(_decode_pair(path, f"line {n}", parts))
    _wrap(path, check_merges, merges)
    return merges


def _decode_pair(path: Path, where: str, parts: Sequence[str]) -> tuple[bytes, bytes]:
    """A merge's two tokens from GPT-2 byte-to-unicode text, or a ValueError saying where."""
    try:
        return from_unicode(parts[0]), from_unicode(parts[1])
    except ValueError as e:
        raise ValueError(f"{path}: {where}: {e} Tokens are written with GPT-2's byte-to-unicode table.") from None


def _check_ids(path: Path, table: dict[str, int], merges: Merges, specials: Sequence[str], whole: dict[str, int]) -> None:
    """The ids of a vocab file must be this tool's layout: bytes, merges in order, specials."""
    _wrap(path, check_special_tokens, specials)
    expected_specials = {t: 256 + len(merges) + n for n, t in enumerate(specials)}
    for token, i in expected_specials.items():
        if whole[token] != i:
            raise ValueError(
                f"{path}: special token {token!r} has id {whole[token]}; special tokens should follow the merges, from id {256 + len(merges)}."
            )
    expected: dict[str, int] = {}
    for i, token in build_vocab(merges).items():
        expected.setdefault(to_unicode(token), i)
    for key, i in table.items():
        if expected.get(key) != i:
            want = next((k for k, j in expected.items() if j == i), None)
            raise ValueError(
                f"{path}: {key!r} has id {i}, but the merges give that id to {want!r}. Ids must be the 256 bytes "
                "in byte order, then one per merge in order: files from other tools are numbered differently."
            )
    missing = expected.keys() - table.keys()
    if missing:
        key = min(missing, key=expected.__getitem__)
        raise ValueError(f"{path}: token {key!r} (id {expected[key]}) is missing; the file may be truncated.")


# ---------------------------------------------------------------------------
# HuggingFace tokenizer.json


def hf_pre_tokenizer(pattern: str) -> dict | None:
    """How HuggingFace expresses each pre-tokenizer.

    gpt2: ByteLevel's own regex, which is GPT-2's. gpt4 and whitespace: a Split that
    keeps the regex's matches and removes the rest (findall), then ByteLevel without
    its regex. none: ByteLevel alone. Limits: HuggingFace runs the regex with
    Oniguruma, not Python's `regex`; on the text we test they agree, but Unicode
    tables of different versions can disagree on new characters.
    """
    check_pattern(pattern)
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": pattern == "gpt2"}
    if pattern in ("gpt2", "none"):
        return byte_level
    split = {"type": "Split", "pattern": {"Regex": PATTERNS[pattern]}, "behavior": "Removed", "invert": True}
    return {"type": "Sequence", "pretokenizers": [split, byte_level]}


def hf_tokenizer_json(merges: Merges, special_tokens: Sequence[str] = (), pattern: str = "gpt2") -> str:
    """A tokenizer.json for `tokenizers.Tokenizer.from_file`: byte-level BPE, specials as added tokens."""
    vocab = build_vocab(merges, special_tokens)
    first_special = 256 + len(merges)
    table = json.loads(gpt2_vocab_json(vocab, special_tokens))
    added = [
        {
            "id": first_special + n,
            "content": token,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for n, token in enumerate(special_tokens)
    ]
    document = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": hf_pre_tokenizer(pattern),
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": table,
            "merges": [[to_unicode(a), to_unicode(b)] for a, b in merges],
        },
    }
    return json.dumps(document, ensure_ascii=False, indent=1)


def load_hf(path: str | Path) -> Saved:
    """Read a tokenizer.json written by hf_tokenizer_json (or one of the same shape)."""
    path = Path(path)
    document = _read_json(path)
    if not isinstance(document, dict):
        raise ValueError(f"{path}: expected a JSON object, got {_kind(document)}.")
    model = _field(path, document, "model", dict)
    if model.get("type") != "BPE":
        raise ValueError(f"{path}: model type is {model.get('type')!r}; only BPE models can be loaded.")
    for option in ("continuing_subword_prefix", "end_of_word_suffix", "dropout"):
        if model.get(option) is not None:
            raise ValueError(f"{path}: model.{option} is {model[option]!r}; this tool supports plain byte-level BPE only.")
    table = _field(path, model, "vocab", dict)
    merges = []
    for n, item in enumerate(_field(path, model, "merges", list), start=1):
        pair = item.split(" ") if isinstance(item, str) else item
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) and p for p in pair)):
            raise ValueError(f"{path}: merge {n} should be two tokens, got {item!r}.")
        merges.append(_decode_pair(path, f"merge {n}", pair))
    _wrap(path, check_merges, merges)
    added = _field(path, document, "added_tokens", list)
    specials = []
    for token in sorted(added, key=lambda t: t.get("id", -1) if isinstance(t, dict) else -1):
        if not (isinstance(token, dict) and isinstance(token.get("content"), str) and _is_int(token.get("id"))):
            raise ValueError(f"{path}: each added token needs a string 'content' and a whole-number 'id', got {token!r}.")
        specials.append(token["content"])
    whole = {**{k: v for k, v in table.items()}, **{t["content"]: t["id"] for t in added}}
    for key, i in whole.items():
        if not _is_int(i) or i < 0:
            raise ValueError(f"{path}: the id of {key!r} must be a whole number, not {i!r}.")
    _check_ids(path, {k: i for k, i in table.items() if k not in specials}, merges, specials, whole)
    return Saved(merges, tuple(specials), _hf_pattern(path, document.get("pre_tokenizer")))


def _hf_pattern(path: Path, pre: object) -> str:
    for name in PATTERNS:
        if pre == hf_pre_tokenizer(name):
            return name
    # accept the harmless variants other writers produce (trim_offsets, Isolated for full-coverage regexes)
    if isinstance(pre, dict) and pre.get("type") == "ByteLevel" and not pre.get("add_prefix_space"):
        return "gpt2" if pre.get("use_regex", True) else "none"
    raise ValueError(
        f"{path}: pre_tokenizer {json.dumps(pre)[:120]} is not one this tool writes; "
        "expected ByteLevel (gpt2), or a Split with one of its patterns followed by ByteLevel."
    )


# ---------------------------------------------------------------------------
# plain JSON, with counts


def plain_json(
    merges: Merges, special_tokens: Sequence[str] = (), pattern: str = "gpt2", counts: Sequence[int | None] | None = None
) -> str:
    counts = list(counts) if counts is not None else [None] * len(merges)
    if len(counts) != len(merges):
        raise ValueError(f"Got {len(counts)} counts for {len(merges)} merges.")
    rows = [
        json.dumps(
            {"left": a.hex(), "right": b.hex(), "count": c, "token": (a + b).decode("utf-8", "backslashreplace")}, ensure_ascii=False
        )
        for (a, b), c in zip(merges, counts)
    ]
    head = json.dumps(
        {"format": FORMAT, "version": VERSION, "pattern": pattern, "special_tokens": list(special_tokens)}, ensure_ascii=False
    )
    # one merge per line: readable, and diffs of two runs line up
    return head[:-1] + ', "merges": [\n' + ",\n".join(rows) + "\n]}\n"


def load_plain(path: str | Path) -> Saved:
    path = Path(path)
    document = _read_json(path)
    if not isinstance(document, dict):
        raise ValueError(f"{path}: expected a JSON object, got {_kind(document)}.")
    if document.get("format") != FORMAT:
        raise ValueError(f"{path}: 'format' should be {FORMAT!r}, got {document.get('format')!r}.")
    if document.get("version") != VERSION:
        raise ValueError(f"{path}: version {document.get('version')!r} is not supported (this tool reads version {VERSION}).")
    pattern = _field(path, document, "pattern", str)
    _wrap(path, check_pattern, pattern)
    specials = _field(path, document, "special_tokens", list)
    _wrap(path, check_special_tokens, specials)
    merges, counts = [], []
    for n, row in enumerate(_field(path, document, "merges", list), start=1):
        if not isinstance(row, dict):
            raise ValueError(f"{path}: merge {n} should be an object with 'left', 'right' and 'count', got {_kind(row)}.")
        left, right = (_token_bytes(path, n, row, side) for side in ("left", "right"))
        count = row.get("count")
        if count is not None and (not _is_int(count) or count < 1):
            raise ValueError(f"{path}: merge {n} has count {count!r}; a count is a whole number of at least 1 (or null).")
        merges.append((left, right))
        counts.append(count)
    _wrap(path, check_merges, merges)
    return Saved(merges, tuple(specials), pattern, tuple(counts))


def _token_bytes(path: Path, n: int, row: dict, side: str) -> bytes:
    value = row.get(side)
    if isinstance(value, str):
        try:
            data = bytes.fromhex(value)
        except ValueError:
            data = b""
        if data and len(value) == 2 * len(data):
            return data
    elif isinstance(value, list) and value and all(_is_int(b) and 0 <= b < 256 for b in value):
        return bytes(value)
    raise ValueError(f"{path}: merge {n} '{side}' should be non-empty hex (\"6c6f\") or a list of byte values, got {value!r}.")


# ---------------------------------------------------------------------------
# all formats at once, and loading whichever is there


def files(
    merges: Merges,
    special_tokens: Sequence[str] = (),
    pattern: str = "gpt2",
    counts: Sequence[int | None] | None = None,
) -> dict[str, str]:
    """Every format as {file name: text}: vocab.json, merges.txt, tokenizer.json, tokenizer.bpe.json."""
    return {
        VOCAB: gpt2_vocab_json(build_vocab(merges, special_tokens), special_tokens),
        MERGES: gpt2_merges_txt(merges),
        HF: hf_tokenizer_json(merges, special_tokens, pattern),
        PLAIN: plain_json(merges, special_tokens, pattern, counts),
    }


def save_all(
    directory: str | Path,
    merges: Merges,
    special_tokens: Sequence[str] = (),
    pattern: str = "gpt2",
    counts: Sequence[int | None] | None = None,
) -> list[Path]:
    """Write every format to directory; return the paths."""
    out = _directory(directory)
    paths = []
    for name, text in files(merges, special_tokens, pattern, counts).items():
        (out / name).write_text(text, encoding="utf-8")
        paths.append(out / name)
    return paths


def load(path: str | Path, *, pattern: str | None = None) -> Saved:
    """Load a directory (tokenizer.bpe.json, else tokenizer.json, else vocab.json + merges.txt) or one file."""
    path = Path(path)
    if path.is_dir():
        for name in (PLAIN, HF):
            if (path / name).is_file():
                return load(path / name)
        if not (path / MERGES).exists() and not (path / VOCAB).exists():
            raise ValueError(
                f"{path}: no tokenizer here; expected {PLAIN}, {HF}, or {VOCAB} with {MERGES} (written by python -m bpe train)."
            )
        merges, specials = load_gpt2(path)
        pattern = pattern or "gpt2"
        check_pattern(pattern)
        return Saved(merges, specials, pattern)
    if not path.exists():
        raise ValueError(f"{path}: no such file or directory.")
    if path.name in (VOCAB, MERGES):
        return load(path.parent, pattern=pattern)
    if path.name.endswith(".bpe.json"):
        return load_plain(path)
    if path.name == HF:
        return load_hf(path)
    document = _read_json(path)
    if isinstance(document, dict) and "format" in document:
        return load_plain(path)
    if isinstance(document, dict) and "model" in document:
        return load_hf(path)
    raise ValueError(f"{path}: not a tokenizer file this tool knows (no 'format' or 'model' field).")


# ---------------------------------------------------------------------------
# reading safely


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ValueError(f"{path}: cannot be read ({e.strerror}).") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text (bad byte at offset {e.start}).") from None


def _read_json(path: Path) -> object:
    text = _read_text(path)
    if not text.strip():
        raise ValueError(f"{path}: the file is empty.")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        hint = " The file looks truncated: it stops before the JSON is closed." if text.rstrip()[-1] not in "}]" else ""
        raise ValueError(f"{path}: not valid JSON ({e.msg}: line {e.lineno}, column {e.colno}).{hint}") from None


def _field(path: Path, document: dict, name: str, kind: type):
    if name not in document:
        raise ValueError(f"{path}: the '{name}' field is missing.")
    value = document[name]
    if not isinstance(value, kind):
        raise ValueError(f"{path}: '{name}' should be {_kind(kind())}, got {_kind(value)}.")
    return value


def _kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number", bool: "true/false"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _wrap(path: Path, check, value) -> None:
    """Run a check; put the file name in front of its sentence."""
    try:
        check(value)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def _directory(directory: str | Path) -> Path:
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} exists and is not a directory.")
    out.mkdir(parents=True, exist_ok=True)
    return out
