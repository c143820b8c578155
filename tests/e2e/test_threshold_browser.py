"""A student moves the threshold slider and watches the numbers change, then tokenizes a sentence."""

from .conftest import pick, shot, wait_idle


def metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text()


def open_page(page, name: str) -> None:
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name=name).click()
    wait_idle(page)
    page.get_by_role("heading", name=name).first.wait_for()


def test_the_threshold_slider_answers_with_new_numbers(page):
    open_page(page, "Threshold explorer")
    assert metric(page, "Merges kept") == "12 of 12"
    before = (metric(page, "Bytes per token"), metric(page, "Tokens per word"))

    slider = page.get_by_role("slider", name="Minimum pair frequency t")
    slider.focus()
    for _ in range(3):  # 1 -> 2 -> 3 -> 5: the slider stops only where the answer changes
        slider.press("ArrowRight")
        wait_idle(page)
    assert metric(page, "Merges kept") == "7 of 12"
    assert (metric(page, "Bytes per token"), metric(page, "Tokens per word")) != before
    assert page.locator('[data-testid="stVegaLiteChart"]').count() == 2
    assert page.locator('[data-testid="stException"]').count() == 0
    shot(page, "threshold")


def test_real_text_then_tokenize_and_export(page):
    open_page(page, "Threshold explorer")  # first, so the step page never traces the big corpus
    pick(page, "Corpus", "Python's own docs (stdlib docstrings, 2 MB)")
    page.get_by_text("held-out text").first.wait_for(timeout=60_000)
    page.get_by_role("button", name="subword-nmt learn-bpe · t = 2").click()
    wait_idle(page)
    slider = page.get_by_role("slider", name="Minimum pair frequency t")
    slider.focus()
    before = metric(page, "Merges kept")
    assert before == "1,000 of 1,000"
    for _ in range(3):  # PageUp moves a tenth of the way: into the counts of the last merges
        slider.press("PageUp")
        wait_idle(page)
    kept = int(metric(page, "Merges kept").split(" of ")[0].replace(",", ""))
    assert 0 < kept < 1000
    page.mouse.move(700, 1800)  # no tooltip left over in the screenshot
    page.wait_for_timeout(800)
    shot(page, "threshold-stdlib")

    open_page(page, "Tokenize & export")
    box = page.get_by_label("Text to tokenize")
    box.fill("Return the number of items in a container.\nIt's 2024: naïve tokenizers split 🙂 into bytes!")
    box.press("Control+Enter")
    wait_idle(page)
    assert "✓ identical" in page.locator('[data-testid="stAlert"]').first.inner_text()
    assert page.get_by_role("button", name="tokenizer.json").count() == 1
    # a chip holds one token, or several when they split one character (🙂 is 4 byte tokens): data-tokens
    chips = page.evaluate(
        "() => [...document.querySelector('[data-testid=stHtml]').querySelectorAll('.tok')].reduce((n, e) => n + (+e.dataset.tokens || 1), 0)"
    )
    assert chips == int(metric(page, "Tokens").replace(",", ""))
    shot(page, "tokenize")
