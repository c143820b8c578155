"""Shared fixtures. The CS336 reference files live next to the project, in ../shared/cs336."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "cs336"


@pytest.fixture(scope="session")
def cs336() -> Path:
    """The folder holding corpus.en and the reference merges and vocab; skips when it is absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared/cs336 not present")
    return SHARED


ROOT = Path(__file__).resolve().parents[1]


def open_app(page: str | None = None, source: str | None = None, **sidebar: str):
    """A fresh AppTest of the whole app (router and sidebar), on `page` (e.g. 'app_pages/race.py').

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
    return at
