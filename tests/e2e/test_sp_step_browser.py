"""A student steps through a SentencePiece run on the step page: the family picked in the sidebar, or opened from a link.

Screenshots (tests/screenshots/sp-step-*.png, at 1280x720 and 1920x1080) are for a person to look at; the checks
are what a projector needs: the card and both tables on the first screen, nothing cut off, text at least 18 px,
and the numbers in the card the ones drawn in the tables.
"""

from __future__ import annotations

import re

from .conftest import SMALL_TEXT_JS, clipped, pick, settled, shots, wait_idle


def merge_shown(page) -> int:
    return int(re.search(r"Merge\s+([\d,]+)\s+of", page.locator(".merge-card").inner_text()).group(1).replace(",", ""))


def test_the_family_picked_in_the_sidebar_steps_through_sentencepiece(page):
    pick(page, "Corpus", "F1 H2O 東京タワー (scripts, digits)")
    pick(page, "Tokenizer family", "SentencePiece (Llama 2)")
    page.locator(".merge-card").wait_for()
    assert merge_shown(page) == 1 and "family=sentencepiece" in page.url
    page.locator("h1").click()
    page.keyboard.press("ArrowRight")
    wait_idle(page)
    assert merge_shown(page) == 2 and "merge=2" in page.url
    card = page.locator(".merge-card").inner_text().replace("\n", " ")
    assert "▁ + F → ▁F" in card and "two scripts" in card
    # the refused pair is drawn among the candidates, greyed, with its reason
    refused = page.locator("table.sp-pairs tr.refused").first.inner_text()
    assert "F + 1" in refused and "refused: two scripts" in refused


def test_a_projector_sees_the_card_and_both_tables_and_the_numbers_agree(page, app_url):
    page.goto(f"{app_url}/?corpus=scripts&family=sentencepiece&merge=2")
    wait_idle(page, 120_000)
    page.locator(".merge-card").wait_for(timeout=120_000)
    page.set_viewport_size({"width": 1280, "height": 720})
    settled(page)
    assert clipped(page) == []
    assert page.evaluate(SMALL_TEXT_JS) == []
    for selector in (".merge-card", "table.sp-pairs tr.chosen", "table.sp-pieces tr.chosen"):
        assert page.locator(selector).first.evaluate("e => e.getBoundingClientRect().bottom") <= 720, selector
    card = page.locator(".merge-card").inner_text().replace("\n", " ")
    frequency = re.search(r"× (\d+)", card).group(1)
    piece_id = re.search(r"piece id (\d+)", card).group(1)
    chosen = page.locator("table.sp-pairs tr.chosen td").all_inner_texts()
    lit = page.locator("table.sp-pieces tr.chosen td").all_inner_texts()
    assert chosen[:2] == ["▁ + F", frequency]  # the card's pair and frequency are the table's chosen row
    assert lit[:3] == [piece_id, "▁F", "−1"]  # and its id is the lit piece's, with score -(k - 1)
    shots(page, "sp-step")
    # the characters the coverage left out, under the tables
    page.locator(".sp-dropped").scroll_into_view_if_needed()
    assert page.locator(".sp-dropped").inner_text().replace("\n", "").count("×1") == 4
