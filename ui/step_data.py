"""What the step page builds once and shares between sessions: per trace, and per (trace, merge).

A class steps through the same trace, so the first click on merge k builds its
views (ui.views.merge_view) and every later click on it, from any session, is
a cache lookup. Keys are small: the trace's RunKey (corpus digest, TrainSpec,
merges asked for), the trace's length n
(a time limit can end a trace early) and k. The trace itself is passed
unhashed (the leading underscore), as ui.corpus does.

Defined here, once, rather than in the page: a cached function defined in a
page script is wrapped again on every run, which costs more than the lookup.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from bpe.events import MergeEvent
from bpe.tokenizer import Tokenizer

from . import views
from .jobs import RunKey


@dataclass(frozen=True)
class TraceViews:
    """What the page draws from the whole trace: the sentence's tokenizer and the winning-count chart."""

    tokenizer: Tokenizer
    spec: dict
    counts: bytes  # every merge's winning count, as Arrow


@st.cache_resource(max_entries=8, show_spinner=False)
def trace_views(trace_key: RunKey, n: int, _events: tuple[MergeEvent, ...]) -> TraceViews:
    """Built once per trace."""
    pattern, specials = trace_key.spec.pretokenizer, trace_key.spec.special_tokens
    counts = [e.count for e in _events]
    return TraceViews(
        tokenizer=Tokenizer.from_merges([(e.left, e.right) for e in _events], specials, pattern),
        spec=views.counts_spec(counts),
        counts=views.arrow({"merge": list(range(1, n + 1)), "count": counts}),
    )


@st.cache_resource(max_entries=3000, show_spinner=False)
def merge_view(trace_key: RunKey, n: int, k: int, _events: tuple[MergeEvent, ...]) -> views.MergeView:
    """Merge k's views (1-based), built once per (trace, merge) and shared by every session.

    A tied merge's table of what each rule would take needs the merges before it
    (they give the tokens their ids): an O(k) step, done here once, not per click.
    """
    specials, algorithm, tie_break = trace_key.spec.special_tokens, trace_key.spec.algorithm, trace_key.spec.tie_break
    event = _events[k - 1]
    before = [(e.left, e.right) for e in _events[: k - 1]] if event.tie else ()
    return views.merge_view(event, k, n, 256 + k + len(specials), algorithm, tie_break=tie_break, before=before, specials=len(specials))
