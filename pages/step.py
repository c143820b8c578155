"""Step through training one merge at a time, replaying the instrumented trainer's trace.

A click is cheap: the trace is built once per corpus and settings, each merge's
views and its sentence once per (trace, merge), and all are shared by every
session; a click looks them up (one cache call, ui/step_data.py) and sends a few
HTML elements and one chart whose spec does not change. Play advances by the clock (merge = where it started + elapsed time ×
speed, ui/play.py), so "4 merge/s" is 4 merges a second however long a run takes.
"""

import streamlit as st

from bpe import ALGORITHMS
from bpe.events import StopReason, stop_sentence
from serve.jobs import RunKey
from ui import link, runs, sidebar, sp_step, state, step_data
from ui.corpus import SENTENCEPIECE
from ui.play import Player, play, pressed, steps
from ui.render import Html
from ui.views import step as step_views

settings = sidebar.current()
if settings.family == SENTENCEPIECE:  # the other family's run has views of its own: ui/sp_step.py
    sp_step.page(settings)
    st.stop()
presenter = st.session_state["presenter"]
trace_key = RunKey("trace", settings.key, settings.spec, settings.num_merges)


def building_message() -> str:
    """What happens while a new trace is built, and what to pick instead of waiting."""
    mb = len(settings.corpus.data) / 1e6
    message = (
        f"Building the step-through trace: training **{settings.algorithm}** with full detail for "
        f"{settings.num_merges:,} merges on {mb:,.1f} MB, once for the whole class (up to {runs.TRACE_SECONDS:.0f} s)."
    )
    if ALGORITHMS[settings.algorithm].slow:
        message += (
            f" {settings.algorithm} does more work per merge than heap and may stop at the time limit; "
            "**heap** makes the same merges, all of them, in seconds."
        )
    return message


building = st.empty()
if st.session_state["trace_seen"] != trace_key:
    building.info(building_message())
trace = runs.trace_for(settings)
building.empty()
st.session_state["trace_seen"] = trace_key
events = trace.events
n = len(events)
trace_id = step_data.trace_id(trace_key, n)  # what a click's one cache lookup hashes

if not presenter:  # a projector's first screen is for the merge
    st.title("Step through BPE training")
stopped = stop_sentence(
    trace.stop_reason, n, vocab_size=256 + settings.num_merges + len(settings.special_tokens), n_special=len(settings.special_tokens)
)
if n == 0:
    st.info(stopped)
    st.stop()
if trace.stop_reason != StopReason.VOCAB_SIZE:
    hint = ""
    if trace.stop_reason.startswith(StopReason.TIME_BUDGET) and ALGORITHMS[settings.algorithm].slow:
        hint = f" Pick heap in the sidebar to see all {settings.num_merges:,}: it makes the same merges, much faster."
    st.info(stopped + hint)


# ---------------------------------------------------------------------------
# moving through the merges


def corpus_sample(data: bytes) -> bytes:
    """The first line or so of the corpus, cut at a space: bytes as they are, never decoded and re-encoded."""
    if len(data) <= 160:
        return data
    head = data[:200]
    cut = head.rfind(b" ", 60, 160)
    return head[:cut] if cut > 0 else head[:160]


player = Player("", "step", n)  # Play's clock in this session: playing, speed, play_from, the merge shown at "step"


def clicked() -> bool:
    """Previous or Next was clicked, or an arrow key pressed, in the message being handled.

    subtle: a click right after a step can reach the server before the browser has taken the merge that step
    gave the slider, so the slider's old value comes along and would read as a jump (Next from 3 showed 2).
    """
    return bool(st.session_state.get("previous") or st.session_state.get("next") or pressed("")[1])


timer = player.timer  # what the fragment's timer is set up for
if timer[0]:
    player.restart()  # a whole-page run (back from another page, say) goes on from the merge shown, not from the time away


@st.fragment(run_every=1 / timer[1] if timer[0] else None)
def stepper() -> None:
    """What a Next click redraws: the buttons and slider that move the merge, and merge k's views.

    Laid out by one CSS grid with what is drawn outside (ui/style.py, .st-key-step_page), not st.columns: each
    column is a message and a block to build on every click. Play, the speed and the sentence box are drawn
    outside this fragment, so a click does not send them again (a change to one reruns the whole page).
    """
    k = player.tick()

    def where(row) -> None:
        if st.session_state["playing"]:
            # subtle: not the slider while the clock moves the merge: the browser can send the slider's
            # old value back in the same moment, which would read as a jump and restart the clock
            row.progress(k / n, text=f"merge {k:,} of {n:,}")
        elif n > 1:
            state.widget(
                row.slider, "Jump to merge", 1, n, key="step", on_change=player.restart, stale=clicked, label_visibility="collapsed"
            )

    row = st.container(horizontal=True, vertical_alignment="center", gap="medium", key="step_controls")
    steps(row, "", first=k <= 1, last=k >= n, go=player.go, between=where)
    whole = step_data.trace_views(trace_id, trace_key, events)
    view = whole.merge(k)
    st.html(Html(view.top))
    # its lines lit for this merge; sent only while open (a Next click sends no code to a class that has it folded)
    code = st.expander("The code that made this merge, from the library's own source", key="step_code", on_change="rerun")
    if code.open:
        code.html(Html(view.code))
    data = st.session_state["sample"].encode("utf-8", "surrogateescape") or corpus_sample(settings.corpus.data)
    st.html(Html(whole.sentence(k, data)))  # built once per (trace, merge, sentence), shared by the class
    st.html(Html(view.words))
    if not presenter:
        with st.container(key="step_counts"):  # the pair-count changes beside the winning-count chart
            st.html(Html(view.changes))
            st.html(Html(f"<h3>{whole.counts_heading}</h3>"))
            step_views.counts_chart(whole.spec, whole.counts, view.now)

    link.show(k)
    if player.timer != timer:  # the clock stopped at the last merge (Play, Pause and a new speed rerun the whole page)
        st.rerun()  # the whole page, so that the fragment's timer stops


with st.container(key="step_page"):
    with st.container(horizontal=True, vertical_alignment="center", gap="medium", key="step_play"):
        play(st, "", "merge", set_playing=player.set_playing, on_speed=player.changed_speed)
    with st.container(key="step_sample"):
        state.widget(st.text_input, "Your own sentence", key="sample", placeholder="Type a sentence to tokenize it above, at this merge")
    stepper()
if not presenter:
    st.caption(
        f"Trace: {n:,} merges by `{settings.algorithm}` (ties: the {settings.tie_break} rule) over {trace.unique_words:,} unique pre-tokens, "
        f"computed once in {trace.seconds:.2f} s and shared by every session; stepping replays it. "
        "Keys: ← and → step; a link to this page opens this corpus at this merge."
    )
