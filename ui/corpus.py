"""Corpora the class can pick, their checks, and the cached work built on them.

Pre-tokenized corpora and traces are immutable and shared between sessions
through st.cache_resource, keyed on small values (a content digest, settings),
never on the text itself; what a session is looking at lives in its own state.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import streamlit as st

from bpe import PreTokens, Training, pretokenize, train
from bpe.corpora import SEPARATOR, stdlib_prose
from bpe.events import MergeEvent
from bpe.tokenizer import Tokenizer
from bpe.train import steps

MAX_UPLOAD_BYTES = 5_000_000
STDLIB_BYTES = 2_000_000
HELD_OUT_BYTES = 400_000  # stdlib prose after the training slice, never trained on
TRACE_SECONDS = 30.0  # a trace with detail stops here rather than hold the server
TRACE_MERGES = 5_000  # and here: each merge keeps ~10 KB of detail, and a class steps through far fewer


@dataclass(frozen=True)
class Source:
    label: str
    text: str = ""
    pattern: str = "gpt2"
    merges: int = 20
    specials: str = "<|endoftext|>"
    note: str = ""


SOURCES: dict[str, Source] = {
    "textbook": Source(
        "low / lower / widest / newest (textbook)",
        "low low low low low lower lower widest widest widest newest newest newest newest newest newest",
        pattern="whitespace",
        merges=12,
        note="The Sennrich et al. example: watch 's t' win a tie against 'e s'.",
    ),
    "wikipedia": Source(
        "aaabdaaabac (Wikipedia)",
        "aaabdaaabac",
        pattern="none",
        merges=5,
        note="One sequence, no pre-tokenizer: 'aa' first, then 'ab', then the new tokens merge.",
    ),
    "ties": Source(
        "aaaa abab baba (ties, overlaps)",
        "aaaa aaa aa abab abab baba baba ab ba a b",
        pattern="whitespace",
        merges=8,
        note="'aaaa' holds three overlapping 'a a' pairs but merges into two tokens; ties are everywhere.",
    ),
    "stdlib": Source(
        "Python's own docs (stdlib docstrings, 2 MB)",
        pattern="gpt2",
        merges=1000,
        note="Docstrings and comments of the Python standard library on this machine: real text, no download.",
    ),
    "paste": Source("Paste your own text", pattern="gpt2", merges=50),
    "upload": Source("Upload a text file", pattern="gpt2", merges=200),
}


@dataclass(frozen=True)
class Corpus:
    name: str
    data: bytes
    digest: str


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@st.cache_resource(show_spinner="Collecting the standard library's docstrings…")
def stdlib_bytes() -> bytes:
    return stdlib_prose(STDLIB_BYTES).encode("utf-8")


@st.cache_resource(show_spinner="Collecting held-out docstrings…")
def stdlib_held_out() -> bytes:
    """The documents that follow the training slice in the same prose: text the tokenizer never saw."""
    more = stdlib_prose(STDLIB_BYTES + HELD_OUT_BYTES).encode("utf-8")
    return more[len(stdlib_bytes()) + len(SEPARATOR) :]


def check_text(name: str, data: bytes) -> str | None:
    """A sentence saying why data is not a usable corpus, or None."""
    if not data.strip():
        return f"{name} is empty: paste or upload some text to train on."
    if len(data) > MAX_UPLOAD_BYTES:
        return (
            f"{name} is {len(data) / 1e6:.1f} MB; the app takes up to {MAX_UPLOAD_BYTES / 1e6:.0f} MB. "
            "Train on bigger files with the CLI: python -m bpe train FILE …"
        )
    head = data[: 1 << 16]
    if b"\x00" in head or head.decode("utf-8", "replace").count("\ufffd") > len(head) * 3 // 10:
        return f"{name} looks like a binary file, not text (it has NUL bytes or is mostly invalid UTF-8)."
    return None


# ---------------------------------------------------------------------------
# cached work, shared between sessions (inputs are never mutated)


@st.cache_resource(max_entries=16, show_spinner="Pre-tokenizing…")
def pretokenized(key: str, pattern: str, specials: tuple[str, ...], keep_sequence: bool, _data: bytes) -> PreTokens:
    return pretokenize(_data, pattern=pattern, special_tokens=specials, keep_sequence=keep_sequence)


def pretokenized_for(settings, keep_sequence: bool = False) -> PreTokens:
    """pretokenized() for the sidebar's settings (a ui.sidebar.Settings)."""
    return pretokenized(settings.key, settings.pattern, settings.specials, keep_sequence, settings.corpus.data)


@dataclass(frozen=True)
class Trace:
    """Every merge of one run, with detail, as the step-through page replays it."""

    events: tuple[MergeEvent, ...]
    stop_reason: str
    seconds: float
    unique_words: int


@st.cache_resource(max_entries=8, show_spinner="Training with the instrumented trainer…")
def trace(key: str, pattern: str, specials: tuple[str, ...], num_merges: int, algorithm: str, _corpus: PreTokens) -> Trace:
    start = time.perf_counter()
    trainer, events = steps(_corpus, min(num_merges, TRACE_MERGES), algorithm=algorithm, detail=True)
    kept = []
    for event in events:
        kept.append(event)
        if time.perf_counter() - start > TRACE_SECONDS:
            trainer.stop_reason = f"time budget ({TRACE_SECONDS:.0f} s)"
            break
    reason = trainer.stop_reason
    if reason == "vocab_size" and num_merges > TRACE_MERGES:
        reason = f"the step-through shows the first {TRACE_MERGES:,} merges"
    return Trace(tuple(kept), reason, time.perf_counter() - start, len(_corpus.counts))


@st.cache_resource(max_entries=8, show_spinner="Training once, with no threshold…")
def trained(key: str, pattern: str, specials: tuple[str, ...], num_merges: int, _corpus: PreTokens) -> Training:
    """Every merge up to the vocab size with min_pair_frequency=1, no detail (heap: all four give the same merges)."""
    return train(_corpus, num_merges, algorithm="heap", special_tokens=specials)


@st.cache_resource(max_entries=8)
def tokenizer(key: str, pattern: str, specials: tuple[str, ...], num_merges: int, _training: Training) -> Tokenizer:
    return Tokenizer.from_training(_training, pattern)


# ---------------------------------------------------------------------------
# what the pages ask for: one call each, on the sidebar's settings


def trace_for(settings) -> Trace:
    """The step-through trace (every merge with detail) for a ui.sidebar.Settings, built once and shared."""
    corpus = pretokenized_for(settings, keep_sequence=settings.algorithm == "positions")
    return trace(settings.key, settings.pattern, settings.specials, settings.num_merges, settings.algorithm, corpus)


def trained_for(settings) -> Training:
    """The run with no threshold and no detail for a ui.sidebar.Settings, built once and shared."""
    return trained(settings.key, settings.pattern, settings.specials, settings.num_merges, pretokenized_for(settings))


def tokenizer_for(settings) -> Tokenizer:
    """The tokenizer trained_for(settings) made, with each merge's count."""
    return tokenizer(settings.key, settings.pattern, settings.specials, settings.num_merges, trained_for(settings))
