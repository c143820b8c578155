"""Corpora the class can pick: the presets, the standard library's prose, and the checks of a pasted or uploaded text.

Not here: the work built on a corpus (traces, trainings, replays: ui/runs.py).
A corpus is named by its content digest, which is what the runs are keyed on.
"""

from __future__ import annotations

import contextlib
import hashlib
import sysconfig
import threading
from dataclasses import dataclass

import streamlit as st

from bpe.data.corpora import SEPARATOR, stdlib_prose
from bpe.sentencepiece.spec import SentencePieceSpec
from bpe.spec import TrainSpec
from bpe.text.pretokenizers import DEFAULT, PreTokenizer
from serve import disk, settings

MAX_UPLOAD_BYTES = 5_000_000
STDLIB_BYTES = 2_000_000
HELD_OUT_BYTES = 400_000  # stdlib prose after the training slice, never trained on


@dataclass(frozen=True)
class Source:
    label: str
    text: str = ""
    pretokenizer: str = DEFAULT.name  # a name in bpe.PRETOKENIZERS: the sidebar's choice and the link's
    merges: int = 20
    special_tokens: tuple[str, ...] = ("<|endoftext|>",)
    note: str = ""  # a template filled in from the preset's run under the sidebar's rule: ui/preset_notes.py
    # the SentencePiece family's run of the same text (ui/family.py): its vocab size (meta pieces + the characters
    # the coverage keeps + merges, as spm_train counts it) and its character coverage
    sp_vocab_size: int = 1000
    sp_coverage: float = SentencePieceSpec.character_coverage

    @property
    def vocab_size(self) -> int:
        """The vocab size the preset was made for: 256 bytes + its merges + its special tokens."""
        return 256 + self.merges + len(self.special_tokens)

    def sidebar(self) -> dict[str, object]:
        """The sidebar's settings this preset was made for, by session key (ui.state's defaults, ui.sidebar.apply_preset)."""
        return {
            "pretokenizer": self.pretokenizer,
            "special_tokens_text": ", ".join(self.special_tokens),
            "vocab_size": self.vocab_size,
            "sp_vocab_size": self.sp_vocab_size,
            "sp_coverage": self.sp_coverage,
        }


DEFAULT_SOURCE = "textbook"  # the preset a new session opens on
SOURCES: dict[str, Source] = {
    "textbook": Source(
        "low / lower / widest / newest (textbook)",
        "low low low low low lower lower widest widest widest newest newest newest newest newest newest",
        pretokenizer="whitespace",
        merges=12,
        sp_vocab_size=34,  # 3 meta + 11 characters + 20 merges: the last 5 are pairs that no longer occur (frequency 0)
        note="The Sennrich et al. example: {tied} tie for the first merge, and the tie-break rule decides: {rule} takes {first}.",
    ),
    "wikipedia": Source(
        "aaabdaaabac (Wikipedia)",
        "aaabdaaabac",
        pretokenizer="none",
        merges=5,
        sp_vocab_size=20,
        note="One sequence, no pre-tokenizer. Under the {rule} rule: {merges}",
    ),
    "ties": Source(
        "aaaa abab baba (ties, overlaps)",
        "aaaa aaa aa abab abab baba baba ab ba a b",
        pretokenizer="whitespace",
        merges=8,
        sp_vocab_size=20,
        note="'aaaa' holds three overlapping a + a pairs but merges into two tokens; {ties} merges are ties.",
    ),
    "stdlib": Source(
        "Python's own docs (stdlib docstrings, 2 MB)",
        pretokenizer="gpt2",
        merges=1000,
        sp_vocab_size=200,  # 3 meta + 85 characters + 112 merges: a trace with detail recounts every word at each merge
        note="Docstrings and comments of the Python standard library on this machine: real text, no download.",
    ),
    "scripts": Source(
        "F1 H2O 東京タワー (scripts, digits)",
        "F1 F1 F1 F1 F1 F1 H2O H2O H2O H2O H2O COVID19 COVID19 COVID19 mp3 mp3 mp3 3.14 3.14 3.14 3.14 2024 2024 2024 2024 "
        "1.5 1.5 Tokyo Tokyo Tokyo Tokyo東京 Tokyo東京 東京タワー 東京タワー 東京タワー 東京 東京 café café café naïve Straße Ωmega 🦙",
        pretokenizer="gpt2",
        merges=30,
        special_tokens=(),
        sp_vocab_size=80,
        sp_coverage=0.98,  # 4 characters seen once (ß ï Ω 🦙) fall outside it
        note="Letters, digits and two scripts in one word: pick the SentencePiece family to see the pairs it may not make "
        "(F + 1: two scripts; with split digits, every digit alone) and the characters left outside the coverage.",
    ),
    "paste": Source("Paste your own text", pretokenizer="gpt2", merges=50, sp_vocab_size=300),
    "upload": Source("Upload a text file", pretokenizer="gpt2", merges=200, sp_vocab_size=500),
}


FILE = "file"  # the corpus file the server was started with (BPE_CORPUS), offered beside the presets


def choices() -> list[str]:
    """The corpora the sidebar offers: the presets, and the server's own file when it was started with one."""
    keys = list(SOURCES)
    if settings.corpus_file() is not None:
        keys.insert(keys.index("paste"), FILE)
    return keys


def source(key: str) -> Source:
    """The preset of a corpus choice: one of SOURCES, or the server's file, as plain text under GPT-2's pre-tokenizer
    (a link names the settings it was checked with: `bpe diff` prints one)."""
    if key != FILE:
        return SOURCES[key]
    path = settings.corpus_file()
    return Source(
        f"Server's file (the corpus file BPE_CORPUS names: {path.name if path else 'none'})",
        pretokenizer=DEFAULT.name,
        merges=200,
        sp_vocab_size=500,
    )


def file_data() -> tuple[bytes, str | None]:
    """The server's corpus file, and a sentence when it cannot be the corpus (missing, unreadable, too big, not text)."""
    path = settings.corpus_file()
    try:
        stat = path.stat() if path is not None else None
    except OSError as e:
        return b"", f"The server's corpus file {path} cannot be read ({e.strerror})."
    if stat is None:
        return b"", "This server was started without a corpus file (BPE_CORPUS)."
    if stat.st_size > MAX_UPLOAD_BYTES:
        return b"", too_big(path.name, stat.st_size)
    data = _read_file(str(path), stat.st_mtime_ns, stat.st_size)
    return data, check_text(path.name, data) if data is not None else f"The server's corpus file {path} cannot be read."


@st.cache_resource(show_spinner=False, max_entries=2)
def _read_file(path: str, mtime_ns: int, size: int) -> bytes | None:
    """The file's bytes, read once per server for each version of it (the same object on every click: its digest is kept)."""
    try:
        with open(path, "rb") as f:
            return f.read(MAX_UPLOAD_BYTES + 1)
    except OSError:
        return None


@dataclass(frozen=True)
class Corpus:
    name: str
    data: bytes
    digest: str


BYTE_LEVEL, SENTENCEPIECE = "byte-level", "sentencepiece"  # the tokenizer families a run can be of (ui/family.py)


@dataclass(frozen=True)
class Settings:
    """What the sidebar set up: the corpus, how to train on it (a bpe TrainSpec), and how many merges.

    `sentencepiece` is the SentencePiece family's spec when the sidebar's family is SentencePiece: the step page
    and the race train that run; the pages that know only byte-level runs keep training `spec` (the byte-level
    settings, kept while hidden) and say so (app.py).
    """

    corpus: Corpus
    spec: TrainSpec
    num_merges: int
    sentencepiece: SentencePieceSpec | None = None

    @property
    def family(self) -> str:
        return SENTENCEPIECE if self.sentencepiece is not None else BYTE_LEVEL

    @property
    def key(self) -> str:
        return self.corpus.digest

    @property
    def pretokenizer(self) -> PreTokenizer:
        return self.spec.pretokenizer

    @property
    def special_tokens(self) -> tuple[str, ...]:
        return self.spec.special_tokens

    @property
    def algorithm(self) -> str:
        return self.spec.algorithm

    @property
    def tie_break(self) -> str:
        return self.spec.tie_break  # a key of bpe.rule.RULES; the guided lesson keeps the default


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def stdlib_bytes(spinner: bool = True) -> bytes:
    """The 2 MB preset: read once per server, and kept on disk between starts (3-4 s of the server's processor to collect)."""
    key = (STDLIB_BYTES, stdlib_root())
    return _kept("stdlib", key, lambda: stdlib_prose(STDLIB_BYTES).encode("utf-8"), spinner, "the standard library's docstrings")


def stdlib_held_out(spinner: bool = True) -> bytes:
    """The documents that follow the training slice in the same prose: text the tokenizer never saw."""

    def make() -> bytes:
        more = stdlib_prose(STDLIB_BYTES + HELD_OUT_BYTES).encode("utf-8")
        return more[len(stdlib_bytes(spinner=False)) + len(SEPARATOR) :]

    return _kept("stdlib-held-out", (STDLIB_BYTES, HELD_OUT_BYTES, stdlib_root()), make, spinner, "held-out docstrings")


_collected: dict[str, bytes] = {}  # name -> its bytes: one per server process
_collecting = threading.RLock()  # one collection at a time (a class arriving together waits for one); the held-out text needs the preset


def _kept(name: str, key: tuple, make, spinner: bool, what: str) -> bytes:
    """disk.kept_bytes(name, key, make), collected once per server process; a page that waits for it says so.

    subtle: a plain dict, not st.cache_resource: ui/warm.py's thread collects both first, and a Streamlit
    cache's spinner in a thread that runs no page logs "missing ScriptRunContext" (its spinner= is False).
    """
    known = _collected.get(name)
    if known is not None:
        return known
    with st.spinner(f"Collecting {what}…") if spinner else contextlib.nullcontext(), _collecting:
        if name not in _collected:
            _collected[name] = disk.kept_bytes(name, key, make)
    return _collected[name]


def stdlib_root() -> str:
    """Where the standard library's sources are (what the prose is read from; with Python's version, what names it)."""
    return sysconfig.get_paths()["stdlib"]


def check_text(name: str, data: bytes) -> str | None:
    """A sentence saying why data is not a usable corpus, or None."""
    if not data.strip():
        return f"{name} is empty: paste or upload some text to train on."
    if len(data) > MAX_UPLOAD_BYTES:
        return too_big(name, len(data))
    head = data[: 1 << 16]
    if b"\x00" in head or head.decode("utf-8", "replace").count("\ufffd") > len(head) * 3 // 10:
        return f"{name} looks like a binary file, not text (it has NUL bytes or is mostly invalid UTF-8)."
    return None


def too_big(name: str, size: int) -> str:
    return (
        f"{name} is {size / 1e6:.1f} MB; the app takes up to {MAX_UPLOAD_BYTES / 1e6:.0f} MB. "
        "Train on bigger files with the CLI: python -m bpe train FILE …"
    )
