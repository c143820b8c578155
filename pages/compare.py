"""Real tokenizers side by side: GPT-2, GPT-4, GPT-4o, Llama 2, Mistral, Llama 3 and the run trained here at merge k on the same text.

Each real tokenizer is loaded once per server (ui/real.py) and a comparison is
cached on its text and the run, so a class opening the page together costs one
comparison. Where they split differently is marked (ui/views/compare.py).
"""

import streamlit as st

from ui import real, sidebar, state
from ui.render import plain
from ui.views import compare as compare_views

st.title("Real tokenizers side by side")
st.caption(
    "GPT-2, GPT-4 (cl100k_base), GPT-4o (o200k_base), Llama 2 and Mistral (SentencePiece: ▁ for a space, a character "
    "outside the vocabulary as its bytes), Llama 3 and the tokenizer trained in the sidebar, on the same text, each token's "
    "id under it. For the encoder's loop see Encode, step by step; for one tokenizer with downloads, Tokenize & export."
)

settings = sidebar.current()
if st.session_state["cmp_text"] is None:
    st.session_state["cmp_text"] = compare_views.SAMPLE
text = state.widget(st.text_area, "Text to compare", key="cmp_text", height=125)  # its limit: ui.state.LIMITS
show_ids = state.widget(st.toggle, "Token ids under the tokens", key="cmp_ids")  # a projector has no hover
with st.expander("The run trained here: how many of its merges"):
    run, k = real.run_and_k(settings)
entries = real.lineup(run, k)
missing = [e for e in entries if e.tokenizer is None]
shown = [e for e in entries if e.tokenizer is not None]

run_key = (settings.key, settings.pretokenizer, settings.special_tokens, settings.num_merges, settings.tie_break, k)


@st.cache_resource(max_entries=64, show_spinner=False)
def compared(text: str, keys: tuple, run_key: tuple, show_ids: bool, _entries: tuple) -> tuple[str, str, str, str | None]:
    """The comparison's HTML, once per text and line-up for every session (a class opening the page together costs one)."""
    rows = []
    for e in _entries:
        try:
            rows.append(compare_views.row(e.label, e.tokenizer, text, e.k, e.detail))
        except ValueError as err:  # a lone surrogate: no tokenizer can encode it
            return "", "", "", str(err)
    return (*compare_views.comparison(text, rows, show_ids), None)


table, diff, chips, error = compared(text, tuple(e.key for e in shown), run_key, show_ids, tuple(shown))
if error:
    st.error(error)
    st.stop()
st.html(table)
st.subheader("Where they split differently")
st.html(diff)
st.subheader("Their tokens")
st.html(chips)

for e in missing:
    st.info(e.error)
    if e.key not in real.ENCODINGS:  # an open model's file comes with the project (../shared), not from an upload
        continue
    files = st.file_uploader(
        f"Add {e.label}: OpenAI's file{'s' if len(real.ENCODINGS[e.key].files) > 1 else ''}",
        accept_multiple_files=True,
        key=f"cmp_upload_{e.key}",
    )
    if files:
        problem = real.upload(real.ENCODINGS[e.key], files)
        if problem:
            st.error(plain(problem))
        else:
            st.rerun()
