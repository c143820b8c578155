"""The guided lesson page, driven by Streamlit's AppTest (no browser)."""

from __future__ import annotations

import re
from urllib.parse import parse_qs

import pytest
from conftest import open_app

from bpe import pretokenize, train
from ui.corpus import SOURCES
from ui.lessons import lesson


@pytest.fixture
def app():
    return open_app("pages/lesson.py")


@pytest.fixture(scope="module")
def steps():
    source = SOURCES[lesson.PRESET]
    corpus = pretokenize(source.text.encode(), pretokenizer=source.pretokenizer)
    return lesson.steps(source.text, corpus.counts, train(corpus, source.merges, algorithm="heap", detail=True).events)


def title(at) -> str:
    return at.title[0].value


def step_links(at) -> list[dict[str, list[str]]]:
    """The query parameters of the links to the step page (the default page: its url path is ''), in the page: the sidebar links to every page."""
    return [parse_qs(link.proto.query_string) for link in at.main.page_link if link.proto.page == ""]


def test_next_and_back_walk_the_steps(app, steps):
    assert title(app) == f"1. {steps[0].title}"
    assert app.button(key="lesson_back").disabled
    for n in range(2, len(steps) + 1):
        app.button(key="lesson_next").click().run()
        assert not app.exception
        assert title(app) == f"{n}. {steps[n - 1].title}"
    assert app.button(key="lesson_next").disabled
    app.button(key="lesson_back").click().run()
    assert title(app) == f"{len(steps) - 1}. {steps[-2].title}"


def test_every_step_shows_the_narration_computed_from_the_run(app, steps):
    for n, step in enumerate(steps, 1):
        assert any(m.value == step.text for m in app.markdown), step.title
        if n < len(steps):
            app.button(key="lesson_next").click().run()


def test_links_open_the_step_page_at_each_steps_merges(app, steps):
    for n, step in enumerate(steps, 1):
        links = step_links(app)
        assert links == [{"corpus": ["textbook"], "merge": [str(k)]} for k in step.merges], step.title
        if n < len(steps):
            app.button(key="lesson_next").click().run()
    assert any(link.proto.page == "quiz" for link in app.page_link)  # the last step leads to the quiz


def test_the_tie_step_shows_the_two_pairs_and_their_bytes(app):
    app.button(key="lesson_next").click().run()
    app.button(key="lesson_next").click().run()
    html = re.sub(r"<[^>]+>", "", " ".join(h.value for h in app.html))  # the text a student reads
    assert "s + t" in html and "e + s" in html and "bytes 115 | 116" in html and "bytes 101 | 115" in html
    assert step_links(app) == [{"corpus": ["textbook"], "merge": ["1"]}]


def test_position_survives_a_visit_to_another_page(app):
    app.button(key="lesson_next").click().run()
    app.button(key="lesson_next").click().run()
    app.switch_page("pages/quiz.py").run()
    app.switch_page("pages/lesson.py").run()
    assert title(app).startswith("3. The tie")


def test_the_lesson_works_whatever_the_sidebar_says(app):
    app.sidebar.selectbox(key="source").set_value("paste").run()  # empty: the other pages say what to fix
    assert not app.exception and not app.error
    assert title(app).startswith("1. ")


def test_the_lesson_keeps_the_textbook_rule_and_says_so_when_the_sidebar_has_another(app):
    assert not [c for c in app.caption if "breaks ties" in c.value]
    app.sidebar.selectbox(key="tie_break").set_value("huggingface").run()
    assert any("breaks ties by the cs336 rule" in c.value and "sidebar's huggingface rule" in c.value for c in app.caption)
    app.button(key="lesson_next").click().run()
    app.button(key="lesson_next").click().run()
    assert "bytes 115 | 116" in re.sub(r"<[^>]+>", "", " ".join(h.value for h in app.html))  # still s + t winning on the bytes
