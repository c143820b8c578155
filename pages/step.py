"""Step through training one merge at a time, replaying the instrumented trainer's trace."""

import streamlit as st

from bpe.tokenizer import Tokenizer
from ui import corpus as corpora
from ui import sidebar, views
from ui.render import token_spans

st.title("Step through BPE training")
st.caption("Each step is one merge made by the real trainer: why its pair won, what it rewrote, and how the counts moved.")

settings = sidebar.current()

trace = corpora.trace_for(settings)
events = trace.events
n = len(events)
if n == 0:
    st.info(f"No merges to show: {trace.stop_reason} — the corpus has no pair of adjacent tokens to merge.")
    st.stop()
if trace.stop_reason != "vocab_size":
    st.info(f"Training stopped after {n:,} merges: {trace.stop_reason}.")


@st.cache_resource(max_entries=8)
def tokenizer(key: str, pattern: str, specials: tuple[str, ...], algorithm: str, num_merges: int, _merges) -> Tokenizer:
    return Tokenizer.from_merges(_merges, specials, pattern)


def go(delta: int) -> None:
    st.session_state["step"] = min(max(1, st.session_state["step"] + delta), n)


p1, p2, _ = st.columns([1, 2, 5], vertical_alignment="center")
p1.toggle("Play", key="playing", help="Advance one merge at a time")
p2.select_slider(
    "Speed", options=[2.0, 1.0, 0.5, 0.25], key="speed", format_func=lambda s: f"{1 / s:g} merge/s", label_visibility="collapsed"
)


@st.fragment(run_every=st.session_state["speed"] if st.session_state["playing"] else None)
def stepper() -> None:
    if st.session_state["playing"] and st.session_state["step"] < n:
        go(+1)
    st.session_state["step"] = min(max(1, st.session_state["step"]), n)
    b1, b2, b3 = st.columns([1, 1, 6])
    b1.button("◀ Previous", on_click=go, args=(-1,), disabled=st.session_state["step"] <= 1, width="stretch")
    b2.button("Next ▶", on_click=go, args=(+1,), disabled=st.session_state["step"] >= n, width="stretch")
    if n > 1:
        b3.slider("Jump to merge", 1, n, key="step", label_visibility="collapsed")
    k = st.session_state["step"]
    event = events[k - 1]
    views.merge_card(event, k, n, 256 + k + len(settings.specials))

    c1, c2 = st.columns(2)
    with c1:
        st.subheader("Pair counts before the merge")
        views.pair_table(event)
    with c2:
        if event.detail.heap is not None:
            st.subheader("The heap, as stored")
            views.heap_tree(event)
        else:
            st.subheader("Where the work went")
            what = {"positions": "positions updated", "parent_set": "parent words touched", "naive": "words checked"}[settings.algorithm]
            st.metric(what, f"{event.detail.sites_total or event.words:,}")
            if event.detail.sites:
                where = "positions in the flat sequence" if settings.algorithm == "positions" else "word ids"
                more = " …" if event.detail.sites_total > len(event.detail.sites) else ""
                st.caption(f"{where}: " + ", ".join(map(str, event.detail.sites)) + more)
            st.caption("Switch the algorithm to heap to see its heap.")

    c3, c4 = st.columns(2)
    with c3:
        st.subheader("Words this merge rewrote")
        views.affected_words(event)
    with c4:
        st.subheader("How pair counts changed")
        views.pair_changes(event)

    st.subheader(f"A sentence tokenized with the first {k} merges")
    sample = st.session_state["sample"] or settings.corpus.data[:160].decode("utf-8", "replace")
    tok = tokenizer(settings.key, settings.pattern, settings.specials, settings.algorithm, n, [(e.left, e.right) for e in events])
    pieces = tok.pieces(sample, k)
    st.html(token_spans(pieces))
    st.caption(f"{len(pieces):,} tokens for {len(sample.encode('utf-8', 'surrogateescape')):,} bytes.")

    st.subheader("Count of the winning pair at each merge")
    views.counts_chart(events, k)


stepper()
st.text_input("Your own sentence to tokenize", key="sample", placeholder="Type a sentence; it is tokenized at the current merge")
st.caption(
    f"Trace: {n:,} merges by `{settings.algorithm}` over {trace.unique_words:,} unique pre-tokens, "
    f"computed once in {trace.seconds:.2f} s and shared; stepping replays it."
)
