"""Every text box has a limit, said in its label; a longer text is refused in one sentence and the box keeps what it had.

A class's server must not be made to hold or work on megabytes of one student's text:
ui.state.LIMITS gives every box its limit (a sentence, a paragraph, a book chapter) and
state.widget refuses past it. The Tokenize page's long texts (past a page) are tokenized in
a worker process, the page showing its first page meanwhile.
"""

from __future__ import annotations

import pytest
from conftest import open_app, rerun_until

import ui.work
from bpe import Tokenizer, pretokenize, train
from bpe.spec import TrainSpec
from serve.jobs import RunKey
from ui import state

# (page, sidebar preset, the widget's key, whether the sidebar holds it itself)
BOXES = [
    ("pages/tokenize.py", "textbook", "tok_text", False),
    ("pages/tokenize.py", "textbook", "tok_merge_query", False),
    ("pages/step.py", "textbook", "sample", False),
    ("pages/compare.py", "textbook", "cmp_text", False),
    ("pages/encode.py", "textbook", "enc_text", False),
    ("pages/vocabulary.py", "textbook", "vocab_query", False),
    ("pages/step.py", "paste", "pasted", True),
    ("pages/step.py", "textbook", "special_tokens_text", True),
]


OPENS = {"tok_merge_query": "tok_merges_box"}  # a box drawn only while its expander is open: the expander's key


def box(at, key: str, kept: bool):
    opens = OPENS.get(key)
    if opens is not None and not (opens in at.session_state and at.session_state[opens]):
        at.session_state[opens] = True
        at.run()
    own = key if kept else "w_" + key
    found = [w for w in [*at.text_area, *at.text_input] if w.key == own]
    assert found, f"no text box {own} on the page"
    return found[0]


def shown_warnings(at) -> list[str]:
    return [w.value for w in at.warning]


@pytest.mark.parametrize("page, source, key, kept", BOXES)
def test_a_text_past_the_limit_is_refused_in_one_sentence(page, source, key, kept):
    limit = state.LIMITS[key]
    at = open_app(page, source=source)
    assert box(at, key, kept).label.endswith(f"(up to {limit.chars:,} characters)")  # the limit, said beside it
    box(at, key, kept).set_value("ab").run()
    before = at.session_state[key]
    box(at, key, kept).set_value("x" * (limit.chars + 1)).run()
    assert not at.exception, at.exception
    said = [w for w in shown_warnings(at) if w.startswith("That text has")]
    assert said == [limit.refusal(limit.chars + 1)], shown_warnings(at)
    assert at.session_state[key] == before == box(at, key, kept).value  # the box shows what it had, and nothing kept the long one
    assert at.session_state["limited"][key] == (before, "")
    at.run()
    assert not [w for w in shown_warnings(at) if w.startswith("That text has")]  # said once


@pytest.mark.parametrize("page, source, key, kept", BOXES[:2])
def test_a_text_at_the_limit_is_taken(page, source, key, kept):
    limit = state.LIMITS[key]
    at = open_app(page, source=source)
    box(at, key, kept).set_value("ab " * (limit.chars // 3)).run()
    assert not at.exception and at.session_state[key] == "ab " * (limit.chars // 3)


PAGES = (
    "step",
    "race",
    "threshold",
    "tokenize",
    "vocabulary",
    "encode",
    "compare",
    "quirks",
    "lesson",
    "quiz",
    "encode_lesson",
    "encode_quiz",
    "playlist",
)


def text_boxes(at) -> set[str]:
    return {w.key.removeprefix("w_") for w in [*at.text_area, *at.text_input]}


def test_every_text_box_on_every_page_has_a_limit():
    keys = set()
    for page in PAGES:
        keys |= text_boxes(open_app(f"pages/{page}.py"))
    keys |= text_boxes(open_app("pages/step.py", source="paste"))  # the sidebar's paste box
    at = open_app("pages/encode.py")
    at.session_state["enc_view"] = "ancestry"  # the token box is drawn beside the merge tree
    keys |= text_boxes(at.run())
    assert {"tok_text", "sample", "pasted", "enc_typed", "cmp_text"} <= keys  # the boxes were drawn
    assert keys <= set(state.LIMITS), f"text boxes without a limit: {keys - set(state.LIMITS)}"


# ---------------------------------------------------------------------------
# the Tokenize page: a long text in a worker process


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_a_long_text_is_counted_whole_in_a_worker():
    text = "the cat sat on the mat. " * 400  # 9,600 characters: past a page
    at = open_app("pages/tokenize.py", source="ties")
    at.text_area(key="w_tok_text").set_value(text).run()
    assert not at.exception, at.exception
    rerun_until(at, lambda at: "tokenize" not in at.session_state["watching"], what="the worker's tokenizing")
    [(key, _)] = ui.work.pool().find(lambda key: isinstance(key, RunKey) and key.purpose == "tokenize")  # in a worker process
    spec = TrainSpec(pretokenizer="whitespace", special_tokens=("<|endoftext|>",))
    merges = train(
        pretokenize(b"aaaa aaa aa abab abab baba baba ab ba a b", pretokenizer="whitespace", special_tokens=spec.special_tokens), 8, spec
    ).merges
    expected = Tokenizer.from_merges(list(merges), spec.special_tokens, "whitespace").pieces(text)
    assert metric(at, "Tokens") == f"{len(expected):,}"  # the whole text, not its first page


def test_the_serving_page_lists_every_limit():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "serving.md").read_text()
    for key, limit in state.LIMITS.items():
        assert f"| {limit.chars:,} characters |" in page, f"docs/serving.md does not list {key}'s limit, {limit.chars:,} characters"
