"""A student races the trainers (the compiled heap too) on the stdlib prose and watches the chart grow, stops a race, sweeps, times workers.

Every run happens in the server's worker pool; the page polls it, so the
browser's script state is mostly "not running" while a race goes on.
"""

from playwright.sync_api import expect

from bpe.core import core

from .conftest import enter, open_from_sidebar, pick, settled, shot, wait_idle
from .screens import look

STDLIB = "Python's own docs (stdlib docstrings, 2 MB)"


def merges_done(page) -> int:
    """The sum of the merges in the progress text ('Merges done of 1,000: naive 12 · heap 340 ✓ …'), or -1."""
    return page.evaluate(f"() => ({MERGES_DONE_JS})()")


# the same in the browser, so that a test can wait for it to change (page.wait_for_function) instead of sleeping
MERGES_DONE_JS = """() => {
  const text = [...document.querySelectorAll('[data-testid="stProgress"]')].map(e => e.innerText).find(t => t.includes('Merges done'));
  if (!text) return -1;
  return [...text.matchAll(/(?:naive|positions|parent_set|heap|heap_c) ([\\d,]+)/g)].reduce((sum, m) => sum + +m[1].replaceAll(',', ''), 0);
}"""
VERDICT = '[data-testid="stAlertContentSuccess"], [data-testid="stAlertContentError"]'


def wait_for_race(page, condition: str, arg=None, timeout: int = 120_000) -> None:
    """Wait for a JS condition over the race's merges done (`done`) and whether the verdict is shown (`verdict`): an event, not a pause."""
    page.wait_for_function(
        f"arg => {{ const done = ({MERGES_DONE_JS})(), verdict = !!document.querySelector({VERDICT!r}); return {condition}; }}",
        arg=arg,
        timeout=timeout,
    )


def open_race(page, budget: str, corpus: str = STDLIB) -> None:
    open_from_sidebar(page, "Algorithm race")
    pick(page, "Corpus", corpus)
    box = page.get_by_label("Time budget per algorithm (s)")
    box.fill(budget)
    box.press("Enter")
    wait_idle(page)


def verdict(page) -> str:
    texts = page.locator(VERDICT).all_inner_texts()
    return texts[0] if texts else ""


def test_race_chart_gains_points_while_it_runs(page):
    open_race(page, "4")
    page.get_by_role("button", name="Start the race").click()
    chart = page.locator('[data-testid="stVegaLiteChart"]')
    samples, images = [], []
    while not verdict(page):  # each time the progress moves on (up to 2 minutes on a busy machine), the chart as drawn
        wait_for_race(
            page, "verdict || (done > arg && document.querySelector('[data-testid=\"stVegaLiteChart\"]'))", samples[-1] if samples else 0
        )
        n = merges_done(page)
        if n > (samples[-1] if samples else 0) and chart.count():
            samples.append(n)
            images.append(chart.first.screenshot())
    # subtle: two draws while it runs, the second with more merges, are what "gains points" means; how many more
    # a race of a 4 s budget shows depends on the machine (a busy one cuts it off after twice its budget of wall time)
    assert len(samples) >= 2, f"the progress should move while running, saw {samples}"
    assert len(set(images)) >= 2, "the chart should be redrawn with more points while the race runs"
    assert verdict(page).startswith("Agreement")
    assert page.locator('[data-testid="stVegaLiteChart"]').count() >= 1
    assert page.locator('[data-testid="stException"]').count() == 0
    assert look(page, "race") == []
    assert look(page, "race-tables", "Where the time goes") == []
    assert look(page, "race-costs", "What a merge costs") == []
    if core is not None:  # heap_c raced beside heap: the page says what the interpreter costs
        note = page.get_by_text("heap_c is heap compiled to C: the same merges and the same work")
        expect(note).to_be_visible()
        page.set_viewport_size({"width": 1280, "height": 720})
        settled(page)
        note.evaluate("e => e.scrollIntoView({block: 'center'})")
        settled(page)
        shot(page, "race-interpreter-1280x720")


def test_stop_keeps_what_the_race_had_done(page):
    open_race(page, "10")
    page.get_by_role("button", name="Start the race").click()
    wait_for_race(page, "done > 20", timeout=60_000)
    page.locator(".st-key-race_stop button").first.click()
    wait_idle(page)
    page.get_by_text("This race was stopped").wait_for()
    assert page.locator('[data-testid="stVegaLiteChart"]').count() == 1
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_role("heading", name="Scaling").count() == 1  # the other sections stay
    assert page.get_by_role("heading", name="Parallel pre-tokenization").count() == 1


def test_a_race_goes_on_while_its_student_visits_another_page(page):
    open_race(page, "3")
    page.get_by_role("button", name="Start the race").click()
    expect(page.locator(".st-key-race_stop button").first).to_be_enabled(timeout=60_000)  # the race is under way
    open_from_sidebar(page, "Threshold explorer")
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Algorithm race").click()
    page.locator(VERDICT).first.wait_for(timeout=120_000)
    assert verdict(page).startswith("Agreement")
    assert page.get_by_text("This race was stopped").count() == 0


def test_sweep_and_parallel_timing_draw_their_charts(page):
    open_from_sidebar(page, "Algorithm race")
    enter(page, "Merges", "60")  # on the built-in 2 MB prose: naive is cut off at the larger sizes
    enter(page, "Budget per size (s)", "2")
    page.get_by_role("button", name="Run the sweep").click()
    page.get_by_role("heading", name="Scaling").scroll_into_view_if_needed()
    page.get_by_text("budget 2 s per trainer and size").wait_for(timeout=300_000)  # the caption under the finished sweep
    wait_idle(page)
    assert page.get_by_text("slope").count() >= 1  # the fitted slopes in the legend
    assert page.locator('[data-testid="stException"]').count() == 0
    assert look(page, "race-sweep", "Scaling") == []

    page.get_by_role("button", name="Time 1…N workers").click()
    page.get_by_text("unique pre-tokens").first.wait_for(timeout=300_000)
    wait_idle(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert look(page, "race-parallel", "Parallel pre-tokenization") == []


def test_hf_and_rustbpe_make_our_merges_under_their_own_rule_and_the_first_cs336_tie_is_shown(page):
    open_race(page, "3")
    page.get_by_role("button", name="Start the race").click()
    heading = page.get_by_role("heading", name="The same merges as the production trainers")
    heading.wait_for(timeout=300_000)
    wait_idle(page)
    said = page.locator('[data-testid="stAlertContentSuccess"]').all_inner_texts()
    assert any('HuggingFace tokenizers made the same 1,000 merges as ours under its rule, tie_break="huggingface"' in s for s in said)
    assert any('rustbpe made the same 1,000 merges as ours under its rule, tie_break="rustbpe"' in s for s in said)
    assert page.get_by_text("first parts from HuggingFace tokenizers at merge").count() == 1
    assert page.get_by_text("first parts from rustbpe at merge").count() == 1
    assert page.locator('[data-testid="stException"]').count() == 0
    assert look(page, "race-references", "The same merges as the production trainers") == []


def test_presenter_mode_shows_the_race_chart_whole(page):
    open_from_sidebar(page, "Algorithm race")
    page.get_by_role("button", name="Start the race").click()
    page.get_by_text("Agreement").first.wait_for(timeout=120_000)
    wait_idle(page)
    page.get_by_test_id("stSidebar").get_by_text("Presenter mode").click()
    wait_idle(page)
    assert look(page, "race-presenter") == []  # the chart inside its box: presenter mode's zoom once drew it a quarter too wide
    assert look(page, "race-presenter-tables", "Where the time goes") == []
