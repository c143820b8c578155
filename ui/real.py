"""The real tokenizers a class compares with: GPT-2, GPT-4 (cl100k_base) and GPT-4o (o200k_base); and Llama 2, Mistral
7B and Llama 3, whose HuggingFace tokenizer.json files are in ../shared (`OPEN_MODELS`).

Where their files come from, in this order: the project's ../shared folder
(gpt2/, tiktoken/), tiktoken's own cache (TIKTOKEN_CACHE_DIR, DATA_GYM_CACHE_DIR
or <tmp>/data-gym-cache, each file under the sha1 of its URL, as tiktoken keeps
it), a download from OpenAI's URL when the machine is online (into that cache,
tried at most once every RETRY_S), or a file a user uploads. Every file is
checked against the sha256 tiktoken itself checks, so a file in the cache is
exactly OpenAI's, whoever put it there.

Each tokenizer is loaded once per server process and shared by every session
(a server-wide cache on the files' paths and sizes, filled at start by warm()):
loading o200k_base takes seconds and a few hundred MB, which no session should
pay again.

Llama 2 and Mistral are of the SentencePiece family (characters, '▁' for a space, byte fallback); Llama 3 is
byte-level BPE like GPT-4, with HuggingFace's ignore_merges. They come from ../shared only (no download, no upload),
are loaded once per server like the GPT ones, and are checked for nothing but being readable: files of this project.

Not here: encoding step by step or a token's ancestry (ui/encoding.py), drawing (ui/views/compare.py).
"""

from __future__ import annotations

import hashlib
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from bpe import PRETOKENIZERS, Tokenizer
from bpe.files import formats, load, openai
from bpe.files.openai import File, cached_path, store
from serve import disk, settings

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
DOWNLOAD_TIMEOUT_S = 20.0
RETRY_S = 300.0  # after a failed download, the next try waits this long (an offline classroom server must not stall every run)


@dataclass(frozen=True)
class Encoding:
    key: str  # "gpt2", "cl100k", "o200k"
    label: str  # what a class calls it: "GPT-4"
    name: str  # tiktoken's name: "cl100k_base"
    pretokenizers: tuple[str, ...]  # the library's pre-tokenizer names for it, preferred first (the first registered is used)
    files: tuple[File, ...]  # its files, their URLs and sha256 (bpe.files.openai)
    special_ids: tuple[tuple[str, int], ...]  # its special tokens and their ids (a rank file does not record them)


def _encoding(key: str, label: str, name: str, pretokenizers: tuple[str, ...]) -> Encoding:
    known = openai.ENCODINGS[name]
    return Encoding(key, label, name, pretokenizers, known.files, tuple(known.special_tokens.items()))


ENCODINGS: dict[str, Encoding] = {
    e.key: e
    for e in (
        _encoding("gpt2", "GPT-2", "gpt2", ("gpt2",)),
        _encoding("cl100k", "GPT-4", "cl100k_base", ("cl100k", "gpt4")),
        _encoding("o200k", "GPT-4o", "o200k_base", ("o200k",)),
    )
}


@dataclass(frozen=True)
class OpenModel:
    """An open model's tokenizer, as HuggingFace's tokenizer.json in ../shared/<folder>."""

    key: str  # "llama2", "mistral", "llama3"
    label: str  # what a class calls it: "Llama 2"
    name: str  # what it is, for the captions: "SentencePiece BPE"
    folder: str  # under ../shared
    family: str  # "sentencepiece" or "byte-level"

    @property
    def path(self) -> Path:
        return SHARED / self.folder / "tokenizer.json"


OPEN_MODELS: dict[str, OpenModel] = {
    m.key: m
    for m in (
        OpenModel("llama2", "Llama 2", "SentencePiece BPE", "llama2", "sentencepiece"),
        OpenModel("mistral", "Mistral", "SentencePiece BPE", "mistral", "sentencepiece"),
        OpenModel("llama3", "Llama 3", "byte-level BPE", "llama3", "byte-level"),
    )
}


def label_of(key: str) -> str:
    """The name a class calls a real tokenizer by: 'GPT-4', 'Llama 2'."""
    return (ENCODINGS.get(key) or OPEN_MODELS[key]).label


def load_sentencepiece(path: Path):
    """A SentencePiece-family tokenizer.json (Llama 2's, Mistral's), loaded by the library (Tokenizer.load gives its
    SentencePieceTokenizer) and seen as the pages draw tokens (ui/sp_tokenizer.py: '▁' kept in a piece's bytes, steps
    and ancestry in the byte-level pages' terms)."""
    from ui.sp_tokenizer import PiecesTokenizer

    loaded = Tokenizer.load(path)
    if loaded.family != "sentencepiece" or loaded.follows != "tokenizers":
        raise ValueError(f"{path}: not a SentencePiece-family tokenizer.json.")
    return PiecesTokenizer(loaded.encoder)


@dataclass(frozen=True)
class Real:
    """A real tokenizer loaded (or the sentence saying why not)."""

    encoding: Encoding | OpenModel
    tokenizer: Tokenizer | None
    error: str | None = None
    where: str = ""  # where its files came from, for the caption
    format: str = ""  # a key of bpe.files.formats.FORMATS: how its files were read

    @property
    def label(self) -> str:
        return self.encoding.label


# ---------------------------------------------------------------------------
# finding the files


def pretokenizer_of(encoding: Encoding) -> str | None:
    """The library's name for the encoding's pre-tokenizer, or None while the library lacks it."""
    return next((p for p in encoding.pretokenizers if p in PRETOKENIZERS), None)


def locate(encoding: Encoding) -> tuple[tuple[Path, ...], str] | None:
    """The encoding's files on this machine (../shared first, then tiktoken's cache) and where that is; None when some are missing."""
    shared = tuple(SHARED / f.shared / f.name for f in encoding.files)
    if all(p.is_file() for p in shared):
        return shared, f"../shared/{encoding.files[0].shared}"
    cached = tuple(cached_path(f) for f in encoding.files)
    if all(p is not None and p.is_file() for p in cached):
        return cached, "tiktoken's cache"
    return None


_failed: dict[str, tuple[float, str]] = {}  # encoding key -> (when its download last failed, why): server-wide
_downloading: set[str] = set()  # encodings being downloaded now
_download_lock = threading.Lock()
DOWNLOAD = True  # tests turn it off to see what an offline machine shows


def fetch_later(encoding: Encoding) -> str:
    """Start fetching the encoding's files from OpenAI in a background thread; say, as part of a sentence, what is happening.

    subtle: never in a page's run: a network that drops packets would hold a student's page for the whole
    timeout. One download per encoding at a time, and after a failure none for RETRY_S.
    """
    if not DOWNLOAD:
        return "downloading is turned off"
    with _download_lock:
        when, why = _failed.get(encoding.key, (-RETRY_S, ""))
        if encoding.key not in _downloading and time.time() - when < RETRY_S:
            return f"downloading it failed ({why})"
        if encoding.key not in _downloading:
            _downloading.add(encoding.key)
            threading.Thread(target=download, args=(encoding,), name=f"download-{encoding.key}", daemon=True).start()
    return "is being downloaded from OpenAI now (reload the page in a minute)"


def download(encoding: Encoding) -> str | None:
    """Fetch the encoding's files from OpenAI into tiktoken's cache; None when done, else why not."""
    try:
        for file in encoding.files:
            with urllib.request.urlopen(file.url, timeout=DOWNLOAD_TIMEOUT_S) as response:
                data = response.read()
            problem = store(file, data)
            if problem:
                raise ValueError(problem)
    except (OSError, ValueError) as e:
        why = str(e)[:80] or type(e).__name__
        _failed[encoding.key] = (time.time(), why)
        return why
    finally:
        with _download_lock:
            _downloading.discard(encoding.key)
    return None


def upload(encoding: Encoding, files) -> str | None:
    """Files a user uploaded (st.file_uploader's) for this encoding, checked and cached; None when it worked, else why not."""
    by_name = {f.name: f.getvalue() for f in files or ()}
    for file in encoding.files:
        data = by_name.get(file.name)
        if data is None:
            return f"{encoding.label} needs {' and '.join(f.name for f in encoding.files)}; {file.name} is missing."
        problem = store(file, data)
        if problem:
            return problem + "."
    return None


# ---------------------------------------------------------------------------
# loading, once per server


_loaded: dict[tuple, Real] = {}  # (key, pre-tokenizer, files' paths and sizes) -> the tokenizer: one per server process
_lock = threading.Lock()  # one load at a time: a class arriving together waits for one load, not thirty


def get(key: str, spinner: bool = True) -> Real:
    """The real tokenizer `key` (a key of ENCODINGS or OPEN_MODELS), loaded once per server; or why it is not available."""
    if key in OPEN_MODELS:
        return _open_model(OPEN_MODELS[key], spinner)
    encoding = ENCODINGS[key]
    pretokenizer = pretokenizer_of(encoding)
    if pretokenizer is None:
        return Real(
            encoding, None, f"{encoding.label} needs the library's '{encoding.patterns[0]}' pre-tokenizer, which it does not have yet."
        )
    found = locate(encoding)
    if found is None:
        return Real(encoding, None, unavailable(encoding, fetch_later(encoding)))
    paths, where = found
    stamp = (key, pretokenizer, tuple((str(p), p.stat().st_size) for p in paths))
    known = _loaded.get(stamp)
    if known is not None:
        return known
    if spinner:
        with st.spinner(f"Loading {encoding.label} ({encoding.name}), once for the whole server…"):
            return _load_once(stamp, where)
    return _load_once(stamp, where)


def _load_once(stamp: tuple, where: str) -> Real:
    """Load under the lock (someone may have loaded it while this waited).

    subtle: a plain dict, not st.cache_resource: the cache must outlive a "clear cache" and AppTest's
    cache clearing between tests (loading o200k_base takes seconds), and warm() fills it from a thread.
    """
    with _lock:
        known = _loaded.get(stamp)
        if known is None:
            known = _loaded[stamp] = _load_open(stamp[0], stamp[1]) if stamp[0] in OPEN_MODELS else _load(*stamp, where)
    return known


def available(key: str) -> bool:
    """Whether a real tokenizer's files are on this machine (nothing is loaded or downloaded)."""
    if key in OPEN_MODELS:
        return OPEN_MODELS[key].path.is_file()
    return locate(ENCODINGS[key]) is not None


def _open_model(model: OpenModel, spinner: bool) -> Real:
    """An open model's tokenizer from ../shared, loaded once per server (under the same lock and cache as OpenAI's)."""
    try:
        stamp = (model.key, str(model.path), model.path.stat().st_size)
    except OSError:
        return Real(model, None, f"{model.label}'s tokenizer.json is not on this machine (../shared/{model.folder}).")
    known = _loaded.get(stamp)
    if known is not None:
        return known
    if spinner:
        with st.spinner(f"Loading {model.label}'s tokenizer, once for the whole server…"):
            return _load_once(stamp, "")
    return _load_once(stamp, "")


def _load_open(key: str, path: str) -> Real:
    """Read an open model's tokenizer.json: Llama 3's as a byte-level Tokenizer (kept on disk, as o200k_base is: its
    128,000 merges take seconds to read), Llama 2's and Mistral's as this family's tokenizer."""
    model = OPEN_MODELS[key]
    try:
        if model.family == "sentencepiece":
            tokenizer = load_sentencepiece(Path(path))
        else:
            digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
            tokenizer = disk.kept("tokenizer", (key, digest), lambda: Tokenizer.load(path))
    except (OSError, ValueError) as e:
        return Real(model, None, f"{model.label}'s tokenizer.json cannot be read: {e}")
    return Real(model, tokenizer, None, f"../shared/{model.folder}", "tokenizer.json")


def warm() -> None:
    """Load every real tokenizer in a background thread, once per server process, so the first class does not wait.

    BPE_PRELOAD=0 turns it off: they then load when a page first needs one (that student waits a few seconds).
    """
    global _warming
    if _warming or "streamlit.testing.v1.app_test" in sys.modules:  # AppTest: each test loads what it uses
        return
    if not settings.preload():  # a server that will not show them: ~190 MB and ~5 s of processor saved
        return
    _warming = True
    _left.extend([*ENCODINGS, *OPEN_MODELS])

    def load_each() -> None:
        for key in [*ENCODINGS, *OPEN_MODELS]:
            try:
                get(key, spinner=False)
            finally:
                _left.remove(key)

    threading.Thread(target=load_each, name="warm-real-tokenizers", daemon=True).start()


def loading() -> list[str]:
    """What warm() has still to load, as a class calls it: ['GPT-4', 'GPT-4o'] ([] once it is done, or never started)."""
    return [label_of(key) for key in list(_left)]


_warming = False
_left: list[str] = []  # the encodings warm() has not loaded yet


def unavailable(encoding: Encoding, why: str) -> str:
    """'GPT-4 (cl100k_base) is not on this machine and downloading is turned off: upload OpenAI's cl100k_base.tiktoken to add it.'"""
    names = " and ".join(f.name for f in encoding.files)
    if why.startswith("is being downloaded"):
        return f"{encoding.label} ({encoding.name}) is not on this machine yet and {why}; or upload OpenAI's {names}."
    return f"{encoding.label} ({encoding.name}) is not on this machine and {why}: upload OpenAI's {names} to add it."


def _load(key: str, pretokenizer: str, stamp: tuple, where: str) -> Real:
    """Read the files (checked against OpenAI's sha256 again: a cache can be written by anyone) and build the Tokenizer."""
    encoding = ENCODINGS[key]
    try:
        files = {}
        for file, (path, _) in zip(encoding.files, stamp):
            data = Path(path).read_bytes()
            if hashlib.sha256(data).hexdigest() != file.sha256:
                raise ValueError(f"{path}: not OpenAI's {file.name} (its sha256 differs).")
            files[file.name] = data

        def make() -> Tokenizer:
            return with_special_tokens(formats.read_uploads(files, pretokenizer=pretokenizer), encoding)

        # recovering o200k_base's merges from its ranks takes seconds of the server's processor at every start:
        # the Tokenizer is kept on disk, under OpenAI's sha256 of the very files just checked (serve/disk.py)
        kept_as = (key, pretokenizer, tuple(f.sha256 for f in encoding.files), tuple(encoding.special_ids))
        return Real(encoding, disk.kept("tokenizer", kept_as, make), None, where, encoding.files[0].shared)  # gpt2 or tiktoken: its format
    except (OSError, ValueError) as e:
        return Real(encoding, None, str(e))


def with_special_tokens(found: load.Loaded, encoding: Encoding) -> Tokenizer:
    """The Tokenizer of loaded files with the encoding's special tokens at their real ids (a rank file does not record them)."""
    vocab = dict(found.vocab) if found.vocab is not None else None
    special_tokens = list(found.special_tokens)
    if vocab is not None:
        for text, i in encoding.special_ids:
            if text not in special_tokens:
                special_tokens.append(text)
                vocab.setdefault(i, text.encode())
    if vocab is None:
        return Tokenizer.from_merges(found.merges, special_tokens, found.pretokenizer)
    return Tokenizer(vocab, found.merges, special_tokens, pretokenizer=found.pretokenizer)


def all_real() -> list[Real]:
    return [get(key) for key in ENCODINGS]


# ---------------------------------------------------------------------------
# the line-up a page puts side by side: the real tokenizers and the sidebar's run at merge k


@dataclass(frozen=True)
class Entry:
    key: str  # "run", or a key of ENCODINGS
    label: str
    tokenizer: Tokenizer | None
    k: int | None  # merges used (None: all)
    detail: str  # '100,000 merges', '12 of 12 merges'
    error: str | None = None  # why it is missing

    @property
    def ours(self) -> bool:
        return self.key == "run"


def run_entry(tok: Tokenizer, k: int) -> Entry:
    return Entry("run", "Trained here", tok, k, f"{k:,} of {len(tok.merges):,} merges · the sidebar's run")


def real_entry(real: Real) -> Entry:
    tok = real.tokenizer
    detail = f"{real.encoding.name} · {len(tok.merges):,} merges · {real.where}" if tok else ""
    if tok is not None and isinstance(real.encoding, OpenModel):
        detail = f"{real.encoding.name} · {len(tok.vocab):,} tokens · {real.where}"
    return Entry(real.encoding.key, real.label, tok, None, detail, real.error)


def lineup(run: Tokenizer, k: int) -> list[Entry]:
    """GPT-2, GPT-4, GPT-4o, Llama 2, Mistral, Llama 3 (each loaded, or why not) and the sidebar's run at merge k, in that order."""
    return [real_entry(r) for r in all_real()] + [real_entry(get(key)) for key in OPEN_MODELS] + [run_entry(run, k)]


def run_and_k(settings) -> tuple[Tokenizer, int]:
    """The sidebar's run (trained once, shared) and the k a slider picks (kept per session across the pages that use it)."""
    from ui import runs, state

    tok = runs.tokenizer_for(settings)
    n = len(tok.merges)
    k, was = st.session_state["real_k"], st.session_state["real_n"]
    if k is None or k > n or (k == was and n != was):  # all the merges of another run: all of this one's
        st.session_state["real_k"] = n
    st.session_state["real_n"] = n
    if n == 0:
        return tok, 0
    k = state.widget(
        st.slider,
        "Merges of the run (k)",
        0,
        n,
        key="real_k",
        help="The sidebar's run with only its first k merges: a smaller tokenizer, no retraining.",
    )
    return tok, k
