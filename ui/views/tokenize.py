"""The Tokenize page's real tokenizer: GPT-2 as every page has it (ui/real.py), or uploaded files; and its merges.

An uploaded tokenizer's files are read in the worker pool (serve/jobs.read_upload),
never in the page's thread: a hostile file (tokens made to collide in a hash table)
took seconds there holding the interpreter lock, and every student's click waited.
Sessions uploading the same files share one read; what it gives -- the tokenizer,
or the sentence saying why not -- is kept for every session on a content digest of
the files and the pre-tokenizer asked for. A read still going after UPLOAD_S is
given up, in one sentence. A session keeps only which files it chose
(`Reference`), so its choice survives a visit to another page. GPT-2 is not loaded
here: ui/real.py finds, checks and loads it once per server for every page.
"""

from __future__ import annotations

import hashlib
import io
import threading
import zipfile
from collections import OrderedDict
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from bpe import Tokenizer
from bpe.files import export, formats
from serve import jobs
from ui import real, runs, work
from ui.render import show

MERGES_SHOWN = 500  # rows of the merge browser: a search narrows them down
UPLOAD_S = 30.0  # an upload still being read after this long in its worker process is given up
KEEP_UPLOADS = 8  # uploaded tokenizers (or why not) kept for every session


@dataclass(frozen=True)
class Reference:
    """The files a session chose as its real tokenizer."""

    label: str  # what to call it: 'GPT-2' or the uploaded file names
    files: tuple[tuple[str, bytes], ...]  # (name, content)
    digest: str


@dataclass(frozen=True)
class Loaded:
    """A loaded tokenizer, or the sentence saying why it could not be loaded."""

    tokenizer: Tokenizer | None
    error: str | None = None
    format: str = ""  # a key of bpe.files.formats.FORMATS

    @property
    def has_counts(self) -> bool:
        return self.tokenizer is not None and any(c is not None for c in self.tokenizer.counts)


def reference_of(label: str, files: dict[str, bytes]) -> Reference:
    digest = hashlib.blake2b(digest_size=16)
    for name, data in sorted(files.items()):
        digest.update(name.encode() + b"\0" + hashlib.blake2b(data, digest_size=16).digest())
    return Reference(label, tuple(sorted(files.items())), digest.hexdigest())


def gpt2_on_this_machine() -> bool:
    """GPT-2's own files are here (../shared/gpt2 or tiktoken's cache): the page offers it beside uploads."""
    return real.locate(real.ENCODINGS["gpt2"]) is not None


@st.cache_resource(show_spinner=False)
def gpt2_reference() -> Reference:
    """GPT-2's own files where ui/real.py finds them, read once: a worker process loads the tokenizer from them (a long text)."""
    encoding = real.ENCODINGS["gpt2"]
    paths, _ = real.locate(encoding)
    return reference_of("GPT-2", {file.name: path.read_bytes() for file, path in zip(encoding.files, paths)})


def gpt2() -> Loaded:
    """GPT-2, loaded once per server by ui/real.py (the Encode, Real tokenizers and Vocabulary pages' GPT-2 too)."""
    found = real.get("gpt2")
    return Loaded(found.tokenizer, found.error, found.format)


def uploaded(files) -> Reference | None:
    """A Reference for what st.file_uploader holds (UploadedFile objects), or None when it is empty."""
    if not files:
        return None
    return reference_of(", ".join(f.name for f in files), {f.name: f.getvalue() for f in files})


class Kept:
    """What became of the uploads read so far, for every session: (digest, pre-tokenizer) -> Loaded, the last KEEP_UPLOADS."""

    def __init__(self) -> None:
        self.found: OrderedDict[tuple[str, str], Loaded] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> Loaded | None:
        with self.lock:
            if key in self.found:
                self.found.move_to_end(key)
            return self.found.get(key)

    def put(self, key: tuple[str, str], loaded: Loaded) -> Loaded:
        with self.lock:
            self.found[key] = loaded
            while len(self.found) > KEEP_UPLOADS:
                self.found.popitem(last=False)
        return loaded


@st.cache_resource(show_spinner=False)
def kept_uploads() -> Kept:
    return Kept()


def upload_key(reference: Reference, pretokenizer: str) -> tuple:
    """The pool's key for reading these files under this pre-tokenizer: sessions uploading the same share it."""
    return ("upload", reference.digest, pretokenizer)


def load_reference(reference: Reference, pretokenizer: str) -> Loaded | None:
    """The tokenizer in an uploaded Reference's files (or the sentence saying why not); None while a worker reads them.

    Files as small as a page's inline corpus are read here (a process would cost more than they can).
    """
    kept = kept_uploads()
    if (found := kept.get((reference.digest, pretokenizer))) is not None:
        return found
    key = upload_key(reference, pretokenizer)
    status = work.pool().status(key)
    # subtle: asking again would read the files again, when the pool has said what they are (a failed job is started anew)
    if status is None or not (status.state == "done" or status.state == "failed" and said_of(reference, status.error)):
        small = sum(len(data) for _, data in reference.files) <= runs.INLINE_BYTES
        status = work.ask("upload", key, jobs.read_upload, reference.files, pretokenizer, lane="short", inline=small)
        if not status.ended:
            status = work.pool().wait(key, runs.WAIT_S)
    if status.state == "done":
        work.let_go("upload")
        found = status.result  # OpenAI's own files keep their pre-tokenizer (formats.with_pretokenizer)
        return kept.put((reference.digest, pretokenizer), Loaded(Tokenizer.from_loaded(found), None, found.format))
    if status.state == "failed":
        work.let_go("upload")
        if said_of(reference, status.error):  # the files' own sentence, the same for every session: kept
            return kept.put((reference.digest, pretokenizer), Loaded(None, status.error))
        return Loaded(None, status.error)  # the pool's about this session (its budget) or this run (a crash): said, not kept
    if status.state == "cancelled":  # stopped by everyone who watched it: asked again on the next run
        work.let_go("upload")
        return Loaded(None, f"Reading {reference.label} was stopped; upload it again to try again.")
    if status.seconds > UPLOAD_S:
        work.let_go("upload")  # ends it, unless another session still waits for it
        return kept.put(
            (reference.digest, pretokenizer),
            Loaded(
                None,
                f"{reference.label}: still being read after {UPLOAD_S:.0f} s, longer than an upload may take here; load it with bpe on your own machine.",
            ),
        )
    return None


def said_of(reference: Reference, error: str) -> bool:
    """Whether a failed read's sentence is about the files themselves (bpe's sentences start with a file's name),
    not the pool's about one session or run ('This session has used the worker pool for ...', a crash)."""
    return error.startswith((reference.label, *(f"{name}:" for name, _ in reference.files)))


def reading(reference: Reference, pretokenizer: str) -> None:
    """What the page shows while a worker reads the upload: its progress, polled; the page runs again when it ends (or is late)."""

    def draw(status) -> None:
        if status.seconds > UPLOAD_S:
            st.rerun()  # the page gives it up (load_reference)
        st.info(
            work.waiting(status, f"Reading {reference.label}") or f"Reading {reference.label} in a worker process… ({status.seconds:.0f} s)"
        )

    work.follow(upload_key(reference, pretokenizer), draw, every=runs.POLL_S)


def describe(result: Loaded) -> str:
    """'GPT-2 files: 50,257 tokens, 50,000 merges, special tokens <|endoftext|>; pre-tokenizer gpt2'."""
    tok = result.tokenizer
    listed = ", ".join(tok.special_tokens) or "none"
    return (
        f"{formats.label(result.format)}: {len(tok.vocab):,} tokens, {len(tok.merges):,} merges, "
        f"special tokens {listed}; pre-tokenizer {tok.pretokenizer.name}"
    )


# ---------------------------------------------------------------------------
# the downloads, and what loads them elsewhere

LOAD_ELSEWHERE = {
    "tiktoken (pip install tiktoken)": export.TIKTOKEN_PYTHON + 'enc.encode("Hello world", allowed_special="all")',
    "HuggingFace tokenizers": 'from tokenizers import Tokenizer\nTokenizer.from_file("tokenizer.json").encode("Hello world").ids',
    "transformers (its eos and pad tokens set)": 'from transformers import AutoTokenizer\nAutoTokenizer.from_pretrained("FOLDER")("Hello world")["input_ids"]',
    "this tool": 'from bpe import Tokenizer  # or: python -m bpe encode FOLDER --text "Hello world"\nTokenizer.load("FOLDER").encode("Hello world")',
}


def run_of(settings) -> tuple:
    """What names the sidebar's run: its corpus, its training settings and its merges."""
    return (settings.key, settings.spec, settings.num_merges)


@st.cache_resource(max_entries=32, show_spinner=False)
def downloads(run: tuple, k: int, _tok: Tokenizer) -> tuple[dict[str, str], bytes]:
    """Every format of the run's tokenizer with its first k merges ({name: text}), and all of them as one zip; once per (run, k)
    for every session (a resource, never changed: st.cache_data unpickled a copy of every file on every run of the page)."""
    texts = _tok.files(k)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, text in texts.items():
            bundle.writestr(f"tokenizer/{name}", text)
    return texts, buffer.getvalue()


def by_format(texts: dict[str, str]) -> list[tuple[formats.Format, list[str]]]:
    """The files to download, grouped by the format that writes them, in the registry's order."""
    return [(fmt, names) for fmt in formats.FORMATS.values() if (names := [n for n in fmt.help if n in texts])]


def special_note(tok: Tokenizer, spelled: list[str]) -> str:
    """What the page did with special-token text: CS336 encodes it as the special token; tiktoken would refuse it."""
    shown = ", ".join(f"{t} (id {tok.ids[t.encode()]:,})" for t in spelled)
    return (
        f"The text spells {shown}: encoded as the special token, as CS336's Tokenizer does (allowed_special='all'). "
        "tiktoken refuses such text unless allowed_special allows it; its encode_ordinary splits it as plain text."
    )


@st.cache_resource(max_entries=32, show_spinner=False)
def merges_shown(tokenizer_id: tuple, query: str, _tok: Tokenizer) -> tuple[pd.DataFrame, int]:
    """merges_frame as the page shows it (numbers with separators), once per tokenizer and query for every session:
    GPT-2's 50,000 merges were scanned and formatted again on every run of the page.

    tokenizer_id names _tok: the files' digest and the pre-tokenizer asked for (what `loaded` is cached on).
    """
    frame, found = merges_frame(_tok, query)
    return frame.assign(**{c: frame[c].map("{:,}".format) for c in ("rank", "id", "count") if c in frame.columns}), found


def merges_frame(tok: Tokenizer, query: str = "", limit: int = MERGES_SHOWN) -> tuple[pd.DataFrame, int]:
    """The merges whose new token contains query (all when empty), first `limit` of them, and how many match.

    Columns: rank (1 = first merge), pair, new token, its id, and the count when the format recorded one.
    """
    needle = query.encode("utf-8")
    rows, found = [], 0
    for rank, ((left, right), count) in enumerate(zip(tok.merges, tok.counts), start=1):
        if needle and needle not in left + right:
            continue
        found += 1
        if len(rows) < limit:
            rows.append(
                {
                    "rank": rank,
                    "pair": f"{show(left)} + {show(right)}",
                    "new token": show(left + right),
                    "id": tok.ids[left + right],
                    "count": count,
                }
            )
    frame = pd.DataFrame(rows, columns=["rank", "pair", "new token", "id", "count"])
    if not any(c is not None for c in tok.counts):
        frame = frame.drop(columns="count")
    return frame, found
