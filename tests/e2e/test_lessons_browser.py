"""A student follows the guided lesson to its end and answers quiz questions, on a projector-sized screen."""

from .conftest import clipped, open_from_sidebar, pick, settled, shots, small_text, wait_idle


def open_page(page, title: str) -> None:
    open_from_sidebar(page, title)


def clipped_here(page) -> list[str]:
    """clipped(page) without the sidebar's select boxes, which this page does not draw (long preset names cut off at 1280 px)."""
    values = page.get_by_test_id("stSidebar").locator("input").evaluate_all("els => els.map(e => e.value.slice(0, 80))")
    return [text for text in clipped(page) if text not in values]


def shown(locator) -> str:
    """The text a student reads (non-breaking spaces as spaces)."""
    return locator.inner_text().replace("\xa0", " ")


BEYOND_JS = """
() => { const edge = document.querySelector('[data-testid="stMainBlockContainer"]').getBoundingClientRect().right;
        return [...document.querySelectorAll('.lesson *')]
          .filter(el => el.offsetParent && el.getBoundingClientRect().right > edge + 1)
          .map(el => el.innerText.trim().slice(0, 40)); }
"""
BROKEN_CODE_JS = """
() => [...document.querySelectorAll('.st-key-lesson-text code')].filter(c => c.getClientRects().length > 1).map(c => c.innerText)
"""


def look(page, name: str) -> None:
    """Screenshots at both sizes, then the projector's 1280x720: nothing cut off, nothing past the right edge."""
    shots(page, name)
    size = page.viewport_size
    page.set_viewport_size({"width": 1280, "height": 720})
    settled(page)
    assert clipped_here(page) == [], name
    assert page.evaluate(BEYOND_JS) == [], name  # nothing past the page's own right edge
    assert page.evaluate(BROKEN_CODE_JS) == [], name  # no `s + t` broken across two lines
    assert small_text(page) == [], name  # links, table headers: 18 px at least
    page.set_viewport_size(size)
    settled(page)


def test_student_clicks_through_the_whole_lesson(page):
    open_page(page, "Guided lesson")
    titles = []
    for n in range(1, 8):
        heading = page.locator("h1").first
        heading.wait_for()
        titles.append(heading.inner_text())
        assert titles[-1].startswith(f"{n}. ")
        look(page, f"lesson-{n}")
        if n < 7:
            page.get_by_role("button", name="Next ▶").click()
            wait_idle(page)
    assert page.get_by_role("button", name="Next ▶").is_disabled()
    assert "tie" in titles[2].lower() and "s + t" in titles[2]

    page.get_by_role("button", name="◀ Back").click()
    wait_idle(page)
    assert page.locator("h1").first.inner_text().startswith("6. ")


def test_lesson_links_open_the_step_page_at_the_merge(page):
    open_page(page, "Guided lesson")
    link = page.get_by_role("link", name="See merge 1 on the step page")
    assert "corpus=textbook" in link.get_attribute("href") and "merge=1" in link.get_attribute("href")
    link.click()
    wait_idle(page)
    page.get_by_role("heading", name="Step through BPE training").wait_for()
    assert "corpus=textbook" in page.url and "merge=1" in page.url


def test_student_answers_quiz_questions_right_and_wrong(page):
    pick(page, "Corpus", "low / lower / widest / newest (textbook)")
    open_page(page, "Predict the next merge")
    look(page, "quiz-question")

    # merge 1 is the tie: s + t beats e + s on the bytes
    page.get_by_role("button", name="s + t").click()
    wait_idle(page)
    main = page.get_by_test_id("stMain")
    assert "Right: s + t merges next" in shown(main)
    assert "s (byte 115) is greater than e (byte 101)" in shown(main)
    assert "Score: 1 ✔" in shown(main)
    look(page, "quiz-right")
    page.set_viewport_size({"width": 1280, "height": 720})
    settled(page)
    next_button = page.get_by_role("button", name="Next question ▶")
    assert next_button.evaluate("e => e.getBoundingClientRect().bottom") <= 720  # on a projector's first screen
    right = page.get_by_role("button", name="s + t ✔ right")
    assert right.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(200, 240, 207)"  # green, and it says so
    page.set_viewport_size({"width": 1400, "height": 2200})

    page.get_by_role("button", name="Next question ▶").click()
    wait_idle(page)
    page.get_by_role("button", name="w + e").click()  # merge 2 is e + st (9); w + e has 8
    wait_idle(page)
    assert "Not this time: e + st merges next" in shown(main)
    assert "1 ✔" in shown(main) and "1 ✘" in shown(main)
    pick_ = page.get_by_role("button", name="w + e ✘ your pick")
    assert pick_.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(253, 226, 228)"  # red, and it says so
    look(page, "quiz-wrong")


def test_quiz_on_a_hostile_corpus_shows_it_as_text(page):
    dialogs = []
    page.on("dialog", lambda d: dialogs.append(d.message))
    pick(page, "Corpus", "Paste your own text")
    box = page.get_by_label("Text")
    box.fill("<script>alert(1)</script> <img src=x onerror=alert(1)> *bold* [a](http://x) " * 3)
    box.press("Control+Enter")
    wait_idle(page)
    open_page(page, "Predict the next merge")
    options = page.locator(".st-key-quiz-options button")
    options.first.wait_for()
    assert page.locator("img[src=x]").count() == 0
    options.first.click()
    wait_idle(page)
    assert page.locator("img[src=x]").count() == 0
    assert dialogs == []
    look(page, "quiz-hostile")
