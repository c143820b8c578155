"""A student puts the tokenizer trained in the app next to GPT-2, then uploads a tokenizer of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import ROOT, SHOTS, SIZES, clipped, open_from_sidebar, pick, settled, small_text, wait_idle

GPT2 = ROOT.parent / "shared" / "gpt2"
SENTENCE = "Tokenizers split text into pieces. GPT-2 learned 50,000 merges; this one, a dozen!"


def metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text()


def open_tokenize(page) -> None:
    open_from_sidebar(page, "Tokenize & export", "Tokenize & export")
    box = page.get_by_label("Text to tokenize")
    box.fill(SENTENCE)
    box.press("Control+Enter")
    wait_idle(page)


def shots_of(page, name: str, target) -> None:
    """Screenshots at each of SIZES with target scrolled into view (Streamlit scrolls inside its own container)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    before = page.viewport_size
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        settled(page)
        target.scroll_into_view_if_needed()
        target.evaluate("el => el.scrollIntoView({block: 'start'})")
        settled(page)
        page.screenshot(path=str(SHOTS / f"{name}-{width}x{height}.png"))
    page.set_viewport_size(before)


def main_clipped(page) -> list[str]:
    """Texts cut off by their box in the main view (the sidebar is the router's, checked by its own tests).

    subtle: the uploader's '+' button is an icon font ligature whose name, 'add icon', is hidden by design.
    """
    sidebar = page.locator('[data-testid="stSidebar"]')
    shown = sidebar.inner_text() + "\n".join(sidebar.locator('input[role="combobox"]').evaluate_all("els => els.map(e => e.value)"))
    return [text for text in clipped(page) if text not in shown and text != "add icon"]


def tokens_in(page, n: int) -> int:
    """How many tokens the n-th token display shows (0: the trained one at the top)."""
    return page.locator('[data-testid="stMain"] .toks').nth(n).locator(".tok").count()


@pytest.mark.skipif(not (GPT2 / "encoder.json").is_file(), reason="../shared/gpt2 not present")
def test_gpt2_and_the_trained_tokenizer_side_by_side(page):
    open_tokenize(page)
    page.get_by_text("Tokens (GPT-2)").first.wait_for(timeout=60_000)
    gpt2_tokens = int(metric(page, "Tokens (GPT-2)"))
    trained_tokens = int(metric(page, "Tokens (trained here)"))
    assert tokens_in(page, 1) == trained_tokens and tokens_in(page, 2) == gpt2_tokens
    assert gpt2_tokens < trained_tokens  # 50,000 merges against a dozen
    assert page.locator('[data-testid="stException"]').count() == 0
    shots_of(page, "tokenize-gpt2", page.get_by_role("heading", name="Next to a real tokenizer"))
    assert main_clipped(page) == []

    page.get_by_text("Browse the merges of GPT-2").click()
    page.get_by_label("Merges whose new token contains").fill(" token")
    page.get_by_label("Merges whose new token contains").press("Enter")
    wait_idle(page)
    page.get_by_text("No counts: GPT-2 files record the merges in order").wait_for()
    shots_of(page, "tokenize-gpt2-merges", page.get_by_text("Browse the merges of GPT-2"))
    page.get_by_text("Token ids and the decoded text").click()  # the code blocks
    settled(page)
    assert small_text(page) == []  # the merge browser, the code blocks, the "Load them elsewhere" snippet: 18 px at least


@pytest.mark.skipif(not (GPT2 / "encoder.json").is_file(), reason="../shared/gpt2 not present")
def test_uploading_gpt2s_files_and_a_bad_file(page, tmp_path):
    open_tokenize(page)
    page.get_by_text("Upload files").click()
    wait_idle(page)
    uploader = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": 1}')
    uploader.set_input_files(str(bad))
    wait_idle(page)
    error = page.locator('[data-testid="stAlert"]').filter(has_text="notes.json")
    assert error.inner_text().strip().startswith("notes.json: not a tokenizer file this tool knows")
    assert page.locator('[data-testid="stException"]').count() == 0
    shots_of(page, "tokenize-bad-upload", page.get_by_role("heading", name="Next to a real tokenizer"))

    page.locator('[data-testid="stFileChipDeleteBtn"]').first.click()
    wait_idle(page)
    uploader.set_input_files([str(GPT2 / "encoder.json"), str(GPT2 / "vocab.bpe")])
    wait_idle(page)
    label = "Tokens (encoder.json, vocab.bpe)"
    page.get_by_text(label).first.wait_for(timeout=60_000)
    assert int(metric(page, label)) == tokens_in(page, 2)
    shots_of(page, "tokenize-upload", page.get_by_role("heading", name="Next to a real tokenizer"))
    assert main_clipped(page) == []


SPLIT = "I love 🦙 llamas! 東京は大きい。"


def test_tokens_are_drawn_over_their_characters_and_the_zip_loads_elsewhere(page, tmp_path):
    import io
    import zipfile

    from bpe import Tokenizer

    open_from_sidebar(page, "Tokenize & export", "Tokenize & export")
    pick(page, "Pre-tokenizer", "gpt2")  # keeps the spaces (the textbook preset's whitespace pre-tokenizer drops them)
    box = page.get_by_label("Text to tokenize")
    box.fill(SPLIT)
    box.press("Control+Enter")
    wait_idle(page)
    view = page.locator('[data-testid="stMain"] .toks').first
    drawn = view.locator(".tok").evaluate_all(
        "els => els.map(e => { const c = e.cloneNode(true); c.querySelectorAll('.ntok, .tid').forEach(x => x.remove()); return c.innerText; })"
    )
    assert "".join(drawn).replace("␣", " ") == SPLIT  # each character once, in order, on one chip
    assert view.locator(".tok.joined").count() > 0  # the run's dozen merges split the llama and the kanji: dashed chips
    shots_of(page, "tokenize-offsets", page.get_by_label("Text to tokenize"))

    heading = page.get_by_role("heading", name="Download the tokenizer trained here")
    heading.scroll_into_view_if_needed()
    shots_of(page, "tokenize-downloads", heading)
    assert main_clipped(page) == []
    with page.expect_download() as caught:
        page.get_by_role("button", name="files, zipped").click()
    data = caught.value.path().read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as bundle:
        names = {Path(n).name for n in bundle.namelist()}
        bundle.extractall(tmp_path)
    assert {"tokenizer.json", "tokenizer.tiktoken", "tokenizer_config.json", "tokenizer.bpe.json"} <= names
    tok = Tokenizer.load(tmp_path / "tokenizer")
    assert len(tok.encode(SPLIT)) == int(metric(page, "Tokens").replace(",", ""))
