"""AppTest of the whole app (router and sidebar), for the page tests and the benchmarks."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def keep_the_router() -> None:
    """Make AppTest run app.py (the st.navigation router) on every run, as the server does (ui.compat says why)."""
    from ui.compat import keep_the_router_in_apptest

    keep_the_router_in_apptest()


keep_the_router()


def open_app(page: str | None = None, source: str | None = None, **sidebar: str):
    """A fresh AppTest of the whole app (router and sidebar), on `page` (e.g. 'pages/race.py').

    Caches are cleared first, so each test starts from nothing; `source` picks a corpus preset,
    other keyword arguments set sidebar selectboxes by key (pretokenizer=..., algorithm=...).
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


def rerun_until(at, done, timeout: float = 180, what: str = "the page's work"):
    """Rerun the page, as its polling fragment would, until done(at); return at.

    Big corpora (the 2 MB stdlib preset), races and sweeps run in worker
    processes; until they end a page shows progress, and a real browser's
    fragment reruns it. The page is drawn once more after a wait, as it is when
    the run has ended.
    """
    import time

    deadline, waited = time.monotonic() + timeout, False
    while not done(at):
        assert time.monotonic() < deadline, f"{what} did not end in {timeout:.0f} s"
        time.sleep(0.2)
        at.run()
        waited = True
    if waited:
        at.run()
    assert not at.exception, at.exception
    return at


def settled(at, timeout: float = 300):
    """open_app's wait: until the runs the page needs to draw (BUILDS) have ended in the worker pool."""
    import ui.work

    def built(at) -> bool:
        watching = at.session_state.get("watching", {})
        statuses = [ui.work.pool().status(watching[purpose]) for purpose in BUILDS if purpose in watching]
        return all(status is None or status.ended for status in statuses)

    return rerun_until(at, built, timeout, "the page's runs")


def finish(at, purpose: str = "race", timeout: float = 180) -> None:
    """Rerun the page until this session's run for purpose has ended."""
    rerun_until(at, lambda at: purpose not in at.session_state["watching"], timeout, f"the {purpose}")
