"""The app's pages, in the order the sidebar lists them: app.py's navigation is built from this list, and the tests read it.

A page is its script in pages/, its title and icon in the sidebar, and the sidebar section it sits
in; its address is its file's name (/race for pages/race.py), the first page's also /. A new page
is its script plus one line here.

    [p.url_path for p in PAGES][:3]  # -> ['step', 'race', 'threshold']
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Page:
    path: str  # the script, relative to the app's folder
    title: str  # in the sidebar (the page draws its own heading)
    icon: str
    section: str = ""  # the sidebar's heading above it ("": the explorer's pages, first and without one)
    run: str = "byte-level"  # the sidebar's runs it shows: "both" families, "byte-level" runs only, or "" (a run of its own)

    @property
    def url_path(self) -> str:
        """Its address, as Streamlit makes it from the file's name: 'pages/encode_lesson.py' -> 'encode_lesson'."""
        return Path(self.path).stem


USING = "Using a tokenizer"
OWN = "Your own BPE"
LESSONS = "Lessons"

PAGES: tuple[Page, ...] = (
    Page("pages/step.py", "Step through", ":material/footprint:", run="both"),  # the first is the default: / opens it
    Page("pages/race.py", "Algorithm race", ":material/sports_score:", run="both"),
    Page("pages/threshold.py", "Threshold explorer", ":material/tune:"),
    Page("pages/tokenize.py", "Tokenize & export", ":material/text_fields:"),
    Page("pages/vocabulary.py", "Vocabulary", ":material/dictionary:"),
    Page("pages/encode.py", "Encode, step by step", ":material/account_tree:", USING),
    Page("pages/compare.py", "Real tokenizers", ":material/compare:", USING),
    Page("pages/quirks.py", "Quirks gallery", ":material/lightbulb:", USING),
    Page("pages/diff.py", "Check your merges", ":material/difference:", OWN),
    Page("pages/lesson.py", "Guided lesson", ":material/school:", LESSONS, run=""),
    Page("pages/quiz.py", "Predict the next merge", ":material/quiz:", LESSONS),
    Page("pages/encode_lesson.py", "How a tokenizer encodes", ":material/school:", LESSONS, run=""),
    Page("pages/encode_quiz.py", "Which merge applies first?", ":material/quiz:", LESSONS),
    Page("pages/playlist.py", "Lecture playlist", ":material/playlist_play:", LESSONS, run=""),
)


def named(name: str) -> Page:
    """The page whose address is name ('race'): KeyError, saying which exist, for one that is not."""
    for page in PAGES:
        if page.url_path == name:
            return page
    raise KeyError(f"no page is called {name!r}; the pages are {', '.join(p.url_path for p in PAGES)}")


def route(page: Page) -> str:
    """The page's address as the router serves it: the default page (the first) is '' (/), the others their name."""
    return "" if page is PAGES[0] else page.url_path


def byte_level_only(url_path: str) -> bool:
    """Whether the page at url_path shows the sidebar's byte-level run even when the sidebar's family is SentencePiece."""
    return any(page.url_path == url_path and page.run == "byte-level" for page in PAGES)


def sections() -> dict[str, list]:
    """PAGES as st.Page objects by sidebar section, the first page the default: what app.py hands st.navigation (every run)."""
    import streamlit as st

    by_section: dict[str, list] = {}
    for page in PAGES:
        by_section.setdefault(page.section, []).append(st.Page(page.path, title=page.title, icon=page.icon, default=page is PAGES[0]))
    return by_section
