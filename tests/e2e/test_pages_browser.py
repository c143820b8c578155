"""A link to any page opens that page, with the router's sidebar: the pages/ folder does not take over.

Each link is the first visit to a freshly started server: that is when Streamlit's old
pages/-folder mode would run the page without the router (see ui/__init__.py).
"""

import pytest

from ui.pages import PAGES

from .conftest import HEADINGS, new_context, running_app, wait_idle

# "/" opens the first page; its own name ("/step") is not an address of it (Streamlit: "Page not found")
LINKS = [("", HEADINGS[PAGES[0].url_path])] + [(p.url_path, HEADINGS[p.url_path]) for p in PAGES[1:]]


def test_every_page_has_its_heading_here():
    assert sorted(HEADINGS) == sorted(p.url_path for p in PAGES)


@pytest.mark.parametrize("path, title", LINKS)
def test_first_visit_by_deep_link_opens_the_page_with_the_shared_sidebar(browser, path, title):
    with running_app() as app_url:
        context = new_context(browser, viewport={"width": 1280, "height": 720})
        page = context.new_page()
        page.goto(f"{app_url}/{path}")
        wait_idle(page)
        page.get_by_role("heading", name=title).first.wait_for()
        sidebar = page.get_by_test_id("stSidebar")
        assert "Training run" in sidebar.inner_text()  # drawn by app.py's router, not by the page
        assert page.get_by_test_id("stException").count() == 0
        assert page.get_by_text("Page not found").count() == 0
        context.close()
