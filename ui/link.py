"""Links: every page's URL names the sidebar's training run, so that a copied link or a reload shows what the teacher saw.

`?corpus=<preset>` names the run (`file`: the corpus file the server was started with, BPE_CORPUS); the preset brings its settings (pre-tokenizer, vocab size, special
tokens), and each setting that differs from the preset's is named too: `&pretokenizer=gpt2`,
`&vocab_size=1257`, `&special_tokens=<|endoftext|>`, `&algorithm=naive`, and `&rule=<tie-break rule>` when
not the default cs336. A SentencePiece run names its family, `&family=sentencepiece`, and then its own settings
that differ from the preset's or spm_train's: `&vocab_size=80` (its vocab size, as spm_train counts it),
`&coverage=0.98`, `&byte_fallback=1`, `&split_digits=1`, `&split_by_whitespace=0`, `&max_piece_length=8`; a link
without `family` is a byte-level run, as every link was before there were two. `show_run` (app.py, on every page) keeps the URL saying it; the sidebar's page
links carry the same parameters (`run_params`), so a page opened from them, reloaded or copied, keeps
the run. The step page adds `&merge=<k>` (1-based) for the merge it shows (`show`).

`follow` runs before the sidebar draws (app.py), so a link's settings can still set the sidebar's
widgets; it applies a link only once per session (a link is new when the URL differs from what this
session last applied or wrote), so the sidebar can change the run afterwards; and a link whose run is
the session's already changes nothing (the sidebar's page links go from page to page so).

`?present=1` (on any page) turns presenter mode on: a reload or a link handed to the
projector's machine opens it in presenter mode, sidebar folded away. `presenter` keeps
the URL saying whether the mode is on, so that a reload keeps it.

`?text=<word or sentence>&tokenizer=<run|gpt2|cl100k|o200k>` opens the Encode page on that
text with that tokenizer (`follow_encode`, on that page, before its widgets draw); the page keeps
the URL saying what it walks (`show_encode`), and `&k=` when it walks fewer than all of the run's merges.

Not here: a pasted or uploaded corpus, which cannot travel in a link (its URL names no run).
"""

from __future__ import annotations

from collections.abc import Collection

import streamlit as st

from bpe import ALGORITHMS, PRETOKENIZERS
from bpe.rule import (
    DEFAULT_RULE,  # a link names a rule only when it is not the default
    RULES,
)
from ui import corpus as corpora
from ui import sidebar, state
from ui.corpus import BYTE_LEVEL, SENTENCEPIECE
from ui.render import plain


def linkable() -> tuple[str, ...]:
    """The corpora a link can name: the presets, whose text comes with the app, and the server's own file (BPE_CORPUS);
    a pasted or uploaded corpus cannot travel in a link."""
    return tuple(key for key in corpora.choices() if key not in ("paste", "upload"))


MAX_DIGITS = 7  # a link's merge or k: up to 9,999,999 (the sidebar's largest vocab, a million, has 7 digits)


def number(value: str) -> int | None:
    """A number from a link: ASCII digits only, at most MAX_DIGITS of them; None for anything else.

    '37' -> 37; '²' and '٣' -> None (str.isdigit() takes both, and int('٣') is 3), as are '1e3', '-1', ' 7', '' and
    5,000 digits (int() refuses more than 4,300: anyone can write a link).
    """
    if not 0 < len(value) <= MAX_DIGITS or not value.isascii() or not value.isdigit():
        return None
    return int(value)


RUN = ("corpus", "pretokenizer", "vocab_size", "special_tokens", "algorithm", "rule")  # the URL's names of a run's settings
# a SentencePiece run's, by the URL's name: its session key (ui.family), and whether it is a switch (1 or 0) or a number
SENTENCEPIECE_RUN = {
    "coverage": "sp_coverage",
    "byte_fallback": "sp_byte_fallback",
    "split_digits": "sp_split_digits",
    "split_by_whitespace": "sp_split_by_whitespace",
    "max_piece_length": "sp_max_piece_length",
}
RUN = (*RUN, "family", *SENTENCEPIECE_RUN)
SAID = (*RUN, "merge")  # what follow() reads, and `link` remembers
MAX_VOCAB = sidebar.MAX_VOCAB
MAX_SPECIALS = 200  # characters of special tokens a link may carry


def follow() -> None:
    """Apply a link this session has not applied yet; a bad part gets a one-sentence warning and the sidebar's value stays."""
    params = st.query_params.to_dict()
    said_now = tuple(params.get(name) for name in SAID)
    if not new_link(said_now, "link"):
        return
    wanted = run_of(dict(zip(SAID, said_now)))
    if wanted is not None and any(st.session_state[key] != value for key, value in wanted.items()):
        sidebar.apply_preset(wanted["source"])  # the preset's settings, then the link's own (and merge 1, unless it names one)
        st.session_state.update(wanted)
    merge = params.get("merge")
    if merge is not None and (wanted is not None or params.get("corpus") is None):  # not when the link's corpus was refused
        k = number(merge)
        if k is None or k < 1:
            st.warning(f"The link's merge '{said(merge)}' is not a merge number (1, 2, 3, … up to {MAX_DIGITS} digits); showing merge 1.")
            return
        st.session_state["step"] = k


def run_of(link: dict[str, str | None]) -> dict[str, object] | None:
    """The session settings a link's run parameters ask for (sidebar keys), or None when it names no usable corpus.

    Each part is checked on its own: one that is not a choice (or not a number) gets a sentence, and the preset's
    (or, for the rule, the sidebar's) value is used instead.
    """
    rule = DEFAULT_RULE if link["corpus"] is not None else st.session_state["tie_break"]  # a run's link names its rule unless cs336
    if link["rule"] is not None:
        rule = choice(link["rule"], RULES, "tie-break rule", "the sidebar's") or st.session_state["tie_break"]
    corpus = link["corpus"]
    if corpus is None:
        st.session_state["tie_break"] = rule
        return None
    if corpus not in linkable():
        st.warning(
            f"The link's corpus '{said(corpus)}' is not one of the presets ({', '.join(linkable())}); showing the corpus picked in the sidebar."
        )
        return None
    preset = corpora.source(corpus)
    if link["family"] is not None and choice(link["family"], (BYTE_LEVEL, SENTENCEPIECE), "family", BYTE_LEVEL) == SENTENCEPIECE:
        return sentencepiece_run_of(link, corpus, preset)
    wanted: dict[str, object] = {
        "source": corpus,
        "family": BYTE_LEVEL,
        "pretokenizer": preset.pretokenizer,
        "vocab_size": sidebar.preset_vocab_size(corpus),
        "special_tokens_text": ", ".join(preset.special_tokens),
        "algorithm": state.DEFAULTS["algorithm"],
        "tie_break": rule,
    }
    if link["pretokenizer"] is not None:
        wanted["pretokenizer"] = choice(link["pretokenizer"], PRETOKENIZERS, "pre-tokenizer", "the preset's") or wanted["pretokenizer"]
    if link["algorithm"] is not None:
        wanted["algorithm"] = choice(link["algorithm"], ALGORITHMS, "algorithm", "heap") or wanted["algorithm"]
    size = link["vocab_size"]
    if size is not None:
        if number(size) is not None and number(size) <= MAX_VOCAB:
            wanted["vocab_size"] = number(size)
        else:
            st.warning(f"The link's vocab size '{said(size)}' is not a number up to {MAX_VOCAB:,}; using the preset's.")
    special_tokens = link["special_tokens"]  # as the sidebar's box holds them: comma-separated
    if special_tokens is not None:
        if len(special_tokens) <= MAX_SPECIALS:
            wanted["special_tokens_text"] = special_tokens
        else:
            st.warning(
                f"The link's special tokens are {len(special_tokens):,} characters long (at most {MAX_SPECIALS}); using the preset's."
            )
    return wanted


def sentencepiece_run_of(link: dict[str, str | None], corpus: str, preset: corpora.Source) -> dict[str, object]:
    """The session settings of a SentencePiece run's link: the preset's vocab size and coverage, spm_train's switches, and
    each the link names instead (a part that is not a value it can take gets a sentence, and the default is used)."""
    wanted: dict[str, object] = {"source": corpus, "family": SENTENCEPIECE, "sp_vocab_size": preset.sp_vocab_size}
    wanted.update({key: state.DEFAULTS[key] for key in SENTENCEPIECE_RUN.values()} | {"sp_coverage": preset.sp_coverage})
    size = link["vocab_size"]
    if size is not None:
        if number(size) is not None and 0 < number(size) <= MAX_VOCAB:
            wanted["sp_vocab_size"] = number(size)
        else:
            st.warning(f"The link's vocab size '{said(size)}' is not a number from 1 to {MAX_VOCAB:,}; using the preset's.")
    coverage = link["coverage"]
    if coverage is not None:
        value = fraction(coverage)
        if value is not None and 0.98 <= value <= 1.0:
            wanted["sp_coverage"] = value
        else:
            st.warning(f"The link's coverage '{said(coverage)}' is not a number from 0.98 to 1; using the preset's.")
    for name in ("byte_fallback", "split_digits", "split_by_whitespace"):
        if link[name] is not None:
            if link[name] in ("0", "1"):
                wanted[SENTENCEPIECE_RUN[name]] = link[name] == "1"
            else:
                st.warning(f"The link's {name} '{said(link[name])}' is not 1 or 0; using spm_train's default.")
    length = link["max_piece_length"]
    if length is not None:
        if number(length) is not None and 1 <= number(length) <= 512:
            wanted["sp_max_piece_length"] = number(length)
        else:
            st.warning(f"The link's max_piece_length '{said(length)}' is not a number from 1 to 512; using spm_train's 16.")
    return wanted


def fraction(value: str) -> float | None:
    """A link's decimal fraction: '0.98' -> 0.98, '1' -> 1.0; None for anything else ('nan', '1e-2', '٠.٩', 50 characters)."""
    whole, _, part = value.partition(".")
    if not 0 < len(value) <= 12 or not (whole + part).isascii() or not (whole + part).isdigit():
        return None
    return float(value)


def choice(value: str, choices: Collection[str], what: str, instead: str) -> str | None:
    """value when it is one of choices; otherwise one sentence, and None."""
    if value in choices:
        return value
    st.warning(f"The link's {what} '{said(value)}' is not one of {', '.join(choices)}; using {instead}.")
    return None


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
    if value is not None and choice(value, choices, what, instead) is not None:
        st.session_state[key] = value


def said(value: str) -> str:
    """A value from the URL as the warning quotes it: anyone can write a link, so it is cut short and read as text, not Markdown."""
    return plain(value if len(value) <= 40 else value[:40] + "…")


def run_params(family: str | None = None) -> dict[str, str]:
    """The URL parameters that name the sidebar's run: its preset and each setting that differs from the preset's ({} for a
    pasted or uploaded corpus). {'corpus': 'stdlib'}; {'corpus': 'textbook', 'pretokenizer': 'gpt2', 'rule': 'rustbpe'};
    {'corpus': 'scripts', 'family': 'sentencepiece', 'byte_fallback': '1'}. family: the sidebar's run of that family
    (a page that shows byte-level runs links to the byte-level one); None: the sidebar's family.
    """
    session = st.session_state
    source = session["source"]
    if source not in linkable():
        return {}
    preset = corpora.source(source)
    params = {"corpus": source}
    if (family or session["family"]) == SENTENCEPIECE:
        return params | sentencepiece_params(preset)
    if session["pretokenizer"] != preset.pretokenizer:
        params["pretokenizer"] = session["pretokenizer"]
    if session["vocab_size"] != sidebar.preset_vocab_size(source):
        params["vocab_size"] = str(int(session["vocab_size"]))
    if sidebar.parse_special_tokens(session["special_tokens_text"]) != preset.special_tokens:
        params["special_tokens"] = session["special_tokens_text"]
    if session["algorithm"] != state.DEFAULTS["algorithm"]:
        params["algorithm"] = session["algorithm"]
    if session["tie_break"] != DEFAULT_RULE:
        params["rule"] = session["tie_break"]
    return params


def sentencepiece_params(preset: corpora.Source) -> dict[str, str]:
    """A SentencePiece run's parameters: its family, and each of its settings that differs from the preset's or spm_train's."""
    session = st.session_state
    params = {"family": SENTENCEPIECE}
    if session["sp_vocab_size"] != preset.sp_vocab_size:
        params["vocab_size"] = str(int(session["sp_vocab_size"]))
    if session["sp_coverage"] != preset.sp_coverage:
        params["coverage"] = f"{session['sp_coverage']:.6g}"
    for name, key in SENTENCEPIECE_RUN.items():
        if key != "sp_coverage" and session[key] != state.DEFAULTS[key]:
            params[name] = str(int(session[key]))  # a switch as 1 or 0, the length as its number
    return params


def page_params() -> dict[str, str]:
    """What the sidebar's page links carry: the run, and presenter mode when it is on."""
    return run_params() | ({"present": "1"} if st.session_state["presenter"] else {})


OWN = {"": ("merge",), "encode": ("text", "tokenizer", "k")}  # a page's own parameters, by its url path (the step page's is '')


def show_run(page: str) -> None:
    """Make the URL name the sidebar's run (app.py, on every page, after the sidebar): see run_params; and drop the
    parameters of the other pages (a page opened by st.switch_page, or in AppTest, can keep the last page's)."""
    others = {name: None for own in OWN.values() for name in own if name not in OWN.get(page, ())}
    write(others | {name: None for name in RUN} | run_params())


def show(k: int) -> None:
    """Make the URL say merge k (the step page), besides the run."""
    write({"merge": str(k)})


def write(wanted: dict[str, str | None]) -> None:
    """Set these URL parameters (None: remove), only those that differ; then remember the URL as this session's own link."""
    params = st.query_params
    now = params.to_dict()  # read once: st.query_params.get raises and words a KeyError inside for each name it lacks
    for name, value in wanted.items():
        if now.get(name) != value:
            if value is None:
                params.pop(name, None)
                now.pop(name, None)
            else:
                params[name] = now[name] = value
    st.session_state["link"] = tuple(now.get(name) for name in SAID)  # follow() must not apply it again


def href(merge: int, settings) -> str | None:
    """The address of the step page at merge (1-based) of the sidebar's run, or None when no link can name the run.

    The run's parameters name every setting that differs from its preset, so only a pasted or uploaded corpus, or a
    merge past the run's, has none.
    """
    params = run_params(BYTE_LEVEL)  # the pages that link to a merge show byte-level runs
    if not params or not 1 <= merge <= settings.num_merges:
        return None
    return "./?" + "&".join(f"{name}={quote(value)}" for name, value in {**params, "merge": str(merge)}.items())


def quote(value: str) -> str:
    from urllib.parse import quote as url_quote

    return url_quote(value, safe="")


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
    """Make the URL say the text and tokenizer the Encode page walks (and k of n merges, for the sidebar's run), besides the run."""
    write(
        {
            "text": text,
            "tokenizer": which,
            "k": str(k) if which == "run" and k < n else None,
            "merge": None,  # the step page's: a link here opens this page, not a merge
        }
    )
    st.session_state["enc_link"] = (text, which, st.query_params.get("k"))
