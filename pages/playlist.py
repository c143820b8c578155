"""Lecture playlist: pick or build the lecture's links in order, step through them in presenter mode, give the class one link.

The playlist's items are the views a lecture moves through (ui/playlist.py): a lesson's step, a merge of the sidebar's
run, the race, a quirk. Started, it puts a bar at the top of every page with its place and Back / Next view
(PageUp / PageDown, what a presentation clicker sends); its link opens the same playlist, at its first item, for
every student.
"""

from urllib.parse import urlencode, urlsplit

import streamlit as st

from ui import link, pages, state
from ui import playlist as pl
from ui.lessons import quirks

st.title("Lecture playlist")
st.caption(
    "A lecture's links in order. Pick one below or build your own, start it in presenter mode and step through it with "
    "the bar's Next view and Back (PageDown and PageUp, what a presentation clicker sends); the class's link opens the same "
    "playlist. Merges are of the sidebar's training run, which the link carries too."
)


def use(items: tuple) -> None:
    st.session_state["playlist_draft"] = items


def add() -> None:
    kind = st.session_state["pl_kind"]
    takes = pl.KINDS[kind].takes
    arg = {"number": str(st.session_state["pl_number"]), "quirk": st.session_state["pl_quirk"], "text": st.session_state["pl_text"]}
    item = pl.Item(kind, arg.get(takes, "") if takes != "text" else (arg["text"] or "strawberry"))
    if len(st.session_state["playlist_draft"]) < pl.MAX_ITEMS:
        st.session_state["playlist_draft"] = (*st.session_state["playlist_draft"], item)


def remove(i: int) -> None:
    draft = st.session_state["playlist_draft"]
    st.session_state["playlist_draft"] = draft[:i] + draft[i + 1 :]


def earlier(i: int) -> None:
    draft = list(st.session_state["playlist_draft"])
    draft[i - 1], draft[i] = draft[i], draft[i - 1]
    st.session_state["playlist_draft"] = tuple(draft)


st.subheader("Ready-made")
for key, (name, written) in pl.PRESETS.items():
    items, _ = pl.parse(written)
    say, press = st.columns([5, 1], vertical_alignment="center")
    say.markdown(f"**{name}** ({len(items)} views): " + " → ".join(link.said(item.label) for item in items))
    press.button("Use it", key=f"pl_preset_{key}", on_click=use, args=(items,), width="stretch")

st.subheader("This lecture's playlist")
draft: tuple = st.session_state["playlist_draft"]
if not draft:
    st.info("Empty: use a ready-made playlist above, or add views one by one below.")
for i, item in enumerate(draft):
    n, what, up, out = st.columns([0.5, 5, 1.4, 1.5], vertical_alignment="center")
    n.markdown(f"**{i + 1}.**")
    what.markdown(link.said(item.label))
    up.button("Earlier", key=f"pl_up_{i}", on_click=earlier, args=(i,), disabled=i == 0, width="stretch")
    out.button("Remove", key=f"pl_out_{i}", on_click=remove, args=(i,), width="stretch")

kind_at, arg_at, add_at = st.columns([3, 3, 1.4], vertical_alignment="bottom")
kind = state.widget(
    kind_at.selectbox,
    "Add a view",
    list(pl.KINDS),
    format_func=lambda k: pl.KINDS[k].label.replace(" {}", "").replace("{}", "…"),
    key="pl_kind",
)
takes = pl.KINDS[kind].takes
if takes == "number":
    state.widget(
        arg_at.number_input, "merge number" if kind == "merge" else "step", min_value=1, max_value=9_999_999, step=1, key="pl_number"
    )
elif takes == "quirk":
    state.widget(arg_at.selectbox, "Quirk", list(quirks.BY_KEY), format_func=lambda k: quirks.BY_KEY[k].title, key="pl_quirk")
elif takes == "text":
    state.widget(arg_at.text_input, "Word or sentence", key="pl_text")
add_at.button("Add", key="pl_add", on_click=add, icon=":material/add:", width="stretch", disabled=len(draft) >= pl.MAX_ITEMS)

if draft:
    st.subheader("Give it to the class")
    parts = urlsplit(st.context.url or "http://localhost:8501/")
    first = pl.KINDS[draft[0].kind].page
    students = {k: v for k, v in pl.params(draft, 1).items() if k != "present"}  # the class follows, it does not present
    st.code(f"{parts.scheme}://{parts.netloc}/{pages.route(first)}?{urlencode(students)}", language=None, wrap_lines=True)
    st.caption("The students open this link: the same views in the same order, on the same training run, from the first.")
    st.button("Start in presenter mode", key="pl_start", type="primary", icon=":material/slideshow:", on_click=pl.start, args=(draft,))
