"""A lecture's playlist (issue 28.14): what its URL says, and a class stepping through it (AppTest; the browser test is
tests/e2e/test_lecture_browser.py)."""

from __future__ import annotations

import pytest
from conftest import open_app
from hypothesis import given, settings
from hypothesis import strategies as st

from ui import playlist as pl
from ui.lessons import quirks

items = st.one_of(
    st.builds(pl.Item, st.sampled_from([k for k, kind in pl.KINDS.items() if kind.takes == "number"]), st.integers(1, 10**6).map(str)),
    st.builds(pl.Item, st.just("quirk"), st.sampled_from(list(quirks.BY_KEY))),
    st.builds(pl.Item, st.just("encode"), st.text(min_size=1, max_size=pl.MAX_TEXT)),
    st.builds(pl.Item, st.sampled_from([k for k, kind in pl.KINDS.items() if not kind.takes])),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(items, min_size=1, max_size=pl.MAX_ITEMS).map(tuple))
def test_a_playlist_reads_back_as_its_url_writes_it(playlist):
    """Commas, colons and percent signs in an Encode item's text survive the URL."""
    assert pl.parse(pl.written(playlist)) == (playlist, [])


@pytest.mark.parametrize(
    "written, says",
    [
        ("merge:37,dance", "'dance' is not one of lesson, merge"),
        ("merge:²", "merge's '²' is not a number"),
        ("quirk:<script>", "quirk '\\<script\\>' is not one of strawberry"),
        ("race:5", "race takes nothing after it"),
        ("encode:" + "x" * 61, "61 characters (1 to 60)"),
        (",".join(["race"] * 45), "at most 40 items"),
    ],
)
def test_a_bad_part_of_a_playlist_gets_a_sentence_and_the_rest_is_kept(written, says):
    kept, problems = pl.parse(written)
    assert any(says in p for p in problems), problems
    assert len(kept) <= pl.MAX_ITEMS


def test_a_playlist_link_opens_its_item_on_its_page_and_next_goes_on():
    at = open_app()
    at.query_params.clear()
    at.query_params.update(corpus="textbook", playlist="merge:3,lesson:2,quirk:numbers", at="1")
    at.run()
    assert not at.exception and at.session_state["step"] == 3
    assert "Playlist 1 of 3" in " ".join(h.value for h in at.html) and "Merge <b>3</b> of 12" in " ".join(h.value for h in at.html)
    at.button(key="playlist_next").click().run()  # the lesson's step 2, on the lesson page
    assert not at.exception and at.session_state["lesson_step"] == 2 and at.session_state["playlist_at"] == 2
    assert at.query_params["at"] == "2" and at.query_params["playlist"] == "merge:3,lesson:2,quirk:numbers"
    at.button(key="playlist_next").click().run()
    assert at.session_state["quirk"] == "numbers" and at.button(key="playlist_next").disabled  # the last item
    at.button(key="playlist_back").click().run()
    assert at.session_state["playlist_at"] == 2
    at.button(key="playlist_leave").click().run()
    assert (
        at.session_state["playlist"] is None
        and "playlist" not in at.query_params
        and not [b for b in at.button if b.key == "playlist_next"]
    )


def test_the_playlist_page_builds_one_and_gives_the_class_its_link():
    at = open_app("pages/playlist.py", source="ties", tie_break="rustbpe")
    at.button(key="pl_preset_training").click().run()
    draft = at.session_state["playlist_draft"]
    assert draft[0] == pl.Item("lesson", "1") and len(draft) == 11
    at.selectbox(key="w_pl_kind").set_value("quirk").run()
    at.selectbox(key="w_pl_quirk").set_value("numbers").run()
    at.button(key="pl_add").click().run()
    assert at.session_state["playlist_draft"][-1] == pl.Item("quirk", "numbers")
    shared = at.code[0].value
    assert "/lesson?" in shared and "playlist=lesson%3A1%2Clesson%3A2" in shared and "corpus=ties" in shared and "present" not in shared
    at.button(key="pl_start").click().run()  # presenter mode, at the first item
    assert not at.exception and at.session_state["presenter"] and at.session_state["playlist_at"] == 1
    assert at.session_state["lesson_step"] == 1
    # the run goes along from page to page (a page switch from the server reset the sidebar to the default preset)
    for _ in range(5):
        at.button(key="playlist_next").click().run()
    assert at.session_state["step"] == 1 and (at.session_state["source"], at.session_state["tie_break"]) == ("ties", "rustbpe")
    assert at.session_state["presenter"] and at.query_params["present"] == "1"


def test_every_kind_opens_a_page_of_the_page_list_and_the_default_page_is_its_first():
    from ui import pages

    assert {kind.page for kind in pl.KINDS.values()} <= set(pages.PAGES)  # named there, never listed again here
    assert pages.route(pages.PAGES[0]) == "" and pages.route(pl.KINDS["race"].page) == "race"
    with pytest.raises(KeyError, match="no page is called 'nope'"):
        pages.named("nope")
