"""The shared sidebar: what to train on and how. Returns the settings, or why they are unusable."""

from __future__ import annotations

import html

import streamlit as st

from bpe import ALGORITHMS, PRETOKENIZERS
from bpe.rule import RULES
from bpe.spec import TrainSpec
from bpe.train import check_spec
from ui import corpus as corpora
from ui import family, state
from ui.corpus import SENTENCEPIECE, Settings
from ui.preset_notes import preset_note

TIE_HELP = (
    "Which pair wins when several have the same count. Every algorithm follows the rule chosen; "
    "pick the tool whose merges you want to reproduce. The step page shows, on a tied merge, what each rule would take."
)


MAX_VOCAB = 1_000_000  # the vocab size box's largest value (a link's too)


def preset_vocab_size(key: str) -> int:
    """The vocab size a preset was made for: 256 bytes + its merges + its special tokens."""
    return corpora.source(key).vocab_size


def apply_preset(key: str) -> None:
    """Choosing a preset also chooses the settings it was made for (ui.link calls it for a link's corpus)."""
    source = corpora.source(key)
    st.session_state["source"] = key
    st.session_state.update(source.sidebar())
    st.session_state["step"] = 1


def _apply_preset() -> None:
    apply_preset(st.session_state["source"])


_DIGESTS: dict[int, tuple[bytes, str]] = {}  # id(data) -> (data, digest) of the last few corpora


def pasted_bytes() -> bytes:
    """The pasted text as bytes, encoded once per text: every run of every page reads it (its digest: _digest)."""
    text, known = st.session_state["pasted"], st.session_state["pasted_data"]
    if known is None or known[0] is not text:
        known = st.session_state["pasted_data"] = (text, text.encode("utf-8", "surrogateescape"))
    return known[1]


def _digest(data: bytes) -> str:
    """corpora.digest, remembered for the same bytes object (the stdlib corpus is one cached object).

    subtle: every run of every page passes the corpus through here; hashing 2 MB
    again would cost a few ms per click. The entry holds the bytes, so its id
    cannot be reused by another object while it is remembered.
    """
    known = _DIGESTS.get(id(data))
    if known is not None and known[0] is data:
        return known[1]
    if len(_DIGESTS) >= 4:
        _DIGESTS.clear()
    _DIGESTS[id(data)] = (data, corpora.digest(data))
    return _DIGESTS[id(data)][1]


def short_label(label: str) -> str:
    """A preset's name without its parenthesis, short enough for the sidebar at projector size.

    "Python's own docs (stdlib docstrings, 2 MB)" -> "Python's own docs"; the caption under the box says the rest.
    """
    return label.split(" (")[0]


def parse_special_tokens(text: str) -> tuple[str, ...]:
    """'<|endoftext|>, <pad>' -> ('<|endoftext|>', '<pad>')."""
    return tuple(t.strip() for t in text.split(",") if t.strip())


def current() -> Settings:
    """The settings the sidebar made this run; when they are unusable, say why and stop the page."""
    settings = st.session_state["settings"]
    if isinstance(settings, str):
        st.error(settings)
        st.stop()
    return settings


def render(sections: dict[str, list] | None = None, links: dict[str, str] | None = None) -> Settings | str:
    """Draw the sidebar: presenter mode and the training run first, then the links to the pages; return the settings,
    or a sentence saying what to fix.

    The run's four choices a teacher sets first (corpus, pre-tokenizer, vocab size, tie-break rule) come before the
    rest, and the pages after them, so that a 720 px screen shows them without scrolling. `sections` are the pages
    (app.py's st.navigation, whose own menu is hidden), drawn as links that carry `links()`'s URL parameters: the run,
    so that a page opened, reloaded or copied from them shows the same run (ui.link).

    Its widgets are drawn on every run of every page, so each holds its session key itself (state.widget's
    kept=True), with the session's value as its default: the first run of a session writes them all, and
    when that run is cut short the browser would otherwise show Streamlit's defaults (pre-tokenizer gpt2,
    vocab size 0, naive) and send them back on the next click.
    """
    with st.sidebar:
        settings = _training_run()
        if sections:
            _page_links(sections, links() if links else {})
    return settings


def _training_run() -> Settings | str:
    state.widget(
        st.toggle,
        "Presenter mode",
        key="presenter",
        kept=True,
        help="Larger type, and a simpler step page for a projector. ← and → step through merges.",
    )
    st.header("Training run")
    key = state.widget(
        st.selectbox,
        "Corpus",
        corpora.choices(),
        format_func=lambda k: short_label(corpora.source(k).label),
        key="source",
        kept=True,
        on_change=_apply_preset,
    )
    source = corpora.source(key)
    note = preset_note(key, st.session_state["tie_break"]) if key in corpora.SOURCES else ""
    about = [source.label[len(short_label(source.label)) + 2 : -1], note]
    if any(about):
        text = ": ".join(a for a in about if a)
        st.caption(text[0].upper() + text[1:])
    problem = None
    if key == "paste":
        state.widget(st.text_area, "Text", key="pasted", kept=True, height=150, placeholder="Paste any text…")
        data = pasted_bytes()
        problem = corpora.check_text("The pasted text", data)
    elif key == "upload":
        upload = st.file_uploader("Text file", type=None, help=f"Up to {corpora.MAX_UPLOAD_BYTES / 1e6:.0f} MB of text")
        if upload is None:
            data, problem = b"", "Upload a text file to train on (or pick a preset corpus)."
        else:
            data = upload.getvalue()
            problem = corpora.check_text(upload.name, data)
    elif key == "stdlib":
        data = corpora.stdlib_bytes()
    elif key == corpora.FILE:
        data, problem = corpora.file_data()
    else:
        data = source.text.encode("utf-8")

    if st.session_state["family"] == SENTENCEPIECE:
        _family()
        return _sentencepiece_run(source, data, problem)
    state.widget(
        st.selectbox,
        "Pre-tokenizer",
        list(PRETOKENIZERS),
        key="pretokenizer",
        kept=True,
        help="\n\n".join(f"**{name}**: {p.help}" for name, p in PRETOKENIZERS.items()),
    )
    state.widget(
        st.number_input,
        "Vocab size",
        key="vocab_size",
        kept=True,
        min_value=0,
        max_value=MAX_VOCAB,
        step=1,
        help="256 bytes + merges + special tokens",
    )
    rule = RULES[state.widget(st.selectbox, "Tie-break rule", list(RULES), key="tie_break", kept=True, help=TIE_HELP)]
    st.caption(f"Ties go to {rule.prefers}, as {rule.tool} does.")
    _family()  # after the four choices a teacher sets first, which a 720 px screen shows above it
    state.widget(
        st.text_input,
        "Special tokens (comma-separated)",
        key="special_tokens_text",
        kept=True,
        help="Never merged; the corpus is cut at them.",
    )
    state.widget(st.selectbox, "Algorithm", list(ALGORITHMS), key="algorithm", kept=True)
    st.caption(ALGORITHMS[st.session_state["algorithm"]].summary.capitalize() + ".")

    spec = TrainSpec(
        pretokenizer=st.session_state["pretokenizer"],
        special_tokens=parse_special_tokens(st.session_state["special_tokens_text"]),
        tie_break=st.session_state["tie_break"],
        algorithm=st.session_state["algorithm"],
    )
    try:
        num_merges = check_spec(spec, int(st.session_state["vocab_size"]))
    except ValueError as e:
        return str(e)
    st.caption(f"{st.session_state['vocab_size']:,} = 256 bytes + {num_merges:,} merges + {len(spec.special_tokens)} special")
    if problem:
        return problem
    return Settings(corpora.Corpus(source.label, data, _digest(data)), spec, num_merges)


def _family() -> None:
    state.widget(
        st.selectbox,
        "Tokenizer family",
        list(family.FAMILIES),
        format_func=family.FAMILIES.get,
        key="family",
        kept=True,
        help=family.HELP["family"],
    )


def _sentencepiece_run(source: corpora.Source, data: bytes, problem: str | None) -> Settings | str:
    """The SentencePiece family's options; the settings carry its spec beside the byte-level run's (kept, hidden)."""
    family.options()
    try:
        sp = family.spec_of_session()
        spec = TrainSpec(
            pretokenizer=st.session_state["pretokenizer"],
            special_tokens=parse_special_tokens(st.session_state["special_tokens_text"]),
            tie_break=st.session_state["tie_break"],
            algorithm=st.session_state["algorithm"],
        )
        num_merges = check_spec(spec, int(st.session_state["vocab_size"]))
    except ValueError as e:
        return str(e)
    st.caption(family.caption(sp))
    if problem:
        return problem
    return Settings(corpora.Corpus(source.label, data, _digest(data)), spec, num_merges, sp)


def _page_links(sections: dict[str, list], params: dict[str, str]) -> None:
    """The pages, by section, as links that carry params (the run, presenter mode): a copied link opens the same run."""
    st.header("Pages")
    for section, pages in sections.items():
        if section:
            st.html(f'<p class="nav-section">{html.escape(section)}</p>')
        for page in pages:
            st.page_link(page, query_params=params)
