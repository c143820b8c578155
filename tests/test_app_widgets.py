"""Every keyed widget of every page tells a browser that has never seen it the session's value.

A value put in a widget reaches the browser with the run that writes it (its `set_value`). When that
run is cut short (a busy server, a student clicking at once) the browser never gets it, later runs
send the widget with only its default, and the browser shows that default (the first option, the
minimum, "") and sends it back on the next click: the student's setting is lost. So every widget is
drawn by ui.state.widget, which gives it the session's value as its default. Here each page is opened
with its widgets' session values away from Streamlit's defaults, run once more (a run that writes no
widget), and each widget's default is compared with the value the server holds for it.
"""

from __future__ import annotations

import pytest
from conftest import GPT2, open_app
from streamlit.testing.v1.element_tree import (
    Block,
    Button,
    ButtonGroup,
    Checkbox,
    DownloadButton,
    FileUploader,
    NumberInput,
    Radio,
    Selectbox,
    SelectSlider,
    Slider,
    TextArea,
    TextInput,
    Toggle,
    Widget,
)

from ui.pages import PAGES
from ui.views.vocabulary import RARELY, SORTS

SIDEBAR = ["presenter", "source", "pretokenizer", "special_tokens_text", "vocab_size", "algorithm", "tie_break"]
HAS_GPT2 = (GPT2 / "encoder.json").is_file()

# (page, session values set before opening it, the keys of the page's widgets that must be drawn)
CASES = [
    ("pages/step.py", {"step": 4, "speed": 2.0, "sample": "lower newer"}, ["w_step", "w_speed", "w_sample"]),
    (
        "pages/encode.py",
        {"enc_text": "lowest", "enc_speed": 4.0, "real_k": 7},
        ["w_enc_text", "w_enc_tokenizer", "w_enc_view", "w_enc_speed", "w_real_k"],
    ),
    ("pages/encode.py", {"enc_view": "ancestry", "enc_typed": "low"}, ["w_enc_view", "w_enc_typed", "enc_pick"]),
    (
        "pages/tokenize.py",
        {"tok_text": "low lower", "tok_k": 5, "tok_ref_source": "upload", "tok_ref_pretokenizer": "o200k"},
        ["w_tok_text", "w_tok_k", "w_tok_ref_source", "w_tok_ref_pretokenizer"],
    ),
    (
        "pages/vocabulary.py",
        {"vocab_query": "e", "vocab_sort": list(SORTS)[-1], "vocab_at_most": RARELY[-1]},
        ["w_vocab_of", "w_vocab_query", "w_vocab_sort", "w_vocab_at_most"],
    ),
    ("pages/compare.py", {"cmp_text": "lowest newest", "real_k": 3}, ["w_cmp_text", "w_real_k"]),
    ("pages/quirks.py", {"quirk": "tax", "tax_language": "Thai"}, ["w_quirk", "w_tax_language"]),
    (
        "pages/race.py",
        {"race_budget": 3.0, "race_hf": False, "sweep_source": "current", "sweep_merges": 200, "sweep_budget": 2.0},
        ["w_race_budget", "w_race_hf", "w_sweep_source", "w_sweep_merges", "w_sweep_budget"],
    ),
    ("pages/threshold.py", {"threshold": 3}, ["w_threshold"]),
    ("pages/quiz.py", {"quiz_mode": "hard"}, ["w_quiz_mode"]),
    ("pages/lesson.py", {}, []),
    ("pages/encode_lesson.py", {}, []),
    ("pages/encode_quiz.py", {}, []),
    ("pages/diff.py", {}, []),
    ("pages/playlist.py", {}, []),
]
if HAS_GPT2:  # a real tokenizer's choices, away from the first option
    CASES += [
        ("pages/encode.py", {"enc_tokenizer": "gpt2"}, ["w_enc_tokenizer"]),
        ("pages/vocabulary.py", {"vocab_of": "gpt2"}, ["w_vocab_of"]),
        # the merge browser is drawn only while its expander is open
        (
            "pages/tokenize.py",
            {"tok_ref_source": "gpt2", "tok_merges_box": True, "tok_merge_query": "ing"},
            ["w_tok_ref_source", "w_tok_merge_query"],
        ),
    ]


def test_every_page_is_opened_here():
    assert {page for page, _, _ in CASES} == {p.path for p in PAGES}


def widgets(node) -> list[Widget]:
    """Every widget drawn, in the page and the sidebar."""
    if isinstance(node, Widget):
        return [node]
    if isinstance(node, Block):
        return [w for child in node.children.values() for w in widgets(child)]
    return []


def default_and_value(w: Widget) -> tuple[object, object]:
    """What the widget's message says to show when the browser knows nothing else, and the server's value, alike."""
    p = w.proto
    match w:
        case Selectbox() | Radio():
            return p.default, w.index
        case SelectSlider():
            return list(p.default), [w.options.index(w.format_func(w.value))]
        case Slider():
            return list(p.default), [w.value]
        case ButtonGroup():  # pills, segmented controls: indices of the options chosen
            return list(p.default), list(w.indices)
        case NumberInput() | TextInput() | TextArea() | Toggle() | Checkbox():
            return p.default, w.value
    raise AssertionError(f"{type(w).__name__} {w.key!r}: a kind of widget this test does not know; teach default_and_value it")


@pytest.fixture(scope="module")
def at():
    return open_app(source="textbook")


@pytest.mark.parametrize(("page", "values", "keys"), CASES, ids=[f"{p.split('/')[1][:-3]}-{'-'.join(v) or 'sidebar'}" for p, v, _ in CASES])
def test_a_new_browser_is_told_the_sessions_value(at, page, values, keys):
    for key, value in values.items():
        at.session_state[key] = value
    at.switch_page(page).run()
    at.run()  # a run that writes no widget: each must say its value by its default alone
    assert not at.exception, at.exception
    drawn = {w.key: w for w in widgets(at._tree) if not isinstance(w, Button | DownloadButton | FileUploader)}  # no value to keep
    assert set(keys + SIDEBAR) <= set(drawn), f"not drawn: {set(keys + SIDEBAR) - set(drawn)}"
    for key, value in values.items():  # the page kept the values set (each differs from the widget's own default)
        assert at.session_state[key] == value, key
    wrong = {key: default_and_value(w) for key, w in drawn.items() if default_and_value(w)[0] != default_and_value(w)[1]}
    assert not wrong, f"(default, value) of widgets a new browser would show wrongly: {wrong}"
