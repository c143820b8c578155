"""What both quiz pages draw under a question: its options as buttons, marked once answered, then Next and Start over.

The options stand two to a row (keys quiz_option_0, quiz_option_1, …); once a pick is made they are
disabled and marked in colour and in words (ui/lesson_views: the winner "✔ right", a wrong pick
"✘ your pick", the rest faded), with "Next question ▶" and "Start over" under them, on a projector's
first screen. The pages keep the questions, the answers and the score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from ui.lessons import views
from ui.lessons.quiz import Pair


def options(
    qid: str,
    choices: Sequence,  # ui.lessons.quiz.Option or ui.lessons.encode_quiz.Option: a letter, a pair, a label
    winner: Pair,
    picked: Pair | None,
    pick: Callable[[str, Pair, bool], None],
    next_question: Callable[[], None] | None,
    start_over: Callable[[], None],
    score: tuple[int, int],
) -> None:
    """The option buttons (pick(qid, pair, right) on a click); once answered, their marks and what comes next.

    next_question is None after the last question: the score is said instead.
    """
    grid = st.container(key="quiz-options").columns(2)
    marks = {}
    for n, option in enumerate(choices):
        marks[n] = views.option_mark(option.pair, winner, picked)
        grid[n % 2].button(
            views.option_label(option, views.MARK_WORDS.get(marks[n], "")),
            key=f"quiz_option_{n}",
            on_click=pick,
            args=(qid, option.pair, option.pair == winner),
            disabled=picked is not None,
            width="stretch",
        )
    if picked is None:
        return
    st.html(views.option_colours(marks))  # right green, a wrong pick red, the rest faded: colour and a word
    b1, b2 = st.columns(2)  # here, under the options: on the first screen of a projector
    if next_question is not None:
        b1.button("Next question ▶", on_click=next_question, type="primary", width="stretch")
    else:
        right, wrong = score
        b1.success(f"That was the last question: {right} of {right + wrong} right.")
    b2.button("Start over", on_click=start_over, width="stretch")
