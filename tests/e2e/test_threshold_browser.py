"""A student moves the threshold slider and watches the numbers change, then tokenizes a sentence."""

import re

from playwright.sync_api import expect

from .conftest import open_from_sidebar, pick, shot, wait_idle
from .screens import look

STDLIB = "Python's own docs (stdlib docstrings, 2 MB)"


def metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text()


def kept_at(page) -> int:
    """The t named by the 'Merges kept at t = …' metric."""
    label = page.locator('[data-testid="stMetric"]').filter(has_text="Merges kept").first.inner_text()
    return int(re.search(r"t = ([\d,]+)", label).group(1).replace(",", ""))


def slider_value(page) -> int:
    return int(page.get_by_role("slider", name="Minimum pair frequency t").get_attribute("aria-valuetext").replace(",", ""))


def metric_follows_the_slider(page) -> None:
    """Wait (Playwright's waiting assertion) until the server has answered the slider's last value, then for the run to end."""
    metric = page.locator('[data-testid="stMetric"]').filter(has_text="Merges kept").first
    expect(metric).to_contain_text(f"t = {slider_value(page):,}", timeout=60_000)
    wait_idle(page)


def open_page(page, name: str) -> None:
    open_from_sidebar(page, name, name)


def test_the_threshold_slider_answers_with_new_numbers(page):
    open_page(page, "Threshold explorer")
    assert metric(page, "Merges kept") == "12"
    before = (metric(page, "Bytes per token"), metric(page, "Tokens per word"))
    assert "same as with no threshold" in page.locator('[data-testid="stMetric"]').filter(has_text="Bytes per token").inner_text()

    slider = page.get_by_role("slider", name="Minimum pair frequency t")
    slider.focus()
    for _ in range(3):  # 1 -> 2 -> 3 -> 5: the slider stops only where the answer changes
        slider.press("ArrowRight")
        wait_idle(page)
    assert metric(page, "Merges kept") == "7" and kept_at(page) == slider_value(page) == 5
    assert (metric(page, "Bytes per token"), metric(page, "Tokens per word")) != before
    assert page.locator('[data-testid="stVegaLiteChart"]').count() == 2
    assert page.locator('[data-testid="stException"]').count() == 0
    assert look(page, "threshold") == []


def test_fast_moves_on_the_big_corpus_end_on_the_numbers_for_the_slider_value(page):
    open_page(page, "Threshold explorer")
    pick(page, "Corpus", STDLIB)
    page.get_by_text("held-out text").first.wait_for(timeout=120_000)
    wait_idle(page)
    assert kept_at(page) == slider_value(page)  # another corpus: the browser's slider shows the server's t
    slider = page.get_by_role("slider", name="Minimum pair frequency t")
    slider.focus()
    slider.press("PageUp")
    for _ in range(12):  # as fast as a student holding the arrow key: runs overlap and are cut short
        slider.press("ArrowRight")
        page.wait_for_timeout(40)  # not a wait for anything: the pace of the key presses is this test's input
    metric_follows_the_slider(page)  # a rerun the last key press asked for
    assert kept_at(page) == slider_value(page)
    assert page.get_by_role("heading", name=f"Where t = {slider_value(page):,} cuts").count() == 1
    assert look(page, "threshold-stdlib") == []
    assert look(page, "threshold-stdlib-cut", "Where t =") == []
    slider.focus()
    slider.press("End")  # the longest labels: "Vocabulary at t = 36,504", "same as with no threshold" at the other end
    slider.press("ArrowLeft")
    metric_follows_the_slider(page)
    assert kept_at(page) == slider_value(page) > 10_000
    assert look(page, "threshold-stdlib-high") == []
    page.get_by_test_id("stSidebar").get_by_text("Presenter mode").click()
    wait_idle(page)
    assert look(page, "threshold-stdlib-presenter") == []


def test_a_preset_sets_the_slider_and_real_text_tokenizes(page):
    open_page(page, "Threshold explorer")  # first, so the step page never traces the big corpus
    pick(page, "Corpus", STDLIB)
    page.get_by_text("held-out text").first.wait_for(timeout=120_000)
    page.get_by_role("button", name="t = 2 · subword-nmt learn-bpe").click()
    wait_idle(page)
    assert slider_value(page) == kept_at(page) == 2
    kept = int(metric(page, "Merges kept").replace(",", ""))
    assert 0 < kept <= 1000

    open_page(page, "Tokenize & export")
    box = page.get_by_label("Text to tokenize")
    box.fill("Return the number of items in a container.\nIt's 2024: naïve tokenizers split 🙂 into bytes!")
    box.press("Control+Enter")
    wait_idle(page)
    assert "✓ identical" in page.locator('[data-testid="stAlert"]').first.inner_text()
    assert page.get_by_role("button", name="tokenizer.json").count() == 1
    # a chip holds one token, or several when they split one character (🙂 is 4 byte tokens): data-tokens
    chips = page.evaluate(
        "() => [...document.querySelector('[data-testid=stMain] .toks').querySelectorAll('.tok')].reduce((n, e) => n + (+e.dataset.tokens || 1), 0)"
    )
    assert chips == int(metric(page, "Tokens").replace(",", ""))
    shot(page, "tokenize")
