"""The teacher opens a server that has just started: the sidebar says what it is still building for the class."""

from __future__ import annotations

from .conftest import new_context, running_app, shots, small_text, wait_idle


def test_the_sidebar_says_what_is_still_warming_up(browser):
    with running_app() as url:
        context = new_context(browser, viewport={"width": 1280, "height": 720})
        page = context.new_page()
        page.goto(url)  # the server's first page: the warm-up starts once it is drawn
        wait_idle(page)
        page.reload()
        wait_idle(page)
        said = page.locator('[data-testid="stSidebar"]').get_by_text("Warming up for the class (once per server start)")
        said.wait_for(timeout=30_000)
        said.scroll_into_view_if_needed()
        assert "the 2 MB preset's trace" in said.inner_text()
        shots(page, "warm-up")
        assert small_text(page) == []
        context.close()
