"""A student opens the step page, steps with the buttons and the arrow keys, plays, follows a link.

Screenshots (tests/screenshots/step-*.png, at 1280x720 and 1920x1080) are for a
person to look at; the checks here are what a projector needs: nothing cut
off, text at least 18 px, the merge card, pair table and heap on the first
screen, and a heap drawn as a tree.
"""

from __future__ import annotations

import re

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from .conftest import SMALL_TEXT_JS, clipped, enter, pick, settled, shot, shots, wait_idle

STDLIB = "Python's own docs (stdlib docstrings, 2 MB)"

HEAP_JS = """
() => [...document.querySelectorAll('.hnode')].map(n => {
  const r = n.getBoundingClientRect();
  return {i: +n.dataset.index, x: (r.left + r.right) / 2, top: r.top, bottom: r.bottom, overflow: n.scrollWidth > n.clientWidth + 1};
})
"""


def merge_shown(page) -> int:
    text = page.locator(".merge-card").inner_text()
    return int(re.search(r"Merge\s+([\d,]+)\s+of", text).group(1).replace(",", ""))


def open_link(page, app_url: str, corpus: str, merge: int) -> None:
    page.goto(f"{app_url}/?corpus={corpus}&merge={merge}")
    wait_idle(page, 180_000)
    page.locator(".merge-card").wait_for(timeout=180_000)


def bottom_of(page, selector: str) -> float:
    return page.locator(selector).first.evaluate("e => e.getBoundingClientRect().bottom")


# Previous, Next, the slider (Play's progress bar while playing), Play or Pause, the speed: [left, right, middle] of each
ROW_JS = """() => ['.st-key-previous', '.st-key-next', '.st-key-w_step, [data-testid=stProgress]', '.st-key-play, .st-key-pause', '.st-key-w_speed']
  .map(s => { const r = document.querySelector(s).getBoundingClientRect(); return [r.left, r.right, (r.top + r.bottom) / 2]; })"""


def assert_one_row_of_controls(page) -> None:
    """The row of controls reads left to right on one line, none over another, as one row (pages/step.py draws Play
    and the speed outside the fragment and ui/style.py's grid puts them back at the row's end)."""
    boxes = page.evaluate(ROW_JS)
    for (_, right, middle), (left, _, other) in zip(boxes, boxes[1:]):
        assert right + 12 <= left and abs(middle - other) < 8, boxes


# ---------------------------------------------------------------------------


def test_student_steps_through_textbook_corpus_with_buttons_and_keys(page):
    pick(page, "Corpus", "low / lower / widest / newest (textbook)")
    page.locator(".merge-card").wait_for()
    assert merge_shown(page) == 1 and "s + t → st" in page.locator(".merge-card").inner_text().replace("\n", " ")

    page.get_by_role("button", name="Next").click()
    wait_idle(page)
    assert merge_shown(page) == 2
    # the words rewritten by 'e + st': widest and newest, before -> after
    words = page.locator(".words").inner_text()
    assert "× 6" in words and "× 3" in words

    page.locator("h1").click()  # the arrow keys work wherever the focus is not in a text box
    page.keyboard.press("ArrowRight")
    wait_idle(page)
    assert merge_shown(page) == 3
    # the next key once the slider holds the merge the run gave it, as a person's next key comes: pressed before, the
    # slider's old value comes along (the page lets the click decide: test_app_step's ..._old_value_along_is_a_click)
    expect(page.get_by_role("slider", name="Jump to merge")).to_have_value("3")
    page.keyboard.press("ArrowLeft")
    wait_idle(page)
    assert merge_shown(page) == 2
    assert "merge=2" in page.url and "corpus=textbook" in page.url  # the URL follows, ready to hand out

    page.get_by_role("button", name="Previous").click()
    wait_idle(page)
    assert merge_shown(page) == 1
    shots(page, "step-textbook")


def test_a_projector_sees_the_card_the_pair_table_and_the_heap_on_the_first_screen(page, app_url):
    open_link(page, app_url, "textbook", 2)
    page.set_viewport_size({"width": 1280, "height": 720})
    settled(page)
    for selector in (".merge-card", "table.pairs", ".htree"):
        assert bottom_of(page, selector) <= 720, selector
    assert clipped(page) == []
    assert page.evaluate(SMALL_TEXT_JS) == []
    assert_one_row_of_controls(page)
    # "Your own sentence" sits right under the sentence it changes
    sentence = page.locator(".sentence").bounding_box()
    box = page.get_by_label("Your own sentence").bounding_box()
    assert 0 <= box["y"] - (sentence["y"] + sentence["height"]) < 200 and abs(box["x"] - sentence["x"]) < 40


def test_the_heap_is_drawn_as_a_binary_tree(page, app_url):
    open_link(page, app_url, "textbook", 2)
    nodes = {n["i"]: n for n in page.evaluate(HEAP_JS)}
    assert sorted(nodes) == list(range(7))
    for i, node in nodes.items():
        assert not node["overflow"], i
        left, right = nodes.get(2 * i + 1), nodes.get(2 * i + 2)
        if left and right:
            assert abs(node["x"] - (left["x"] + right["x"]) / 2) <= 1.5, i  # centred over its children
            assert left["top"] > node["bottom"] and right["top"] > node["bottom"]
    assert page.locator(".hnode.stale").count() >= 1  # merge 2: 'e s' is stale
    assert "Drawn: the top 3 levels, 7 of 11 entries" in page.locator(".heap + .caption").inner_text()


def test_the_real_corpus_at_merge_501_reads_well_at_1280_and_820_px(page, app_url):
    open_link(page, app_url, "stdlib", 501)
    assert "Merge 501 of 1,000" in page.locator(".merge-card").inner_text().replace("\n", " ")
    shots(page, "step-stdlib")
    for width in (1280, 820):
        page.set_viewport_size({"width": width, "height": 900})
        settled(page)
        assert clipped(page) == [], width
        words = page.locator(".words").evaluate(
            """w => ({over: w.scrollWidth > w.clientWidth + 1,
                      counts: [...w.querySelectorAll('.count')].every(c => c.getBoundingClientRect().right <= w.getBoundingClientRect().right + 1)})"""
        )
        assert words == {"over": False, "counts": True}, width
        if width == 1280:  # a word never wraps inside itself where the column can hold it (`␣is s u / e` once did)
            broken = page.locator(".words .toks.word").evaluate_all(
                "ts => ts.filter(t => new Set([...t.querySelectorAll('.tok')].map(c => Math.round(c.getBoundingClientRect().top))).size > 1).map(t => t.innerText)"
            )
            assert broken == []
    page.set_viewport_size({"width": 1280, "height": 720})
    settled(page)
    for selector in (".merge-card", "table.pairs", ".htree"):
        assert bottom_of(page, selector) <= 720, selector
    page.get_by_role("button", name="Next").click()
    wait_idle(page)
    assert merge_shown(page) == 502 and "merge=502" in page.url


def pause(page) -> float:
    """Click Pause until the page says Play; return when (on the browser's clock) the click that took was made.

    subtle: on a loaded machine a click can land in the instant the playing fragment redraws its row
    and be lost (seen once in CI); a student would click again, and so does this.
    """
    for _ in range(3):
        paused = page.evaluate("() => performance.now()")
        page.get_by_role("button", name="Pause").click()
        try:
            page.get_by_role("button", name="Play").wait_for(timeout=15_000)
            wait_idle(page)
            return paused
        except PlaywrightTimeout:
            continue
    raise AssertionError("Pause did not stop Play after three clicks")


def test_play_runs_at_the_speed_it_says(page, app_url):
    # Play counts merges by the clock: merge = 1 + elapsed seconds × speed, whenever the page is redrawn.
    # So the merge Pause stops at measures the speed, however slowly a loaded machine redraws; and no
    # merge shown while playing can be ahead of the clock (both checks are on this browser's clock).
    open_link(page, app_url, "stdlib", 1)
    pick(page, "Speed", "4 merge/s")
    page.evaluate(
        """() => { window.seen = [];
           setInterval(() => { const m = /Merge\\s+([\\d,]+)\\s+of/.exec(document.querySelector('.merge-card')?.innerText || '');
                               if (m) window.seen.push([performance.now(), +m[1].replace(',', '')]); }, 40); }"""
    )
    started = page.evaluate("() => performance.now()")
    page.get_by_role("button", name="Play").click()
    page.wait_for_function("() => window.seen.length && window.seen.at(-1)[1] >= 25", timeout=60_000)  # about 6 s at 4 merge/s
    assert_one_row_of_controls(page)  # Pause, and the progress bar in the slider's place
    paused = pause(page)
    merges = merge_shown(page) - 1
    expected = 4 * (paused - started) / 1000
    assert 0.75 * expected <= merges <= 1.25 * expected + 1, (merges, expected)
    seen = page.evaluate("() => window.seen")
    assert all(k <= 1 + 4 * (t - started) / 1000 + 1 for t, k in seen), seen  # never ahead of the clock
    assert len({k for _, k in seen}) >= 3  # and it did move on screen while playing
    # Pause stops: nothing moves over the next second (four ticks at 4 merge/s). subtle: a window of time, not a
    # pause for something to happen: "it does not move" can only be watched for a while
    page.wait_for_timeout(1000)
    assert merge_shown(page) == merges + 1


def sidebar_open(page) -> bool:
    return page.get_by_test_id("stSidebar").get_attribute("data-collapsed") == "false"


def test_presenter_mode_is_larger_and_simpler(page, app_url):
    open_link(page, app_url, "stdlib", 37)
    line = page.locator(".merge-card .why").evaluate("e => e.getBoundingClientRect().height")
    page.set_viewport_size({"width": 1280, "height": 720})
    page.get_by_test_id("stSidebar").get_by_text("Presenter mode").click()
    settled(page)
    expect(page.get_by_test_id("stSidebar")).to_have_attribute("data-collapsed", "true")
    assert not sidebar_open(page)  # folded away: the page has the whole width
    assert page.get_by_test_id("stExpandSidebarButton").is_visible()  # and the control to open it again stays
    assert "present=1" in page.url  # a reload keeps presenter mode
    assert page.locator(".merge-card .why").evaluate("e => e.getBoundingClientRect().height") >= 1.2 * line  # 18 px text shows at 22.5
    assert page.locator('[data-testid="stVegaLiteChart"]').count() == 0
    for selector in (".merge-card", "table.pairs", ".htree"):
        assert bottom_of(page, selector) <= 720, selector
    assert clipped(page) == []
    assert_one_row_of_controls(page)
    page.locator(".merge-card .where").click()  # off the toggle: the arrow keys step wherever the focus is not in a widget
    page.keyboard.press("ArrowRight")
    wait_idle(page)
    assert merge_shown(page) == 38
    shots(page, "step-presenter")

    page.reload()  # a new session: the URL alone brings presenter mode back, at the same merge
    wait_idle(page, 180_000)
    page.locator(".merge-card").wait_for(timeout=180_000)
    settled(page)
    assert merge_shown(page) == 38 and not sidebar_open(page) and page.locator("h1").count() == 0
    for selector in (".merge-card", "table.pairs", ".htree"):
        assert bottom_of(page, selector) <= 720, selector

    page.get_by_test_id("stExpandSidebarButton").click()  # the teacher opens the sidebar and leaves presenter mode
    page.get_by_test_id("stSidebar").get_by_text("Presenter mode").click()
    wait_idle(page)
    settled(page)
    assert "present=1" not in page.url and sidebar_open(page) and page.locator("h1").count() == 1


def test_a_deep_link_opens_presenter_mode_on_any_page(page, app_url):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{app_url}/?corpus=textbook&merge=5&present=1")
    wait_idle(page, 180_000)
    page.locator(".merge-card").wait_for(timeout=180_000)
    settled(page)
    assert merge_shown(page) == 5 and not sidebar_open(page)
    for selector in (".merge-card", "table.pairs", ".htree"):
        assert bottom_of(page, selector) <= 720, selector
    assert clipped(page) == [] and page.evaluate(SMALL_TEXT_JS) == []
    page.goto(f"{app_url}/lesson?present=1")
    wait_idle(page, 180_000)
    page.get_by_role("button", name="Next ▶").wait_for()
    settled(page)
    assert not sidebar_open(page) and clipped(page) == []
    shots(page, "lesson-presenter")


def test_hostile_corpus_is_shown_as_text(page):
    pick(page, "Corpus", "Paste your own text")
    enter(page, "Text", "<script>alert(1)</script> <img src=x onerror=alert(1)> <script>alert(1)</script>", "Control+Enter")
    dialogs = []
    page.on("dialog", lambda d: dialogs.append(d.message))
    page.locator(".merge-card").wait_for()
    # no element was injected, and the text shows as text
    assert page.locator("img[src=x]").count() == 0
    tokens = "".join(page.locator(".sentence .tok").all_inner_texts())
    assert "<script>alert(1)</script>" in tokens.replace("␣", " ")
    assert dialogs == []
    assert "corpus=" not in page.url  # pasted text cannot travel in a link


def test_a_student_picks_a_tie_break_rule_and_sees_what_each_rule_takes_on_the_tie(page):
    pick(page, "Corpus", "low / lower / widest / newest (textbook)")
    page.locator(".merge-card").wait_for()
    pick(page, "Tie-break rule", "rustbpe")
    page.locator('[data-testid="stSidebar"]').get_by_text("Ties go to the smaller pair of ids").wait_for()
    card = page.locator(".merge-card").inner_text().replace("\n", " ")
    assert "e + s → es" in card  # merge 1 under rustbpe: ids (101, 115) < (115, 116)
    assert "Each rule's pick: cs336 s + t · huggingface e + s · rustbpe e + s" in card
    assert page.locator("details.tie-rules summary .mine").inner_text() == "rustbpe e + s"
    assert not page.locator("table.tie-rules").is_visible()  # one line until a student asks why
    shots(page, "step-tie-picks")  # one line of picks on the card
    page.set_viewport_size({"width": 1280, "height": 720})
    page.locator('[data-testid="stSelectbox"]').filter(has_text="Tie-break rule").evaluate("e => e.scrollIntoView({block: 'center'})")
    settled(page)
    shot(page, "sidebar-tie-break-1280x720")  # the rule and what it prefers, in the sidebar
    page.set_viewport_size({"width": 1400, "height": 2200})
    page.get_by_text("why?").click()
    rows = page.locator("table.tie-rules tr").all_inner_texts()
    assert len(rows) == 4 and "s + t" in rows[1] and "e + s" in rows[3]  # header, cs336, huggingface, rustbpe
    assert page.locator("table.tie-rules tr.mine").inner_text().startswith("rustbpe")
    shots(page, "step-tie-rules")
    page.set_viewport_size({"width": 1280, "height": 720})
    settled(page)
    assert clipped(page) == []
    assert page.evaluate(SMALL_TEXT_JS) == []
    assert bottom_of(page, "table.tie-rules") <= 720  # the whole explanation on a projector's first screen


def test_the_speed_box_keeps_its_speed_through_the_empty_text_notice(page):
    pick(page, "Corpus", "low / lower / widest / newest (textbook)")
    page.locator(".merge-card").wait_for()
    pick(page, "Speed", "2 merge/s")
    pick(page, "Corpus", "Paste your own text")  # the empty-text notice: no speed box
    box = page.get_by_label("Text")
    box.fill("hello world, hello words " * 5)
    box.press("Control+Enter")
    wait_idle(page)
    page.locator(".merge-card").wait_for()
    speed = page.locator('[data-testid="stSelectbox"]').filter(has_text="Speed").first.locator("input")
    assert speed.input_value() == "2 merge/s"  # not 0.5, as the browser once fell back to
    page.get_by_role("button", name="Next").click()
    wait_idle(page)
    assert speed.input_value() == "2 merge/s" and merge_shown(page) == 2


def test_wait_idle_waits_for_a_run_the_server_has_not_started_yet(page):
    """The tests' wait_idle counts the runs the page asked for and the server answered (conftest.RUNS_JS): no pause to guess.

    Every message is held back 1.5 s, as a busy server would be slow to start the run: waiting a fixed while and then
    for 'not running' would return before the click's run began, with the old merge shown.
    """
    page.evaluate("() => { window.__runs.delay = 1500; }")
    shown = merge_shown(page)
    page.get_by_role("button", name="Next").click()
    wait_idle(page)
    assert merge_shown(page) == shown + 1
