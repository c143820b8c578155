"""What the pages share: session state, the sidebar, cached corpora and traces, rendering.

The UI layer: it may import streamlit and bpe; bpe never imports it.
"""

from ui import compat as _compat


def _hand_over_to_the_router() -> None:
    """Make app.py's router run every page, even for a first visitor who deep-links to one.

    subtle: a server decides once, when its first session starts, whether to use
    Streamlit's old pages/-folder mode, and says yes because pages/ exists; only
    app.py's st.navigation turns it off. A first visitor who opens /race before
    anyone opened / gets pages/race.py run directly -- no router, no sidebar, no
    settings. Every script run imports this package before anything else (the
    first time in a process), so here the old mode is turned off and the run
    restarted: app.py then runs and routes to the same page (both modes name a
    page by its URL path).
    """
    if _compat.uses_pages_directory():
        import streamlit as st

        _compat.stop_using_pages_directory()
        st.rerun()


_hand_over_to_the_router()
_compat.cache_theme_messages()  # every script run sends the theme: filled once per configuration
