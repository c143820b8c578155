"""Tokenizer file formats, one entry each: how a format is recognised, read and written.

Every format is a `Format` in FORMATS, in the order a folder is searched:

    workbench    tokenizer.bpe.json                      this tool's own, the only one with each merge's count
    sentencepiece  tokenizer.model                       SentencePiece's own (binary): Llama 2's family, BPE
    huggingface  tokenizer.json                          as `tokenizers` writes it (+ transformers' two config files);
                                                         byte-level BPE, or the SentencePiece family (Llama 2's)
    gpt2         vocab.json + merges.txt                 (or OpenAI's encoder.json + vocab.bpe)
    tiktoken     *.tiktoken (+ its .tiktoken.json)        one 'base64-token rank' per line (+ pre-tokenizer, special tokens)

An entry says which files make up one tokenizer of its format (`find`), how to
recognise one file whose name says nothing (`sniff`), how to read its files into
a `Loaded` (the parsers are in load.py) and how to write a tokenizer as
{file name: text} (the writers are in export.py; a binary file, the .model, as
bytes). Each writer writes the tokenizers of its family: byte-level BPE, or the
SentencePiece family (`Loaded.family`). Everything that handles
tokenizer files iterates FORMATS, and nothing else names a format: `read` (a
folder or one file), `read_uploads` (the app's uploads), `files` and `save`
(every format at once: `bpe train`, `Tokenizer.save`, the app's downloads), the
CLI's help and the app's upload and download captions. A new format is its
reader and writer plus one `register` call.

    register(Format("toy", "toy files", "a toy tokenizer", "merges.toy", find=..., read=..., write=...))

A folder is saved as a whole: every file under a temporary name, renamed once all
are on disk, between a manifest (each file's size and sha256) saying a save is under
way and the finished one; loading follows the manifest, refuses a save cut short that
left a mix of two tokenizers, and reads a file another tool rewrote since as it is now,
with a FolderChanged warning naming it.

Not here: parsing or writing the files' text (load.py, export.py), or encoding.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from .. import atomic
from ..renamed import renamed
from ..text.pretokenizers import DEFAULT, PreTokenizer, pretokenizer_of
from . import export, load
from .load import Loaded, Merges, Vocab, read_text

# a file's name (or path, for messages) -> its text (bytes: a binary file), in the order its format reads them
Texts = dict[str, str | bytes]


@dataclass(frozen=True)
class Probe:
    """One file whose name says nothing of its format: what a sniffer may look at."""

    name: str
    text: str

    @cached_property
    def document(self) -> object | None:
        """The file's JSON, when it is named .json or looks like JSON (ValueError naming it when it is not valid); else None."""
        if self.name.endswith(".json") or self.text.lstrip()[:1] in ("{", "["):
            return load.parse_json(self.text, self.name)
        return None


@dataclass(frozen=True)
class Format:
    """One tokenizer file format: how it is recognised, read and written.

    find(names, chosen) -> the groups of file names that each make up one tokenizer
    of this format, among `names` (a folder's regular files, or what a user chose
    together); a group may name a file that is missing, and the caller then says so.
    chosen is True when a user picked exactly these files (an upload), so that
    looser names may count (gpt2-vocab.json with gpt2-merges.txt).
    """

    key: str
    label: str  # its files in a sentence: "GPT-2 files"
    noun: str  # one tokenizer of it: "a GPT-2 tokenizer"
    expects: str  # what a folder holds for it, for messages: "vocab.json with merges.txt"
    find: Callable[[Sequence[str], bool], list[tuple[str, ...]]]
    read: Callable[[Texts], Loaded]  # the texts of one group, keyed by name (a path, for messages), in find's order
    write: Callable[[Loaded], Texts] | None = None  # {file name: text}; {} when it cannot hold this tokenizer
    sniff: Callable[[Probe], bool] | None = None  # does one file whose name says nothing hold this format?
    records_pretokenizer: bool = True  # False: the pre-tokenizer is not in the files (it is asked for)
    help: Mapping[str, str] = field(default_factory=dict)  # each file it writes, and what it is for (the app's download buttons)
    binary: tuple[str, ...] = ()  # the endings of its files that are read and written as bytes, not text
    families: tuple[str, ...] = ("byte-level",)  # the tokenizers its writer writes (Loaded.family)

    def is_binary(self, name: str) -> bool:
        return name.endswith(self.binary) if self.binary else False


FORMATS: dict[str, Format] = {}


def register(fmt: Format) -> Format:
    """Add a format, searched after those before it; a key is registered once."""
    if fmt.key in FORMATS:
        raise ValueError(f"A format {fmt.key!r} is already registered.")
    FORMATS[fmt.key] = fmt
    return fmt


def claims(name: str) -> bool:
    """Does a file of this name, chosen alone, belong to a registered format: a whole tokenizer (tokenizer.json, a
    .tiktoken), or one of a group (GPT-2's vocab.json, wanting its merges.txt)? A lone merges.txt does not: it is
    merges only (merges_file.py reads it)."""
    return name != load.MERGES and any(name in group for fmt in FORMATS.values() for group in fmt.find([name], True))


def label(key: str) -> str:
    """A format's files in a sentence ('GPT-2 files'), for a Loaded's format."""
    return FORMATS[key].label if key in FORMATS else key


# ---------------------------------------------------------------------------
# the formats this tool knows


def _named(name: str, suffix: str) -> Callable[[Sequence[str], bool], list[tuple[str, ...]]]:
    """A one-file format found by its name in a folder, or by its suffix when chosen."""

    def find(names: Sequence[str], chosen: bool) -> list[tuple[str, ...]]:
        return [(n,) for n in names if n == name or (chosen and n.endswith(suffix))]

    return find


def _one(parse: Callable[[str, str], Loaded]) -> Callable[[Texts], Loaded]:
    def read(texts: Texts) -> Loaded:
        ((name, text),) = texts.items()
        return parse(text, name)

    return read


register(
    Format(
        "workbench",
        "this tool's plain JSON",
        "a tokenizer.bpe.json",
        load.PLAIN,
        find=_named(load.PLAIN, ".bpe.json"),
        read=_one(load.parse_plain),
        write=lambda t: (
            {} if t.vocab is not None else {load.PLAIN: export.plain_json(t.merges, t.special_tokens, t.pretokenizer, t.counts)}
        ),
        sniff=lambda probe: isinstance(probe.document, dict) and "format" in probe.document,
        help={load.PLAIN: "this tool's plain JSON, with each merge's count"},
    )
)


def _read_spm_model(texts: Texts) -> Loaded:
    ((name, data),) = texts.items()
    return load.parse_sentencepiece_model(data, name)


def _write_spm_model(t: Loaded) -> Texts:
    data = export.sentencepiece_model(t)
    return {} if data is None else {load.SPM_MODEL: data}


# subtle: before tokenizer.json, so that a folder holding both (a save of this tool's, a Llama checkpoint) loads the
# .model, the original that its tokenizer.json was converted from (the two encode a few texts differently: hf.py)
register(
    Format(
        load.SPM_MODEL_FORMAT,
        "SentencePiece model",
        "a SentencePiece model",
        load.SPM_MODEL,
        find=_named(load.SPM_MODEL, ".model"),
        read=_read_spm_model,
        write=_write_spm_model,
        help={load.SPM_MODEL: "SentencePiece's own file: sentencepiece.SentencePieceProcessor(model_file=it)"},
        binary=(".model",),
        families=("sentencepiece",),
    )
)


def _read_hf(texts: Texts) -> Loaded:
    """tokenizer.json: byte-level BPE (load.parse_hf), or the SentencePiece family (Llama 2's), told apart by its steps."""
    from ..sentencepiece.hf import is_sentencepiece_family

    ((name, text),) = texts.items()
    document = load.parse_json(text, name)
    if is_sentencepiece_family(document):
        return load.parse_sentencepiece_json(document, name)
    return load.parse_hf_document(document, name)


def _write_hf(t: Loaded) -> Texts:
    if t.family == "sentencepiece":
        return {load.HF: export.sentencepiece_json(t)} | export.sentencepiece_config_files(t)
    return {load.HF: export.hf_tokenizer_json(t)} | export.hf_config_files(t.full_vocab, t.special_tokens)


register(
    Format(
        "huggingface",
        "HuggingFace tokenizer.json",
        "a HuggingFace tokenizer",
        load.HF,
        find=_named(load.HF, load.HF),
        read=_read_hf,
        write=_write_hf,
        sniff=lambda probe: isinstance(probe.document, dict) and "model" in probe.document,
        families=("byte-level", "sentencepiece"),
        help={
            load.HF: "HuggingFace tokenizers: Tokenizer.from_file",
            "tokenizer_config.json": "with tokenizer.json: transformers' AutoTokenizer, its eos and pad tokens set",
            "special_tokens_map.json": "with tokenizer.json: which special token is the eos, bos, unk and pad token",
        },
    )
)


def _find_gpt2(names: Sequence[str], chosen: bool) -> list[tuple[str, ...]]:
    """vocab.json + merges.txt, or OpenAI's encoder.json + vocab.bpe; chosen, any .json with one other file."""
    groups = [pair for pair in load.GPT2_PAIRS if pair[0] in names or pair[1] in names]
    if not groups and chosen and len(names) == 2:
        vocab = [n for n in names if n.endswith(".json")]
        if len(vocab) == 1:
            groups = [(vocab[0], next(n for n in names if n != vocab[0]))]
    return groups


register(
    Format(
        "gpt2",
        "GPT-2 files",
        "a GPT-2 tokenizer",
        f"{load.VOCAB} with {load.MERGES}",
        find=_find_gpt2,
        read=lambda texts: load.parse_gpt2(*texts.values(), *texts.keys()),
        write=lambda t: {
            load.VOCAB: export.gpt2_vocab_json(t),
            load.MERGES: export.gpt2_merges_txt(t),
        },
        records_pretokenizer=False,
        help={load.VOCAB: "GPT-2 format, with merges.txt", load.MERGES: "GPT-2 format, with vocab.json"},
    )
)


def _find_tiktoken(names: Sequence[str], chosen: bool) -> list[tuple[str, ...]]:
    """Each .tiktoken file, with the .tiktoken.json this tool writes beside it where there is one."""
    return [(n, n + ".json") if n + ".json" in names else (n,) for n in names if n.endswith(load.TIKTOKEN)]


def _read_tiktoken(texts: Texts) -> Loaded:
    (ranks_name, ranks_text), *spec = texts.items()
    loaded = load.parse_tiktoken(ranks_text, ranks_name)
    return load.parse_tiktoken_spec(loaded, spec[0][1], spec[0][0], ranks_text) if spec else loaded


register(
    Format(
        "tiktoken",
        "tiktoken ranks",
        "a tiktoken rank file",
        f"one {load.TIKTOKEN} file (with its .tiktoken.json)",
        find=_find_tiktoken,
        read=_read_tiktoken,
        write=lambda t: export.tiktoken_files(t.merges, t.special_tokens, t.pretokenizer, t.full_vocab),
        sniff=lambda probe: probe.document is None,  # any other text: its lines say whether it is ranks
        records_pretokenizer=False,  # a rank file alone does not; the .tiktoken.json beside it does
        help={
            export.TIKTOKEN_RANKS: "tiktoken's rank file: tiktoken.Encoding(..., mergeable_ranks=load_tiktoken_bpe(it))",
            export.TIKTOKEN_JSON: "with tokenizer.tiktoken: the pre-tokenizer's pat_str and special tokens tiktoken.Encoding takes",
        },
    )
)


# ---------------------------------------------------------------------------
# reading: a folder, one file, or uploaded files


@renamed(pattern="pretokenizer")
def read(path: str | Path, *, pretokenizer: str | PreTokenizer | None = None) -> Loaded:
    """A folder or one file in any format of FORMATS; ValueError names the file and what is wrong.

    A folder is searched in the order of FORMATS (tokenizer.bpe.json, else tokenizer.json,
    else vocab.json + merges.txt, else its one .tiktoken file); a folder this tool saved
    is searched among the files its manifest lists. One file is read with the files its
    format needs beside it (merges.txt beside vocab.json), or else on its own, recognised
    by its name, then its content. `pretokenizer` is for the formats that do not record one
    (GPT-2, tiktoken; default gpt2). Files another tool rewrote since this tool saved the
    folder are read as they are now, with a FolderChanged warning naming them; a save of
    this tool's that did not finish (a mix of two tokenizers) is refused.
    """
    path = Path(path)
    if path.is_dir() or path.name == MANIFEST:
        folder = path if path.is_dir() else path.parent
        saved = _saved(folder)
        loaded, group = _read_folder(folder, saved)
    else:
        if not path.exists():
            raise ValueError(f"{path}: no such file or directory.")
        folder = path.parent
        saved = _saved(folder)
        if saved is not None and path.name not in saved.listed:
            raise ValueError(
                f"{path}: not a file of the tokenizer saved last in {folder} ({MANIFEST} lists {', '.join(saved.listed)}); "
                "a later save replaced it."
            )
        loaded, group = _read_file(path, saved)
    if saved is not None and saved.changed:
        _warn_changed(folder, saved, group)
    return with_pretokenizer(loaded, pretokenizer, keep_openai=False)


def _read_file(path: Path, saved: Saved | None) -> tuple[Loaded, tuple[str, ...]]:
    """One file, with the files its format needs beside it; and the names read."""
    folder = path.parent
    names = sorted({path.name, *(saved.names if saved is not None else _regular_files(folder))})
    for fmt in FORMATS.values():
        for group in fmt.find(names, False):
            if path.name in group:
                _check_complete(fmt, folder, group, given=path.name)
                return _read(fmt, _texts(folder, group, saved, fmt)), group
    data = saved.data[path.name] if saved is not None else load.read_bytes(path)
    return read_one(str(path), data), (path.name,)


def _read_folder(folder: Path, saved: Saved | None) -> tuple[Loaded, tuple[str, ...]]:
    names = saved.names if saved is not None else _regular_files(folder)
    for fmt in FORMATS.values():
        groups = fmt.find(names, False)
        if len(groups) > 1 and all(len(g) == 1 for g in groups):
            shown = ", ".join(g[0] for g in groups)
            raise ValueError(f"{folder}: it holds several {fmt.label} ({shown}); name the one to load.")
        if groups:
            _check_complete(fmt, folder, groups[0])
            return _read(fmt, _texts(folder, groups[0], saved, fmt)), groups[0]
    expected = "; ".join(f"{fmt.expects} ({fmt.label})" for fmt in FORMATS.values())
    raise ValueError(f"{folder}: no tokenizer here; expected one of: {expected}.")


def _texts(folder: Path, group: Sequence[str], saved: Saved | None, fmt: Format) -> Texts:
    """The group's files as text (a binary one as bytes), keyed by path; in a saved folder, as they were read when the manifest was checked."""
    data = {n: saved.data[n] if saved is not None else load.read_bytes(folder / n) for n in group}
    return {str(folder / n): _content(fmt, str(folder / n), data[n]) for n in group}


def _content(fmt: Format, name: str, data: bytes) -> str | bytes:
    """A file as its format reads it: bytes for a binary file, else its UTF-8 text (ValueError naming it when it is not)."""
    return data if fmt.is_binary(name) else load.decode_text(name, data)


def _regular_files(folder: Path) -> list[str]:
    """The names of a folder's regular files (never a FIFO or a device, which would block or never end)."""
    try:
        return sorted(p.name for p in folder.iterdir() if p.is_file())
    except OSError as e:
        raise ValueError(f"{folder}: cannot be read ({e.strerror}).") from None


def _check_complete(fmt: Format, folder: Path, group: tuple[str, ...], given: str = "") -> None:
    """Every file of the group is in the folder (the one given by its path is read as it is: a device is refused then)."""
    for name in group:
        if name != given and not (folder / name).is_file():
            raise ValueError(f"{folder}: no {name} here; {fmt.noun} is {' and '.join(group)} side by side.")


# ---------------------------------------------------------------------------
# a saved folder's manifest: the files of one save, each with its size and sha256
#
# save() writes every file beside its old one under a temporary name; then it renames a manifest that
# says a save is under way (the files it replaces and the files it writes), the files, and the finished
# manifest last (atomic.write_together). A full disk leaves the old folder as it was. A save cut short
# between two renames (a kill, a failing rename) leaves a manifest under way: the folder loads when
# its files are all the old ones or all the new ones, and is refused in one sentence when they are a
# mix of two tokenizers. Without a save under way, a file that differs from the manifest was changed
# by another tool (transformers' save_pretrained rewrites tokenizer.json and tokenizer_config.json):
# it is read as it is now, and a FolderChanged warning names it.

MANIFEST = "tokenizer.manifest.json"
MANIFEST_FORMAT = "bpe-workbench-folder"

Listing = dict[str, tuple[int, str]]  # a file's name -> (bytes, sha256)


class FolderChanged(UserWarning):
    """Files of a folder this tool saved were changed since (by another tool, or by hand); the message names them."""


def listing(data: Mapping[str, bytes]) -> Listing:
    return {name: (len(d), hashlib.sha256(d).hexdigest()) for name, d in data.items()}


def manifest_text(files: Listing, saving: Listing | None = None) -> str:
    """The manifest of a finished save; with `saving`, of a save under way (files: those it replaces)."""
    document = {"format": MANIFEST_FORMAT, "version": 1, "files": _entries(files)}
    if saving is not None:
        document["saving"] = _entries(saving)
    return json.dumps(document, indent=1) + "\n"


def _entries(files: Listing) -> dict[str, dict[str, int | str]]:
    return {name: {"bytes": size, "sha256": digest} for name, (size, digest) in files.items()}


@dataclass(frozen=True)
class Saved:
    """A folder this tool saved, as it is now: the files its manifest lists, read, and those changed since."""

    listed: tuple[str, ...]  # the files of the last save, in the manifest's order
    data: dict[str, bytes]  # each listed file still there -> its bytes
    changed: tuple[str, ...]  # the listed files another tool rewrote or removed since

    @property
    def names(self) -> list[str]:
        """The listed files still there: the ones a folder is searched among."""
        return [name for name in self.listed if name in self.data]


def _manifest(folder: Path) -> tuple[Listing, Listing | None] | None:
    """The manifest's files and, for a save under way, the files it writes; None when there is none (another tool's folder)."""
    path = folder / MANIFEST
    if not path.is_file():
        return None
    document = load.parse_json(read_text(path), str(path))
    ours = isinstance(document, dict) and document.get("format") == MANIFEST_FORMAT and document.get("version") == 1
    files = document.get("files") if ours else None
    saving = document.get("saving") if ours else None
    if not isinstance(files, dict) or not (files or saving) or not isinstance(saving, dict | None):
        raise ValueError(f"{path}: not a manifest this tool wrote (it lists the files of one save, with their sizes and sha256).")
    return _listing(path, files), None if saving is None else _listing(path, saving)


def _listing(path: Path, files: dict) -> Listing:
    checked = {}
    for name, entry in files.items():
        size, digest = (entry.get("bytes"), entry.get("sha256")) if isinstance(entry, dict) else (None, None)
        plain = isinstance(name, str) and name not in ("", ".", "..", MANIFEST) and "/" not in name and "\\" not in name
        if not (plain and isinstance(size, int) and isinstance(digest, str) and len(digest) == 64):
            raise ValueError(f"{path}: its entry {name!r} is not a file name with a size and a sha256.")
        checked[name] = (size, digest)
    return checked


def _saved(folder: Path) -> Saved | None:
    """The folder as its manifest describes it (every listed file read once); None without a manifest.

    ValueError when a save of this tool's did not finish and left a mix of its files and the earlier ones.
    """
    manifest = _manifest(folder)
    if manifest is None:
        return None
    files, saving = manifest
    data = {}
    for name in {**files, **(saving or {})}:
        path = folder / name
        if path.is_file():
            try:
                data[name] = path.read_bytes()
            except OSError as e:
                raise ValueError(f"{path}: cannot be read ({e.strerror}).") from None
    now = listing(data)
    if saving is not None:  # a save was cut short: its files all renamed, or none, or a mix of the two
        if all(now.get(name) == entry for name, entry in saving.items()):
            files = saving
        elif not files or not all(now.get(name) == entry for name, entry in files.items()):
            raise ValueError(f"{folder}: a save into this folder did not finish ({_mix(now, files, saving)}); {_UNFINISHED}")
    data = {name: data[name] for name in files if name in data}
    return Saved(tuple(files), data, tuple(name for name in files if now.get(name) != files[name]))


def _mix(now: Listing, files: Listing, saving: Listing) -> str:
    """What a save cut short left: 'tokenizer.json is from it, vocab.json from the one before'."""
    new = [name for name, entry in saving.items() if now.get(name) == entry]
    other = next(name for name in {**saving, **files} if now.get(name) != saving.get(name))
    if other not in now:
        state = f"{other} is missing"
    elif now[other] == files.get(other):
        state = f"{other} is from the one before"
    else:
        state = f"{other} is from neither"
    return f"{new[0]} is from it, {state}" if new else state


_UNFINISHED = f"it holds files of two tokenizers, so it is not loaded: save the tokenizer again (or, to load the files as they are, delete {MANIFEST})."


def _warn_changed(folder: Path, saved: Saved, group: tuple[str, ...]) -> None:
    """Say which files of a saved folder another tool changed, and whether what loads is one of them."""
    from ..train import _caller  # the warning points at the user's line (imported only when there is something to say)

    removed = [name for name in saved.changed if name not in saved.data]
    rewritten = [name for name in saved.changed if name in saved.data]
    said = []
    if rewritten:
        said.append(f"{_and(rewritten)} changed")
    if removed:
        said.append(f"{_and(removed)} {'was' if len(removed) == 1 else 'were'} removed")
    read_changed = [name for name in group if name in rewritten]
    if read_changed:
        what = f"{_and(read_changed)} {'is' if len(read_changed) == 1 else 'are'} read as {'it is' if len(read_changed) == 1 else 'they are'} now"
    else:
        what = f"{_and(group)}, unchanged, {'is' if len(group) == 1 else 'are'} what loads"
    message = f"{folder}: {' and '.join(said)} since this tool saved the folder; {what}."
    warnings.warn(message, FolderChanged, stacklevel=_caller())


def _contents(folder: Path, names: Sequence[str]) -> dict[str, bytes]:
    """The files of these names that the folder holds and that can be read -> their bytes."""
    found = {}
    for name in names:
        with contextlib.suppress(OSError):
            if (folder / name).is_file():
                found[name] = (folder / name).read_bytes()
    return found


def _and(names: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _read(fmt: Format, texts: Texts) -> Loaded:
    loaded = fmt.read(texts)
    return loaded if loaded.format == fmt.key else replace(loaded, format=fmt.key)


def read_one(name: str, data: str | bytes) -> Loaded:
    """One file that holds a whole tokenizer, told apart by its name, then by its content (bytes: decoded as its format reads it)."""
    base = Path(name).name
    for fmt in FORMATS.values():
        if any(group == (base,) for group in fmt.find([base], True)):
            return _read(fmt, {name: _content(fmt, name, data) if isinstance(data, bytes) else data})
    text = load.decode_text(name, data) if isinstance(data, bytes) else data
    if not text.strip():
        raise ValueError(f"{name}: the file is empty.")
    probe = Probe(name, text)
    for fmt in FORMATS.values():
        if fmt.sniff is not None and fmt.sniff(probe):
            return _read(fmt, {name: text})
    raise ValueError(f"{name}: not a tokenizer file this tool knows; expected {upload_hint()}.")


@renamed(pattern="pretokenizer")
def read_uploads(files: Mapping[str, bytes], *, pretokenizer: str | PreTokenizer | None = None) -> Loaded:
    """A tokenizer from uploaded files (name -> bytes): the files of one tokenizer, in any format of FORMATS."""
    if not files:
        raise ValueError(f"No file given: upload {upload_hint()}.")
    names = list(files)
    for chosen in (False, True):  # each format's own names first; then the looser names a user may have given
        for fmt in FORMATS.values():
            for group in fmt.find(names, chosen):
                missing = [n for n in group if n not in files]
                if missing and len(group) > 1 and set(group) - set(missing) == set(names):
                    raise ValueError(f"{', '.join(names)}: {fmt.noun} needs {' and '.join(missing)} too; upload the files together.")
                if set(group) == set(names):
                    texts = {n: _content(fmt, n, files[n]) for n in group}
                    return with_pretokenizer(_read(fmt, texts), pretokenizer, keep_openai=False)
    if len(files) == 1:
        ((name, data),) = files.items()
        return with_pretokenizer(read_one(name, data), pretokenizer, keep_openai=False)
    for name in names:  # text the formats below would have read: say which file is not text, as a one-file upload does
        if not any(fmt.is_binary(name) for fmt in FORMATS.values()):
            load.decode_text(name, files[name])
    raise ValueError(f"{', '.join(names)}: expected one tokenizer file, or the files of one together: {upload_hint()}.")


def upload_hint() -> str:
    """What a user can give: 'tokenizer.bpe.json, tokenizer.json, vocab.json with merges.txt, or one .tiktoken file'."""
    kinds = [fmt.expects for fmt in FORMATS.values()]
    return ", ".join(kinds[:-1]) + f", or {kinds[-1]}" if len(kinds) > 1 else kinds[0]


def records_pretokenizer(loaded: Loaded) -> bool:
    """Did the files say which pre-tokenizer they use (this tool's and HuggingFace's do; a .tiktoken does with its .json)?"""
    fmt = FORMATS.get(loaded.format)
    return loaded.recorded if loaded.recorded is not None else fmt is None or fmt.records_pretokenizer


def with_pretokenizer(loaded: Loaded, pretokenizer: str | PreTokenizer | None, *, keep_openai: bool = True) -> Loaded:
    """loaded with the pre-tokenizer asked for, where its format does not record one.

    keep_openai: one of OpenAI's own rank files (recognised by its sha256) keeps the
    pre-tokenizer it is known to have, whatever is asked.
    """
    if pretokenizer is None or records_pretokenizer(loaded) or (keep_openai and loaded.encoding):
        return loaded
    return replace(loaded, pretokenizer=pretokenizer_of(pretokenizer))


# ---------------------------------------------------------------------------
# writing: every format at once


def files(
    merges: Merges,
    special_tokens: Sequence[str] = (),
    pretokenizer: PreTokenizer = DEFAULT,
    counts: Sequence[int | None] | None = None,
    *,
    vocab: Vocab | None = None,
    ignore_merges: bool = False,
) -> Texts:
    """Every format that can hold this tokenizer, as {file name: text}, in the order of FORMATS.

    vocab: another tool's ids (None: this tool's layout, derived from the merges); the plain
    JSON cannot hold them and is left out. ignore_merges (HuggingFace's) is kept by tokenizer.json only.
    """
    counts = None if counts is None else tuple(counts)
    return files_of(Loaded(list(merges), tuple(special_tokens), pretokenizer, counts, vocab, ignore_merges=ignore_merges))


def files_of(loaded: Loaded) -> Texts:
    """Every format that can hold this tokenizer (of either family), as {file name: text or bytes}, in the order of FORMATS."""
    texts: Texts = {}
    for fmt in FORMATS.values():
        if fmt.write is not None and loaded.family in fmt.families:
            texts.update(fmt.write(loaded))
    return texts


def file_names(family: str | None = "byte-level") -> list[str]:
    """Every file name the formats write for a tokenizer of the family (None: of either), for help texts."""
    return [name for fmt in FORMATS.values() if family is None or family in fmt.families for name in fmt.help]


def file_help() -> dict[str, str]:
    """What each written file is for, for the app's download buttons."""
    return {name: text for fmt in FORMATS.values() for name, text in fmt.help.items()}


def save(directory: str | Path, texts: Texts) -> list[Path]:
    """Replace the tokenizer in directory (made if missing) as a whole; return the paths written, the manifest last.

    Files of an earlier save that this one does not write are removed (the manifest,
    which loading follows, no longer lists them anyway). OutputError names the file
    when one cannot be written; the folder then still holds the earlier tokenizer.
    """
    out = atomic.check_folder(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise atomic.OutputError(f"Cannot write into {out}: {atomic.why(e)}.") from None
    data = {name: text if isinstance(text, bytes) else text.encode("utf-8") for name, text in texts.items()}
    try:
        saved = _saved(out)
    except ValueError:  # an unreadable manifest, or a save that did not finish: this save replaces it
        saved = None
    files, before = listing(data), (saved.names if saved is not None else [])
    replaced = saved.data if saved is not None else _contents(out, data)
    under_way = manifest_text(listing(replaced), files)  # renamed first: a load then knows a save is under way
    written = [
        (out / MANIFEST, under_way.encode()),
        *((out / name, d) for name, d in data.items()),
        (out / MANIFEST, manifest_text(files).encode()),
    ]
    atomic.write_together(written)
    for name in sorted((set(before) | set(file_names(None))) - set(data)):
        with contextlib.suppress(OSError):
            if (out / name).is_file():
                (out / name).unlink()
    return [out / name for name in data] + [out / MANIFEST]
