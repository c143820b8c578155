"""What misled a lecturer on the projector (issue 28), each as the lecturer met it, and what the page says now.

One test per finding, named after what a class sees; the screenshots (tests/screenshots/lecture-*.png, at
1280x720 and where it matters 1920x1080) are for a person to look at as a student at the back would.
"""

from __future__ import annotations

import re

from .conftest import SMALL_TEXT_JS, clipped, settled, shots, wait_idle


def open_url(page, url: str, ready: str, timeout: int = 180_000) -> None:
    """Open url (a new session's first run) and wait until its run has ended and `ready` is drawn."""
    page.goto(url)
    wait_idle(page, timeout)
    page.locator(ready).first.wait_for(timeout=timeout)


def text_of(page, selector: str) -> str:
    return re.sub(r"\s+", " ", page.locator(selector).first.inner_text())


# ---------------------------------------------------------------------------
# 4. the heap's caption and its drawing describe the same moment


def test_4_the_heap_at_stdlib_merge_37_says_the_pops_found_the_runner_up_not_the_winner(page, app_url):
    open_url(page, f"{app_url}/?corpus=stdlib&merge=37", ".htree")
    root, second = page.locator('.hnode[data-index="0"]'), page.locator('.hnode[data-index="1"]')
    assert "stale" not in root.get_attribute("class") and "␣ + is" in root.inner_text()  # drawn current: the winner
    assert "stale" in second.get_attribute("class") and "7,151 → 5,904" in second.inner_text()  # s + t, drawn stale
    said = text_of(page, ".heap + .caption")
    assert "Finding the winner: the root [0], ␣ + is 7,155, was current, so it was popped at once." in said
    assert "Finding the runner-up, a + s 6,479, then popped 10 stale entries: s + t [1] 7,151 → 5,904" in said
    assert "The heap before this merge" in text_of(page, ".step-row .right h3")
    page.set_viewport_size({"width": 1280, "height": 720})
    settled(page)
    assert clipped(page) == [] and page.evaluate(SMALL_TEXT_JS) == []
    page.locator(".heap + .caption").evaluate("e => e.scrollIntoView({block: 'end'})")
    shots(page, "lecture-4-heap-stdlib-37")
