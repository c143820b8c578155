"""Guided lesson: BPE by hand on the textbook corpus, one step per screen, each beside its live data.

The lesson trains on its own preset (ui/lessons/lesson.py), whatever the sidebar says, and
links every step to the step page at the merge it talks about.
"""

import streamlit as st

from ui import corpus as corpora
from ui import runs
from ui.lessons import lesson
from ui.lessons import views as lesson_views
from ui.views import step as step_views

WIDE = {"history"}  # views too wide to sit beside the narration: they go below it

settings = lesson.settings()
trace = runs.trace_for(settings)
events = trace.events
counts = runs.pretokenized_for(settings).counts
text = corpora.SOURCES[lesson.PRESET].text
steps = lesson.steps(text, counts, events)
n = len(steps)
i = st.session_state["lesson_step"] = min(max(1, st.session_state["lesson_step"]), n)
step = steps[i - 1]


def go(to: int) -> None:
    st.session_state["lesson_step"] = to


st.html(lesson_views.PAGE_CSS)
where, back, forward = st.columns([6, 1, 1], vertical_alignment="center")
where.caption(f"Guided lesson · {corpora.SOURCES[lesson.PRESET].label} · step {i} of {n}")
back.button("◀ Back", on_click=go, args=(i - 1,), disabled=i <= 1, width="stretch", key="lesson_back")
forward.button("Next ▶", on_click=go, args=(i + 1,), disabled=i >= n, width="stretch", type="primary", key="lesson_next")
st.title(f"{i}. {step.title}")
if st.session_state["tie_break"] != settings.tie_break:
    st.caption(
        f"This lesson breaks ties by the {settings.tie_break} rule, as the textbook does, whatever the sidebar says; "
        f"the other pages follow the sidebar's {st.session_state['tie_break']} rule, so their merges can differ from these."
    )


def narrate() -> None:
    with st.container(key="lesson-text"):
        st.markdown(step.text)
    if len(step.merges) == 1:
        k = step.merges[0]
        st.page_link("pages/step.py", label=f"See merge {k} on the step page", icon=":material/footprint:", query_params=link(k))
    else:
        st.caption("See them on the step page:")
        for column, k in zip(st.columns(len(step.merges)), step.merges):
            column.page_link("pages/step.py", label=f"Merge {k}", icon=":material/footprint:", query_params=link(k))
    if i == n:
        st.page_link("pages/quiz.py", label="Predict the merges: the quiz", icon=":material/quiz:")


def link(k: int) -> dict[str, str]:
    """The step page's query parameters for merge k of the lesson's corpus."""
    return {"corpus": lesson.PRESET, "merge": str(k)}


def draw() -> None:
    event = events[step.merge - 1]
    if step.view == "heap":
        st.html(step_views.heap_panel(event))
        return
    html = {
        "words": lambda: lesson_views.corpus_and_words(text, counts),
        "pairs": lambda: lesson_views.pairs(counts, events[0]),
        "tie": lambda: lesson_views.duel(event),
        "history": lambda: lesson_views.history(counts, events, step.merge),
        "changes": lambda: lesson_views.changes(event),
        "run": lambda: lesson_views.run(events),
    }[step.view]()
    st.html(html)


if step.view in WIDE:
    narrate()
    draw()
else:
    say, show = st.columns(2, gap="large")
    with say:
        narrate()
    with show:
        draw()
