"""The vocabulary as a whole: every token of the sidebar's run (or of GPT-2, GPT-4, GPT-4o), how long, how often used, which never are.

The run and its held-out text are the shared, cached work of the threshold page (built once in the
worker pool); a real tokenizer is loaded once per server (ui/real.py). The rows are made once per
vocabulary and shared by every session; searching and sorting only filter them.
"""

import streamlit as st

from ui import corpus as corpora
from ui import real, runs, sidebar, state
from ui.views import threshold as threshold_views
from ui.views import vocabulary as vocabulary_views

CHOICES = {"run": "the sidebar's run", **{key: f"{e.label} ({e.name})" for key, e in real.ENCODINGS.items()}}

st.title("Vocabulary")
settings = sidebar.current()
of = state.widget(st.radio, "Vocabulary of", list(CHOICES), format_func=CHOICES.get, horizontal=True, key="vocab_of")
curve = None
if of == "run":
    tok = runs.tokenizer_for(settings)
    which, label, test_data = threshold_views.held_out(st.session_state["source"], settings.corpus.data)
    test, _ = runs.replays_for(settings, which, test_data)  # encoded once with every merge, in the worker pool
    run_key = (settings.key, runs.training_spec(settings.spec), settings.num_merges, which)  # the run and the text its uses are counted on
    rows = vocabulary_views.rows_for(run_key, len(tok.merges), tok, test)
    curve = vocabulary_views.curve_for(run_key, len(settings.special_tokens), test)
    used_on = "the held-out text" if which == "held-out" else "the training text"
    about = f"the sidebar's run ({len(tok.merges):,} merges, ties by the {settings.tie_break} rule)"
    links = settings
else:
    found = real.get(of)
    if found.tokenizer is None:
        st.info(found.error)
        st.stop()
    tok, data = found.tokenizer, corpora.stdlib_held_out()
    run_key = (of, len(tok.vocab), "stdlib-held-out")
    files = vocabulary_views.real_files(found)
    if files is None:
        st.info(f"{found.label}'s files are not on this machine's disk, so their vocabulary cannot be counted here.")
        st.stop()
    rows = vocabulary_views.real_rows(of, files, data)
    label = f"{len(data) / 1e3:,.0f} KB of the standard library's docstrings"
    used_on = "held-out Python docstrings"
    about = (
        f"{found.label}'s tokenizer ({found.encoding.name}, {len(tok.merges):,} merges; the counts it was trained with are not published)"
    )
    links = None
frequencies, slope = vocabulary_views.zipf_of(run_key, rows)
st.caption(f"The {len(rows):,} tokens of {about}. Uses are counted on {label}.")
vocabulary_views.metrics(run_key, rows, slope, used_on)

st.subheader("Every token")
c1, c2 = st.columns([2, 3])
query = state.widget(c1.text_input, "Find tokens containing", key="vocab_query")
sort = state.widget(
    c2.radio,
    "Sort by",
    list(vocabulary_views.SORTS),
    format_func=lambda key: vocabulary_views.SORTS[key][0],
    horizontal=True,
    key="vocab_sort",
)
vocabulary_views.token_table(
    vocabulary_views.matching(run_key, rows, query, sort),
    len(rows),
    query,
    links,
    used_on,
    vocabulary_views.made_and_unused(run_key, rows)[1],
)

c1, c2 = st.columns(2)
with c1:
    st.subheader("Zipf: a few tokens do most of the work")
    vocabulary_views.zipf_chart(frequencies, slope, used_on)
with c2:
    st.subheader("How long the merged tokens are")
    vocabulary_views.length_chart(rows)
if curve is not None:
    st.subheader("Compression against vocabulary size")
    vocabulary_views.compression_chart(curve, label)

st.subheader("Made, but never used")
at_most = state.widget(
    st.columns([1, 2])[0].select_slider,
    "Used at most (times)",
    vocabulary_views.RARELY,
    key="vocab_at_most",
    help="0: the tokens never used; more: the ones almost never used too.",
)
vocabulary_views.unused_table(run_key, rows, used_on, at_most)
st.markdown(vocabulary_views.GLITCH)
