"""BPE workbench: the entry point. `streamlit run app.py`

A router over the pages in pages/ (st.navigation over the list in ui/pages.py, which turns off
Streamlit's older pages/-folder mode) and the shared sidebar where a training run is set up. Pages read the settings from st.session_state["settings"].
"""

import streamlit as st

from ui import family, link, playlist, real, sidebar, state, style, warm, work
from ui.pages import sections

state.init()
presenter = link.presenter()  # ?present=1, before the sidebar draws its toggle
# presenter mode folds the sidebar away (its ">" control opens it again): the browser applies a new
# initial_sidebar_state when the value changes, so turning the mode on or off folds or opens it once
st.set_page_config(
    page_title="BPE workbench", page_icon="🧩", layout="wide", initial_sidebar_state="collapsed" if presenter else "expanded"
)
style.apply(presenter)
link.follow()  # ?corpus=…&merge=…, before the sidebar draws

SECTIONS = sections()  # the page list: ui/pages.py
# the menu is drawn by the sidebar, under the training run, as links that keep the run in the URL (ui.sidebar._page_links)
pages = st.navigation(SECTIONS, position="hidden")
st.session_state["settings"] = sidebar.render(SECTIONS, link.page_params)
# ?playlist=…&at=…: that item, on its page; after the sidebar, which has taken the link's run by then
playlist.follow(pages)
link.show_run(pages.url_path)  # every page's URL names the run
family.note(pages.url_path)  # a page that trains byte-level runs says so while the sidebar's family is SentencePiece
link.sync_presenter()
warm.notice()  # the sidebar says what is still warming up, while anything is
playlist.keep_in_url()
playlist.bar()  # a lecture's playlist, while one is on: its place, Back and Next view
try:
    pages.run()
except work.Unavailable as e:  # a stalled worker pool (replicas): one sentence, and the page tries again by itself
    work.unavailable(e)
finally:  # after the server's first page, not beside it (a page that stops early ends here too):
    real.warm()  # GPT-2, GPT-4 and GPT-4o load in the background, once per server
    warm.start()  # and what a lecture opens first is built (or read from the disk), once per server
