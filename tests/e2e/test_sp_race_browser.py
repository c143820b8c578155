"""A student races the sidebar's SentencePiece run: ours compiled, sentencepiece itself and ours in Python, to the same pieces.

The race runs in the server's worker pool; the page polls it until the verdict shows. The screenshot
(tests/screenshots/sp-race-*.png) is for a person to look at; the checks are a projector's: nothing cut off, text
at least 18 px, and the verdict's count the pieces the chart's title names.
"""

import re

import pytest

from .conftest import SMALL_TEXT_JS, settled, wait_idle
from .screens import look

VERDICT = '[data-testid="stAlertContentSuccess"], [data-testid="stAlertContentError"]'


def test_the_sentencepiece_race_shows_the_same_pieces_and_the_time_to_them(page, app_url):
    pytest.importorskip("sentencepiece")
    page.goto(f"{app_url}/race?corpus=scripts&family=sentencepiece")
    wait_idle(page)
    page.get_by_role("heading", name="SentencePiece: ours and sentencepiece itself").wait_for()
    page.get_by_role("button", name="Start the race").click()
    page.locator(VERDICT).first.wait_for(timeout=120_000)
    settled(page)
    said = page.locator(VERDICT).first.inner_text()
    assert "The same 80 pieces, scores and types, in the same order" in said
    rows = page.locator('[data-testid="stTable"] tbody tr').all_inner_texts()
    assert len(rows) == 3 and all("✓ the same" in r for r in rows)
    assert re.search(r"ours compiled [\d.]+ s, sentencepiece [\d.]+ s of processor time", page.get_by_test_id("stMain").inner_text())
    cut = look(page, "sp-race", "SentencePiece: ours and sentencepiece itself")
    assert cut == []
    assert page.evaluate(SMALL_TEXT_JS) == []
