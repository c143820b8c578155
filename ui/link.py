"""A link to one merge: ?corpus=<preset>&merge=<k> opens that preset at merge k (1-based).

`&rule=<tie-break rule>` is added when the rule is not the default cs336, so a
link to "merge 1 under rustbpe" shows the merge the teacher saw.

A teacher hands out a link to "merge 37"; the step page keeps the URL in step
with what it shows. `follow` runs before the sidebar draws (app.py), so a
link's corpus can still set the sidebar's widgets; it applies a link only once
per session (a link is new when the URL differs from what this session last
applied or wrote), so the sidebar can change the corpus afterwards. `show`
runs on the step page.

`?present=1` (on any page) turns presenter mode on: a reload or a link handed to the
projector's machine opens it in presenter mode, sidebar folded away. `presenter` keeps
the URL saying whether the mode is on, so that a reload keeps it.

`?text=<word or sentence>&tokenizer=<run|gpt2|cl100k|o200k>` opens the Encode page on that
text with that tokenizer (`follow_encode`, on that page, before its widgets draw); the page keeps
the URL saying what it walks (`show_encode`), and adds the corpus (and rule) when it walks the
sidebar's run of a preset, so a link to "strawberry with GPT-4o" or to "lowest in the textbook
run" shows what the teacher saw.

Not here: other settings (a link carries a preset, whose settings come with it, and the rule).
"""

from __future__ import annotations

from collections.abc import Collection

import streamlit as st

from bpe.rule import (
    DEFAULT_RULE,  # a link names a rule only when it is not the default
    RULES,
)
from ui import corpus as corpora
from ui import sidebar
from ui.render import plain

# presets whose text comes with the app: pasted and uploaded corpora cannot travel in a link
LINKABLE = tuple(key for key in corpora.SOURCES if key not in ("paste", "upload"))
MAX_DIGITS = 7  # a link's merge or k: up to 9,999,999 (the sidebar's largest vocab, a million, has 7 digits)


def number(value: str) -> int | None:
    """A number from a link: ASCII digits only, at most MAX_DIGITS of them; None for anything else.

    '37' -> 37; '²' and '٣' -> None (str.isdigit() takes both, and int('٣') is 3), as are '1e3', '-1', ' 7', '' and
    5,000 digits (int() refuses more than 4,300: anyone can write a link).
    """
    if not 0 < len(value) <= MAX_DIGITS or not value.isascii() or not value.isdigit():
        return None
    return int(value)


def follow() -> None:
    """Apply a link this session has not applied yet; a bad one gets a one-sentence warning."""
    params = st.query_params
    corpus, merge, rule = params.get("corpus"), params.get("merge"), params.get("rule")
    if not new_link((corpus, merge, rule), "link"):
        return
    take(rule, RULES, "tie_break", "tie-break rule", "the sidebar's")
    if corpus is not None:
        if corpus not in LINKABLE:
            st.warning(
                f"The link's corpus '{said(corpus)}' is not one of the presets ({', '.join(LINKABLE)}); showing the corpus picked in the sidebar."
            )
            return
        if corpus != st.session_state["source"]:
            sidebar.apply_preset(corpus)
    if merge is not None:
        k = number(merge)
        if k is None or k < 1:
            st.warning(f"The link's merge '{said(merge)}' is not a merge number (1, 2, 3, … up to {MAX_DIGITS} digits); showing merge 1.")
            return
        st.session_state["step"] = k


def new_link(said_now: tuple[str | None, ...], key: str) -> bool:
    """Whether the URL's parameters (said_now) are a link this session has not applied yet; if so, noted under key.

    A link is applied once: after that the page's widgets decide, until the URL says something else (another link,
    a reload of another link). A URL with none of the parameters is no link.
    """
    if all(value is None for value in said_now) or said_now == st.session_state[key]:
        return False
    st.session_state[key] = said_now
    return True


def take(value: str | None, choices: Collection[str], key: str, what: str, instead: str) -> None:
    """A link's choice: put into session key when it is one of choices; otherwise one sentence, and `instead` stays."""
    if value is None:
        return
    if value in choices:
        st.session_state[key] = value
    else:
        st.warning(f"The link's {what} '{said(value)}' is not one of {', '.join(choices)}; using {instead}.")


def said(value: str) -> str:
    """A value from the URL as the warning quotes it: anyone can write a link, so it is cut short and read as text, not Markdown."""
    return plain(value if len(value) <= 40 else value[:40] + "…")


def show(k: int) -> None:
    """Make the URL say the corpus and merge k the page shows (only when it does not already)."""
    source = st.session_state["source"]
    corpus = source if source in LINKABLE else None
    rule = st.session_state["tie_break"] if st.session_state["tie_break"] != DEFAULT_RULE else None
    params = st.query_params
    if params.get("corpus") == corpus and params.get("merge") == str(k) and params.get("rule") == rule:
        return
    for name, value in (("corpus", corpus), ("merge", str(k)), ("rule", rule)):
        if value is None:
            params.pop(name, None)
        else:
            params[name] = value
    st.session_state["link"] = (corpus, str(k), rule)


def href(merge: int, settings) -> str | None:
    """The address of the step page at merge (1-based) of the sidebar's run, or None when a link cannot reproduce that run.

    A link carries a preset and the rule, and the preset brings its own settings: a run whose pre-tokenizer or
    special tokens differ from its preset's, or a merge past the preset's vocab size, would open another run.
    """
    source = st.session_state["source"]
    if source not in LINKABLE:
        return None
    preset = corpora.SOURCES[source]
    if (
        settings.pattern != preset.pattern
        or settings.specials != sidebar.parse_specials(preset.specials)
        or not 1 <= merge <= preset.merges
    ):
        return None
    rule = f"&rule={settings.tie_break}" if settings.tie_break != DEFAULT_RULE else ""
    return f"./?corpus={source}&merge={merge}{rule}"


def presenter() -> bool:
    """Presenter mode as the URL and the toggle say; call before the sidebar draws (app.py). Returns whether it is on.

    ?present=1 turns it on when this session has not seen that URL yet (a reload, a link); after
    that the toggle decides, and the URL follows it (`present` added or removed by sync_presenter).
    A URL without `present` (Streamlit drops query parameters on a page change) turns nothing off.
    """
    said = st.query_params.get("present")
    if said == "1" and st.session_state["present_link"] != "1":
        st.session_state["presenter"] = True
    st.session_state["present_link"] = said
    return st.session_state["presenter"]


def sync_presenter() -> None:
    """Make the URL say presenter mode when it is on (after the sidebar's toggle has drawn)."""
    on = "1" if st.session_state["presenter"] else None
    if st.query_params.get("present") != on:
        if on:
            st.query_params["present"] = on
        else:
            st.query_params.pop("present", None)
    st.session_state["present_link"] = on


# ---------------------------------------------------------------------------
# the Encode page


def follow_encode(tokenizers: Collection[str], max_chars: int) -> bool:
    """Apply an Encode-page link (?text=…&tokenizer=…[&k=…]) this session has not applied yet; True when it changed what the page walks.

    A tokenizer that is not one of `tokenizers`, or a text longer than the page takes, gets a one-sentence
    warning (the text is cut to its first max_chars characters).
    """
    params = st.query_params
    text, which, k = params.get("text"), params.get("tokenizer"), params.get("k")
    if not new_link((text, which, k), "enc_link"):
        return False
    if k is not None:
        if number(k) is not None:
            st.session_state["real_k"] = number(k)  # run_and_k keeps it within the run's merges
        else:
            st.warning(
                f"The link's k '{said(k)}' is not a number of merges (0, 1, 2, … up to {MAX_DIGITS} digits); using all of the run's."
            )
    take(which, tokenizers, "enc_tokenizer", "tokenizer", "the one picked here")
    if text is not None:
        if len(text) > max_chars:
            st.warning(
                f"The link's text has {len(text):,} characters and this page walks at most {max_chars}: it shows the first {max_chars}."
            )
        st.session_state["enc_text"] = text[:max_chars]
    return True


def show_encode(text: str, which: str, k: int, n: int) -> None:
    """Make the URL say the text and tokenizer the Encode page walks (and the preset, rule and k of n merges, for the sidebar's run)."""
    source, rule = st.session_state["source"], st.session_state["tie_break"]
    run = which == "run" and source in LINKABLE
    wanted = {
        "text": text,
        "tokenizer": which,
        "corpus": source if run else None,
        "rule": rule if run and rule != DEFAULT_RULE else None,
        "k": str(k) if which == "run" and k < n else None,
        "merge": None,  # the step page's: a link here opens this page, not a merge
    }
    params = st.query_params
    if all(params.get(name) == value for name, value in wanted.items()):
        return
    for name, value in wanted.items():
        if value is None:
            params.pop(name, None)
        else:
            params[name] = value
    st.session_state["enc_link"] = (text, which, wanted["k"])
    st.session_state["link"] = (wanted["corpus"], None, wanted["rule"])  # follow() must not apply it again
