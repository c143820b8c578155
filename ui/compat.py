"""Streamlit's private internals, touched here and nowhere else.

Each function below wraps one thing Streamlit does not promise to keep, says why
the app needs it, and is pinned by tests/test_compat.py, which fails with a
sentence naming the function when an upgrade moves or changes it (rather than the
app breaking quietly: a router skipped, a closed tab's run never stopped).
tests/test_compat.py also checks that no other module of the app imports them.

What it does not do: anything Streamlit offers publicly (st.*), which the pages use directly.
"""

from __future__ import annotations

from streamlit import dataframe_util
from streamlit.runtime import Runtime
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

# ---------------------------------------------------------------------------
# the router: pages/ exists (the design card asks for it), yet app.py's st.navigation routes every page


def uses_pages_directory() -> bool:
    """Whether this server runs pages/ scripts directly (Streamlit's old multipage mode).

    Why: a server decides this once, when its first session starts, and says yes
    because pages/ exists; a first visitor who deep-links to /race would then get
    the page without the router and its sidebar (ui/__init__.py turns it off).
    """
    return bool(PagesManager.uses_pages_directory)


def stop_using_pages_directory() -> None:
    """Turn the old pages/-folder mode off for the whole server, as st.navigation would on its first run."""
    PagesManager.uses_pages_directory = False


def keep_the_router_in_apptest() -> None:
    """Make AppTest run app.py (the st.navigation router) on every run, as the server does.

    Why: before each run AppTest resets PagesManager.uses_pages_directory to None,
    and the next PagesManager sets it to "a pages/ folder exists" -- so from the
    second run on AppTest executes the folder's pages directly, skipping the
    router and the sidebar. A PagesManager that starts from False restores what
    the server does.
    """
    from streamlit.testing.v1 import app_test

    class RouterPagesManager(PagesManager):
        def __init__(self, *args, **kwargs) -> None:
            PagesManager.uses_pages_directory = False  # the app routes with st.navigation
            super().__init__(*args, **kwargs)

    app_test.PagesManager = RouterPagesManager


# ---------------------------------------------------------------------------
# sessions: the worker pool stops a run nobody watches any more (ui/work.py)


def session_id() -> str:
    """The id of the session this script run serves ("no session" outside one: a worker, a test).

    Why: the pool counts who watches a run by session; Streamlit has no public session id.
    """
    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx else "no session"


def session_alive(who: str) -> bool:
    """Whether a browser still holds session `who` open (always, outside a real server: AppTest).

    Why: closing the tab must stop its run; no public API says a session has gone.
    """
    return not Runtime.exists() or Runtime.instance().is_active_session(who)


# ---------------------------------------------------------------------------
# charts: Arrow bytes a chart spec can carry (ui/views/step.py)


def arrow_bytes(table) -> bytes:
    """A pyarrow Table as the Arrow IPC bytes Streamlit sends to the browser.

    Why: the step page's chart data is built once per trace and sent as these bytes
    on every click, not converted again; the converter is not public.
    """
    return dataframe_util.convert_arrow_table_to_arrow_bytes(table)


# ---------------------------------------------------------------------------
# every script run: the theme Streamlit sends with it (ui/__init__.py)


def cache_theme_messages() -> None:
    """Build the theme part of Streamlit's new-session message once per configuration, not on every script run.

    Why: Streamlit sends a new_session message at the start of every run, fragment runs too (a Next click), and
    fills its theme from the config six times over (theme, light, dark and their sidebars), reading every
    option of each section: ~5 % of a replica's processor under a lecture hall clicking Next (py-spy,
    benchmarks/classroom.py). The configuration does not change while it serves (when a config file is edited,
    Streamlit parses a new options dictionary, and the cache is keyed on it), so the filled message is kept
    and copied. Idempotent.
    """
    from streamlit import config
    from streamlit.runtime import app_session

    original = app_session._populate_theme_msg
    if getattr(original, "cached", False):
        return
    made: dict[tuple[str, int], object] = {}

    def populate(msg, section: str = "theme") -> None:
        key = (section, id(config._config_options))
        template = made.get(key)
        if template is None:
            template = type(msg)()
            original(template, section)
            made[key] = template
        msg.MergeFrom(template)

    populate.cached = True
    app_session._populate_theme_msg = populate
