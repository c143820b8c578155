"""Streamlit's private internals the app relies on, pinned: an upgrade that moves one fails here, by name.

Each test exercises one function of ui/compat.py against the installed Streamlit;
the last one checks that no other module of the app reaches into Streamlit's
internals, so this file covers them all.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pyarrow as pa
import pytest

from ui import compat

ROOT = Path(__file__).resolve().parents[1]


def test_the_pages_directory_switch_is_a_class_attribute_the_router_can_turn_off():
    from streamlit.runtime.pages_manager import PagesManager

    assert hasattr(PagesManager, "uses_pages_directory"), "Streamlit moved PagesManager.uses_pages_directory: see ui/compat.py"
    saved = PagesManager.uses_pages_directory
    try:
        PagesManager.uses_pages_directory = True
        assert compat.uses_pages_directory()
        compat.stop_using_pages_directory()
        assert PagesManager.uses_pages_directory is False and not compat.uses_pages_directory()
    finally:
        PagesManager.uses_pages_directory = saved


def test_apptest_builds_its_pages_manager_through_a_name_we_can_replace():
    from streamlit.testing.v1 import app_test

    assert hasattr(app_test, "PagesManager"), "AppTest no longer looks up PagesManager in its module: see compat.keep_the_router_in_apptest"
    compat.keep_the_router_in_apptest()
    assert app_test.PagesManager.__name__ == "RouterPagesManager"


def test_the_session_context_and_the_runtime_answer_outside_a_server():
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    assert "suppress_warning" in inspect.signature(get_script_run_ctx).parameters
    assert hasattr(Runtime, "exists") and hasattr(Runtime, "instance") and hasattr(Runtime, "is_active_session")
    assert compat.session_id() == "no session"  # no script run here
    assert compat.session_alive("anyone")  # no server here: every session counts as open


def test_the_session_id_is_the_script_runs_own_in_an_apptest():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string("from ui import compat\nimport streamlit as st\nst.write(compat.session_id())").run()
    assert not at.exception and at.markdown[0].value not in ("", "no session")


def test_arrow_bytes_round_trip_through_streamlits_converter():
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    data = compat.arrow_bytes(pa.table({"merge": [1, 2, 3], "count": [9, 7, 7]}))
    assert isinstance(data, bytes)
    assert convert_arrow_bytes_to_pandas_df(data)["count"].tolist() == [9, 7, 7]


@pytest.mark.parametrize("folder", ["ui", "pages", "app.py"])
def test_no_other_module_reaches_into_streamlits_internals(folder):
    private = re.compile(
        r"^\s*(from|import) streamlit\.(runtime|dataframe_util|web|proto|elements)|from streamlit import dataframe_util", re.M
    )
    paths = [ROOT / folder] if folder.endswith(".py") else sorted((ROOT / folder).rglob("*.py"))
    offenders = [str(p.relative_to(ROOT)) for p in paths if p.name != "compat.py" and private.search(p.read_text(encoding="utf-8"))]
    assert offenders == [], f"Streamlit internals used outside ui/compat.py: {offenders}"


def test_the_theme_of_a_new_session_message_is_filled_once_and_the_same():
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.runtime import app_session

    assert callable(getattr(app_session, "_populate_theme_msg", None)), (
        "Streamlit moved _populate_theme_msg: see compat.cache_theme_messages"
    )
    compat.cache_theme_messages()
    populate = app_session._populate_theme_msg
    assert populate.cached
    compat.cache_theme_messages()
    assert app_session._populate_theme_msg is populate  # idempotent: not wrapped twice
    first, second = ForwardMsg(), ForwardMsg()
    for msg in (first, second):
        for section, part in (("theme", msg.new_session.custom_theme), ("theme.light", msg.new_session.custom_theme.light)):
            populate(part, section)
    assert first.SerializeToString() == second.SerializeToString()
    assert first.new_session.custom_theme.base_font_size == 18  # .streamlit/config.toml's, as Streamlit fills it
