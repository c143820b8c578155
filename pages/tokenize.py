"""Tokenize any text with the trained tokenizer (or its first k merges), next to a real tokenizer, and download it.

A page of text is tokenized here, in a few milliseconds; a longer one (up to a book chapter, the box's
limit) in a worker process, once for every session that asks for the same text (serve/jobs.tokenize), while
the page shows its first page tokenized and a Stop.
"""

import codecs

import streamlit as st

from bpe import PRETOKENIZERS
from bpe.files import formats
from serve import jobs
from serve.jobs import RunKey
from ui import corpus, runs, sidebar, state, typing, work
from ui.render import BYTES_MEANING, offset_note, text_spans
from ui.views import tokenize as tokenize_views

SHOWN = 3000  # tokens drawn; a longer text is still counted and checked in full
INLINE_CHARS = 5_000  # a page of text: tokenized in the page's run (a few ms); a longer one in a worker process

st.title("Tokenize & export")
st.caption(
    "Any text, split by the tokenizer trained in the sidebar and by a real one, side by side, each token's id under it. "
    "The counts follow as you type."
)

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
typing.live("tok_text")  # the count and the tokens follow a pause in the typing (half a second), as tiktokenizer's do
sample_at, ids_at = st.columns([1, 2], vertical_alignment="center")
sample_at.button("Use a sample of the corpus", on_click=use_sample)
show_ids = state.widget(ids_at.toggle, "Token ids under the tokens", key="tok_ids")
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


def reference_chosen() -> tuple[tokenize_views.Reference, str] | None:
    """The real tokenizer's files and pre-tokenizer, as the section below has them chosen (None: none uploaded yet)."""
    if st.session_state["tok_ref_source"] == "upload" or not tokenize_views.gpt2_on_this_machine():
        found = st.session_state["tok_upload_ref"]
        return None if found is None else (found, st.session_state["tok_ref_pretokenizer"])
    return tokenize_views.gpt2_reference(), "gpt2"


def stop_long() -> None:
    st.session_state["tok_stopped"] = work.let_go("tokenize")


def go_on() -> None:
    st.session_state["tok_stopped"] = None


def tokenized_long() -> tuple[jobs.Tokenized, jobs.Tokenized | str | None] | None:
    """Both tokenizations of a long text, from a worker process (shared by every session asking for the same);
    None while it runs or once this session stopped it (the page then shows the first page of the text)."""
    chosen = reference_chosen()
    spec = runs.training_spec(settings.spec)
    ref_id = None if chosen is None else (chosen[0].digest, chosen[1])
    key = RunKey("tokenize", settings.key, spec, settings.num_merges, (corpus.digest(text.encode("utf-8", "surrogatepass")), k, ref_id))
    if st.session_state["tok_stopped"] == key:
        return None
    reference = None if chosen is None else (chosen[0].files, chosen[1])
    status = work.ask(
        "tokenize", key, jobs.tokenize, text, tuple(tok.merges), settings.special_tokens, settings.pretokenizer, k, reference, SHOWN
    )
    if not status.ended:
        status = work.pool().wait(key, runs.WAIT_S)
    if status.state == "done":
        work.let_go("tokenize")
        return status.result
    if status.state == "failed":
        work.let_go("tokenize")
        st.error(status.error)
        return None

    def progress(status) -> None:
        doing = f"with {status.progress}" if status.progress else "…"
        st.info(work.waiting(status, "Tokenizing") or f"Tokenizing all {len(text):,} characters in a worker process, {doing}")
        st.button("Stop", key="tok_stop", on_click=stop_long)

    work.follow(key, progress, every=runs.POLL_S)
    return None


long = len(text) > INLINE_CHARS
done = tokenized_long() if long else None
try:
    ours = done[0] if done else jobs.tokenized(tok, text[:INLINE_CHARS], k, SHOWN)
except ValueError as e:  # a lone surrogate cannot be typed, but say so if it arrives
    st.error(str(e))
    st.stop()
theirs = done[1] if done else None
if long and not done:
    if work.watched("tokenize") is None:  # stopped
        st.caption(f"Stopped: shown is the text's first {INLINE_CHARS:,} characters of {len(text):,}.")
        st.button("Tokenize all of it", on_click=go_on)
    else:
        st.caption(f"While the whole text is tokenized, shown is its first {INLINE_CHARS:,} characters of {len(text):,}.")
measured = text if done or not long else text[:INLINE_CHARS]
n_bytes = len(measured.encode("utf-8", "surrogateescape"))
pieces, ids = ours.pieces, ours.ids

c1, c2, c3, c4 = st.columns(4)
c1.metric("Tokens", f"{ours.count:,}")
c2.metric("Bytes", f"{n_bytes:,}", help=f"Bytes: {BYTES_MEANING}.")
c3.metric("Bytes per token", f"{n_bytes / ours.count:.2f}" if ours.count else "–", help=f"Bytes: {BYTES_MEANING}.")
c4.metric("Merges used", f"{k:,} of {n:,}")

drawn, note = text_spans(pieces, ids, show_ids=show_ids), offset_note(pieces)  # drawn again beside the real tokenizer
st.html(drawn)
if ours.count > SHOWN:
    st.caption(f"Showing the first {SHOWN:,} of {ours.count:,} tokens.")
elif note:
    st.caption(note)
spelled = [t for t in tok.special_tokens if t in measured]
if spelled:  # say what is done with them: CS336 encodes them as special, tiktoken refuses them
    st.caption(tokenize_views.special_note(tok, spelled))

if ours.round_trip:
    st.success("✓ identical: decoding the ids gives back the text, byte for byte.")
elif not settings.pretokenizer.lossless:
    st.warning("The round trip drops whitespace: the 'whitespace' pre-tokenizer throws it away by design. Pick gpt2 to keep it.")
else:
    st.error("✗ the decoded text differs from the input.")
# subtle: what a closed expander holds is still sent and laid out by the browser on every run; these two are drawn
# only while open (up to 3,000 ids, and the text decoded)
ids_box = st.expander("Token ids and the decoded text", key="tok_ids_box", on_change="rerun")
if ids_box.open:
    more = f" (the first {SHOWN:,} of {ours.count:,})" if ours.count > SHOWN else ""
    ids_box.code(" ".join(map(str, ids)) + more or "(no tokens)", language=None, wrap_lines=True)
    ids_box.code(tok.decode(ids) or "(empty)", language=None, wrap_lines=True)

# ---------------------------------------------------------------------------
st.subheader("Next to a real tokenizer")

SOURCES = {"gpt2": "GPT-2 (its own files)", "upload": "Upload files"}
if not tokenize_views.gpt2_on_this_machine():
    SOURCES.pop("gpt2")
    st.session_state["tok_ref_source"] = "upload"
source = state.widget(
    st.radio, "Real tokenizer", list(SOURCES), format_func=SOURCES.get, horizontal=True, key="tok_ref_source", label_visibility="collapsed"
)


def take_upload() -> None:
    st.session_state["tok_upload_ref"] = tokenize_views.uploaded(st.session_state["tok_upload"])


def next_to_real() -> None:
    """The real tokenizer chosen above: loaded (or why not), both tokenizations side by side, its merges."""
    if source == "upload":
        u1, u2 = st.columns([3, 1])
        u1.file_uploader(
            f"A tokenizer's files: {formats.upload_hint()}",
            accept_multiple_files=True,
            key="tok_upload",
            on_change=take_upload,
        )
        pretokenizer = state.widget(
            u2.selectbox,
            "Pre-tokenizer",
            list(PRETOKENIZERS),
            key="tok_ref_pretokenizer",
            help="GPT-2 files and .tiktoken files do not record their pre-tokenizer; a tokenizer.json does, and wins, "
            "and so do OpenAI's own .tiktoken files (cl100k_base, o200k_base…), recognised by their sha256.",
        )
        reference = st.session_state["tok_upload_ref"]
        if reference is None:
            st.info("Upload a tokenizer to see how it splits the same text (up to 5 MB).")
            return
        label, result = reference.label, tokenize_views.load_reference(reference, pretokenizer)
        if result is None:  # a worker process reads the files: the page follows it, the class's clicks do not wait
            tokenize_views.reading(reference, pretokenizer)
            return
        ident = (reference.digest, pretokenizer)
    else:
        label, result, ident = "GPT-2", tokenize_views.gpt2(), ("gpt2",)

    if result.error:
        st.error(result.error)
        return
    other = result.tokenizer
    st.caption(f"{tokenize_views.describe(result)}.")
    split = theirs
    if split is None:  # a page of text (or, while a long one is tokenized, its first page): here
        try:
            split = jobs.tokenized(other, measured, None, SHOWN)
        except ValueError as e:
            split = str(e)
    if isinstance(split, str):
        st.warning(split)

    left, right = st.columns(2)
    with left:
        st.markdown(f"**Trained here** · {k:,} merges")
        st.metric("Tokens (trained here)", f"{ours.count:,}")
        st.html(drawn)
        if ours.count <= SHOWN and note:
            st.caption(note)
    with right:
        st.markdown(f"**{label}** · {len(other.merges):,} merges")
        if not isinstance(split, str):
            fewer = ours.count - split.count
            st.metric(f"Tokens ({label})", f"{split.count:,}", delta=f"{-fewer:+,} vs trained here", delta_color="inverse")
            st.html(text_spans(split.pieces, split.ids, show_ids=show_ids))
            if split.count <= SHOWN and offset_note(split.pieces):
                st.caption(offset_note(split.pieces))

    # drawn only while open: GPT-2's first 500 merges were ~6,800 elements the browser laid out on every run of the page,
    # 2-4 s a sidebar click where the other pages take 0.3-1 s (issue 36.6)
    merges_box = st.expander(f"Browse the merges of {label}", key="tok_merges_box", on_change="rerun")
    if not merges_box.open:
        return
    with merges_box:
        query = state.widget(st.text_input, "Merges whose new token contains", key="tok_merge_query", placeholder="e.g.  the")
        frame, found = tokenize_views.merges_shown(ident, query, other)
        # a table whose type the app sizes (a dataframe is a canvas at 15.75 px), numbers with separators
        st.table(frame, hide_index=True, height=min(420, 45 + 38 * len(frame)))
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
texts, bundle = tokenize_views.downloads(tokenize_views.run_of(settings), k, tok)
# each button's bytes are handed over when it is clicked (data=a function), not registered with every run of the page
st.download_button(
    f"All {len(texts)} files, zipped",
    lambda: bundle,
    file_name="tokenizer.zip",
    mime="application/zip",
    type="primary",
    help="Every format below in one folder: python -m bpe encode FOLDER ... and Tokenizer.load(FOLDER) read it.",
    on_click="ignore",
)
for fmt, names in tokenize_views.by_format(texts):
    label_at, buttons_at = st.columns([1, 4], vertical_alignment="center")
    label_at.markdown(f"**{fmt.label}**")
    row = buttons_at.container(horizontal=True)
    for name in names:
        mime = "application/json" if name.endswith(".json") else "text/plain"
        row.download_button(
            name, lambda name=name: texts[name], file_name=name, mime=mime, help=fmt.help[name], width="content", on_click="ignore"
        )
st.caption("Load them elsewhere, with the tool's own code: each gives the ids shown above.")
for tool, code in tokenize_views.LOAD_ELSEWHERE.items():
    st.markdown(f"**{tool}**")
    st.code(code, language="python", wrap_lines=True)
