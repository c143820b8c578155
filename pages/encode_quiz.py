"""Which merge applies first? Pick the pair the encoder merges first in a word of the sidebar's run; see why; keep a score."""

import streamlit as st

from ui import runs, sidebar
from ui.lessons import buttons as quiz_buttons
from ui.lessons import encode_quiz as quiz
from ui.lessons import views as lesson_views
from ui.lessons.quiz import Answer, score
from ui.render import escape, show
from ui.views import encode as encode_views

settings = sidebar.current()
tok = runs.tokenizer_for(settings)
run = f"{settings.key}|{runs.training_spec(settings.spec)}|{settings.num_merges}"


@st.cache_resource(max_entries=8)
def words_of(run: str, _tok, _counts) -> tuple[bytes, ...]:
    """The words worth asking about, found once per run (not per click) and shared by every session."""
    return tuple(quiz.askable(_tok, _counts))


words = words_of(run, tok, runs.pretokenized_for(settings).counts)
st.html(lesson_views.PAGE_CSS)
top, score_box = st.columns([3, 1], vertical_alignment="bottom")
top.title("Which merge applies first?")
answers: dict = st.session_state["enc_quiz_answers"] or {}
right, wrong = score(answers)
score_box.html(lesson_views.box(f'<div class="verdict" style="text-align:right">Score: {right} ✔ &nbsp; {wrong} ✘</div>'))
if not words:
    st.info("No word of this corpus holds two different merges yet: pick more merges or a longer corpus in the sidebar.")
    st.stop()
i = st.session_state["enc_quiz"] = min(max(0, st.session_state["enc_quiz"]), len(words) - 1)
q = quiz.question(run, tok, words[i])
answer = answers.get(q.id)


def pick(qid: str, pair, right: bool) -> None:
    st.session_state["enc_quiz_answers"] = {**(st.session_state["enc_quiz_answers"] or {}), qid: Answer(pair, right)}


def go_to(to: int) -> None:
    st.session_state["enc_quiz"] = to


ask, reply = st.columns([7, 5], gap="large")
with ask:
    st.subheader(f"Encoding “{show(q.word)}”: which pair is merged first?")
    st.caption(f"Question {i + 1} of {len(words)} · a word of the sidebar's corpus, encoded with the run's {len(tok.merges):,} merges")
    st.html(encode_views.pairs_row([bytes([b]) for b in q.word], [None] * (len(q.word) - 1), None, lambda rank: None))
    quiz_buttons.options(
        q.id,
        q.options,
        q.answer.pair,
        answer.pick if answer else None,
        pick,
        (lambda: go_to(i + 1)) if i + 1 < len(words) else None,
        lambda: st.session_state.update(enc_quiz=0, enc_quiz_answers=None),
        (right, wrong),
    )
with reply:
    if answer is None:
        st.caption("Pick a pair: the answer, the reason and the word's steps appear here.")
    else:
        lines = quiz.explain(q, answer.pick)
        verdict = "Right!" if answer.right else "Not this one."
        st.html(lesson_views.box(f'<div class="verdict">{verdict}</div>' + "".join(f"<p>{escape(line)}</p>" for line in lines)))
        steps = tok.encode_steps(q.word)
        st.caption("Every step of the encoder on this word: each pair's merge number, the one applied in green")
        for before, step in zip(steps, steps[1:]):
            st.html(encode_views.pairs_row(before.parts, step.pair_ranks, step.rank, lambda rank: None))
        st.html(encode_views.pairs_row(steps[-1].parts, [None] * (len(steps[-1].parts) - 1), None, lambda rank: None))
