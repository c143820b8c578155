"""The algorithm race: the four trainers on the same input, timed, compared, and scaled up."""

import os
from dataclasses import replace

import streamlit as st

from bpe import race as R
from ui import race_views as views
from ui import state

st.title("Algorithm race")
st.caption(
    "naive, positions, parent_set and heap train on the same pre-tokenized corpus, taking turns, each on its own "
    "clock with detail off. The numbers come from the same code as `python benchmarks/race.py`."
)

settings = st.session_state["settings"]

# a run still marked running was interrupted (a Stop button, or any click, stops the script): keep what it found
for key in ("race", "sweep", "speedup"):
    if st.session_state[key] is not None and st.session_state[key].status == "running":
        st.session_state[key] = replace(st.session_state[key], status="stopped")

# ---- the race ---------------------------------------------------------------
c1, c2, c3, c4 = st.columns([2, 2, 1.3, 1], vertical_alignment="bottom")
c1.number_input(
    "Time budget per algorithm (s)",
    min_value=1.0,
    max_value=60.0,
    step=1.0,
    key=state.widget("race_budget"),
    on_change=state.save,
    args=("race_budget",),
)
c2.toggle(
    "HuggingFace reference",
    key=state.widget("race_hf"),
    on_change=state.save,
    args=("race_hf",),
    disabled=not R.hf_available(),
    help="Also train HuggingFace tokenizers' Rust BPE on the same text (needs the gpt2 pre-tokenizer).",
)
start = c3.button("Start the race", type="primary", key="race_start", disabled=isinstance(settings, str), width="stretch")
c4.button("Stop", key="race_stop", help="Stops the run; what it has done so far is kept.", width="stretch")
progress_slot, chart_slot = st.empty(), st.empty()
if isinstance(settings, str):
    st.error(settings)
elif start:
    views.live_race(settings, st.session_state["race_budget"], st.session_state["race_hf"], progress_slot, chart_slot)

record = st.session_state["race"]
if record is None:
    st.info(f"Press **Start the race** to train all four on the sidebar's corpus. Each may run for {st.session_state['race_budget']:g} s.")
else:
    chart_slot.altair_chart(views.race_chart(record), width="stretch")
    if record.status == "stopped":
        st.warning("This race was stopped; below is what it had done by then.")
    if not isinstance(settings, str) and record.key != views.race_key(settings):
        st.caption("These results are from earlier settings: press Start the race to race on the sidebar's current ones.")
    views.verdict(record)
    views.hf_table(record)

    st.subheader("Where the time goes")
    views.phase_table(record)
    st.caption(
        f"{record.n_bytes:,} bytes, pre-tokenized once for everyone (keeping the sequence positions walks). "
        f"Time budget {record.budget_s:g} s each, initial count included. Measuring costs "
        f"{record.clock_overhead_s * 1e6:.2f} µs per merge (one clock reading); chart redraws happen with every clock stopped."
    )
    views.work_table(record)
    st.caption(
        "Work per merge. naive recounts every pair of every word before each merge; positions and parent_set "
        "scan every distinct pair to find the best, but rewrite only where the pair occurs; heap rewrites only the "
        "words its index lists and finds the best by popping the heap, skipping a few stale entries."
    )

# ---- scaling ----------------------------------------------------------------
st.header("Scaling")
s1, s2, s3, s4, s5 = st.columns([2.2, 1.3, 1.5, 1.3, 1], vertical_alignment="bottom")
SWEEP_SOURCES = {"stdlib": "stdlib prose (built in)", "current": "sidebar's corpus"}
s1.radio(
    "Corpus",
    list(SWEEP_SOURCES),
    horizontal=True,
    format_func=SWEEP_SOURCES.get,
    key=state.widget("sweep_source"),
    on_change=state.save,
    args=("sweep_source",),
)
s2.number_input("Merges", 10, 5000, step=50, key=state.widget("sweep_merges"), on_change=state.save, args=("sweep_merges",))
s3.number_input("Budget per size (s)", 1.0, 30.0, step=1.0, key=state.widget("sweep_budget"), on_change=state.save, args=("sweep_budget",))
sweep_start = s4.button("Run the sweep", type="primary", key="sweep_start", width="stretch")
s5.button("Stop", key="sweep_stop", width="stretch")
sweep_progress, sweep_chart = st.empty(), st.empty()
if sweep_start:
    label, data, pattern, specials = views.sweep_data(st.session_state["sweep_source"], settings)
    merges, budget = st.session_state["sweep_merges"], st.session_state["sweep_budget"]
    views.live_sweep(label, data, pattern, specials, merges, budget, sweep_progress, sweep_chart)
sweep = st.session_state["sweep"]
if sweep is None:
    st.info("Run the sweep to time every trainer on six sizes of a corpus, from 50 KB up, on log-log axes.")
elif sweep.points:
    sweep_chart.altair_chart(views.size_chart(sweep), width="stretch")
    if sweep.status == "stopped":
        st.warning("This sweep was stopped; below is what it had done by then.")
    st.altair_chart(views.merges_chart(sweep), width="stretch")
    views.sweep_table(sweep)
    st.caption(
        f"{sweep.source_label}, {sweep.num_merges:,} merges, budget {sweep.budget_s:g} s per trainer and size. "
        "On log-log axes a slope of 1 means time grows in proportion. A trainer cut off at one size is not run at larger ones."
    )

# ---- parallel pre-tokenization ------------------------------------------------
st.header("Parallel pre-tokenization")
p1, p2, _ = st.columns([1.6, 1, 4], vertical_alignment="bottom")
speed_start = p1.button("Time 1…N workers", type="primary", key="speedup_start", width="stretch")
p2.button("Stop", key="speedup_stop", width="stretch")
speed_progress, speed_chart = st.empty(), st.empty()
if speed_start:
    views.live_speedup(speed_progress, speed_chart)
speedup = st.session_state["speedup"]
if speedup is None:
    st.info(f"Pre-tokenizes about {R.SPEEDUP_BYTES / 1e6:.0f} MB (the stdlib prose, repeated) with 1 to {os.cpu_count()} worker processes.")
elif speedup.points:
    speed_chart.altair_chart(views.speedup_chart(speedup), width="stretch")
    if speedup.status == "stopped":
        st.warning("This timing was stopped; below are the worker counts it had finished.")
    st.caption(
        f"Chunks of the file are counted in worker processes and the counts added up; start-up of the pool is included. "
        f"Every run found the same {speedup.points[0].unique:,} unique pre-tokens. This machine has {os.cpu_count()} cores."
    )
