"""Counts files: pre-token counts saved once, trained on many times.

What it does: save the counts of unique pre-tokens as a Parquet file of two
columns, ``token`` (bytes) and ``count`` (int64), most frequent first, with the
settings that made them (pre-tokenizer and its regex, special tokens, the
inputs, totals) as JSON in the file's metadata under ``bpe.counts``; load one
back, checking everything (it is data, never code: nothing is unpickled);
refuse one whose settings contradict a request; merge several.

What it does not do: count (count.py, ray_count.py) or train (train.py's
train_from_counts reads these files).

    save_counts("counts.parquet", {b" the": 9, b"cat": 2}, CountsInfo("gpt2", ("<|endoftext|>",)))
    counts, info = load_counts("counts.parquet")   # ({b' the': 9, b'cat': 2}, CountsInfo(...))
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from .. import atomic
from ..renamed import renamed
from ..text.pretokenizers import PreTokenizer, check_special_tokens, pretokenizer_of
from .inputs import Input

KEY = b"bpe.counts"
FORMAT = 1
ROW_GROUP = 1 << 20
BATCH_ROWS = 1 << 16  # rows read (and checked) at a time


@renamed(pattern="pretokenizer")
@dataclass(frozen=True)
class CountsInfo:
    """The settings that made a counts file, and its totals (pattern= is the old name of pretokenizer=)."""

    pretokenizer: str  # the pre-tokenizer as the file spells it: a registered name, or a regex (PreTokenizer.spelled)
    special_tokens: tuple[str, ...]
    inputs: tuple[dict, ...] = ()  # {"path", "format", "compression", "bytes"} (+ "text_field" / "text_column")
    text_bytes: int = 0  # bytes of text counted
    pre_tokens: int = 0  # occurrences: the sum of the counts
    unique: int = 0  # rows
    regex: str | None = field(default=None)  # the pre-tokenizer's regex itself, so a renamed or changed regex is noticed
    split_lines: bool = False  # each line was a document of its own (count_inputs(split_lines=True))

    def __post_init__(self) -> None:
        if self.regex is None:
            with contextlib.suppress(ValueError):  # a name this version does not know: check_matches says so
                object.__setattr__(self, "regex", pretokenizer_of(self.pretokenizer).regex)


# subtle: the file's metadata keeps the names of its first format: "pretokenizer" is the pre-tokenizer as spelled
# (a name or a regex) and "pattern" its regex, so that files written before and after the renames read the same
_FILE_KEYS = {"regex": "pattern"}


def metadata_of(info: CountsInfo) -> dict:
    """The JSON object a counts file holds for info (under KEY): {"pretokenizer": "gpt2", "pattern": regex, ...}."""
    return {_FILE_KEYS.get(name, name): value for name, value in asdict(info).items()}


def describe_inputs(inputs: Sequence[Input], text_field: str, text_column: str) -> tuple[dict, ...]:
    """What a counts file records about each input: {"path": "a.jsonl", "format": "jsonl", ..., "text_field": "text"}."""
    described = []
    for source in inputs:
        entry = {"path": str(source.path), "format": source.format, "compression": source.compression, "bytes": source.size}
        if source.format == "jsonl":
            entry["text_field"] = text_field
        if source.format == "parquet":
            entry["text_column"] = text_column
        described.append(entry)
    return tuple(described)


# ---------------------------------------------------------------------------
# writing


def save_counts(path: str | os.PathLike, counts: dict[bytes, int], info: CountsInfo) -> CountsInfo:
    """Write counts (most frequent first, ties by bytes) and info; return info with the totals filled in.

    The file is written under a temporary name and renamed (atomic.py): a failure
    (a full disk, a signal) leaves the file that was there, or none.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    overflow = too_big(counts)
    if overflow:
        raise ValueError(f"Cannot write {path}: {overflow}.")
    table = pa.table({"token": pa.array(list(counts), pa.binary()), "count": pa.array(list(counts.values()), pa.int64())})
    table = table.take(pc.sort_indices(table, sort_keys=[("count", "descending"), ("token", "ascending")]))
    info = replace(info, pre_tokens=sum(counts.values()), unique=len(counts))
    table = table.replace_schema_metadata({KEY: json.dumps(metadata_of(info)).encode()})
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic.output(out) as tmp:
        pq.write_table(table, tmp, row_group_size=ROW_GROUP, compression="zstd")
    return info


MAX_COUNT = (1 << 63) - 1  # the count column is int64


def too_big(counts: dict[bytes, int]) -> str | None:
    """What overflows a counts file's count column, as a phrase, or None."""
    biggest = max(counts.values(), default=0)
    if biggest <= MAX_COUNT:
        return None
    token = next(token for token, n in counts.items() if n == biggest)
    return f"pre-token {token[:20]!r} would count {biggest:,}, more than the 2**63 - 1 a counts file's int64 column holds"


# ---------------------------------------------------------------------------
# reading, checked


def read_info(path: str | os.PathLike) -> CountsInfo:
    """The settings and totals of a counts file, from its metadata only (cheap)."""
    return _info_of(Path(path), _schema(Path(path)))


def load_counts(path: str | os.PathLike) -> tuple[dict[bytes, int], CountsInfo]:
    """The counts and settings of a counts file, every part checked: ({b' the': 9, b'cat': 2}, CountsInfo(...))."""
    counts, info = read_counts(path)
    return counts if isinstance(counts, dict) else counts.to_dict(), info


def read_counts(path: str | os.PathLike) -> tuple[Mapping[bytes, int], CountsInfo]:
    """load_counts, the counts as they are cheapest to train on: a CountedWords where the core is built, else a dict.

    Read a batch of rows at a time, each batch checked before the next is read:
    a small file can hold millions of rows (dictionary and run-length encoding),
    and a repeated token is refused at its first batch, not after all are in memory.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..core import core
    from ..text.pretokenize_c import SEED  # the process's key for the core's hash tables

    p = Path(path)
    info = _info_of(p, _schema(p))
    rows = 0
    try:
        parquet = pq.ParquetFile(p)
        if parquet.metadata.num_rows != info.unique:
            raise ValueError(
                f"{p} has {parquet.metadata.num_rows:,} rows but its metadata says {info.unique:,}; the file was changed or cut short."
            )
        # the columns go to the core as they are (CountedWords), unless a count needs converting first
        columns = core is not None and parquet.schema_arrow.field("count").type == pa.int64()
        loaded = CountedWords(core.Words(SEED)) if columns else {}
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=["token", "count"]):
            tokens, counts = batch.column(0), batch.column(1)
            if tokens.null_count or counts.null_count:
                raise ValueError(f"{p} has empty cells; a counts file has a token and a count on every row.")
            if columns:
                repeated = loaded.add(tokens, counts)
            else:
                counts = counts.to_pylist()  # checked in Python: pyarrow.compute alone takes 35 ms to import
                if counts and min(counts) < 1:
                    raise ValueError(f"{p} has a count below 1; counts are numbers of occurrences.")
                loaded.update(zip(tokens.to_pylist(), counts))
                repeated = len(loaded) != rows + batch.num_rows
            rows += batch.num_rows
            if repeated:
                raise ValueError(f"{p} lists a token twice; each row must be a different token.")
    except Exception as e:  # a corrupt page: ArrowInvalid (a ValueError too), OSError, the core's BadColumns ...
        if type(e) is ValueError:  # one of ours, above
            raise
        if isinstance(e, BadColumns) and e.count_below_1:
            raise ValueError(f"{p} has a count below 1; counts are numbers of occurrences.") from None
        raise ValueError(f"{p} cannot be read as a counts file ({one_line(e)}).") from None
    if rows != info.unique:
        raise ValueError(f"{p} has {rows:,} rows but its metadata says {info.unique:,}; the file was changed or cut short.")
    return loaded, info


class BadColumns(ValueError):
    """The core refused a batch's columns: a count below 1, offsets outside the tokens' bytes."""

    @property
    def count_below_1(self) -> bool:
        return str(self) == "a count below 1"  # words.c's sentence for it


class CountedWords(Mapping[bytes, int]):
    """A counts file's tokens and counts held by the core (bpe/c/words.c), read as a dict is.

    The compiled heap and not_text read the core's arrays straight away; anything
    else that reads it as a Mapping gets a dict made on first use, in the file's order.
    """

    def __init__(self, compiled) -> None:
        self.compiled = compiled  # a bpe._core.Words
        self._dict: dict[bytes, int] | None = None

    def add(self, tokens, counts) -> bool:
        """Add a batch's columns (binary tokens, int64 counts without nulls); True if a token was there already."""
        import pyarrow as pa

        wide = pa.types.is_large_binary(tokens.type)  # int64 offsets; binary's are int32
        _, offsets, data = tokens.buffers()
        size = 8 if wide else 4
        offsets = memoryview(offsets)[tokens.offset * size : (tokens.offset + len(tokens) + 1) * size]
        values = memoryview(counts.buffers()[1])[counts.offset * 8 : (counts.offset + len(counts)) * 8]
        try:
            return self.compiled.add(b"" if data is None else data, offsets, values, wide) >= 0
        except ValueError as e:
            raise BadColumns(str(e)) from None

    def to_dict(self) -> dict[bytes, int]:
        if self._dict is None:
            self._dict = self.compiled.to_dict()
        return self._dict

    def __len__(self) -> int:
        return len(self.compiled)

    def __getitem__(self, token: bytes) -> int:
        return self.to_dict()[token]

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.to_dict())


def one_line(error: BaseException) -> str:
    """An error's message on one line, cut short: pyarrow's span several lines."""
    text = " ".join(str(error).split())
    return text if len(text) <= 200 else text[:197] + "..."


def _schema(path: Path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.exists():
        raise ValueError(f"No such file: {path}.")
    if path.is_dir():
        raise ValueError(f"{path} is a directory; give a counts file written by `bpe count`.")
    try:
        schema = pq.read_schema(path)
    except Exception as e:
        raise ValueError(f"{path} is not a Parquet file ({one_line(e)}); give a counts file written by `bpe count`.") from None
    kinds = {name: schema.field(name).type for name in schema.names}
    token_ok = "token" in kinds and (pa.types.is_binary(kinds["token"]) or pa.types.is_large_binary(kinds["token"]))
    count_ok = "count" in kinds and pa.types.is_integer(kinds["count"])
    if not (token_ok and count_ok):
        raise ValueError(f"{path} is not a counts file: it needs a binary column 'token' and an integer column 'count'.")
    return schema


def _info_of(path: Path, schema) -> CountsInfo:
    raw = (schema.metadata or {}).get(KEY)
    if raw is None:
        raise ValueError(f"{path} has no {KEY.decode()} metadata, so the settings that made it are unknown; write it with `bpe count`.")
    try:
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError(f"it is JSON but not an object ({type(data).__name__})")
        info = CountsInfo(
            pretokenizer=_typed(data, "pretokenizer", str),
            special_tokens=tuple(_typed(data, "special_tokens", list)),
            inputs=tuple(_typed(data, "inputs", list)),
            text_bytes=_typed(data, "text_bytes", int),
            pre_tokens=_typed(data, "pre_tokens", int),
            unique=_typed(data, "unique", int),
            regex=data.get("pattern"),
            split_lines=_typed(data, "split_lines", bool) if "split_lines" in data else False,
        )
    except RecursionError:
        raise ValueError(f"{path} has unreadable {KEY.decode()} metadata (nested too deeply).") from None
    except (ValueError, TypeError) as e:
        reason = "a number of thousands of digits" if "digits" in str(e) and "limit" in str(e) else one_line(e)
        raise ValueError(f"{path} has unreadable {KEY.decode()} metadata ({reason}).") from None
    try:
        check_special_tokens(list(info.special_tokens))
    except ValueError as e:
        raise ValueError(f"{path} has unreadable {KEY.decode()} metadata ({str(e).rstrip('.')}).") from None
    return info


def _typed(data: dict, key: str, kind: type):
    value = data.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ValueError(f"{key!r} should be a {kind.__name__}")
    return value


# ---------------------------------------------------------------------------
# checking a request against a file


def check_matches(
    info: CountsInfo,
    path: str | os.PathLike,
    pretokenizer: str | PreTokenizer | None,
    special_tokens: Sequence[str] | None,
    split_lines: bool | None = None,
) -> None:
    """Refuse, in one sentence, settings that contradict the ones the counts were made with (None: take the file's)."""
    try:
        known = pretokenizer_of(info.pretokenizer).regex
    except ValueError:
        raise ValueError(f"{path} was counted with the pre-tokenizer {info.pretokenizer!r}, which this version does not know.") from None
    if info.regex != known:
        raise ValueError(f"{path} was counted with a different {info.pretokenizer!r} regex than this version uses; count again.")
    if pretokenizer is not None and pretokenizer_of(pretokenizer).regex != known:  # by regex: 'gpt4' and 'cl100k' are one
        given = pretokenizer if isinstance(pretokenizer, str) else pretokenizer.spelled  # as the user wrote it
        raise ValueError(
            f"{path} was counted with the {info.pretokenizer!r} pre-tokenizer, not {given!r}; count again or drop the setting."
        )
    if special_tokens is not None and sorted(special_tokens) != sorted(info.special_tokens):
        raise ValueError(
            f"{path} was counted with special tokens {list(info.special_tokens)}, not {list(special_tokens)}; "
            "they decide where text was cut, so count again."
        )
    if split_lines is not None and split_lines != info.split_lines:
        made = "each line a document (--split-lines)" if info.split_lines else "lines not split into documents"
        raise ValueError(f"{path} was counted with {made}; that decides where text was cut, so count again with the same setting.")


def check_request(
    path: str | os.PathLike, pretokenizer: str | PreTokenizer | None, special_tokens: Sequence[str] | None, split_lines: bool | None = None
) -> tuple[str, ...]:
    """Check a training request against a counts file (reading its metadata only); return the special tokens to use."""
    if special_tokens is not None:
        check_special_tokens(special_tokens)
    if pretokenizer is not None:
        pretokenizer_of(pretokenizer)
    info = read_info(path)
    check_matches(info, path, pretokenizer, special_tokens, split_lines)
    return tuple(info.special_tokens if special_tokens is None else special_tokens)


# ---------------------------------------------------------------------------
# merging


def merge_counts_files(paths: Sequence[str | os.PathLike], out: str | os.PathLike) -> CountsInfo:
    """Add up several counts files made with the same settings into one."""
    from .count import combine

    if not paths:
        raise ValueError("Give the counts files to merge.")
    first = read_info(paths[0])
    for path in paths[1:]:
        check_matches(read_info(path), path, first.pretokenizer, first.special_tokens, first.split_lines)
    counts: dict[bytes, int] = {}
    inputs: list[dict] = []
    text_bytes = 0
    for path in paths:  # one file in memory at a time, besides the total
        loaded, info = load_counts(path)
        counts = combine([counts, loaded])
        inputs += info.inputs
        text_bytes += info.text_bytes
        del loaded
    overflow = too_big(counts)
    if overflow:
        names = ", ".join(str(p) for p in paths[:-1]) + f" and {paths[-1]}" if len(paths) > 1 else str(paths[0])
        raise ValueError(f"Adding up {names} overflows: {overflow}.")
    return save_counts(out, counts, replace(first, inputs=tuple(inputs), text_bytes=text_bytes))
