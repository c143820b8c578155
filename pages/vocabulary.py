"""The vocabulary as a whole: every token the sidebar's run made, how long, how often used, and which never are.

The run and its held-out text are the shared, cached work of the threshold page (built once in the
worker pool); the rows are made from them once per run. Searching and sorting only filter those rows.
"""

import streamlit as st

from bpe.vocabulary import zipf, zipf_slope
from ui import runs, sidebar, state
from ui import threshold_views as held
from ui import vocabulary_views as views

st.title("Vocabulary")
settings = sidebar.current()
tok = runs.tokenizer_for(settings)
n = len(tok.merges)
which, label, test_data = held.held_out(st.session_state["source"], settings.corpus.data)
test, _ = runs.replays_for(settings, which, test_data)  # encoded once with every merge, in the worker pool
run_key = (settings.key, runs.training_spec(settings.spec), settings.num_merges, which)  # the run and the text its uses are counted on
rows = views.rows_for(run_key, n, tok, test)
frequencies = zipf({r.token: r.uses for r in rows})
slope = zipf_slope(frequencies)
st.caption(
    f"The {len(rows):,} tokens of the sidebar's run ({n:,} merges, ties by the {settings.tie_break} rule). Uses are counted on {label}."
)
used_on = "the held-out text" if which == "held-out" else "the training text"
views.metrics(rows, slope, used_on)

st.subheader("Every token")
c1, c2 = st.columns([2, 3])
query = c1.text_input("Find tokens containing", key=state.widget("vocab_query"), on_change=state.save, args=("vocab_query",))
sort = c2.radio(
    "Sort by",
    list(views.SORTS),
    format_func=lambda key: views.SORTS[key][0],
    horizontal=True,
    key=state.widget("vocab_sort"),
    on_change=state.save,
    args=("vocab_sort",),
)
views.token_table(views.matching(rows, query, sort), len(rows), query, settings)

c1, c2 = st.columns(2)
with c1:
    st.subheader("Zipf: a few tokens do most of the work")
    views.zipf_chart(frequencies, slope, used_on)
with c2:
    st.subheader("How long the merged tokens are")
    views.length_chart(rows)
st.subheader("Compression against vocabulary size")
views.compression_chart(views.curve_for(run_key, len(settings.specials), test), label)

st.subheader("Made, but never used")
views.unused_table(rows, used_on)
st.markdown(views.GLITCH)
