"""A teacher's link to the Encode page (?text=…&tokenizer=…) opens it on that text with that tokenizer, in a fresh browser."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

from playwright.sync_api import expect

from .conftest import new_context, shot, wait_idle
from .test_encode_browser import needs_files


def shown(page, text: str, tokenizer: str) -> str:
    """Wait until the page shows text in its box and tokenizer picked; the encoder's rows it then draws."""
    expect(page.locator('[class*="st-key-w_enc_text"] input')).to_have_value(text, timeout=180_000)
    expect(page.get_by_role("combobox", name="Tokenizer", exact=True)).to_have_value(tokenizer, timeout=180_000)
    wait_idle(page, 180_000)
    return page.locator(".enc-rows").inner_text()


@needs_files
def test_a_link_opens_the_encode_page_on_its_word_with_gpt4(page, app_url):
    page.set_default_timeout(180_000)  # the server loads GPT-2, GPT-4 and GPT-4o in the background at start
    page.goto(f"{app_url}/encode?text=strawberry&tokenizer=cl100k")
    wait_idle(page, 180_000)
    rows = shown(page, "strawberry", "GPT-4 (cl100k)")
    assert rows.startswith("bytes") and "#" in rows  # GPT-4's merge numbers between the bytes
    shot(page, "encode-from-a-link")
    box = page.get_by_label("A word or a sentence")
    box.fill("raspberry")
    box.press("Enter")
    page.wait_for_function("() => new URL(location.href).searchParams.get('text') === 'raspberry'")
    wait_idle(page)
    query = parse_qs(urlparse(page.url).query)
    assert query["tokenizer"] == ["cl100k"] and query["corpus"] == ["textbook"]  # every page names the sidebar's run (issue 28.2)
    other = new_context(page.context.browser, viewport={"width": 1280, "height": 720})  # another browser's session
    try:
        student = other.new_page()
        student.set_default_timeout(180_000)
        student.goto(page.url)
        assert shown(student, "raspberry", "GPT-4 (cl100k)") == shown(page, "raspberry", "GPT-4 (cl100k)")
    finally:
        other.close()


def test_the_step_page_button_keeps_the_run_and_presenter_mode(page, app_url):
    """See merge k on the step page is a page switch made by the server (st.switch_page), which sends no widget values:
    the step page still shows the sidebar's run (here from a link: textbook, rustbpe's rule, naive) in presenter mode."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{app_url}/encode?corpus=textbook&rule=rustbpe&algorithm=naive&present=1&text=newest&tokenizer=run")
    wait_idle(page, 180_000)
    button = page.get_by_role("button", name=re.compile(r"See merge \d+ on the step page"))
    merge = int(re.search(r"merge (\d+)", button.inner_text(timeout=60_000)).group(1))
    button.click()
    page.locator(".merge-card").wait_for(timeout=120_000)
    wait_idle(page)
    assert f"Merge {merge} of 12" in page.locator(".merge-card").inner_text().replace("\n", " ")
    query = parse_qs(urlparse(page.url).query)
    said = {name: query.get(name) for name in ("corpus", "rule", "algorithm", "present", "merge")}
    assert said == {"corpus": ["textbook"], "rule": ["rustbpe"], "algorithm": ["naive"], "present": ["1"], "merge": [str(merge)]}
    expect(page.get_by_test_id("stSidebar")).to_have_attribute("data-collapsed", "true")  # presenter mode: folded away
    assert page.locator("h1").count() == 0  # and the page without its title
