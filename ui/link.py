"""A link to one merge: ?corpus=<preset>&merge=<k> opens that preset at merge k (1-based).

A teacher hands out a link to "merge 37"; the step page keeps the URL in step
with what it shows. `follow` runs before the sidebar draws (app.py), so a
link's corpus can still set the sidebar's widgets; it applies a link only once
per session (a link is new when the URL differs from what this session last
applied or wrote), so the sidebar can change the corpus afterwards. `show`
runs on the step page.

Not here: other settings (a link carries a preset, whose settings come with it).
"""

from __future__ import annotations

import streamlit as st

from . import corpus as corpora
from . import sidebar

# presets whose text comes with the app: pasted and uploaded corpora cannot travel in a link
LINKABLE = tuple(key for key in corpora.SOURCES if key not in ("paste", "upload"))


def follow() -> None:
    """Apply a link this session has not applied yet; a bad one gets a one-sentence warning."""
    params = st.query_params
    corpus, merge = params.get("corpus"), params.get("merge")
    if (corpus is None and merge is None) or (corpus, merge) == st.session_state["link"]:
        return
    st.session_state["link"] = (corpus, merge)
    if corpus is not None:
        if corpus not in LINKABLE:
            st.warning(
                f"The link's corpus '{corpus}' is not one of the presets ({', '.join(LINKABLE)}); showing the corpus picked in the sidebar."
            )
            return
        if corpus != st.session_state["source"]:
            sidebar.apply_preset(corpus)
    if merge is not None:
        if not merge.isdigit() or int(merge) < 1:
            st.warning(f"The link's merge '{merge}' is not a merge number (1, 2, 3, …); showing merge 1.")
            return
        st.session_state["step"] = int(merge)


def show(k: int) -> None:
    """Make the URL say the corpus and merge k the page shows (only when it does not already)."""
    source = st.session_state["source"]
    corpus = source if source in LINKABLE else None
    params = st.query_params
    if params.get("corpus") == corpus and params.get("merge") == str(k):
        return
    if corpus is None:
        params.pop("corpus", None)
    else:
        params["corpus"] = corpus
    params["merge"] = str(k)
    st.session_state["link"] = (corpus, str(k))
