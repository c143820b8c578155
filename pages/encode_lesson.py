"""Guided lesson 2, "How a tokenizer encodes": one word through the encoder, one step per screen, each beside its chips.

The tokenizer is the first lesson's run (the textbook preset, whatever the sidebar says); every merge
links to the step page, and the last screens open the word on the Encode page and the quiz.
"""

import streamlit as st

from ui import real, runs, sidebar
from ui.lessons import encode_lesson as lesson
from ui.lessons import lesson as first_lesson
from ui.lessons import views as lesson_views
from ui.render import escape
from ui.views import compare as compare_views
from ui.views import encode as encode_views
from ui.views import vocabulary as vocabulary_views

settings = first_lesson.settings()
tok = runs.tokenizer_for(settings)
screens = lesson.screens(tok)
steps = tok.encode_steps(lesson.WORD)
FAMILIES = ("o200k", "llama2")  # the last screen: the other family of BPE, when both tokenizers are on this machine
families = all(real.available(key) for key in FAMILIES)
n = len(screens) + families
i = st.session_state["enc_lesson_step"] = min(max(1, st.session_state["enc_lesson_step"]), n)


def families_screen() -> lesson.Screen | None:
    """The lesson's sentence through GPT-4o and Llama 2 (loaded once per server), or None when one cannot be loaded."""
    found = [real.get(key) for key in FAMILIES]
    missing = [f.error for f in found if f.tokenizer is None]
    if missing:
        st.info(" ".join(missing))
        return None
    return lesson.families_screen(*(compare_views.row(f.label, f.tokenizer, lesson.FAMILIES_SENTENCE) for f in found))


screen = screens[i - 1] if i <= len(screens) else families_screen()
if screen is None:
    st.stop()


def go(to: int) -> None:
    st.session_state["enc_lesson_step"] = to


def on_encode_page() -> None:
    """The word on the Encode page, encoded by this lesson's run: the sidebar takes the lesson's preset, as a link to it would."""
    sidebar.apply_preset(first_lesson.PRESET)
    st.session_state.update(enc_text=lesson.WORD, enc_tokenizer="run", enc_pos=0, enc_playing=False, enc_token=None, real_k=None)


def step_link(merge: int) -> str:
    return f"./?corpus={first_lesson.PRESET}&merge={merge}"


def bytes_row(parts: tuple[bytes, ...]) -> None:
    st.caption("the bytes")
    st.html(encode_views.pairs_row(parts, [None] * (len(parts) - 1), None, lambda rank: None))


st.html(lesson_views.PAGE_CSS)
where, back, forward = st.columns([6, 1, 1], vertical_alignment="center")
where.caption(f"How a tokenizer encodes · the word “{lesson.WORD}” · step {i} of {n}")
back.button("◀ Back", on_click=go, args=(i - 1,), disabled=i <= 1, width="stretch", key="enc_lesson_back")
forward.button("Next ▶", on_click=go, args=(i + 1,), disabled=i >= n, width="stretch", type="primary", key="enc_lesson_next")
st.title(f"{i}. {screen.title}")

say, show = st.columns(2, gap="large")
with say:
    with st.container(key="lesson-text"):
        st.markdown(screen.text)
    if i == 1:  # the word's bytes here, so that the merges fill the other column and all fit the first screen
        bytes_row(steps[0].parts)
    for column, merge in zip(st.columns(max(len(screen.merges), 1)), screen.merges):
        column.page_link(
            "pages/step.py",
            label=f"Merge {merge} on the step page",
            icon=":material/footprint:",
            query_params={"corpus": first_lesson.PRESET, "merge": str(merge)},
        )
    if i >= n - 1:
        if st.button(
            f"Open “{lesson.WORD}” on the Encode page", icon=":material/play_arrow:", on_click=on_encode_page, key="enc_lesson_open"
        ):
            st.switch_page("pages/encode.py")
        st.page_link("pages/encode_quiz.py", label="Which merge applies first? The quiz", icon=":material/quiz:")
with show:
    step = steps[screen.step]
    if screen.rows:  # the two families, side by side on one sentence, each token's id under it
        for row in screen.rows:
            kind = "SentencePiece" if row.family == "sentencepiece" else "byte-level"
            st.html(
                f"<div class='cmp-row'><div class='rowhead'><b>{escape(row.label)}</b> · {kind} · "
                f"{len(row.tokens)} tokens</div>{compare_views.chips(row, [], show_ids=True)}</div>"
            )
        st.caption("Dashed: one character whose bytes are several tokens; the number under each chip is its id.")
    elif i == 1:  # no caption: the text beside it says what the table is, and a projector needs the row
        st.html(vocabulary_views.TABLE_CSS + lesson.merges_table(tok))
    elif screen.step == 0:
        bytes_row(step.parts)
    else:
        before = steps[screen.step - 1]
        st.caption(f"before step {screen.step}: each pair's merge number, the one applied in green")
        st.html(encode_views.pairs_row(before.parts, step.pair_ranks, step.rank, lambda rank: step_link(rank + 1)))
        st.caption("after it")
        st.html(encode_views.pairs_row(step.parts, [tok.ranks.get(p) for p in zip(step.parts, step.parts[1:])], None, lambda rank: None))
