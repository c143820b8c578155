"""A student opens the Vocabulary page, searches for a token, follows its merge number to the step page."""

from .conftest import open_from_sidebar, settled, wait_idle
from .screens import look


def open_page(page) -> None:
    open_from_sidebar(page, "Vocabulary", "Vocabulary")


def metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text()


def red_rows_are_explained_on_the_tables_first_screen(page) -> None:
    """At 1280x720, with the table's heading at the top, the key to its red rows is on screen, in their colour, at 18 px."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.get_by_role("heading", name="Every token").first.evaluate("e => e.scrollIntoView({block: 'start'})")
    settled(page)
    legend = page.locator("p.vocab-legend").first
    box, first_red = legend.bounding_box(), page.locator("table.vocab tr.unused td").first
    assert box and box["y"] >= 0 and box["y"] + box["height"] <= 720, box
    assert "Red rows: made but never used on the training text (8 in this vocabulary" in legend.inner_text()
    colour = "e => getComputedStyle(e).backgroundColor"
    assert legend.locator(".vocab-key").evaluate(colour) == first_red.evaluate(colour) != "rgba(0, 0, 0, 0)"
    assert legend.evaluate("e => parseFloat(getComputedStyle(e).fontSize)") >= 18
    page.set_viewport_size({"width": 1400, "height": 2200})
    settled(page)


def test_a_student_searches_the_vocabulary_and_opens_a_tokens_merge(page):
    open_page(page)
    assert metric(page, "Vocabulary size") == "269" and metric(page, "Made by merges") == "12"
    assert page.locator('[data-testid="stVegaLiteChart"]').count() == 3
    assert look(page, "vocabulary") == []
    assert look(page, "vocabulary-charts", "Zipf: a few tokens do most of the work") == []
    assert look(page, "vocabulary-unused", "Made, but never used") == []
    assert look(page, "vocabulary-table", "Every token") == []
    red_rows_are_explained_on_the_tables_first_screen(page)

    box = page.get_by_label("Find tokens containing")
    box.fill("est")
    box.press("Enter")
    # wait for the search's table (the run may start after wait_idle's first look on a busy machine)
    page.wait_for_function(
        """() => { const t = [...(document.querySelector('table.vocab')?.querySelectorAll('span.vt') || [])].map(e => e.innerText);
                   return t.length > 0 && t.every(x => x.includes('est')); }""",
        timeout=60_000,
    )
    wait_idle(page)
    tokens = page.locator("table.vocab").first.locator("span.vt").all_inner_texts()
    assert tokens and all("est" in t for t in tokens)
    font = page.locator("table.vocab td").first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
    assert font >= 18
    assert look(page, "vocabulary-search", "Every token") == []

    page.locator("table.vocab").first.locator("a").first.click()  # a merge number: the step page at that merge
    wait_idle(page)
    page.get_by_role("heading", name="Step through").first.wait_for()
    assert "merge=" in page.url
    assert page.locator('[data-testid="stException"]').count() == 0


def test_gpt2s_vocabulary_finds_solidgoldmagikarp(page):
    open_page(page)
    page.locator('[data-testid="stRadio"]').filter(has_text="Vocabulary of").get_by_text("GPT-2 (gpt2)").click()
    page.wait_for_function("() => document.body.innerText.includes('50,257 tokens')", timeout=120_000)  # counted in a worker process
    wait_idle(page)
    box = page.get_by_label("Find tokens containing")
    box.fill("Magikarp")
    box.press("Enter")
    wait_idle(page)
    assert (
        page.locator("table.vocab").first.locator("span.vt").all_inner_texts()[-1] == "␣SolidGoldMagikarp"
    )  # in merge order: its pieces come first
    assert look(page, "vocabulary-gpt2", "Every token") == []
    assert page.locator('[data-testid="stException"]').count() == 0
