"""Tokenize any text with the trained tokenizer (or its first k merges), next to a real tokenizer, and download it."""

import codecs

import streamlit as st

from bpe import PATTERNS, formats
from ui import runs, sidebar, state
from ui.render import BYTES_MEANING, split_note, token_spans
from ui.views import tokenize as real

SHOWN = 3000  # tokens drawn; a longer text is still counted and checked in full

st.title("Tokenize & export")
st.caption("Any text, split by the tokenizer trained in the sidebar and by a real one, side by side. Hover a token to see its id.")

settings = sidebar.current()

tok = runs.tokenizer_for(settings)
n = len(tok.merges)


def sample_text(data: bytes) -> tuple[str, bool]:
    """The corpus's first 400 bytes as text (a character cut at the end left out), and whether some were not UTF-8.

    subtle: a text box holds text, not bytes, so bytes that are not UTF-8 (a Latin-1 upload) cannot be
    typed back; they are shown as U+FFFD, never silently dropped, and the page says so.
    """
    head = data[:400]
    text = codecs.getincrementaldecoder("utf-8")("replace").decode(head, final=False)
    try:
        codecs.getincrementaldecoder("utf-8")("strict").decode(head, final=False)
    except UnicodeDecodeError:
        return text, True
    return text, False


def use_sample() -> None:
    st.session_state["tok_text"] = sample_text(settings.corpus.data)[0]


if st.session_state["tok_text"] is None:
    use_sample()
text = state.widget(st.text_area, "Text to tokenize", key="tok_text", height=130)
st.button("Use a sample of the corpus", on_click=use_sample)
if sample_text(settings.corpus.data) == (text, True):
    st.info(
        "This corpus has bytes that are not UTF-8 (Latin-1, perhaps): a text box can only hold text, so each shows here as "
        "� (U+FFFD). The model was trained on the bytes as they are; the step page's sentence shows them so."
    )

if st.session_state["tok_k"] is None or st.session_state["tok_k"] > n:
    st.session_state["tok_k"] = n
k = (
    state.widget(
        st.slider,
        "Merges used (k)",
        0,
        n,
        key="tok_k",
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
c2.metric("Bytes", f"{n_bytes:,}", help=f"Bytes: {BYTES_MEANING}.")
c3.metric("Bytes per token", f"{n_bytes / len(ids):.2f}" if ids else "–", help=f"Bytes: {BYTES_MEANING}.")
c4.metric("Merges used", f"{k:,} of {n:,}")

st.html(token_spans(pieces[:SHOWN], ids[:SHOWN]))
if len(pieces) > SHOWN:
    st.caption(f"Showing the first {SHOWN:,} of {len(pieces):,} tokens.")
elif split_note(pieces):
    st.caption(split_note(pieces))

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

# ---------------------------------------------------------------------------
st.subheader("Next to a real tokenizer")

SOURCES = {"gpt2": "GPT-2 (its own files)", "upload": "Upload files"}
if not real.shared_gpt2_available():
    SOURCES.pop("gpt2")
    st.session_state["tok_ref_source"] = "upload"
source = state.widget(
    st.radio, "Real tokenizer", list(SOURCES), format_func=SOURCES.get, horizontal=True, key="tok_ref_source", label_visibility="collapsed"
)


def take_upload() -> None:
    st.session_state["tok_upload_ref"] = real.uploaded(st.session_state["tok_upload"])


def next_to_real() -> None:
    """The real tokenizer chosen above: loaded (or why not), both tokenizations side by side, its merges."""
    pattern = "gpt2"
    if source == "upload":
        u1, u2 = st.columns([3, 1])
        u1.file_uploader(
            f"A tokenizer's files: {formats.upload_hint()}",
            accept_multiple_files=True,
            key="tok_upload",
            on_change=take_upload,
        )
        pattern = state.widget(
            u2.selectbox,
            "Pre-tokenizer",
            list(PATTERNS),
            key="tok_ref_pattern",
            help="GPT-2 files and .tiktoken files do not record their pre-tokenizer; a tokenizer.json does, and wins, "
            "and so do OpenAI's own .tiktoken files (cl100k_base, o200k_base…), recognised by their sha256.",
        )
        reference = st.session_state["tok_upload_ref"]
        if reference is None:
            st.info("Upload a tokenizer to see how it splits the same text (up to 5 MB).")
            return
    else:
        reference = real.shared_gpt2()

    result = real.load_reference(reference, pattern)
    if result.error:
        st.error(result.error)
        return
    other = result.tokenizer
    st.caption(f"{real.describe(result)}.")
    try:
        other_ids = other.encode(text, allowed_special="all")  # every special token as special, as on the left
    except ValueError as e:
        st.warning(str(e))
        other_ids = None

    left, right = st.columns(2)
    with left:
        st.markdown(f"**Trained here** · {k:,} merges")
        st.metric("Tokens (trained here)", f"{len(ids):,}")
        st.html(token_spans(pieces[:SHOWN], ids[:SHOWN]))
        if len(pieces) <= SHOWN and split_note(pieces):
            st.caption(split_note(pieces))
    with right:
        st.markdown(f"**{reference.label}** · {len(other.merges):,} merges")
        if other_ids is not None:
            fewer = len(ids) - len(other_ids)
            st.metric(f"Tokens ({reference.label})", f"{len(other_ids):,}", delta=f"{-fewer:+,} vs trained here", delta_color="inverse")
            theirs = [other.vocab[i] for i in other_ids[:SHOWN]]
            st.html(token_spans(theirs, other_ids[:SHOWN]))
            if len(other_ids) <= SHOWN and split_note(theirs):
                st.caption(split_note(theirs))

    with st.expander(f"Browse the merges of {reference.label}"):
        query = state.widget(st.text_input, "Merges whose new token contains", key="tok_merge_query", placeholder="e.g.  the")
        frame, found = real.merges_frame(other, query)
        # a table whose type the app sizes (a dataframe is a canvas at 15.75 px), numbers with separators
        shown = frame.assign(**{c: frame[c].map("{:,}".format) for c in ("rank", "id", "count") if c in frame.columns})
        st.table(shown, hide_index=True, height=min(420, 45 + 38 * len(shown)))
        shown = f"; showing the first {len(frame):,}" if found > len(frame) else ""
        st.caption(f"{found:,} merges{' match' if query else ''}{shown}. Rank 1 is the first merge made.")
        if not result.has_counts:
            st.caption(
                f"No counts: {formats.label(result.format)} record the merges in order but not how often each pair occurred "
                "when it was merged. Only this tool's tokenizer.bpe.json keeps them."
            )


next_to_real()

# ---------------------------------------------------------------------------
st.subheader(f"Download the tokenizer trained here ({k:,} merges)")
WHAT = formats.file_help()
texts = tok.files(k)
for column, (name, data) in zip(st.columns(len(texts)), texts.items()):
    mime = "application/json" if name.endswith(".json") else "text/plain"
    column.download_button(name, data, file_name=name, mime=mime, help=WHAT.get(name), width="stretch", on_click="ignore")
st.caption("Load them elsewhere:")
st.code(
    "from tokenizers import Tokenizer            # pip install tokenizers\n"
    'Tokenizer.from_file("tokenizer.json").encode("Hello world").ids\n\n'
    "# or from the shell, with a folder of these files:\n"
    'python -m bpe encode FOLDER --text "Hello world"',
    language="python",
)
