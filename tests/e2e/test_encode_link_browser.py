"""A teacher's link to the Encode page (?text=…&tokenizer=…) opens it on that text with that tokenizer, in a fresh browser."""

from __future__ import annotations

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
