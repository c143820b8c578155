"""Every session-state key the app uses, with its default, declared in one place."""

from __future__ import annotations

import streamlit as st

DEFAULTS: dict[str, object] = {
    "source": "textbook",  # a key of ui.corpus.SOURCES
    "pasted": "",
    "pattern": "whitespace",
    "specials": "<|endoftext|>",
    "vocab_size": 256 + 12 + 1,
    "algorithm": "heap",
    "step": 1,  # the merge shown on the step-through page, 1-based
    "playing": False,
    "speed": 1.0,  # seconds per merge while playing
    "sample": "",
    "race": None,  # the last race's results, kept per session: ui.race_views.RaceRecord
    "race_budget": 10.0,  # seconds each algorithm may run in the race (initial count included)
    "race_hf": True,  # add HuggingFace tokenizers as a reference when it is installed
    "sweep": None,  # the last scaling sweep: ui.race_views.SweepRecord
    "sweep_source": "stdlib",  # "stdlib" (built-in prose) or "current" (the sidebar's corpus)
    "sweep_merges": 300,
    "sweep_budget": 5.0,  # seconds per algorithm per corpus size
    "speedup": None,  # the last parallel pre-tokenization timing: ui.race_views.SpeedupRecord
    "threshold": 1,
    "settings": None,  # written by the sidebar on every run: ui.sidebar.Settings, or a sentence saying what to fix
}


def init() -> None:
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
