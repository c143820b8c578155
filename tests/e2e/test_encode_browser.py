"""A student walks the encoding of one word, opens a token's ancestry, compares the real tokenizers and opens every quirk.

Screenshots (tests/screenshots/encode-*.png, compare-*.png, quirk-*.png at 1280x720 and 1920x1080)
are for a person to look at; the checks are what a projector needs: nothing cut off, text at
least 18 px, the tree on the first screen.
"""

from __future__ import annotations

import re

import pytest

from ui.lessons import quirks

from .conftest import ROOT, SHOTS, enter, open_from_sidebar, settled, shot, wait_idle
from .screens import look
from .test_step_browser import SMALL_TEXT_JS

TIKTOKEN = ROOT.parent / "shared" / "tiktoken"
needs_files = pytest.mark.skipif(not (TIKTOKEN / "o200k_base.tiktoken").is_file(), reason="../shared/tiktoken not present")


def open_page(page, title: str, heading: str) -> None:
    page.set_default_timeout(120_000)  # the server loads GPT-2, GPT-4 and GPT-4o in the background at start, on 2 shared cores
    open_from_sidebar(page, title, heading, 180_000)


def small_text(page) -> list[str]:
    sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
    return [s for s in page.evaluate(SMALL_TEXT_JS) if s.split(": ", 1)[1] not in sidebar]


def test_walk_one_word_and_open_a_tokens_ancestry(page):
    open_page(page, "Encode, step by step", "Encode, step by step")
    enter(page, "A word or a sentence", "lowest")
    rows = page.locator(".enc-rows .what")
    assert rows.count() == 1 and page.locator(".rank.hit").count() >= 1  # the bytes, and the pair that merges first
    look(page, "encode-start")
    lit = page.locator(".rank.hit a").first  # the merge about to apply, a link to the step page at that merge
    number = lit.inner_text().lstrip("#")
    count = page.locator(".rank.hit .cnt").first.inner_text()  # '×9'
    with page.context.expect_page() as opened:
        lit.click()
    step = opened.value
    step.locator(".merge-card").wait_for(timeout=120_000)
    card = step.locator(".merge-card").inner_text()
    assert f"Merge {number} of" in card and count.replace("×", "") in card  # training order: that merge, that count
    step.close()
    steps = 0
    while page.locator(".enc-rows .what.now").inner_text() != "tokens":
        rows_before = page.locator(".enc-rows .what").count()
        page.get_by_role("button", name="Next").click()
        page.wait_for_function(f"() => document.querySelectorAll('.enc-rows .what').length > {rows_before}")  # one row more
        wait_idle(page)
        steps += 1
        assert steps <= 6, "lowest has at most 5 pairs to merge"
    assert steps >= 3 and page.get_by_role("button", name="Next").is_disabled()
    assert "encodes as" in page.locator("p.caption").filter(has_text="encodes as").first.inner_text()
    cut = look(page, "encode-done")
    assert cut == [], cut
    assert small_text(page) == []

    assert page.locator(".enc-ids .ttext").all_inner_texts() == ["low", "est"]  # the text's tokens, each over its id
    page.get_by_role("radio", name="A token's ancestry").click()
    wait_idle(page)
    page.get_by_role("radio", name=re.compile(r"^est · id \d+$")).click()  # each token with its id
    wait_idle(page)
    tree = page.locator(".tree")
    tree.wait_for()
    assert page.locator(".tree .tnode.byte").count() == 3  # e, s, t
    cut = look(page, "encode-ancestry")
    assert cut == [], cut
    page.set_viewport_size({"width": 1280, "height": 720})
    settled(page)  # the layout has stopped moving
    box = tree.bounding_box()
    assert box["y"] + box["height"] <= 720, "the tree should fit on the first screen at 1280x720"
    assert small_text(page) == []


def test_a_sentence_walks_pre_token_by_pre_token(page):
    open_page(page, "Encode, step by step", "Encode, step by step")
    enter(page, "A word or a sentence", "the lowest newest")
    page.locator(".enc-line .pt.now").wait_for()  # the rerun has drawn the sentence's pre-tokens
    assert page.locator(".enc-line .pt").count() == 3 and page.locator(".enc-line .pt.now").count() == 1
    for _ in range(4):  # each Next redraws the walk one position on (its sentence, at least, is another)
        before = page.get_by_test_id("stMain").inner_text()
        page.get_by_role("button", name="Next").click()
        page.wait_for_function("before => document.querySelector('[data-testid=\"stMain\"]').innerText !== before", arg=before)
        wait_idle(page)
    page.get_by_role("heading", name="Pre-token 2 of 3").wait_for()
    cut = look(page, "encode-sentence")
    assert cut == [], cut
    assert small_text(page) == []


def test_bpe_dropout_shows_a_words_segmentations_and_their_shares(page):
    open_page(page, "Encode, step by step", "Encode, step by step")
    enter(page, "A word or a sentence", "lowest")
    page.get_by_role("radio", name="Dropout").click()
    wait_idle(page)
    page.locator(".drop-rows").wait_for()
    slider = page.get_by_role("slider", name="Skip probability p")
    slider.focus()
    for _ in range(4):  # 0.10 -> 0.30, a step of 0.05 a key
        before = page.locator(".drop-rows").inner_text()
        slider.press("ArrowRight")
        wait_idle(page)
        page.wait_for_function("before => document.querySelector('.drop-rows').innerText !== before", arg=before)
    assert "probability 0.30" in page.locator("p.caption").filter(has_text="encoded 1,000 times").inner_text()
    main = page.get_by_test_id("stMainBlockContainer").bounding_box()
    boxes = [page.get_by_role("radio", name=name).bounding_box() for name in ("The steps", "A token's ancestry", "Dropout")]
    assert len({round(box["y"]) for box in boxes}) == 1  # the view switch on one line
    for box in boxes:  # none cut off
        assert main["x"] - 1 <= box["x"] and box["x"] + box["width"] <= main["x"] + main["width"] + 1, box
    rows = page.locator(".drop-rows .drop-n").all_inner_texts()
    assert len(rows) >= 3 and page.locator(".drop-plain").count() == 1  # several segmentations; the usual one marked
    shares = [float(r.split(" %")[0]) for r in rows]
    assert abs(sum(shares) - 100) < 0.5 and shares[:-1] == sorted(shares[:-1], reverse=True)
    cut = look(page, "encode-dropout")
    assert cut == [], cut
    assert small_text(page) == []


@needs_files
def test_gpt4o_on_a_word_and_its_longest_token(page):
    open_page(page, "Encode, step by step", "Encode, step by step")
    page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').filter(has_text="Tokenizer").click()
    page.get_by_role("option", name="GPT-4o (o200k)").click()
    page.locator(".enc-rows").wait_for(timeout=180_000)  # GPT-4o may still be loading in the background
    enter(page, "A word or a sentence", " unbelievably")
    look(page, "encode-gpt4o")
    page.get_by_role("radio", name="A token's ancestry").click()
    wait_idle(page)
    page.locator(".tree").wait_for()
    cut = look(page, "encode-gpt4o-ancestry")
    assert cut == [], cut


@needs_files
def test_compare_the_real_tokenizers(page):
    open_page(page, "Real tokenizers", "Real tokenizers side by side")
    page.locator("table.compare").wait_for(timeout=180_000)
    labels = page.locator("table.compare td:first-child").all_inner_texts()
    assert labels == ["GPT-2", "GPT-4", "GPT-4o", "Llama 2", "Mistral", "Llama 3", "Trained here"]
    assert page.locator(".difftext .diffspan").count() > 0
    cut = look(page, "compare")
    assert cut == [], cut
    look(page, "compare-tokens", "Their tokens")
    assert small_text(page) == []


@needs_files
def test_open_every_quirk(page):
    open_page(page, "Quirks gallery", "Quirks gallery")
    page.locator(".quirk").first.wait_for()  # the first example drawn: the page's first run has ended
    wait_idle(page)
    for quirk in quirks.QUIRKS[1:] + quirks.QUIRKS[:1]:  # the first is shown already: a click on it would unselect its pill
        page.get_by_role("radio", name=quirk.title, exact=True).click()
        wait_idle(page, 180_000)
        try:
            page.get_by_role("heading", name=quirk.title).first.wait_for(timeout=120_000)
        except Exception:
            page.screenshot(path=str(SHOTS / "quirk-failed.png"))
            raise
        if quirk.key == "tax":
            assert page.locator("table.tax tr").count() == len(quirks.PARAGRAPH) + 1
        else:
            assert page.locator(".quirk").count() == len(quirk.texts)
        assert page.locator('[data-testid="stException"]').count() == 0
        cut = look(page, f"quirk-{quirk.key}")
        assert cut == [], (quirk.key, cut)
        assert small_text(page) == [], quirk.key


# For each element with text under `scope`: each letter it holds, drawn on a canvas in the element's own font, against the same
# font's drawing of U+0378 (unassigned: no font has it, so every browser draws its missing-glyph box). A letter drawn exactly
# as that box has no font here. The unassigned U+0379 is checked too, so the check itself is seen to find a box.
BOXES_JS = """
scope => {
  const canvas = document.createElement('canvas'); canvas.width = 96; canvas.height = 64;
  const g = canvas.getContext('2d', {willReadFrequently: true});
  const draw = (font, ch) => { g.clearRect(0, 0, 96, 64); g.font = font; g.fillStyle = '#000'; g.textBaseline = 'middle';
                               g.fillText(ch, 24, 32); return g.getImageData(0, 0, 96, 64).data.join(','); };
  const boxes = new Set(), checked = new Set(); let selfcheck = true;
  for (const el of document.querySelectorAll(scope + ', ' + scope + ' *')) {
    const own = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('');
    const letters = [...new Set([...own].filter(ch => /\\p{L}/u.test(ch) && ch.codePointAt(0) > 0x7f))];
    if (!letters.length) continue;
    const cs = getComputedStyle(el), font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
    const box = draw(font, '\\u0378');
    selfcheck = selfcheck && draw(font, '\\u0379') === box && draw(font, 'a') !== box;
    for (const ch of letters) { checked.add(ch); if (draw(font, ch) === box) boxes.add(ch); }
  }
  return {checked: checked.size, boxes: [...boxes].join(''), selfcheck};
}
"""

SCRIPTS = [(language, script) for language, script, _ in quirks.PARAGRAPH if script != "Latin"]


@needs_files
def test_the_token_tax_draws_every_script_in_glyphs_not_boxes(page):
    """Devanagari, Thai, Arabic, Hebrew, CJK...: each language's paragraph and its tokens are drawn in a font that has them."""
    open_page(page, "Quirks gallery", "Quirks gallery")
    page.locator(".quirk").first.wait_for()
    wait_idle(page)
    page.get_by_role("radio", name=quirks.BY_KEY["tax"].title, exact=True).click()
    page.locator("table.tax").wait_for(timeout=180_000)
    wait_idle(page)
    found = {}
    for language, script in SCRIPTS:
        page.locator('[data-testid="stSelectbox"]').filter(has_text="See one language's tokens").click()
        page.get_by_role("option", name=language, exact=True).click()
        page.locator(".quirk .qtext").filter(has_text=quirks.LANGUAGES[language].split()[0][:6]).wait_for()
        wait_idle(page)
        drawn = page.evaluate(BOXES_JS, ".quirk")
        assert drawn["selfcheck"] and drawn["checked"] >= 5, (language, drawn)  # the check finds a box, and had letters to look at
        if drawn["boxes"]:
            found[f"{language} ({script})"] = drawn["boxes"]
        if language in ("Hindi", "Thai"):  # for a person to look at: the paragraph and its tokens at 1280x720
            page.set_viewport_size({"width": 1280, "height": 720})
            page.locator(".quirk").first.evaluate("e => e.scrollIntoView({block: 'start'})")
            settled(page)
            shot(page, f"quirk-tax-{language.lower()}-1280x720")
            page.set_viewport_size({"width": 1400, "height": 2200})
            settled(page)
    assert found == {}, f"drawn as boxes (no font): {found}"
