"""A student checks their own merges: the built-in example on the textbook run and on the stdlib prose, then their files.

Screenshots at 1280x720 and 1920x1080 (tests/screenshots/diff-*.png): the verdict with both lists and the pair
table, and the mistakes tried. What they show is checked against the numbers on the page.
"""

from __future__ import annotations

import pickle
import re

from .conftest import clipped, low_contrast, open_from_sidebar, pick, settled, small_text, wait_idle
from .screens import look

EXAMPLE = "Try a student's list with a tie mistake"


def verdict(page, timeout: int = 120_000) -> str:
    """The verdict line, once the check has ended (the page shows progress until then)."""
    box = page.locator(".diff-head")
    box.wait_for(timeout=timeout)
    return box.inner_text()


def row(page, table: str, css: str) -> list[str]:
    """The cells of the first row of class css in the table of class table."""
    return page.locator(f"table.{table} tr.{css}").first.locator("td").all_inner_texts()


def open_check(page) -> None:
    open_from_sidebar(page, "Check your merges", "Check your own BPE")


def upload(page, name: str, data: bytes) -> None:
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        {"name": name, "mimeType": "text/plain", "buffer": data}
    )
    wait_idle(page)


def test_the_example_on_the_textbook_run(page):
    open_check(page)
    page.get_by_text("Upload the merges your trainer made").wait_for()
    page.get_by_role("button", name=EXAMPLE).click()
    wait_idle(page)
    assert verdict(page).splitlines() == [
        "Your merges part from the reference at merge 1 of 12: a tie broken another way.",
        "Likely cause: ties to the smaller bytes (tie:smaller): a trainer with it makes all of your 12 merges.",
    ]
    # the first difference in both lists, and both pairs in the pair table with the counts the sentence says
    assert row(page, "lists", "first") == ["1", "e + s", "s + t"]
    assert row(page, "pairs", "yours") == ["e + s", "9", "yours"] and row(page, "pairs", "chosen") == ["s + t", "9", "reference"]
    said = page.locator(".diff-cause").inner_text()
    assert "both occur 9 times there" in said and "'s' > 'e'" in said  # the counts of the table, the rule's comparison
    assert row(page, "tried", "cause")[:3] == ["ties to the smaller bytes", "tie:smaller", "12 of 12"]
    assert page.get_by_role("link", name="Open merge 1 on the step page").get_attribute("href").endswith("?corpus=textbook&merge=1")
    assert page.locator('[data-testid="stException"]').count() == 0
    assert look(page, "diff-textbook") == []
    assert look(page, "diff-textbook-tried", "Each known mistake, trained until it parts from your list") == []
    assert small_text(page) == [] and low_contrast(page) == []
    page.locator('[data-testid="stSidebar"]').get_by_text("Presenter mode").click()  # the teacher puts it on the projector
    settled(page)
    assert look(page, "diff-textbook-presenter") == [] and small_text(page) == []
    assert page.locator("table.lists tr.first").first.bounding_box()["y"] < 720  # the first difference on the first screen


def test_the_example_on_the_stdlib_prose_runs_in_a_worker(page):
    open_check(page)
    pick(page, "Corpus", "Python's own docs")
    page.get_by_role("button", name=EXAMPLE).click()
    wait_idle(page)
    said = verdict(page, timeout=240_000)
    k = int(re.search(r"at merge ([\d,]+) of 1,000: a tie broken another way", said).group(1).replace(",", ""))
    assert "(tie:smaller): a trainer with it makes all of your 1,000 merges" in said
    first = row(page, "lists", "first")
    assert first[0] == f"{k:,}" and row(page, "pairs", "yours")[0] == first[1] and row(page, "pairs", "chosen")[0] == first[2]
    mine, theirs = row(page, "pairs", "chosen")[1], row(page, "pairs", "yours")[1]
    assert mine == theirs  # a tie: the same count
    assert look(page, "diff-stdlib") == []
    assert small_text(page) == []


def test_uploads_hostile_and_right(page):
    open_check(page)
    upload(page, "merges.pkl", pickle.dumps([(b"a", b"b")]))
    page.get_by_text("looks like a pickle").wait_for()
    upload(page, "merges.txt", b"<script> window.__pwned=1 </script>\n")
    page.get_by_text("should be two tokens separated by one space").wait_for()
    # a file whose tokens are HTML: checked, and shown as text
    upload(page, "mine.txt", b"(b'<img src=x onerror=window.__pwned=1>', b'x')\n")
    said = verdict(page)
    assert "at merge 1 of 1: a merge that cannot be made there" in said
    assert row(page, "lists", "first")[1] == "<img␣src=x␣onerror=window.__pwned=1> + x"  # as text, spaces shown
    assert page.evaluate("() => window.__pwned") is None
    settled(page)
    assert [text for text in clipped(page) if "add icon" not in text and "Training run" not in text] == []
