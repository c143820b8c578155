"""The Tokenize page's real tokenizer: GPT-2 as every page has it (ui/real.py), or uploaded files; and its merges.

An uploaded tokenizer is cached on a content digest of its files and the
pre-tokenizer asked for, and shared by every session (st.cache_resource); a
session keeps only which files it chose (`Reference`), so its choice survives
a visit to another page. A bad file gives one sentence, never a traceback.
GPT-2 is not loaded here: ui/real.py finds, checks and loads it once per server
for every page.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from bpe import Tokenizer, export, formats
from ui import real
from ui.render import show

MERGES_SHOWN = 500  # rows of the merge browser: a search narrows them down


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
    format: str = ""  # a key of bpe.formats.FORMATS

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


@st.cache_resource(max_entries=8, show_spinner="Loading the tokenizer…")
def loaded(digest: str, pattern: str, _reference: Reference) -> Loaded:
    """The tokenizer in a Reference's files, cached on their digest and the pattern and shared by sessions."""
    try:
        found = formats.with_pattern(formats.read_uploads(dict(_reference.files)), pattern)  # OpenAI's own files keep their pattern
        return Loaded(Tokenizer.from_loaded(found), None, found.format)
    except ValueError as e:
        return Loaded(None, str(e))


def load_reference(reference: Reference, pattern: str) -> Loaded:
    return loaded(reference.digest, pattern, reference)


def describe(result: Loaded) -> str:
    """'GPT-2 files: 50,257 tokens, 50,000 merges, special tokens <|endoftext|>; pre-tokenizer gpt2'."""
    tok = result.tokenizer
    listed = ", ".join(tok.special_tokens) or "none"
    return (
        f"{formats.label(result.format)}: {len(tok.vocab):,} tokens, {len(tok.merges):,} merges, "
        f"special tokens {listed}; pre-tokenizer {tok.pattern}"
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
