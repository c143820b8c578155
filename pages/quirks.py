"""The quirks gallery: one click per example every tokenizer lecture uses, with what to tell the class and every tokenizer's tokens.

Each example's tokens are computed once per line-up and shared by every session.
"""

import streamlit as st

from ui import real, sidebar, state
from ui.lessons import quirks
from ui.views import compare as compare_views

st.title("Quirks gallery")
st.caption("Why language models stumble on some easy-looking tasks: look at the tokens. Each example is one click.")
settings = sidebar.current()


state.widget(
    st.pills,
    "Example",
    [q.key for q in quirks.QUIRKS],
    format_func=lambda key: quirks.BY_KEY[key].title,
    key="quirk",
    required=True,  # a click on the example shown keeps it
    label_visibility="collapsed",
)
quirk = quirks.BY_KEY[st.session_state["quirk"]]

st.subheader(quirk.title)
st.html(f"<p style='font-size:1.1rem;line-height:1.5;margin:0;color:#111'>{quirks.escape(quirk.explanation)}</p>")

with st.expander("The run trained here: how many of its merges"):
    run, k = real.run_and_k(settings)
entries = [e for e in real.lineup(run, k) if e.tokenizer is not None]
missing = [e for e in real.lineup(run, k) if e.tokenizer is None]
run_key = (settings.key, settings.pretokenizer, settings.special_tokens, settings.num_merges, settings.tie_break, k)


@st.cache_resource(max_entries=64, show_spinner=False)
def tokens_of(texts: tuple[str, ...], keys: tuple, run_key: tuple, _entries: tuple) -> tuple[tuple[compare_views.Row, ...], ...]:
    """Every tokenizer's tokens of each text, once per line-up for every session."""
    return tuple(tuple(compare_views.row(e.label, e.tokenizer, text, e.k, e.detail) for e in _entries) for text in texts)


keys = tuple(e.key for e in entries)
if quirk.key == "tax":
    texts = tuple(text for _, _, text in quirks.PARAGRAPH)
    results = dict(zip(quirks.LANGUAGES, tokens_of(texts, keys, run_key, tuple(entries))))
    st.html(
        "<p class='caption'>Tokens per character (bold), the tokens of the whole paragraph, and how many times English's count that is "
        "(red: twice or more). Characters are not comparable across scripts (one Chinese character says more than one letter); "
        "the same meaning in tokens is.</p>"
    )
    st.html(quirks.tax_table(results))
    language = state.widget(st.selectbox, "See one language's tokens", list(quirks.LANGUAGES), key="tax_language")
    st.html(quirks.text_block(quirks.LANGUAGES[language], list(results[language])))
else:
    for text, rows in zip(quirk.texts, tokens_of(quirk.texts, keys, run_key, tuple(entries))):
        st.html(quirks.text_block(text, list(rows), quirk.show_ids))

for e in missing:
    st.info(e.error + " The Real tokenizers page takes an upload.")
