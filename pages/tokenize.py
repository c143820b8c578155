"""Tokenize any text with the trained tokenizer (or its first k merges), and download it in every format."""

import streamlit as st

from bpe import export
from ui import corpus as corpora
from ui import sidebar, state
from ui.render import token_spans

SHOWN = 3000  # tokens drawn; a longer text is still counted and checked in full

st.title("Tokenize & export")
st.caption("Any text, split by the tokenizer trained in the sidebar. Hover a token to see its id.")

settings = sidebar.current()

training = corpora.trained_for(settings)
tok = corpora.tokenizer_for(settings)
n = len(tok.merges)


def use_sample() -> None:
    st.session_state["tok_text"] = settings.corpus.data[:400].decode("utf-8", "ignore")


if st.session_state["tok_text"] is None:
    use_sample()
text = st.text_area("Text to tokenize", key=state.widget("tok_text"), on_change=state.save, args=("tok_text",), height=130)
st.button("Use a sample of the corpus", on_click=use_sample)

if st.session_state["tok_k"] is None or st.session_state["tok_k"] > n:
    st.session_state["tok_k"] = n
k = (
    st.slider(
        "Merges used (k)",
        0,
        n,
        key=state.widget("tok_k"),
        on_change=state.save,
        args=("tok_k",),
        help="0 = bytes only; the tokenizer applies its first k merges, by rank.",
    )
    if n
    else 0
)

try:
    pieces = tok.pieces(text, k)
except ValueError as e:  # a lone surrogate cannot be typed, but say so if it arrives
    st.error(str(e))
    st.stop()
ids = [tok.ids[p] for p in pieces]
n_bytes = len(text.encode("utf-8", "surrogateescape"))

c1, c2, c3, c4 = st.columns(4)
c1.metric("Tokens", f"{len(ids):,}")
c2.metric("Bytes", f"{n_bytes:,}")
c3.metric("Bytes per token", f"{n_bytes / len(ids):.2f}" if ids else "–")
c4.metric("Merges used", f"{k:,} of {n:,}")

st.html(token_spans(pieces[:SHOWN], ids[:SHOWN]))
if len(pieces) > SHOWN:
    st.caption(f"Showing the first {SHOWN:,} of {len(pieces):,} tokens.")

decoded = tok.decode(ids)
if decoded == text:
    st.success("✓ identical: decoding the ids gives back the text, byte for byte.")
elif settings.pattern == "whitespace":
    st.warning("The round trip drops whitespace: the 'whitespace' pre-tokenizer throws it away by design. Pick gpt2 to keep it.")
else:
    st.error("✗ the decoded text differs from the input.")
with st.expander("Token ids and the decoded text"):
    st.code(" ".join(map(str, ids)) or "(no tokens)", language=None, wrap_lines=True)
    st.code(decoded or "(empty)", language=None, wrap_lines=True)

st.subheader(f"Download the tokenizer ({k:,} merges)")
WHAT = {
    export.VOCAB: "GPT-2 format, with merges.txt",
    export.MERGES: "GPT-2 format, with vocab.json",
    export.HF: "HuggingFace tokenizers: Tokenizer.from_file",
    export.PLAIN: "this tool's plain JSON, with each merge's count",
}
texts = export.files(tok.merges[:k], tok.special_tokens, tok.pattern, tok.counts[:k])
for column, (name, data) in zip(st.columns(len(texts)), texts.items()):
    mime = "application/json" if name.endswith(".json") else "text/plain"
    column.download_button(name, data, file_name=name, mime=mime, help=WHAT[name], width="stretch", on_click="ignore")
st.caption("Load them elsewhere:")
st.code(
    "from tokenizers import Tokenizer            # pip install tokenizers\n"
    'Tokenizer.from_file("tokenizer.json").encode("Hello world").ids\n\n'
    "# or from the shell, with a folder of these files:\n"
    'python -m bpe encode FOLDER --text "Hello world"',
    language="python",
)
