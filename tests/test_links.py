"""Any URL on any page: whatever a link's query string says, the page draws, and what is wrong gets one sentence.

Anyone can write a link and hand it to a class, so the query string is untrusted input: a merge of '²' (which
str.isdigit() takes), 5,000 digits (which int() refuses), Markdown, HTML, control characters, parameters no page
knows. A property test sends arbitrary query strings to every page and checks that no exception element is drawn;
the examples pin down the cases that once raised.
"""

from __future__ import annotations

import pytest
from apptest import open_app
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ui import link

PAGES = (
    "pages/step.py",
    "pages/race.py",
    "pages/threshold.py",
    "pages/tokenize.py",
    "pages/vocabulary.py",
    "pages/encode.py",
    "pages/compare.py",
    "pages/quirks.py",
    "pages/lesson.py",
    "pages/quiz.py",
    "pages/encode_lesson.py",
    "pages/encode_quiz.py",
    "pages/playlist.py",
)
NAMES = ("corpus", "merge", "rule", "text", "tokenizer", "k", "present", "vocab", "threshold", "playlist", "at", *link.RUN)
# values that reach the parsers' deeper branches, beside arbitrary text: presets small enough to train inline
# (the 2 MB stdlib preset would start a trace in a worker on every example), rules, tokenizers, numbers of every kind
KNOWN = (
    "textbook",
    "ties",
    "wikipedia",
    "paste",
    "cs336",
    "rustbpe",
    "huggingface",
    "run",
    "gpt2",
    "1",
    "0",
    "12",
    "99",
    "merge:2,quirk:numbers",
)
NUMBERS = ("²", "٣", "1e3", "-1", " 7", "0x10", "9" * 5000, "1" * 8, "007", "")
values = st.one_of(st.sampled_from(KNOWN + NUMBERS), st.text(max_size=60), st.integers(-(10**9), 10**12).map(str))
queries = st.dictionaries(st.one_of(st.sampled_from(NAMES), st.text(min_size=1, max_size=8)), values, max_size=4)


@pytest.mark.parametrize("value, expected", [("37", 37), ("0", 0), ("1234567", 1234567), ("007", 7)])
def test_a_link_number_is_ascii_digits(value, expected):
    assert link.number(value) == expected


@pytest.mark.parametrize("value", ["²", "٣", "1e3", "-1", " 7", "7 ", "", "0x10", "9" * 5000, "12345678", "1_000"])
def test_anything_else_is_no_number(value):
    assert link.number(value) is None


@pytest.mark.parametrize(
    "page, params, says",
    [
        ("pages/step.py", {"corpus": "ties", "merge": "²"}, "is not a merge number"),  # the stdlib: the same parsing
        ("pages/step.py", {"corpus": "textbook", "merge": "9" * 5000}, "is not a merge number"),
        ("pages/encode.py", {"text": "abc", "tokenizer": "run", "k": "²"}, "is not a number of merges"),
    ],
)
def test_the_links_that_raised_get_one_sentence(page, params, says):
    at = open_app(page)
    at.query_params.update(params)
    at.run()
    assert not at.exception, at.exception
    [warning] = [w.value for w in at.warning if says in w.value]
    assert len(warning) < 300 and "9" * 50 not in warning  # the value is quoted cut short


@pytest.mark.parametrize("page", PAGES)
def test_no_query_string_raises_on_any_page(page):
    at = open_app(page)

    @settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(params=queries)
    def any_link(params):
        at.query_params.clear()
        at.query_params.update(params)
        at.run()
        assert not at.exception, (params, at.exception)

    any_link()
