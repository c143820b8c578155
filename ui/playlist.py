"""A lecture's links in order: a playlist of the app's views that the teacher steps through, and one link gives the class.

An item names a page and the one thing it shows there -- merge 37 on the step page, step 3 of the guided lesson,
the strawberry quirk, the race -- written `merge:37`, `lesson:3`, `quirk:strawberry`, `race`. The playlist travels
in the URL beside the run (ui.link): `?corpus=stdlib&playlist=lesson:1,merge:37,race,quirk:strawberry&at=2`, so a
reload, or the link handed to the students, lands on the same item of the same playlist.

`follow` (app.py, after the sidebar) applies a playlist link once, as ui.link does; `bar` draws
the playlist's place and its Back / Next view at the top of every page, with PageUp / PageDown (what a presentation
clicker sends); `go` moves to an item: it sets what the item shows in the session, and opens its page with the URL
saying where in the playlist it is. The Lecture playlist page (pages/playlist.py) builds one.

Not here: what the pages show (each reads its own session keys, which an item sets).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from urllib.parse import quote, unquote

import streamlit as st

from ui import link, pages
from ui.lessons import quirks

MAX_ITEMS = 40
MAX_TEXT = 60  # characters of an Encode item's text


@dataclass(frozen=True)
class Kind:
    """What an item of this kind opens, how it is said, and the session key its argument sets."""

    name: str  # the page it opens, by its address in ui/pages.py's list ('step')
    label: str  # '{}' is the argument
    key: str | None = None  # the session key set to the argument (None: the kind takes none)
    takes: str = ""  # "number", "quirk" or "text"

    @property
    def page(self) -> pages.Page:
        return pages.named(self.name)


KINDS: dict[str, Kind] = {
    "lesson": Kind("lesson", "Guided lesson, step {}", "lesson_step", "number"),
    "merge": Kind("step", "Merge {}", "step", "number"),
    "quiz": Kind("quiz", "Predict the next merge"),
    "race": Kind("race", "The algorithm race"),
    "threshold": Kind("threshold", "The threshold explorer"),
    "tokenize": Kind("tokenize", "Tokenize & export"),
    "vocabulary": Kind("vocabulary", "The vocabulary"),
    "encode-lesson": Kind("encode_lesson", "How a tokenizer encodes, step {}", "enc_lesson_step", "number"),
    "encode": Kind("encode", "Encode “{}”", "enc_text", "text"),
    "compare": Kind("compare", "Real tokenizers side by side"),
    "quirk": Kind("quirks", "Quirk: {}", "quirk", "quirk"),
    "encode-quiz": Kind("encode_quiz", "Which merge applies first?"),
}


@dataclass(frozen=True)
class Item:
    kind: str
    arg: str = ""

    @property
    def label(self) -> str:
        shown = quirks.BY_KEY[self.arg].title if self.kind == "quirk" else self.arg
        return KINDS[self.kind].label.format(shown)

    @property
    def written(self) -> str:
        """As the URL writes it: 'merge:37', 'encode:straw%2C%20berry' (a comma or colon in a text is %-encoded)."""
        return self.kind + (":" + quote(self.arg, safe="") if self.arg else "")


PRESETS: dict[str, tuple[str, str]] = {  # a ready-made playlist: its name, and the items as the URL writes them
    "training": (
        "Training a tokenizer: the lesson, merges on real text, the race",
        "lesson:1,lesson:2,lesson:3,lesson:4,lesson:5,merge:1,merge:2,merge:37,quiz,race,threshold",
    ),
    "using": (
        "Using a tokenizer: encoding, real tokenizers, the quirks",
        "encode-lesson:1,encode-lesson:2,encode-lesson:3,encode:strawberry,compare,quirk:strawberry,quirk:numbers,vocabulary",
    ),
}


def parse(text: str) -> tuple[tuple[Item, ...], list[str]]:
    """A playlist as the URL writes it -> its items, and a sentence for each part that is not one (left out).

    'lesson:1,merge:37,race' -> (Item('lesson', '1'), Item('merge', '37'), Item('race')), []
    """
    items, problems = [], []
    for part in text.split(",")[: MAX_ITEMS + 1]:
        kind, _, arg = part.partition(":")
        arg = unquote(arg)
        found = KINDS.get(kind)
        if found is None:
            problems.append(f"'{link.said(kind)}' is not one of {', '.join(KINDS)}")
        elif found.takes == "number" and (link.number(arg) is None or link.number(arg) < 1):
            problems.append(f"{kind}'s '{link.said(arg)}' is not a number (1, 2, 3, …)")
        elif found.takes == "quirk" and arg not in quirks.BY_KEY:
            problems.append(f"quirk '{link.said(arg)}' is not one of {', '.join(quirks.BY_KEY)}")
        elif found.takes == "text" and not 0 < len(arg) <= MAX_TEXT:
            problems.append(f"the text to encode has {len(arg):,} characters (1 to {MAX_TEXT})")
        elif not found.takes and arg:
            problems.append(f"{kind} takes nothing after it, not '{link.said(arg)}'")
        else:
            items.append(Item(kind, str(link.number(arg)) if found.takes == "number" else arg))
    if len(items) > MAX_ITEMS:
        problems.append(f"a playlist holds at most {MAX_ITEMS} items")
        items = items[:MAX_ITEMS]
    return tuple(items), problems


def written(items: tuple[Item, ...]) -> str:
    return ",".join(item.written for item in items)


def params(items: tuple[Item, ...], at: int) -> dict[str, str]:
    """The URL of item `at` (1-based) of a playlist: the run, presenter mode, the playlist and the place, and a merge's number."""
    item = items[at - 1]
    wanted = link.page_params() | {"playlist": written(items), "at": str(at)}
    if item.kind == "merge":
        wanted["merge"] = item.arg
    return wanted


def follow(page) -> None:
    """Apply a playlist link this session has not applied yet (app.py, after the sidebar): its item, on its page;
    or go to the item a callback asked for (`start`: a callback cannot open a page)."""
    if st.session_state["playlist_go"] is not None:
        go(st.session_state.pop("playlist_go"))
    said = (st.query_params.get("playlist"), st.query_params.get("at"))
    if said[0] is None or not link.new_link(said, "playlist_link"):
        return
    items, problems = parse(said[0])
    if problems:
        st.warning("The link's playlist: " + "; ".join(problems[:3]) + (" …" if len(problems) > 3 else "") + ". Those are left out.")
    if not items:
        return
    at = link.number(said[1] or "1") or 1
    st.session_state["playlist"], st.session_state["playlist_at"] = items, min(max(at, 1), len(items))
    show(items[st.session_state["playlist_at"] - 1])
    if pages.route(KINDS[items[st.session_state["playlist_at"] - 1].kind].page) != page.url_path:
        go(st.session_state["playlist_at"])


def show(item: Item) -> None:
    """Set in the session what the item shows on its page: the merge, the lesson's step, the quirk, the text."""
    kind = KINDS[item.kind]
    if kind.key is None:
        return
    value: object = int(item.arg) if kind.takes == "number" else item.arg
    st.session_state[kind.key] = value
    if item.kind == "encode":
        st.session_state.update(enc_tokenizer="run", enc_pos=0, enc_view="steps", enc_playing=False)


def go(at: int) -> None:
    """Open item `at` (1-based) of the session's playlist: what it shows, on its page, the URL saying so. Does not return."""
    items = st.session_state["playlist"]
    at = min(max(at, 1), len(items))
    st.session_state["playlist_at"] = at
    item = items[at - 1]
    show(item)
    wanted = params(items, at)
    st.session_state["playlist_link"] = (wanted["playlist"], wanted["at"])
    # (the sidebar's run and presenter mode survive the switch: ui.state.widget keeps the sidebar's widgets for the session)
    st.switch_page(KINDS[item.kind].page.path, query_params=wanted)


def start(items: tuple[Item, ...]) -> None:
    """A button's callback: start a playlist at its first item, presenter mode on, as a lecture is given (follow opens it)."""
    st.session_state.update(playlist=items, playlist_at=1, playlist_go=1, presenter=True)


def keep_in_url() -> None:
    """While a playlist is on, the URL keeps saying it and the place (a page's own writing of the URL drops nothing)."""
    items = st.session_state["playlist"]
    if not items:
        return
    wanted = {"playlist": written(items), "at": str(st.session_state["playlist_at"])}
    if any(st.query_params.get(name) != value for name, value in wanted.items()):
        st.query_params.update(wanted)
    st.session_state["playlist_link"] = (wanted["playlist"], wanted["at"])


def leave() -> None:
    st.session_state["playlist"] = None
    st.query_params.pop("playlist", None)
    st.query_params.pop("at", None)
    st.session_state["playlist_link"] = None


def bar() -> None:
    """The playlist's place and its Back / Next view (PageUp / PageDown), at the top of every page while one is on."""
    items = st.session_state["playlist"]
    if not items:
        return
    at = st.session_state["playlist_at"]
    where, back, forward, stop = st.columns([4.2, 2.5, 2.5, 1.3], vertical_alignment="center")  # a button and its key on one line
    upcoming = f" · next: {items[at].label}" if at < len(items) else " · the last"
    where.html(
        f'<div class="playlist-bar"><b>Playlist {at} of {len(items)}</b>: {_escape(items[at - 1].label)}'
        f'<span class="next">{_escape(upcoming)}</span></div>'
    )
    if back.button("Back", key="playlist_back", shortcut="PageUp", disabled=at <= 1, width="stretch"):
        go(at - 1)
    if forward.button(
        "Next",
        key="playlist_next",
        icon=":material/skip_next:",
        shortcut="PageDown",
        disabled=at >= len(items),
        type="primary",
        width="stretch",
    ):
        go(at + 1)
    stop.button("Leave", key="playlist_leave", on_click=leave, help="Leave the playlist: the pages stay as they are.", width="stretch")


def _escape(text: str) -> str:
    return html.escape(text)
