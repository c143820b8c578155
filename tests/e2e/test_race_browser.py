"""A student races the four trainers on the stdlib prose and watches the chart grow."""

import re

from .conftest import pick, shot, wait_idle

STDLIB = "Python's own docs (stdlib docstrings, 2 MB)"


def merges_done(page) -> int:
    """The sum of the merges in the progress text ('Merges done of 1,000: naive 12 · heap 340 ✓ …'), or -1."""
    bar = page.locator('[data-testid="stProgress"]')
    if not bar.count():
        return -1
    text = bar.first.inner_text()
    if "Merges done" not in text:
        return -1
    return sum(int(n.replace(",", "")) for n in re.findall(r"(?:naive|positions|parent_set|heap) ([\d,]+)", text))


def open_race(page, budget: str) -> None:
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Algorithm race").click()
    wait_idle(page)
    pick(page, "Corpus", STDLIB)
    box = page.get_by_label("Time budget per algorithm (s)")
    box.fill(budget)
    box.press("Enter")
    wait_idle(page)


def test_race_chart_gains_points_while_it_runs(page):
    open_race(page, "4")
    page.get_by_role("button", name="Start the race").click()
    chart = page.locator('[data-testid="stVegaLiteChart"]')
    samples, images = [], []
    for _ in range(120):  # up to 30 s
        page.wait_for_timeout(250)
        n = merges_done(page)
        if n > 0 and chart.count() and (not samples or n > samples[-1]):
            samples.append(n)
            images.append(chart.first.screenshot())
        if page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').count():
            break
    assert len(samples) >= 3, f"the progress should move several times while running, saw {samples}"
    assert len(set(images)) >= 3, "the chart should be redrawn with more points while the race runs"
    wait_idle(page)

    assert page.locator('[data-testid="stVegaLiteChart"]').count() >= 1
    verdict = page.locator('[data-testid="stAlertContentSuccess"]').first.inner_text()
    assert verdict.startswith("Agreement")
    assert page.locator('[data-testid="stException"]').count() == 0
    shot(page, "race")


def test_stop_keeps_what_the_race_had_done(page):
    open_race(page, "10")
    page.get_by_role("button", name="Start the race").click()
    for _ in range(80):
        page.wait_for_timeout(250)
        if merges_done(page) > 20:
            break
    page.locator(".st-key-race_stop button").first.click()
    wait_idle(page)
    assert "stopped" in page.locator('[data-testid="stAlert"]').first.inner_text()
    assert page.locator('[data-testid="stVegaLiteChart"]').count() == 1
    assert page.locator('[data-testid="stException"]').count() == 0
