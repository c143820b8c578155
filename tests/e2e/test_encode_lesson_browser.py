"""A student walks "lowest" through the encoder in the second lesson, opens it on the Encode page, then answers the quiz."""

from .conftest import open_from_sidebar, pick, settled, wait_idle
from .screens import look


def open_page(page, name: str, heading: str) -> None:
    open_from_sidebar(page, name, heading)


def every_merge_on_the_first_screen(page) -> int:
    """At 1280x720, unscrolled: how many rows of step 1's merges table show, each whole (all of them, or fail)."""
    page.set_viewport_size({"width": 1280, "height": 720})
    settled(page)
    rows = page.locator("table.merges tr").filter(has=page.locator("td"))
    boxes = [rows.nth(i).bounding_box() for i in range(rows.count())]
    page.set_viewport_size({"width": 1400, "height": 2200})
    settled(page)
    assert boxes and all(b and b["y"] >= 0 and b["y"] + b["height"] <= 720 for b in boxes), [b and b["y"] + b["height"] for b in boxes]
    return len(boxes)


def test_a_student_walks_lowest_through_the_encoder_and_opens_it_on_the_encode_page(page):
    pick(page, "Tie-break rule", "rustbpe")  # a setting the lesson does not set: the page switch keeps it
    open_page(page, "How a tokenizer encodes", "1. Start from the bytes")
    assert look(page, "encode-lesson-start") == []
    assert every_merge_on_the_first_screen(page) == 12
    next_button = page.get_by_role("button", name="Next ▶")
    for title in ["2. Look up every neighbouring pair", "3. Step 1: s + t"]:
        next_button.click()
        wait_idle(page)
        page.get_by_role("heading", name=title).first.wait_for()
    assert page.locator(".rank.hit").first.inner_text() == "#1"  # merge 1 lit in green: the lowest rank goes first
    assert look(page, "encode-lesson-step") == []
    ending = page.get_by_role("heading", name="Training order, not text order")  # the last screen but one: the other family follows
    while not ending.count() and next_button.is_enabled():
        next_button.click()
        wait_idle(page)
    ending.first.wait_for()
    assert look(page, "encode-lesson-end") == []
    wait_idle(page)
    page.get_by_role("button", name="Open “lowest” on the Encode page").click()
    wait_idle(page)
    page.get_by_role("heading", name="Encode, step by step").first.wait_for()
    assert page.get_by_label("A word or a sentence").input_value() == "lowest"
    assert page.locator('[data-testid="stException"]').count() == 0
    # a page switch made by the server (st.switch_page) sends no widget values: the sidebar's rule is kept all the same
    # (Streamlit dropped it, and the Encode page walked the lesson's run under cs336's rule)
    assert "rule=rustbpe" in page.url
    assert page.get_by_role("combobox", name="Tie-break rule", exact=True).input_value() == "rustbpe"


def test_a_student_answers_which_merge_applies_first(page):
    open_page(page, "Which merge applies first?", "Which merge applies first?")
    options = page.locator('[class*="st-key-quiz_option_"] button')
    options.first.wait_for()  # drawn after the words are counted
    assert options.count() >= 2
    assert look(page, "encode-quiz") == []
    wait_idle(page)  # look() resized the page: a click while it re-renders can land on a button being replaced
    page.locator('[class*="st-key-quiz_option_"] button').filter(has_text="s + t").first.click()
    wait_idle(page)
    page.get_by_text("Right!").first.wait_for()
    assert "✔ right" in page.locator('[class*="st-key-quiz_option_"] button').filter(has_text="s + t").first.inner_text()
    assert look(page, "encode-quiz-answered") == []
    assert page.locator('[data-testid="stException"]').count() == 0


def test_presenter_mode_shows_every_merge_of_step_1_on_the_first_screen(page, app_url):
    page.goto(f"{app_url}/encode_lesson?present=1")  # as the projector opens it: larger type, the sidebar folded
    settled(page, timeout=120_000)
    page.get_by_text("step 1 of").first.wait_for()
    assert every_merge_on_the_first_screen(page) == 12
    page.set_viewport_size({"width": 1280, "height": 720})
    settled(page)
    assert look(page, "encode-lesson-presenter-start") == []
