"""A student opens the app, picks a preset and steps through merges."""

from .conftest import pick, shot, wait_idle


def test_student_steps_through_textbook_corpus(page):
    pick(page, "Corpus", "low / lower / widest / newest (textbook)")
    card = page.locator(".merge-card")
    card.wait_for()
    assert "Merge 1 of 12" in card.inner_text()
    assert "s + t" in card.inner_text().replace("\n", " ").replace("  ", " ") or "st" in card.inner_text()
    shot(page, "step-1")

    page.get_by_role("button", name="Next ▶").click()
    wait_idle(page)
    text = page.locator(".merge-card").inner_text()
    assert "Merge 2 of 12" in text and "est" in text
    # the words rewritten by 'e + st': widest and newest, before -> after
    words = page.locator(".word-row").all_inner_texts()
    assert any("× 6" in w for w in words) and any("× 3" in w for w in words)
    shot(page, "step-2")

    page.get_by_role("button", name="◀ Previous").click()
    wait_idle(page)
    assert "Merge 1 of 12" in page.locator(".merge-card").inner_text()


def test_hostile_corpus_is_shown_as_text(page):
    pick(page, "Corpus", "Paste your own text")
    box = page.get_by_label("Text")
    box.fill("<script>alert(1)</script> <img src=x onerror=alert(1)> <script>alert(1)</script>")
    box.press("Control+Enter")
    wait_idle(page)
    dialogs = []
    page.on("dialog", lambda d: dialogs.append(d.message))
    page.locator(".merge-card").wait_for()
    # no element was injected, and the text shows as text
    assert page.locator("img[src=x]").count() == 0
    tokens = "".join(page.locator(".tok").all_inner_texts())
    assert "<script>alert(1)</script>" in tokens.replace("␣", " ")  # the sample sentence, as text
    assert dialogs == []
    shot(page, "step-hostile")


def test_play_advances_merges_by_itself(page):
    pick(page, "Corpus", "low / lower / widest / newest (textbook)")
    page.locator(".merge-card").wait_for()
    page.get_by_test_id("stCheckbox").get_by_text("Play").click()
    page.wait_for_function("() => /Merge\\s+[3-9]/.test(document.querySelector('.merge-card')?.innerText || '')", timeout=20_000)
    page.get_by_test_id("stCheckbox").get_by_text("Play").click()  # stop
    wait_idle(page)


def test_real_corpus_steps_quickly(page):
    pick(page, "Corpus", "Python's own docs (stdlib docstrings, 2 MB)")
    page.locator(".merge-card").wait_for(timeout=120_000)
    assert "of 1000" in page.locator(".merge-card").inner_text()
    page.get_by_role("button", name="Next ▶").click()
    wait_idle(page)
    assert "Merge 2 of 1000" in page.locator(".merge-card").inner_text()
    shot(page, "step-stdlib")
