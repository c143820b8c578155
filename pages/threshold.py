"""How a minimum pair frequency cuts training short, answered from one run without retraining.

The slider and everything that depends on it live in one fragment: a move reruns
only that part of the page, and every number in it is computed from the slider's
value in the same run (each says which t it is for), so none can belong to another t.
"""

import streamlit as st

from bpe.events import StopReason
from bpe.lab.threshold import kept, thresholds
from ui import runs, sidebar
from ui.views import threshold as threshold_views

st.title("Threshold explorer")
settings = sidebar.current()
st.caption(
    "A minimum pair frequency *t* stops training when the best pair occurs fewer than *t* times. "
    f"Training ran once with no threshold, ties broken by the {settings.tie_break} rule; every *t* is answered from that run."
)

training = runs.trained_for(settings)
events = training.events
n = len(events)
if n == 0:
    st.info("No merges to explore: the corpus has no pair of adjacent tokens to merge.")
    st.stop()
counts = [e.count for e in events]
which, label, test_data = threshold_views.held_out(st.session_state["source"], settings.corpus.data)
test, train_text = runs.replays_for(settings, which, test_data)  # each text encoded once, with every merge
options = thresholds(counts, threshold_views.PRESET_VALUES)
threshold_views.restore_slider(options)


@st.fragment
def explore() -> None:
    t = threshold_views.slider(options)
    k = kept(counts, t)  # a binary search over the counts, which never increase
    threshold_views.metrics(t, k, n, 256 + k + len(settings.special_tokens), test.compression(k), test.compression(n))
    threshold_views.presets(t, options, counts)  # under the numbers they change: slider and numbers on a projector's first screen
    c1, c2 = st.columns(2)
    with c1:
        st.subheader("Winning count at each merge")
        threshold_views.counts_chart(events, t, k)
    with c2:
        st.subheader("Compression after each merge")
        threshold_views.compression_chart(test, k, label)
    st.subheader(f"Where t = {t:,} cuts")
    threshold_views.cut_table(events, k)
    st.subheader(f"What a token threshold of {max(t, 1):,} would drop instead")
    threshold_views.rare_tokens(events, t, k, train_text.usage(k))


explore()
if training.stop_reason != StopReason.VOCAB_SIZE:
    st.caption(f"Training itself stopped after {n:,} merges: {training.stop_reason}.")
else:
    st.caption(f"With no threshold, training stopped at the vocab size ({n:,} merges); a threshold can only stop it earlier.")
st.subheader("Pair threshold or token threshold?")
st.markdown(threshold_views.EXPLAIN)
st.caption(
    f"Trained once in {sum(training.seconds.values()):.2f} s ({training.algorithm} trainer; all give the same merges) and shared by "
    "everyone. A move of the slider reruns only the part of the page above: a binary search for k and sums over the "
    "first k merges, with no retraining and no re-encoding."
)
