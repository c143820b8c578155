"""A teacher's list at 1280x720 on a projector (issue 36, 5-10), each scenario as the teacher met it, with its screenshot.

Screenshots: tests/screenshots/teacher-*-1280x720.png (and 1920x1080), for a person to look at as a student at the
back of the room would; the checks are what that student needs: the numbers drawn are the numbers meant, nothing cut
off, nothing under 18 px.
"""

from __future__ import annotations

import pytest

from bpe import Tokenizer

from .conftest import new_context, settled, small_text, wait_idle
from .screens import look
from .test_encode_browser import TIKTOKEN, needs_files

SENTENCE = "The quick brown fox jumps over the lazy dog"


def opened(browser, url: str, ready: str, timeout: int = 180_000):
    """A fresh browser's page at 1280x720 on url (a new session's first run), once `ready` is drawn and the layout still."""
    context = new_context(browser, viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.set_default_timeout(timeout)
    page.goto(url)
    wait_idle(page, timeout)
    page.locator(ready).first.wait_for(timeout=timeout)
    settled(page, timeout=timeout)
    return page


def on_first_screen(page, selector: str) -> list[str]:
    """The elements matching selector that a class does not see without scrolling at 1280x720 (their text)."""
    page.evaluate("window.scrollTo(0, 0)")
    out = []
    for element in page.locator(selector).all():
        box = element.bounding_box()
        if box is None or box["x"] < 0 or box["x"] + box["width"] > 1280 or box["y"] < 0 or box["y"] + box["height"] > 720:
            out.append(element.inner_text())
    return out


# ---------------------------------------------------------------------------
# 5. Encode: every id of a sentence, in order, at once


@needs_files
@pytest.mark.parametrize("present", [False, True], ids=["normal", "presenter"])
def test_5_the_encode_page_shows_every_id_of_a_sentence_in_order(browser, app_url, present):
    url = f"{app_url}/encode?text={SENTENCE.replace(' ', '%20')}&tokenizer=o200k" + ("&present=1" if present else "")
    page = opened(browser, url, ".enc-ids")
    try:
        ids = [int(i) for i in page.locator(".enc-ids .tid").all_inner_texts()]
        assert ids == Tokenizer.from_openai("o200k_base", folder=TIKTOKEN, download=False).encode(SENTENCE)
        assert "".join(page.locator(".enc-ids .ttext").all_inner_texts()).replace("␣", " ") == SENTENCE
        assert on_first_screen(page, ".enc-ids .tok") == []  # all of them, without scrolling, in presenter mode too
        assert look(page, "teacher-5-encode" + ("-presenter" if present else "")) == []
        assert small_text(page) == []
    finally:
        page.context.close()
