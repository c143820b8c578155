"""The shared sidebar: what to train on and how. Returns the settings, or why they are unusable."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from bpe import ALGORITHMS, PATTERNS
from bpe.train import check_settings

from . import corpus as corpora

PATTERN_HELP = {
    "gpt2": "GPT-2's regex: words with their leading space, numbers, punctuation, whitespace.",
    "gpt4": "GPT-4's (cl100k) regex: numbers in threes, newlines kept apart.",
    "whitespace": "Split on whitespace and drop it (the textbook examples).",
    "none": "No pre-tokenizer: each document is one sequence.",
}


@dataclass(frozen=True)
class Settings:
    corpus: corpora.Corpus
    pattern: str
    specials: tuple[str, ...]
    num_merges: int
    algorithm: str

    @property
    def key(self) -> str:
        return self.corpus.digest


def _apply_preset() -> None:
    """Choosing a preset also chooses the settings it was made for."""
    source = corpora.SOURCES[st.session_state["source"]]
    st.session_state["pattern"] = source.pattern
    st.session_state["vocab_size"] = 256 + source.merges + (1 if source.specials else 0)
    st.session_state["specials"] = source.specials
    st.session_state["step"] = 1


def parse_specials(text: str) -> tuple[str, ...]:
    """'<|endoftext|>, <pad>' -> ('<|endoftext|>', '<pad>')."""
    return tuple(t.strip() for t in text.split(",") if t.strip())


def current() -> Settings:
    """The settings the sidebar made this run; when they are unusable, say why and stop the page."""
    settings = st.session_state["settings"]
    if isinstance(settings, str):
        st.error(settings)
        st.stop()
    return settings


def render() -> Settings | str:
    """Draw the sidebar; return the settings, or a sentence saying what to fix."""
    with st.sidebar:
        st.header("Training run")
        key = st.selectbox(
            "Corpus", list(corpora.SOURCES), format_func=lambda k: corpora.SOURCES[k].label, key="source", on_change=_apply_preset
        )
        source = corpora.SOURCES[key]
        if source.note:
            st.caption(source.note)
        problem = None
        if key == "paste":
            st.text_area("Text", key="pasted", height=150, placeholder="Paste any text…")
            data = st.session_state["pasted"].encode("utf-8", "surrogateescape")
            problem = corpora.check_text("The pasted text", data)
        elif key == "upload":
            upload = st.file_uploader("Text file", type=None, help=f"Up to {corpora.MAX_UPLOAD_BYTES / 1e6:.0f} MB of text")
            if upload is None:
                data, problem = b"", "Upload a text file to train on (or pick a preset corpus)."
            else:
                data = upload.getvalue()
                problem = corpora.check_text(upload.name, data)
        elif key == "stdlib":
            data = corpora.stdlib_bytes()
        else:
            data = source.text.encode("utf-8")

        st.selectbox("Pre-tokenizer", list(PATTERNS), key="pattern", help="\n\n".join(f"**{k}**: {v}" for k, v in PATTERN_HELP.items()))
        st.text_input("Special tokens (comma-separated)", key="specials", help="Never merged; the corpus is cut at them.")
        st.number_input(
            "Vocab size", key="vocab_size", min_value=0, max_value=1_000_000, step=1, help="256 bytes + merges + special tokens"
        )
        st.selectbox("Algorithm", list(ALGORITHMS), key="algorithm", format_func=lambda a: f"{a} — {ALGORITHMS[a].summary}")

        specials = parse_specials(st.session_state["specials"])
        try:
            num_merges = check_settings(int(st.session_state["vocab_size"]), specials, st.session_state["algorithm"], 1)
        except ValueError as e:
            return str(e)
        st.caption(f"{st.session_state['vocab_size']:,} = 256 bytes + {num_merges:,} merges + {len(specials)} special")
    if problem:
        return problem
    return Settings(
        corpus=corpora.Corpus(source.label, data, corpora.digest(data)),
        pattern=st.session_state["pattern"],
        specials=specials,
        num_merges=num_merges,
        algorithm=st.session_state["algorithm"],
    )
