"""How a minimum pair frequency cuts training short, answered from one run without retraining."""

import time

import streamlit as st

from bpe.threshold import kept, thresholds
from ui import corpus as corpora
from ui import sidebar, state
from ui import threshold_views as views

st.title("Threshold explorer")
st.caption(
    "A minimum pair frequency *t* stops training when the best pair occurs fewer than *t* times. "
    "Training ran once with no threshold; every *t* is answered from that run."
)

settings = sidebar.current()

training = corpora.trained_for(settings)
events = training.events
n = len(events)
if n == 0:
    st.info("No merges to explore: the corpus has no pair of adjacent tokens to merge.")
    st.stop()
counts = [e.count for e in events]
tok = corpora.tokenizer_for(settings)
which, label, test_data = views.held_out(st.session_state["source"], settings.corpus.data)
same = (settings.key, settings.pattern, settings.specials, settings.num_merges, tok)
test = views.replayed(which, *same, test_data)  # each text encoded once, with every merge
train_text = views.replayed("train", *same, settings.corpus.data)

options = thresholds(counts, views.PRESET_VALUES)
st.session_state["threshold"] = views.snap(st.session_state["threshold"], options)
views.presets(st.session_state["threshold"])
t = st.select_slider(
    "Minimum pair frequency t",
    options=options,
    key=state.widget("threshold"),
    on_change=state.save,
    args=("threshold",),
    format_func=lambda v: f"{v:,}",
    help="The slider stops at each winning count (and at the presets): the values where the answer changes.",
)

start = time.perf_counter()
k = kept(counts, t)  # a binary search over the counts, which never increase
now, full = test.compression(k), test.compression(n)
answer_ms = (time.perf_counter() - start) * 1e3

views.metrics(k, n, 256 + k + len(settings.specials), now, full)
c1, c2 = st.columns(2)
with c1:
    st.subheader("Winning count at each merge")
    views.counts_chart(events, t, k)
with c2:
    st.subheader("Compression after each merge")
    views.compression_chart(test, k, label)

st.subheader("Where the threshold cuts")
views.cut_table(events, k)
if training.stop_reason != "vocab_size":
    st.caption(f"Training itself stopped after {n:,} merges: {training.stop_reason}.")
else:
    st.caption(f"With no threshold, training stopped at the vocab size ({n:,} merges); a threshold can only stop it earlier.")

st.subheader("Pair threshold or token threshold?")
views.pair_vs_token(events, t, k, train_text.usage(k))

st.caption(
    f"Trained once in {sum(training.seconds.values()):.2f} s (heap trainer; all four give the same merges). "
    f"Finding k and its compression for this t took {answer_ms:.2f} ms: no retraining, no re-encoding."
)
