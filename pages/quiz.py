"""Predict the next merge: pick the pair BPE merges next, see why it won (ties by the rule), keep a score."""

import streamlit as st

from bpe.rule import RULES
from ui import link, runs, sidebar, state
from ui.corpus import BYTE_LEVEL
from ui.lessons import buttons as quiz_buttons
from ui.lessons import quiz
from ui.lessons import views as lesson_views
from ui.lessons.lesson import split_words
from ui.render import show_pair

WORDS_SHOWN = 8  # the most frequent words, as the merges so far have split them
MODES = {"easier": "Easier: see the words and their counts", "hard": "Hard: pairs only, counts hidden"}

settings = sidebar.current()
trace = runs.trace_for(settings)
events = trace.events
# the merges depend on these, not on the vocab size
run = f"{settings.key}|{settings.pretokenizer.spelled}|{','.join(settings.special_tokens)}|{settings.tie_break}"
asked = quiz.askable(events)

st.html(lesson_views.PAGE_CSS)
top, score_box = st.columns([3, 1], vertical_alignment="bottom")
top.title("Predict the next merge")
answers: dict = st.session_state["quiz_answers"] or {}
right, wrong = quiz.score(answers)
score_box.html(lesson_views.box(f'<div class="verdict" style="text-align:right">Score: {right} ✔ &nbsp; {wrong} ✘</div>'))

if not asked:
    st.info(
        f"Nothing to predict: {len(events):,} merge(s), none with two pairs to choose between ({trace.stop_reason}). "
        "Pick a longer corpus in the sidebar."
    )
    st.stop()
if st.session_state["quiz_run"] != run or st.session_state["quiz_merge"] not in asked:
    st.session_state["quiz_run"], st.session_state["quiz_merge"] = run, asked[0]


def pick(qid: str, pair: tuple[bytes, bytes], right: bool) -> None:
    st.session_state["quiz_answers"] = {**(st.session_state["quiz_answers"] or {}), qid: quiz.Answer(pair, right)}


def go_to(k: int) -> None:
    st.session_state["quiz_merge"] = k


def start_over() -> None:
    st.session_state["quiz_answers"] = None
    st.session_state["quiz_merge"] = asked[0]


k = st.session_state["quiz_merge"]
q = quiz.question(run, events, k)
answer = answers.get(q.id)
number = asked.index(k) + 1

state.widget(st.radio, "Mode", list(MODES), format_func=MODES.get, key="quiz_mode", horizontal=True, label_visibility="collapsed")
ask, reply = st.columns([7, 5], gap="large")

with ask:
    st.subheader(f"Which pair is merge {k}?")
    made = [(e.left, e.right) for e in events[: k - 1]]
    recent = ", ".join(show_pair(a, b) for a, b in made[-5:])
    so_far = (f"{'…, ' if len(made) > 5 else ''}{lesson_views.plain(recent)}") if made else "none"
    rule = RULES[settings.tie_break]  # named in the question: a tie is decided by it, so a class must know it before picking
    prefers = rule.prefers.split(" (")[0]
    st.caption(f"Question {number:,} of {len(asked):,} · a tie goes to {prefers}: the {rule.name} rule · merges so far: {so_far}")
    if st.session_state["quiz_mode"] == "easier":
        common, different = runs.most_frequent_for(settings, WORDS_SHOWN)
        rows = split_words(common, made)
        note = "" if different <= WORDS_SHOWN else f"The {WORDS_SHOWN} most frequent of {different:,} different words."
        st.html(lesson_views.words(rows, note))
    else:
        st.caption("Counts hidden: which of these pairs occurs most often in the corpus, split as the merges so far have split it?")
    later = [m for m in asked if m > k]
    quiz_buttons.options(
        q.id,
        q.options,
        q.winner.pair,
        answer.pick if answer else None,
        pick,
        (lambda: go_to(later[0])) if later else None,
        start_over,
        (right, wrong),
    )

with reply:
    if answer is None:
        st.caption("Pick a pair: the answer and the reason appear here.")
    else:
        why = quiz.explain(q, answer.pick, settings.tie_break, made, len(settings.special_tokens))
        st.html(lesson_views.verdict(q, answer.pick, why, settings.tie_break))
        st.html(lesson_views.reveal(q, answer.pick))
        source = st.session_state["source"]
        if source in link.linkable():
            st.page_link(
                "pages/step.py", label=f"See merge {k} on the step page", query_params={**link.run_params(BYTE_LEVEL), "merge": str(k)}
            )
