"""The quiz page, driven by Streamlit's AppTest (no browser)."""

from __future__ import annotations

import re

import pytest
from conftest import open_app


@pytest.fixture
def app():
    return open_app("pages/quiz.py")


def options(at) -> dict[str, object]:
    """The option buttons by what a student reads on them: 'D s + t' -> button."""
    buttons = [b for b in at.button if (b.key or "").startswith("quiz_option_")]
    return {re.sub(r" (✔ right|✘ your pick)$", "", re.sub(r"\\(.)", r"\1", b.label).replace("**", "")): b for b in buttons}


def answer(at, pair: str):
    button = next(b for label, b in options(at).items() if label.split(" ", 1)[1] == pair)
    return button.click().run()


def click(at, label: str):
    return next(b for b in at.button if b.label == label).click().run()


def shown(at) -> str:
    return " ".join(h.value for h in at.html).replace("\u00a0", " ")


def score(at) -> str:
    return re.search(r"Score: (\d+) ✔ &nbsp; (\d+) ✘", shown(at)).groups()


def test_first_question_offers_the_tie_and_hides_the_answer(app):
    assert "Which pair is merge 1?" in app.subheader[0].value
    pairs = [label.split(" ", 1)[1] for label in options(app)]
    assert {"s + t", "e + s"} <= set(pairs) and len(pairs) == 4
    assert "merges next" not in shown(app) and "Right" not in shown(app)


def test_the_right_pick_is_confirmed_and_the_tie_explained_by_the_rule(app):
    answer(app, "s + t")
    assert not app.exception
    text = shown(app)
    assert "✔ Right: s + t merges next (a tie: the cs336 rule takes it)." in text  # a tie says it is one (issue 28.3)
    assert "A tie: s + t and e + s both occur 9 times." in text
    assert "s (byte 115) is greater than e (byte 101)" in text
    assert all(b.disabled for b in options(app).values())  # one answer per question


def test_the_runner_up_pick_is_told_it_lost_on_the_bytes(app):
    answer(app, "e + s")
    text = shown(app)
    assert "✘ A tie, and the cs336 rule takes s + t: it merges next." in text
    assert "Your pick, e + s, has the same count and lost on the bytes." in text
    marks = {label.split(" ", 1)[1]: b.label for label, b in options(app).items()}
    assert marks["s + t"].endswith("✔ right") and marks["e + s"].endswith("✘ your pick")  # the buttons say it in words too
    colours = shown(app)
    right = next(b.key for label, b in options(app).items() if label.endswith("s + t"))
    wrong = next(b.key for label, b in options(app).items() if label.endswith("e + s"))
    assert f".st-key-{right} button{{background:#c8f0cf" in colours and f".st-key-{wrong} button{{background:#fde2e4" in colours


def test_under_the_rustbpe_rule_e_s_wins_the_first_tie_and_the_ids_say_why():
    at = open_app("pages/quiz.py", tie_break="rustbpe")
    answer(at, "s + t")
    text = shown(at)
    assert "✘ A tie, and the rustbpe rule takes e + s: it merges next." in text
    assert "Ties go to the smaller pair of ids (bytes 0-255, then merges)" in text
    assert "(101, 115) &lt; (115, 116)" in text  # escaped: it is HTML
    assert "Your pick, s + t, has the same count and lost the tie under the rustbpe rule." in text


def test_the_question_names_the_rule_in_force_and_a_tie_lost_under_huggingface_says_it_is_one():
    """Textbook, rule huggingface: s + t and e + s both 9; s + t scored a bare ✘ with no rule named (issue 28.3)."""
    at = open_app("pages/quiz.py", tie_break="huggingface")
    asked = " ".join(c.value for c in at.caption)
    assert "a tie goes to the smaller pair of its ids: the huggingface rule" in asked
    answer(at, "s + t")
    text = shown(at)
    assert "✘ A tie, and the huggingface rule takes e + s: it merges next." in text
    assert "Your pick, s + t, has the same count and lost the tie under the huggingface rule." in text
    assert score(at) == ("0", "1")


def test_a_pick_with_a_lower_count_is_no_tie(app):
    answer(app, "s + t")
    click(app, "Next question ▶")
    answer(app, "w + e")  # merge 2 is e + st (9); w + e has 8
    assert "✘ Not this time: e + st merges next." in shown(app)


def test_score_counts_right_and_wrong_answers(app):
    assert score(app) == ("0", "0")
    answer(app, "s + t")
    assert score(app) == ("1", "0")
    click(app, "Next question ▶")
    assert "Which pair is merge 2?" in app.subheader[0].value
    answer(app, "w + e")  # merge 2 is e + st
    assert score(app) == ("1", "1")
    assert "Your pick, w + e, occurs 8 times: 1 fewer than e + st." in shown(app)


def test_reloading_a_question_keeps_its_order_and_its_answer(app):
    before = list(options(app))
    answer(app, "s + t")
    app.run()
    assert list(options(app)) == before
    assert score(app) == ("1", "0")  # a rerun does not count the answer twice


def test_score_and_question_survive_a_visit_to_another_page(app):
    answer(app, "s + t")
    click(app, "Next question ▶")
    app.switch_page("pages/step.py").run()
    app.switch_page("pages/quiz.py").run()
    assert not app.exception
    assert score(app) == ("1", "0")
    assert "Which pair is merge 2?" in app.subheader[0].value


def test_hard_mode_hides_the_words_and_keeps_the_options(app):
    assert "× 6" in shown(app)  # easier: newest × 6
    app.radio(key="w_quiz_mode").set_value("hard").run()
    assert "× 6" not in shown(app)
    assert len(options(app)) == 4
    app.switch_page("pages/step.py").run()
    app.switch_page("pages/quiz.py").run()
    assert app.radio(key="w_quiz_mode").value == "hard"


def test_start_over_clears_the_score(app):
    answer(app, "w + e")
    click(app, "Start over")
    assert score(app) == ("0", "0")
    assert "Which pair is merge 1?" in app.subheader[0].value


def test_another_corpus_starts_at_its_first_question(app):
    answer(app, "s + t")
    click(app, "Next question ▶")
    app.sidebar.selectbox(key="source").set_value("wikipedia").run()
    assert not app.exception
    assert "Which pair is merge 1?" in app.subheader[0].value
    answer(app, "a + a")  # aaabdaaabac: a a occurs 4 times
    assert "✔ Right: a + a merges next." in shown(app)


@pytest.mark.parametrize("source", ["textbook", "wikipedia", "ties", "stdlib"])
def test_every_preset_asks_questions(source):
    at = open_app("pages/quiz.py", source=source)
    assert not at.exception and not at.error
    assert 2 <= len(options(at)) <= 4


def test_the_reveal_links_to_the_step_page_at_the_merge(app):
    answer(app, "s + t")
    link = app.page_link[0]
    assert link.proto.query_string == "corpus=textbook&merge=1"


def test_empty_pasted_text_gives_a_message(app):
    app.sidebar.selectbox(key="source").set_value("paste").run()
    assert "empty" in app.error[0].value
    assert not app.exception and not options(app)


def test_impossible_vocab_size_gives_a_message(app):
    app.sidebar.number_input(key="vocab_size").set_value(100).run()
    assert "too small" in app.error[0].value
    assert not app.exception


def test_a_corpus_with_nothing_to_choose_says_so(app):
    app.sidebar.selectbox(key="source").set_value("paste").run()
    app.sidebar.text_area(key="pasted").set_value("ab").run()  # one merge, and it had no rival
    assert not app.exception
    assert "Nothing to predict" in app.info[0].value


def test_hostile_text_is_escaped_in_words_and_buttons(app):
    app.sidebar.selectbox(key="source").set_value("paste").run()
    app.sidebar.text_area(key="pasted").set_value("<script>alert(1)</script> <img src=x onerror=alert(1)> [x](http://y) " * 3).run()
    assert not app.exception
    html = shown(app)
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;" in html
    labels = [b.label for b in app.button if (b.key or "").startswith("quiz_option_")]
    assert labels and all(re.search(r"(?<!\\)[<>\[\]()]", label) is None for label in labels)  # Markdown escaped
    first = next(iter(options(app).values()))
    first.click().run()
    assert not app.exception
    assert "<script>alert" not in shown(app)
