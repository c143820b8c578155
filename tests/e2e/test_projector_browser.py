"""Every page on a classroom projector, as the teacher opens it: 1280x720, normal and presenter mode (?present=1).

The first screen of each page: no text cut off, nothing under 18 px, no pale grey text (contrast under 4.5:1),
no traceback, no chart past its box.
Screenshots: tests/screenshots/projector-{page}[-presenter]-1280x720.png (and 1920x1080) for a person to look at.
"""

from __future__ import annotations

import re

import pytest

import ui.pages

from .conftest import HEADINGS, low_contrast, new_context, settled, small_text
from .screens import look

# every page, in the sidebar's order; the first at "/", as its sidebar link opens it (Streamlit answers "/step" with
# "Page not found" over the default page: the default page's address is "/" only)
PAGES = [("" if p is ui.pages.PAGES[0] else p.url_path, HEADINGS[p.url_path]) for p in ui.pages.PAGES]

# what a page says in sentences that presenter mode must not fold away with the step page's notes
SAYS = {"encode": "has the lowest merge number", "compare": "places differently"}
LESSONS = ("lesson", "encode_lesson")  # walked screen by screen: "step 1 of N" says how many (the families' screen
# is the encode lesson's last when GPT-4o's and Llama 2's files are on the machine)


@pytest.mark.parametrize("present", [False, True], ids=["normal", "presenter"])
def test_every_page_reads_from_the_back_of_the_room(browser, app_url, present):
    context = new_context(browser, viewport={"width": 1280, "height": 720})
    page = context.new_page()
    problems = {}
    for path, heading in PAGES:
        page.goto(f"{app_url}/{path}" + ("?present=1" if present else ""))
        settled(page, timeout=120_000)
        if heading and not present:  # presenter mode hides the page title
            page.get_by_role("heading", name=heading).first.wait_for()
        name = f"projector-{path or ui.pages.PAGES[0].url_path}" + ("-presenter" if present else "")
        first_screen = []
        if present and path == "encode":  # the step's sentence is what the class reads: on the first screen
            box = page.get_by_text(SAYS[path]).first.bounding_box()
            if box is None or box["y"] + box["height"] > 720:
                first_screen.append("the step's sentence is below the first screen")
        found = first_screen + look(page, name) + small_text(page) + low_contrast(page)
        if page.get_by_test_id("stException").count():
            found.append("a traceback")
        if page.get_by_text("Page not found").count():
            found.append("Streamlit's 'Page not found' dialog")
        if path in SAYS and not page.get_by_text(SAYS[path]).first.is_visible():
            found.append(f"the sentence with {SAYS[path]!r} is not shown")
        if path in LESSONS:  # and every step of a lesson, as the teacher walks through it
            steps = int(re.search(r"step 1 of (\d+)", page.get_by_text(re.compile(r"step 1 of \d+")).first.inner_text())[1])
            assert steps >= 7, path
            for step in range(2, steps + 1):
                page.get_by_role("button", name="Next ▶").click()
                page.get_by_text(f"step {step} of {steps}").first.wait_for()
                settled(page)
                found += [f"step {step}: {problem}" for problem in look(page, f"{name}-{step}") + small_text(page) + low_contrast(page)]
        if found:
            problems[path] = found
    context.close()
    assert problems == {}
