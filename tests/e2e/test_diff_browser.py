"""A student checks their own merges: the built-in example on the textbook run and on the stdlib prose, then their files,
and a real student's bug on the corpus file a server was started with (the link `bpe diff` prints).

Screenshots at 1280x720 and 1920x1080 (tests/screenshots/diff-*.png): the verdict with both lists and the pair
table, and the mistakes tried. What they show is checked against the numbers on the page.
"""

from __future__ import annotations

import pickle
import re
import sys
from pathlib import Path

import pytest

from bpe import TrainSpec
from bpe.cli import APP, step_hint

from .conftest import clipped, low_contrast, new_context, open_from_sidebar, pick, running_app, settled, small_text, wait_idle  # noqa: F401
from .screens import look

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the student's own trainer
import student_bpe as student  # noqa: E402

EXAMPLE = "Try a student's list with a tie mistake"


def verdict(page, timeout: int = 120_000) -> str:
    """The verdict line, once the check has ended (the page shows progress until then)."""
    box = page.locator(".diff-head")
    box.wait_for(timeout=timeout)
    return box.inner_text()


def row(page, table: str, css: str) -> list[str]:
    """The cells of the first row of class css in the table of class table."""
    return page.locator(f"table.{table} tr.{css}").first.locator("td").all_inner_texts()


def open_check(page) -> None:
    open_from_sidebar(page, "Check your merges", "Check your own BPE")


def upload(page, name: str, data: bytes) -> None:
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        {"name": name, "mimeType": "text/plain", "buffer": data}
    )
    wait_idle(page)


def test_the_example_on_the_textbook_run(page):
    open_check(page)
    page.get_by_text("Upload the merges your trainer made").wait_for()
    page.get_by_role("button", name=EXAMPLE).click()
    wait_idle(page)
    assert verdict(page).splitlines() == [
        "Your merges part from the reference at merge 1 of 12: a tie broken another way.",
        "Likely cause: ties to the smaller bytes: a trainer with it makes all of your 12 merges.",
    ]
    # the first difference in both lists, and both pairs in the pair table with the counts the sentence says
    assert row(page, "lists", "first") == ["1", "e + s", "s + t"]
    assert row(page, "pairs", "yours") == ["e + s", "9", "yours"] and row(page, "pairs", "chosen") == ["s + t", "9", "reference"]
    said = page.locator(".diff-cause").inner_text()
    assert "both occur 9 times there" in said and "'s' > 'e'" in said  # the counts of the table, the rule's comparison
    assert row(page, "tried", "cause")[:2] == ["ties to the smaller bytes", "12 of 12"]
    assert page.get_by_role("link", name="Open merge 1 on the step page").get_attribute("href").endswith("?corpus=textbook&merge=1")
    assert page.locator('[data-testid="stException"]').count() == 0
    assert look(page, "diff-textbook") == []
    assert look(page, "diff-textbook-tried", "Each known mistake, trained until it parts from your list") == []
    assert small_text(page) == [] and low_contrast(page) == []
    page.locator('[data-testid="stSidebar"]').get_by_text("Presenter mode").click()  # the teacher puts it on the projector
    settled(page)
    assert look(page, "diff-textbook-presenter") == [] and small_text(page) == []
    assert page.locator("table.lists tr.first").first.bounding_box()["y"] < 720  # the first difference on the first screen


def test_the_example_on_the_stdlib_prose_runs_in_a_worker(page):
    open_check(page)
    pick(page, "Corpus", "Python's own docs")
    page.get_by_role("button", name=EXAMPLE).click()
    wait_idle(page)
    said = verdict(page, timeout=240_000)
    k = int(re.search(r"at merge ([\d,]+) of 1,000: a tie broken another way", said).group(1).replace(",", ""))
    assert "Likely cause: ties to the smaller bytes: a trainer with it makes all of your 1,000 merges" in said
    first = row(page, "lists", "first")
    assert first[0] == f"{k:,}" and row(page, "pairs", "yours")[0] == first[1] and row(page, "pairs", "chosen")[0] == first[2]
    mine, theirs = row(page, "pairs", "chosen")[1], row(page, "pairs", "yours")[1]
    assert mine == theirs  # a tie: the same count
    assert look(page, "diff-stdlib") == []
    assert small_text(page) == []


def test_uploads_hostile_and_right(page):
    open_check(page)
    upload(page, "merges.pkl", pickle.dumps([(b"a", b"b")]))
    page.get_by_text("looks like a pickle").wait_for()
    upload(page, "merges.txt", b"<script> window.__pwned=1 </script>\n")
    page.get_by_text("should be two tokens separated by one space").wait_for()
    # a file whose tokens are HTML: checked, and shown as text
    upload(page, "mine.txt", b"(b'<img src=x onerror=window.__pwned=1>', b'x')\n")
    said = verdict(page)
    assert "at merge 1 of 1: a merge that cannot be made there" in said
    assert row(page, "lists", "first")[1] == "<img␣src=x␣onerror=window.__pwned=1> + x"  # as text, spaces shown
    assert page.evaluate("() => window.__pwned") is None
    settled(page)
    assert [text for text in clipped(page) if "add icon" not in text and "Training run" not in text] == []


SPECIAL = "<|endoftext|>"


@pytest.fixture(scope="module")
def documents(cs336, tmp_path_factory) -> Path:
    """corpus.en's last 300 lines, five a document, joined by <|endoftext|>: real text with 'ä' and special tokens."""
    lines = (cs336 / "corpus.en").read_text(encoding="utf-8").splitlines(keepends=True)[-300:]
    path = tmp_path_factory.mktemp("corpus") / "documents.txt"
    path.write_text(SPECIAL.join("".join(lines[i : i + 5]) for i in range(0, len(lines), 5)), encoding="utf-8")
    return path


def test_a_real_bug_opened_from_the_link_bpe_diff_prints(browser, documents):
    """A student's trainer that starts from characters and leaves <|endoftext|> in the text: `bpe diff`'s link opens
    the step page at the first difference on a server started with that corpus, and the Check page names both
    mistakes in words a class reads at 1280x720."""
    text = documents.read_text(encoding="utf-8")
    theirs = student.train(text, 180, (SPECIAL,), "characters_not_bytes+special_tokens_not_split", incremental=True)
    reference = student.train(text, 180, (SPECIAL,), incremental=True)
    k = next(i for i, (a, b) in enumerate(zip(theirs, reference)) if a != b) + 1
    hint = step_hint([str(documents)], TrainSpec(special_tokens=(SPECIAL,)), 256 + 180 + 1, k)
    with running_app({"BPE_CORPUS": str(documents)}) as url:
        context = new_context(browser, viewport={"width": 1400, "height": 2200})
        page = context.new_page()
        page.goto(hint.split("then open ")[1].replace(APP, url + "/"))  # the link, on this server's port
        wait_idle(page, 180_000)
        card = page.locator(".merge-card")
        card.wait_for(timeout=180_000)
        assert f"Merge {k} of 180" in card.inner_text().replace("\n", " ")
        open_check(page)
        upload(page, "merges.txt", "".join(f"{pair!r}\n" for pair in theirs).encode())
        said = verdict(page, timeout=240_000).splitlines()
        assert said == [
            f"Your merges part from the reference at merge {k} of 180: a difference in counts.",
            "Likely cause: two mistakes at once, special tokens left in the text and characters, not bytes: "
            "a trainer with both makes all of your 180 merges.",
        ]
        assert row(page, "tried", "cause")[:2] == ["special tokens left in the text, and characters, not bytes", "180 of 180"]
        shown = page.locator('[data-testid="stMain"]').inner_text()
        assert not re.search(r"characters_not_bytes|special_tokens_not_split|tie:", shown)  # words on the page, not ids
        assert page.locator('[data-testid="stException"]').count() == 0
        assert look(page, "diff-real-bug") == []
        assert look(page, "diff-real-bug-tried", "Each known mistake, trained until it parts from your list") == []
        assert small_text(page) == []
        assert [t for t in low_contrast(page) if not re.fullmatch(r"[\d.]+:1 add( icon)?", t)] == []  # the uploader's own + icon
        context.close()
