"""The two families of BPE side by side: Llama 2's tokens beside GPT-4o's on Real tokenizers, in the encode lesson's last
screen, and Llama 2 on the Encode page.

Screenshots (tests/screenshots/families-*.png, at 1280x720 and 1920x1080) are for a person to look at; the checks are a
projector's: nothing cut off, text at least 18 px, and the counts said the tokens drawn.
"""

from __future__ import annotations

import re

import pytest

from ui import real
from ui.lessons import encode_lesson

from .conftest import SHOTS, clipped, open_from_sidebar, settled, wait_idle
from .screens import look
from .test_encode_browser import needs_files, small_text

needs_llama = pytest.mark.skipif(not real.available("llama2"), reason="../shared/llama2 not present")


def row_of(page, label: str):
    return page.locator(".cmp-row").filter(has=page.locator(".rowhead b", has_text=re.compile(f"^{label}$")))


@needs_files
@needs_llama
def test_llama_2s_tokens_beside_gpt_4os(page):
    page.set_default_timeout(120_000)
    open_from_sidebar(page, "Real tokenizers", "Real tokenizers side by side", 180_000)
    box = page.get_by_label("Text to compare")
    box.fill(encode_lesson.FAMILIES_SENTENCE)
    box.press("Control+Enter")
    wait_idle(page)
    page.locator("table.compare").wait_for(timeout=180_000)
    gpt, llama = row_of(page, "GPT-4o"), row_of(page, "Llama 2")
    for row in (gpt, llama):  # the count said is the ids drawn under the chips
        said = int(re.search(r"· (\d+) tokens", row.locator(".rowhead").inner_text()).group(1))
        assert row.locator(".tid").all_inner_texts() and sum(len(t.split()) for t in row.locator(".tid").all_inner_texts()) == said
    chips = llama.locator(".ttext").all_inner_texts()
    assert chips[:3] == ["▁The", "▁new", "est"] and "▁" in chips and "🦙" in "".join(chips)
    assert gpt.locator(".ttext").all_inner_texts()[:2] == ["The", "␣newest"]
    for width, height in ((1280, 720), (1920, 1080)):
        page.set_viewport_size({"width": width, "height": height})
        settled(page)
        gpt.evaluate("e => e.scrollIntoView({block: 'start'})")
        settled(page)
        page.screenshot(path=str(SHOTS / f"families-compare-{width}x{height}.png"))
        if width == 1280:
            assert llama.evaluate("e => e.getBoundingClientRect().bottom") <= 720  # both rows on one screen
            assert clipped(page) == [] and small_text(page) == []


@needs_files
@needs_llama
def test_the_encode_lessons_last_screen_sets_the_two_families_side_by_side(page, app_url):
    page.set_default_timeout(120_000)
    page.goto(f"{app_url}/encode_lesson")
    settled(page, timeout=120_000)
    next_button = page.get_by_role("button", name="Next ▶")
    while next_button.is_enabled():
        next_button.click()
        wait_idle(page)
    page.get_by_role("heading", name=encode_lesson.FAMILIES_TITLE).first.wait_for(timeout=180_000)
    assert [b.inner_text() for b in page.locator(".cmp-row .rowhead b").all()] == ["GPT-4o", "Llama 2"]
    text = page.get_by_test_id("stMain").inner_text()
    n_gpt, n_llama = (int(n) for n in re.search(r"(\d+) tokens against (\d+)\.", text).groups())
    assert [len(page.locator(".cmp-row").nth(i).locator(".tid").all()) <= n for i, n in enumerate((n_gpt, n_llama))] == [True, True]
    cut = look(page, "families-lesson")
    assert cut == [] and small_text(page) == []


@needs_llama
def test_llama_2_on_the_encode_page(page):
    page.set_default_timeout(120_000)
    open_from_sidebar(page, "Encode, step by step", "Encode, step by step", 180_000)
    page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').filter(has_text="Tokenizer").click()
    page.get_by_role("option", name="Llama 2", exact=True).click()
    wait_idle(page)
    page.locator(".enc-rows").wait_for(timeout=180_000)
    assert page.locator(".enc-rows .what").first.inner_text() == "characters"
    assert page.locator(".enc-rows .tok").first.inner_text() == "▁"
    assert "tokenizer=llama2" in page.url
    cut = look(page, "families-encode-llama2")
    assert cut == [] and small_text(page) == []
