"""What misled a lecturer on the projector (issue 28), each as the lecturer met it, and what the page says now.

One test per finding, named after what a class sees; the screenshots (tests/screenshots/lecture-*.png, at
1280x720 and where it matters 1920x1080) are for a person to look at as a student at the back would.
"""

from __future__ import annotations

import re

from playwright.sync_api import expect

from .conftest import SMALL_TEXT_JS, clipped, new_context, open_from_sidebar, settled, shots, wait_idle


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


# ---------------------------------------------------------------------------
# 7. "How pair counts changed" to scale, and the count chart's title whole

BARS_JS = """() => [...document.querySelectorAll('.changes .neg, .changes .pos')].filter(c => c.querySelector('.bar')).map(c => ({
  change: +c.querySelector('span').innerText.replace(/[,+]/g, '').replace('−', '-'),
  width: c.querySelector('.bar').getBoundingClientRect().width}))"""


def test_7_pair_count_changes_at_stdlib_merge_37_are_drawn_to_scale(page, app_url):
    open_url(page, f"{app_url}/?corpus=stdlib&merge=37", ".changes")
    page.set_viewport_size({"width": 1280, "height": 720})
    settled(page)
    bars = page.evaluate(BARS_JS)
    largest = max(bars, key=lambda b: abs(b["change"]))
    assert largest["change"] == -7_155
    for bar in bars:  # each bar as long as its number says, against the largest (a bar under 3 px is drawn at 3 px or so)
        assert abs(bar["width"] - largest["width"] * abs(bar["change"]) / 7_155) <= 4, bar
    assert "to scale" in text_of(page, ".changes + .caption") and "log" not in text_of(page, ".changes + .caption")
    heading = page.get_by_role("heading", name="Winning count at each merge").first
    assert heading.inner_text().endswith("(log scale)")  # the scale in the heading: the axis title is short enough to show whole
    assert clipped(page) == []
    heading.evaluate("e => e.scrollIntoView({block: 'start'})")
    shots(page, "lecture-7-pair-changes-stdlib-37")


# ---------------------------------------------------------------------------
# 11. one way to count a text's bytes


def metric(page, label: str) -> str:
    return page.locator('[data-testid="stMetric"]').filter(has_text=label).first.locator('[data-testid="stMetricValue"]').inner_text()


def test_11_the_step_tokenize_and_threshold_pages_count_the_textbook_text_as_the_same_94_bytes(page, app_url):
    open_url(page, f"{app_url}/?corpus=textbook&merge=12", ".sentence")
    said = text_of(page, ".sentence + .caption")
    tokens, n_bytes = re.search(r"([\d,]+) tokens in [\d,]+ pre-tokens \(underlined\), for the text's ([\d,]+) bytes", said).groups()
    assert n_bytes == "94" and "(15 of them whitespace the pre-tokenizer drops" in said
    open_from_sidebar(page, "Tokenize & export", "Tokenize & export")
    assert (metric(page, "Tokens"), metric(page, "Bytes")) == (tokens, "94")
    per_token = metric(page, "Bytes per token")
    assert per_token == f"{94 / int(tokens):.2f}"
    open_from_sidebar(page, "Threshold explorer", "Threshold explorer")
    assert metric(page, "Bytes per token") == per_token  # t = 1 keeps all 12 merges: the same text, the same count


# ---------------------------------------------------------------------------
# 2. every page's URL names the run, and the sidebar's page links keep it


def chosen(page, label: str) -> str:
    """What the sidebar's select box labelled label shows."""
    box = page.get_by_test_id("stSidebar").locator('[data-testid="stSelectbox"]').filter(has_text=label).first
    return box.locator("input").input_value()


def sidebar_link(page, name: str):
    return page.get_by_test_id("stSidebar").get_by_role("link", name=name)


def test_2_a_threshold_link_copied_after_stdlib_merge_5_opens_the_stdlib_run(page, app_url):
    open_url(page, f"{app_url}/?corpus=stdlib&merge=5", ".merge-card")
    for name in ("Threshold explorer", "Algorithm race", "Vocabulary", "Quirks gallery", "Guided lesson"):
        assert "corpus=stdlib" in sidebar_link(page, name).get_attribute("href"), name  # what "copy link" gives
    open_from_sidebar(page, "Threshold explorer", "Threshold explorer")
    assert "corpus=stdlib" in page.url and "merge=" not in page.url
    open_from_sidebar(page, "Step through", "Step through BPE training")  # and back: the same session, the same merge
    assert "corpus=stdlib" in page.url and "Merge 5 of 1,000" in text_of(page, ".merge-card")
    open_from_sidebar(page, "Threshold explorer", "Threshold explorer")
    page.reload()  # a new session from the page's own URL: the stdlib run, not the 12-merge textbook one
    wait_idle(page, 180_000)
    page.get_by_role("heading", name="Threshold explorer").wait_for()
    assert chosen(page, "Corpus") == "Python's own docs"
    assert metric(page, "Merges kept at t") == "1,000"


# ---------------------------------------------------------------------------
# 8. at 720 px, presenter mode and the training run before the page links


def test_8_at_720_px_presenter_mode_and_the_training_run_show_without_scrolling(page, app_url):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_url(page, f"{app_url}/race?corpus=stdlib", "h1")
    settled(page)
    sidebar = page.get_by_test_id("stSidebar")
    for label in ("Presenter mode", "Corpus", "Pre-tokenizer", "Vocab size", "Tie-break rule"):
        box = sidebar.get_by_text(label, exact=True).first.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 720 - 50, label  # the label, and its box under it
    assert sidebar.get_by_role("link", name="Step through").count() == 1  # the pages follow, under the run
    assert page.evaluate(SMALL_TEXT_JS) == [] and clipped(page) == []
    shots(page, "lecture-8-sidebar-race")


# ---------------------------------------------------------------------------
# 3. the quiz names the rule in force, and a tie says it is one


def test_3_the_quiz_under_huggingface_names_the_rule_and_a_lost_tie_says_it_is_one(page, app_url):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_url(page, f"{app_url}/quiz?corpus=textbook&rule=huggingface", '[data-testid="stMain"] h1')
    main = page.get_by_test_id("stMain")
    assert "a tie goes to the smaller pair of its ids: the huggingface rule" in main.inner_text()
    page.get_by_role("button", name="s + t").click()  # 9, as e + s: the tie the lecturer's class lost without a word why
    wait_idle(page)
    said = re.sub(r"\s+", " ", main.inner_text().replace("\u00a0", " "))
    assert "✘ A tie, and the huggingface rule takes e + s: it merges next." in said
    assert "lost the tie under the huggingface rule" in said
    settled(page)
    next_button = page.get_by_role("button", name="Next question ▶")
    assert next_button.evaluate("e => e.getBoundingClientRect().bottom") <= 720  # on a projector's first screen
    assert clipped(page) == [] and page.evaluate(SMALL_TEXT_JS) == []
    shots(page, "lecture-3-quiz-huggingface-tie")


# ---------------------------------------------------------------------------
# 5. one count of "made but never used"


def test_5_gpt2s_vocabulary_says_one_count_of_made_but_never_used(page, app_url):
    open_url(page, f"{app_url}/vocabulary", '[data-testid="stMain"] h1')
    page.locator('[data-testid="stRadio"]').filter(has_text="Vocabulary of").get_by_text("GPT-2 (gpt2)").click()
    page.wait_for_function("() => document.body.innerText.includes('50,257 tokens')", timeout=120_000)  # counted in a worker
    wait_idle(page)
    never = metric(page, "Made but never used")
    assert int(never.replace(",", "")) > 10_000  # most of GPT-2's tokens never occur in 400 KB of docstrings
    said = text_of(page, '[data-testid="stMain"]')
    assert f"Made but never used: {never} of the 50,000 tokens made by merges" in said  # the definition, once, under the number
    legend = text_of(page, "p.vocab-legend")
    assert f"({never} in this vocabulary, as counted above)" in legend and "of these" not in legend  # the same count
    assert f"{never} of the 50,000 merged tokens are never used" in text_of(page, ".vocab-note")
    page.set_viewport_size({"width": 1280, "height": 720})
    settled(page)
    assert clipped(page) == [] and page.evaluate(SMALL_TEXT_JS) == []
    shots(page, "lecture-5-vocabulary-gpt2")
    page.get_by_role("heading", name="Every token").first.evaluate("e => e.scrollIntoView({block: 'start'})")
    shots(page, "lecture-5-vocabulary-gpt2-table")


# ---------------------------------------------------------------------------
# 10. the threshold's useful cuts reachable: a number box beside the slider


def test_10_on_stdlib_a_typed_t_of_500_answers_at_once(page, app_url):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_url(page, f"{app_url}/threshold?corpus=stdlib", '[data-testid="stMetric"]')
    slider = page.get_by_role("slider", name="Minimum pair frequency t")
    box = page.get_by_label("or type t", exact=True)
    s, b = slider.bounding_box(), box.bounding_box()
    assert abs((s["y"] + s["height"] / 2) - (b["y"] + b["height"] / 2)) < 60 and b["x"] > s["x"]  # beside it, on its row
    box.fill("500")
    box.press("Enter")
    wait_idle(page)
    t = int(slider.get_attribute("aria-valuetext").replace(",", ""))
    assert 500 <= t < 600 and box.input_value() == str(t)  # the slider's next value: the same merges as t = 500
    label = page.locator('[data-testid="stMetric"]').filter(has_text="Merges kept").first.inner_text()
    assert f"t = {t:,}" in label
    kept = int(metric(page, "Merges kept").replace(",", ""))
    assert 100 < kept < 1_000  # a cut inside the run
    settled(page)
    assert clipped(page) == [] and page.evaluate(SMALL_TEXT_JS) == []
    shots(page, "lecture-10-threshold-typed")


# ---------------------------------------------------------------------------
# 1. a rehearsal does not spoil the live race


def start_race(page, budget: str) -> None:
    box = page.get_by_label("Time budget per algorithm (s)")
    box.fill(budget)
    box.press("Enter")
    wait_idle(page)
    page.get_by_role("button", name="Start the race").click()


def test_1_a_race_rehearsed_before_class_says_it_is_a_replay_and_runs_live_again(browser, page, app_url):
    open_url(page, f"{app_url}/race?corpus=stdlib", '[data-testid="stMain"] h1')
    page.get_by_test_id("stMain").get_by_text("HuggingFace & rustbpe").click()  # fast: ours only
    wait_idle(page)
    start_race(page, "1")  # the rehearsal
    page.get_by_text("Agreement").first.wait_for(timeout=120_000)
    wait_idle(page)
    assert page.get_by_text("A replay").count() == 0  # the teacher watched this one run

    context = new_context(browser, viewport={"width": 1280, "height": 720})  # in class: a fresh browser, the same page
    live = context.new_page()
    open_url(live, f"{app_url}/race?corpus=stdlib", '[data-testid="stMain"] h1')
    live.get_by_test_id("stMain").get_by_text("HuggingFace & rustbpe").click()
    wait_idle(live)
    start_race(live, "1")
    live.get_by_text("A replay").wait_for(timeout=30_000)  # the finished chart at once, and why
    wait_idle(live)
    said = text_of(live, '[data-testid="stAlertContentInfo"]')
    assert re.search(r"this race ran at \d\d:\d\d:\d\d, \d+ seconds? before you pressed Start", said), said
    assert live.locator('[data-testid="stVegaLiteChart"]').count() == 1
    settled(live)
    shots(live, "lecture-1-race-replay")
    live.get_by_role("button", name="Run it live again").click()
    expect(live.locator(".st-key-race_stop button").first).to_be_enabled(timeout=60_000)  # running: Stop is live
    live.get_by_text("Agreement").first.wait_for(timeout=120_000)
    wait_idle(live)
    assert live.get_by_text("A replay").count() == 0  # this one ran in front of the class
    context.close()


# ---------------------------------------------------------------------------
# 6. the race after the references join: a plot that stays tall, and one clock in the phase table

PLOT_JS = """() => {
  // the race chart's SVG (Vega): its y axis spans the plot's height; its legend's names, one a row, at the plot's right
  const chart = document.querySelector('[data-testid="stMain"] [data-testid="stVegaLiteChart"]');
  const box = r => ({top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height});
  const grid = chart.querySelector('[aria-label^="Y-axis"] .role-axis-grid, .role-axis-grid');
  const legend = chart.querySelector('[aria-roledescription="legend"]') || chart.querySelector('.role-legend');
  return {svg: box(chart.querySelector('svg').getBoundingClientRect()), grid: box(grid.getBoundingClientRect()),
          legend: box(legend.getBoundingClientRect())};
}"""


def phases(page) -> dict[str, dict[str, str]]:
    """The phase table ('Where the time goes'): algorithm -> column -> cell."""
    table = page.locator('[data-testid="stTable"]').filter(has_text="wall-clock").first
    head = [c.strip() for c in table.locator("th").all_inner_texts()]
    rows = {}
    for row in table.locator("tbody tr").all():
        cells = [c.strip() for c in row.locator("td").all_inner_texts()]
        rows[cells[0]] = dict(zip(head[-len(cells) :], cells))
    return rows


def test_6_the_race_chart_at_1280x720_after_the_references_join_keeps_its_plot_and_one_clock(page, app_url):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_url(page, f"{app_url}/race?corpus=stdlib", '[data-testid="stMain"] h1')
    start_race(page, "2")
    page.get_by_role("heading", name="The same merges as the production trainers").wait_for(timeout=300_000)
    wait_idle(page)
    settled(page)
    drawn = page.evaluate(PLOT_JS)
    assert drawn["grid"]["height"] >= 250, drawn  # the plot itself: ~110 px once four rows of legend stood on top of it
    assert drawn["legend"]["left"] >= drawn["grid"]["right"] and drawn["legend"]["right"] <= drawn["svg"]["right"] + 1, drawn
    legend = page.locator('[data-testid="stMain"] [data-testid="stVegaLiteChart"]').first.inner_text()
    shots(page, "lecture-6-race-references")
    table = phases(page)
    assert table["HF tokenizers"]["status"] == "reference: Rust, all phases" and table["HF tokenizers"]["wall-clock"].endswith(" s")
    assert table["heap"]["all phases"].endswith(" s") and table["heap"]["wall-clock"] == ""
    said = text_of(page, '[data-testid="stMain"]')
    assert "Every time here is processor time, the clock each trainer is raced on" in said
    if "heap_c" in table:  # what the compiled core changes, said beside the tables
        assert "heap_c is heap compiled to C" in said
    page.get_by_role("heading", name="Where the time goes").first.evaluate("e => e.scrollIntoView({block: 'start'})")
    shots(page, "lecture-6-race-phases")
    assert clipped(page) == [] and legend is not None


# ---------------------------------------------------------------------------
# 12. token ids on the projector, and a count that follows the typing


def test_12_the_tokenize_page_shows_ids_under_the_tokens_and_counts_while_typing(page, app_url):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_url(page, f"{app_url}/tokenize?corpus=textbook&pretokenizer=gpt2", '[data-testid="stMetric"]')
    box = page.get_by_label("Text to tokenize")
    box.click()
    box.press("Control+a")
    box.press_sequentially("lowest newest widest", delay=30)  # typed, never sent with Ctrl+Enter or by leaving the box
    expect(page.locator('[data-testid="stMetric"]').filter(has_text="Bytes").first).to_contain_text("20", timeout=30_000)
    wait_idle(page)
    assert box.evaluate("e => e === document.activeElement")  # the student is still in the box
    chips = page.locator('[data-testid="stMain"] .toks.ids').first
    ids = [int(i) for i in chips.locator(".tid").all_inner_texts()]
    assert len(ids) == int(metric(page, "Tokens")) and all(i >= 0 for i in ids)
    texts = "".join(chips.locator(".ttext").all_inner_texts()).replace("␣", " ")
    assert texts == "lowest newest widest"
    tid = chips.locator(".tid").first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
    assert tid >= 18
    settled(page)
    assert clipped(page) == []
    chips.evaluate("e => e.scrollIntoView({block: 'center'})")
    shots(page, "lecture-12-tokenize-ids")


def test_12_the_encode_page_names_each_tokens_id_and_follows_the_typing(page, app_url):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_url(page, f"{app_url}/encode?text=lowest&tokenizer=run&corpus=textbook", ".enc-rows")
    box = page.get_by_label("A word or a sentence")
    box.click()
    box.press("Control+a")
    box.press_sequentially("newest widest", delay=30)
    chips = page.locator(".enc-ids .tok")
    expect(chips.filter(has_text="newest")).to_have_count(1, timeout=30_000)  # no Enter pressed: live after a pause
    wait_idle(page)
    assert page.get_by_text("The 2 tokens and their ids").count() == 1
    said = [re.sub(r"\s+", " ", c.strip()) for c in chips.all_inner_texts()]
    assert len(said) == 2 and re.fullmatch(r"newest \d+", said[0]) and re.fullmatch(r"widest \d+", said[1]), said
    settled(page)
    page.evaluate("window.scrollTo(0, 0)")
    for chip in chips.all():  # beside the view switch, on the first screen: no scrolling to read them (they were at ~850 px)
        box = chip.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 720, box
    switch = page.get_by_test_id("stMain").locator("button", has_text="A token's ancestry")
    assert switch.evaluate("b => b.scrollWidth <= b.clientWidth && b.getBoundingClientRect().right <= 1280")
    shots(page, "lecture-12-encode-ids")


# ---------------------------------------------------------------------------
# 13. the code beside the step


def test_13_the_step_and_encode_pages_show_the_lines_that_just_ran(page, app_url):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_url(page, f"{app_url}/?corpus=stdlib&merge=37", ".merge-card")
    page.get_by_text("The code that made this merge").click()
    lit = page.locator(".code-excerpt .lit")
    lit.first.wait_for()
    said = [re.sub(r"\s+", " ", t) for t in lit.all_inner_texts()]
    assert any("heappop(self.heap)" in t and "popped the winner: ␣ + is, 7,155" in t for t in said), said
    assert any("_clean_top" in t and "popped 10 stale entries above the runner-up" in t for t in said), said  # as the heap's caption
    assert "bpe/heap.py · Heap.choose" in text_of(page, ".code-excerpt .where")
    page.get_by_role("button", name="Next").first.click()  # the box stays open, its lines lit for the next merge
    expect(page.locator(".merge-card")).to_contain_text("Merge 38", timeout=60_000)
    wait_idle(page)
    expect(lit.filter(has_text="heappop(self.heap)")).not_to_contain_text("␣ + is, 7,155")
    page.get_by_role("button", name="Previous").first.click()
    expect(lit.filter(has_text="heappop(self.heap)")).to_contain_text("popped the winner: ␣ + is, 7,155", timeout=60_000)
    wait_idle(page)
    page.get_by_text("The code that made this merge").evaluate("e => e.scrollIntoView({block: 'start'})")
    settled(page)
    assert clipped(page) == [] and page.evaluate(SMALL_TEXT_JS) == []
    shots(page, "lecture-13-step-code")

    open_url(page, f"{app_url}/encode?text=lowest&tokenizer=run&corpus=textbook", ".enc-rows")
    page.get_by_text("The code of this step").click()
    lit.first.wait_for()
    said = [re.sub(r"\s+", " ", t) for t in lit.all_inner_texts()]
    assert any("rank = min(" in t and "the lowest merge number: #1, s + t" in t for t in said), said
    assert any("ids[i : i + 2] = [new]" in t and "st, in 1 place" in t for t in said), said  # the merge itself, in the encoder's loop
    page.get_by_text("The code of this step").evaluate("e => e.scrollIntoView({block: 'start'})")
    settled(page)
    assert clipped(page) == [] and page.evaluate(SMALL_TEXT_JS) == []
    shots(page, "lecture-13-encode-code")


# ---------------------------------------------------------------------------
# 14. a lecture's links in order


def playlist_at(page) -> str:
    return text_of(page, ".playlist-bar")


def test_14_a_teacher_steps_through_a_playlist_in_presenter_mode_and_the_class_gets_it_by_one_link(browser, page, app_url):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_url(page, f"{app_url}/playlist?corpus=stdlib", '[data-testid="stMain"] h1')
    page.locator(".st-key-pl_preset_training button").click()
    wait_idle(page)
    shared = page.locator('[data-testid="stCode"]').first.inner_text().strip()
    assert "/lesson?" in shared and "corpus=stdlib" in shared and "present" not in shared
    shots(page, "lecture-14-playlist-page")
    page.get_by_role("button", name="Start in presenter mode").click()
    page.locator(".playlist-bar").wait_for(timeout=60_000)
    wait_idle(page)
    assert playlist_at(page).startswith("Playlist 1 of 11: Guided lesson, step 1") and "present=1" in page.url
    page.locator(".playlist-bar").click()  # the focus off any box: the clicker's keys reach the page
    for expected in ("Guided lesson, step 2", "Guided lesson, step 3"):
        page.keyboard.press("PageDown")  # what a presentation clicker sends
        expect(page.locator(".playlist-bar")).to_contain_text(expected, timeout=60_000)
        wait_idle(page)
    assert "at=3" in page.url and page.get_by_role("heading", name="3.").count() >= 1
    for _ in range(3):  # lesson 4, lesson 5, then merge 1 of the stdlib run on the step page
        page.locator(".st-key-playlist_next button").click()
        wait_idle(page)
    expect(page.locator(".playlist-bar")).to_contain_text("Playlist 6 of 11: Merge 1", timeout=60_000)
    page.locator(".merge-card").wait_for(timeout=120_000)
    assert "Merge 1 of 1,000" in text_of(page, ".merge-card")  # the playlist's run: the stdlib prose
    settled(page)
    assert clipped(page) == [] and page.evaluate(SMALL_TEXT_JS) == []
    for key in ("playlist_back", "playlist_next"):  # each button's label and its key on one line
        assert page.locator(f".st-key-{key} button").evaluate("e => e.getBoundingClientRect().height") < 70, key
    shots(page, "lecture-14-playlist-presenter-merge")

    context = new_context(browser, viewport={"width": 1280, "height": 720})  # a student opens the class's link
    student = context.new_page()
    open_url(student, shared, ".playlist-bar")
    assert playlist_at(student).startswith("Playlist 1 of 11: Guided lesson, step 1")
    student.locator(".st-key-playlist_next button").click()
    wait_idle(student)
    expect(student.locator(".playlist-bar")).to_contain_text("Playlist 2 of 11: Guided lesson, step 2", timeout=60_000)
    context.close()
