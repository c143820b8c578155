"""The step page for a SentencePiece run (the sidebar's family): one merge at a time, as pages/step.py does for byte-level runs.

The run is built once per corpus and spec in the worker pool (ui.runs.sp_trace_for, serve/sp_jobs.py) and shared
by every session; each merge's views are built on first use and kept per trace (a class clicking Next on the same
merge costs one build). Next / Previous (← →), the slider and Play move this session's merge only, with the same
controls and session keys as the byte-level page (ui/play.py): `step` is the merge shown, whichever family.

    page(settings)   # pages/step.py calls it when settings.family is SentencePiece, and stops

Not here: the views' HTML (ui/views/sp_step.py), the trainer (bpe/sentencepiece/trainer.py).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import streamlit as st

from serve.jobs import RunKey
from serve.sp_jobs import SpTrace
from ui import link, runs, state
from ui.play import Player, controls, pressed
from ui.render import Html
from ui.step_data import MERGES_KEPT, TRACES_KEPT, Shelf
from ui.views import sp_step as views


@dataclass(frozen=True, eq=False)
class TraceViews:
    """One trace's merge views, built on first use and shared by every session."""

    trace: SpTrace
    merges: Shelf = field(default_factory=lambda: Shelf(MERGES_KEPT))

    def merge(self, k: int) -> views.MergeView:
        return self.merges.get(k, lambda: views.merge_view(self.trace, k))


_traces = Shelf(TRACES_KEPT)


def trace_views(key: RunKey, trace: SpTrace) -> TraceViews:
    """The views of this trace, found by a short id (its key and length): a dictionary lookup per click."""
    trace_id = hashlib.blake2b(f"{key!r} {len(trace.events)}".encode(), digest_size=16).hexdigest()
    return _traces.get(trace_id, lambda: TraceViews(trace))


def page(settings) -> None:
    """Draw the step page for the sidebar's SentencePiece run."""
    presenter = st.session_state["presenter"]
    key = RunKey("sp-trace", settings.key, settings.sentencepiece)
    building = st.empty()
    if st.session_state["trace_seen"] != key:
        building.info(
            f"Building the step-through trace: training SentencePiece with detail on {len(settings.corpus.data) / 1e6:,.1f} MB, "
            f"once for the whole class (up to {runs.TRACE_SECONDS:.0f} s)."
        )
    trace = runs.sp_trace_for(settings)
    building.empty()
    st.session_state["trace_seen"] = key
    n = len(trace.events)
    if not presenter:
        st.title("Step through SentencePiece training")
    if n == 0:
        st.info(
            f"This run makes no merge: the vocab size {settings.sentencepiece.vocab_size:,} holds only the meta pieces and the "
            f"{len(trace.characters.kept):,} characters the coverage keeps. Raise the vocab size to see merges."
        )
        st.html(Html(views.characters_panel(trace, 0)))
        st.stop()
    stopped = views.stop_sentence(trace)
    if stopped:
        st.info(stopped)
    if trace.problem:  # sentencepiece itself would refuse this run (hard_vocab_limit): said, and its pieces shown all the same
        st.info(f"{trace.problem} Below, the merges it can make.")
    whole = trace_views(key, trace)
    player = Player("", "step", n)  # the same clock and keys as the byte-level page

    def clicked() -> bool:
        """Previous or Next was clicked, or an arrow pressed, in this message (pages/step.py says why it matters)."""
        return bool(st.session_state.get("previous") or st.session_state.get("next") or pressed("")[1])

    timer = player.timer
    if timer[0]:
        player.restart()

    @st.fragment(run_every=1 / timer[1] if timer[0] else None)
    def stepper() -> None:
        k = player.tick()

        def where(row) -> None:
            if st.session_state["playing"]:
                row.progress(k / n, text=f"merge {k:,} of {n:,}")
            elif n > 1:
                state.widget(
                    row.slider, "Jump to merge", 1, n, key="step", on_change=player.restart, stale=clicked, label_visibility="collapsed"
                )

        controls(
            "",
            "merge",
            first=k <= 1,
            last=k >= n,
            go=player.go,
            set_playing=player.set_playing,
            on_speed=player.changed_speed,
            between=where,
        )
        view = whole.merge(k)
        st.html(Html(view.top))
        st.html(Html(view.characters))
        link.show(k)
        if player.timer != timer:
            st.rerun()

    with st.container(key="sp_step_page"):
        stepper()
    if not presenter:
        chars = trace.characters
        st.caption(
            f"Trace: {n:,} merges by SentencePiece's BPE trainer (bpe/sentencepiece/trainer.py, exact to sentencepiece 0.2.3) "
            f"over {chars.words:,} distinct words of {chars.lines:,} lines, computed once in {trace.seconds:.2f} s and shared by every "
            "session; stepping replays it. Keys: ← and → step; a link to this page opens this run at this merge."
        )
