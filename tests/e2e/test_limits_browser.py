"""A student pastes far more than a text box takes: the box says its limit, refuses in one sentence and keeps its text."""

from __future__ import annotations

from .conftest import open_from_sidebar, shots, small_text, wait_idle


def test_a_chapter_too_long_for_the_tokenize_box_is_refused_in_one_sentence(page):
    open_from_sidebar(page, "Tokenize & export", "Tokenize & export")
    box = page.get_by_label("Text to tokenize (up to 100,000 characters)")  # the limit, beside the box
    box.fill("A paragraph the class reads together.")
    box.press("Control+Enter")
    wait_idle(page)
    box.fill("many words " * 20_000)  # 220,000 characters: a pasted book
    box.press("Control+Enter")
    wait_idle(page)
    said = page.get_by_text("That text has 220,000 characters; this box takes up to 100,000 (a book chapter), so it was not taken.")
    said.wait_for(timeout=30_000)
    assert box.input_value() == "A paragraph the class reads together."  # the browser was sent the text back
    assert page.locator('[data-testid="stException"]').count() == 0
    shots(page, "limits-tokenize")
    assert small_text(page) == []
