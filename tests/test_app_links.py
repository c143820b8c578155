"""Every page's URL names the sidebar's training run, and the sidebar's page links carry it (issue 28.2), driven by AppTest.

A link names the preset and each setting that differs from the preset's; opening it brings that run, and a page
opened from the sidebar, reloaded or copied keeps it.
"""

from __future__ import annotations

from urllib.parse import parse_qs

import pytest
from conftest import open_app

from ui.pages import PAGES


def page_links(at) -> dict[str, dict[str, str]]:
    """The sidebar's page links: url path -> their query parameters."""
    return {link.proto.page: {k: v[0] for k, v in parse_qs(link.proto.query_string).items()} for link in at.sidebar.page_link}


def test_every_page_link_in_the_sidebar_carries_the_run_and_the_page_keeps_it():
    at = open_app(source="stdlib", page="pages/threshold.py", tie_break="rustbpe")
    at.sidebar.selectbox(key="pretokenizer").set_value("cl100k").run()
    run = {"corpus": "stdlib", "pretokenizer": "cl100k", "rule": "rustbpe"}
    assert dict(at.query_params) == run  # the threshold page's own URL
    links = page_links(at)
    pages = len(PAGES)  # every page of app.py's navigation (ui/pages.py)
    assert len(links) == pages and all(params == run for params in links.values())
    at.sidebar.number_input(key="vocab_size").set_value(400).run()
    assert dict(at.query_params) == {**run, "vocab_size": "400"}
    assert all(params == {**run, "vocab_size": "400"} for params in page_links(at).values())


def test_a_link_to_any_page_brings_its_run_and_a_student_who_changed_the_settings_gets_the_teachers():
    student = open_app(source="wikipedia", page="pages/vocabulary.py", algorithm="naive")
    student.query_params.clear()  # the student opens the teacher's link in the same tab
    student.query_params.update(corpus="textbook", pretokenizer="gpt2", vocab_size="300", rule="huggingface")
    student.run()
    assert not student.exception and not student.warning
    said = {
        key: student.session_state[key] for key in ("source", "pretokenizer", "vocab_size", "tie_break", "algorithm", "special_tokens_text")
    }
    assert said == {
        "source": "textbook",
        "pretokenizer": "gpt2",
        "vocab_size": 300,
        "tie_break": "huggingface",
        "algorithm": "heap",  # the link names no algorithm: the default's
        "special_tokens_text": "<|endoftext|>",  # nor special tokens: the preset's
    }


def test_a_page_change_through_the_sidebar_keeps_the_merge_the_step_page_showed():
    at = open_app(source="ties")
    at.button(key="next").click().run()
    at.button(key="next").click().run()
    assert at.session_state["step"] == 3
    at.switch_page("pages/threshold.py")
    at.query_params.clear()
    at.query_params.update(page_links(at)["threshold"])  # what the sidebar's link carries
    at.run()
    at.switch_page("pages/step.py").run()
    assert at.session_state["step"] == 3 and at.query_params["merge"] == "3"  # the same run: nothing was re-applied


@pytest.mark.parametrize(
    "params, says",
    [
        ({"corpus": "textbook", "vocab_size": "9" * 12}, "vocab size '999999999999' is not a number up to 1,000,000"),
        ({"corpus": "textbook", "pretokenizer": "<b>x</b>"}, "pre-tokenizer '\\<b\\>x\\</b\\>' is not one of"),
        ({"corpus": "textbook", "algorithm": "quick"}, "algorithm 'quick' is not one of naive"),
        ({"corpus": "textbook", "special_tokens": "x" * 500}, "special tokens are 500 characters long"),
    ],
)
def test_a_bad_part_of_a_link_gets_one_sentence_and_the_presets_value(params, says):
    at = open_app(page="pages/threshold.py")
    at.query_params.update(params)
    at.run()
    assert not at.exception
    assert [w.value for w in at.warning if says in w.value], [w.value for w in at.warning]
    assert at.session_state["vocab_size"] == 269 and at.session_state["pretokenizer"] == "whitespace"
