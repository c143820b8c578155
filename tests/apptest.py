"""AppTest of the whole app (router and sidebar), for the page tests and the benchmarks."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def keep_the_router() -> None:
    """Make AppTest run app.py (the st.navigation router) on every run, as the server does.

    subtle: before each run AppTest resets PagesManager.uses_pages_directory to None,
    and the next PagesManager sets it to "a pages/ folder exists" -- so from the second
    run on AppTest executes the folder's pages directly (Streamlit's old multipage
    mode), skipping the router and the sidebar. The server only decides this once, and
    st.navigation turns it off on the first run. A PagesManager that starts from
    False here restores that; the app itself keeps its pages/ folder.
    """
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.testing.v1 import app_test

    class RouterPagesManager(PagesManager):
        def __init__(self, *args, **kwargs) -> None:
            PagesManager.uses_pages_directory = False  # the app routes with st.navigation
            super().__init__(*args, **kwargs)

    app_test.PagesManager = RouterPagesManager


keep_the_router()


def open_app(page: str | None = None, source: str | None = None, **sidebar: str):
    """A fresh AppTest of the whole app (router and sidebar), on `page` (e.g. 'pages/race.py').

    Caches are cleared first, so each test starts from nothing; `source` picks a corpus preset,
    other keyword arguments set sidebar selectboxes by key (pattern=..., algorithm=...).
    """
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_resource.clear()
    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    if source is not None:
        at.sidebar.selectbox(key="source").set_value(source).run()
    for key, value in sidebar.items():
        at.sidebar.selectbox(key=key).set_value(value).run()
    if page is not None:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return settled(at)


BUILDS = ("trace", "train", "replays")  # the work a page waits for before it can draw (not races: a test starts those)


def settled(at, timeout: float = 300):
    """Rerun the page, as its polling fragment would, until the runs it waits for in the worker pool have ended.

    Big corpora (the 2 MB stdlib preset) are trained in worker processes; until
    then a page shows progress and stops, and a real browser's fragment reruns it.
    """
    import time

    import ui.work

    deadline, waited = time.monotonic() + timeout, False
    while True:
        watching = at.session_state.get("watching", {})
        keys = [watching[purpose] for purpose in BUILDS if purpose in watching]
        if not any((status := ui.work.pool().status(key)) is not None and not status.ended for key in keys):
            break
        assert time.monotonic() < deadline, f"the page's runs did not end in {timeout:.0f} s"
        time.sleep(0.2)
        at.run()
        waited = True
    if waited:
        at.run()  # the page as drawn once its run has ended
    assert not at.exception, at.exception
    return at


def finish(at, purpose: str = "race", timeout: float = 180) -> None:
    """Rerun the page until this session's run for purpose has ended."""
    import time

    deadline = time.monotonic() + timeout
    while purpose in at.session_state["watching"]:
        assert time.monotonic() < deadline, f"the {purpose} did not finish"
        time.sleep(0.2)
        at.run()
    assert not at.exception, at.exception
