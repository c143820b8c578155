"""The algorithm race: the trainers (the heap compiled too) on the same input, timed, compared, and scaled up.

Every run happens in the server's worker pool; this page asks for runs, stops
them, and draws what they report. Leaving the page, any click, or Streamlit's
own stop leaves a run going: only Stop (or closing the tab) ends it.
"""

import os

import streamlit as st

from bpe import ALGORITHMS
from bpe.lab import references as refs
from ui import corpus as corpora
from ui import state, work
from ui.corpus import SENTENCEPIECE
from ui.views import race as race_views
from ui.views import sp_race as sp_race_views

settings = st.session_state["settings"]
running = {purpose: work.settle(purpose, purpose) for purpose in ("race", "sweep", "speedup", "sp_race")}
sentencepiece = not isinstance(settings, str) and settings.family == SENTENCEPIECE

st.title("Algorithm race")
if sentencepiece:
    st.caption(sp_race_views.ABOUT)
else:
    st.caption(
        f"{', '.join(list(ALGORITHMS)[:-1])} and {list(ALGORITHMS)[-1]} train on the same pre-tokenized corpus in a worker process, "
        "taking turns, each on its own clock with detail off. The numbers come from the same code as `python benchmarks/race.py`."
    )


# ---- the race ---------------------------------------------------------------
def race_section() -> None:
    """The byte-level run's race: the four trainers (and the heap compiled), and the Rust references."""
    c1, c2, c3, c4 = st.columns([2, 2, 1.3, 1], vertical_alignment="bottom")
    state.widget(c1.number_input, "Time budget per algorithm (s)", min_value=1.0, max_value=60.0, step=1.0, key="race_budget")
    state.widget(
        c2.toggle,
        "HuggingFace & rustbpe",
        key="race_hf",
        disabled=not (refs.hf_available() or refs.rustbpe_available()),
        help="Also train HuggingFace tokenizers' and karpathy's rustbpe's Rust BPE on the same text (when installed; needs the "
        "gpt2 pre-tokenizer), and check that ours makes their merges under each tool's own tie-break rule.",
    )
    running["race"], record = work.section(
        "race",
        running["race"],
        c3,
        c4,
        "Start the race",
        lambda: race_views.start_race(settings, st.session_state["race_budget"], st.session_state["race_hf"]),
        disabled=isinstance(settings, str),
        stop_help="Stops the run; what it has done so far is kept.",
    )
    if isinstance(settings, str):
        st.error(settings)
    if running["race"]:
        work.follow(work.watched("race"), race_views.live_race)
    elif record is None:
        st.info(
            f"Press **Start the race** to train every algorithm on the sidebar's corpus. Each may run for {st.session_state['race_budget']:g} s."
        )
    else:
        race_views.replay_note(record, st.session_state["race_asked"], settings)
        race_views.race_chart(record)
        if record.status == "stopped":
            st.warning("This race was stopped; below is what it had done by then.")
        if not isinstance(settings, str) and record.key != race_views.race_key(settings):
            st.caption("These results are from earlier settings: press Start the race to race on the sidebar's current ones.")
        race_views.verdict(record)
        race_views.references(record)

        st.subheader("Where the time goes")
        race_views.phase_table(record)
        st.caption(
            f"{record.n_bytes:,} bytes, pre-tokenized once for everyone (keeping the sequence positions walks). "
            f"Time budget {record.budget_s:g} s each, initial count included. Measuring costs "
            f"{record.clock_overhead_s * 1e6:.2f} µs per merge (one clock reading); reports to this page happen with every clock stopped."
        )
        for note in race_views.interpreter_notes(record):
            st.info(note)
        race_views.work_table(record)

    st.subheader("What a merge costs")
    race_views.complexity_table(record if not running["race"] else None)
    st.caption(
        "naive recounts every pair of every word before each merge; positions and parent_set scan every distinct pair to find "
        "the best, but rewrite only where the pair occurs; heap rewrites only the words its index lists and finds the best by "
        "popping the heap, skipping a few stale entries; heap_c is heap compiled to C, the same steps without the interpreter. "
        "The names are the work counters above."
    )


if sentencepiece:  # the sidebar's SentencePiece run: ours and sentencepiece itself, to the same pieces
    st.header("SentencePiece: ours and sentencepiece itself")
    sp_race_views.section(settings, running["sp_race"])
else:
    race_section()

# ---- scaling ----------------------------------------------------------------
st.header("Scaling")
s1, s2, s3, s4, s5 = st.columns([2.2, 1.3, 1.5, 1.3, 1], vertical_alignment="bottom")
SWEEP_SOURCES = {"stdlib": "stdlib prose (built in)", "current": "sidebar's corpus"}
state.widget(s1.radio, "Corpus", list(SWEEP_SOURCES), horizontal=True, format_func=SWEEP_SOURCES.get, key="sweep_source")
state.widget(s2.number_input, "Merges", 10, 5000, step=50, key="sweep_merges")
state.widget(s3.number_input, "Budget per size (s)", 1.0, 30.0, step=1.0, key="sweep_budget")
running["sweep"], sweep = work.section(
    "sweep",
    running["sweep"],
    s4,
    s5,
    "Run the sweep",
    lambda: race_views.start_sweep(
        st.session_state["sweep_source"], settings, st.session_state["sweep_merges"], st.session_state["sweep_budget"]
    ),
)
if running["sweep"]:
    work.follow(work.watched("sweep"), race_views.live_sweep)
elif sweep is None or not sweep.points:
    st.info("Run the sweep to time every trainer on six sizes of a corpus, from 50 KB up, on log-log axes.")
else:
    st.altair_chart(race_views.size_chart(sweep), width="stretch")
    if sweep.status == "stopped":
        st.warning("This sweep was stopped; below is what it had done by then.")
    st.altair_chart(race_views.merges_chart(sweep), width="stretch")
    race_views.sweep_table(sweep)
    st.caption(
        f"{sweep.source_label}, {sweep.num_merges:,} merges, budget {sweep.budget_s:g} s per trainer and size. "
        "On log-log axes a slope of 1 means time grows in proportion to the corpus; the legend gives each trainer's fitted "
        "slope over its uncut points. A trainer cut off at one size is not run at larger ones."
    )

# ---- parallel pre-tokenization ------------------------------------------------
st.header("Parallel pre-tokenization")
p1, p2, _ = st.columns([1.6, 1, 4], vertical_alignment="bottom")
running["speedup"], speedup = work.section("speedup", running["speedup"], p1, p2, "Time 1…N workers", race_views.start_speedup)
if running["speedup"]:
    work.follow(work.watched("speedup"), race_views.live_speedup)
elif speedup is None or not speedup.points:
    size = race_views.megabytes(race_views.speedup_bytes(corpora.stdlib_bytes()))
    st.info(f"Pre-tokenizes {size} (the stdlib prose, repeated) with 1 to {os.cpu_count()} worker processes.")
else:
    st.altair_chart(race_views.speedup_chart(speedup), width="stretch")
    if speedup.status == "stopped":
        st.warning("This timing was stopped; below are the worker counts it had finished.")
    note = race_views.speedup_note(speedup, os.cpu_count() or 1)
    if note:
        st.info(note)
    st.caption(
        f"Chunks of the file are counted in worker processes and the counts added up; start-up of the pool is included. "
        f"Every run found the same {speedup.points[0].unique:,} unique pre-tokens. This machine has {os.cpu_count()} cores; "
        f"load average {speedup.load:.1f} when the timing started."
    )
