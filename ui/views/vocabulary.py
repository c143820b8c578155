"""The Vocabulary page's views: every token of the sidebar's run, how long, how often made and used.

The run and its held-out text come from the shared, cached work the threshold page
uses (ui.corpus.trained_for, replays_for: built once in the worker pool for every
session); the rows are made from them once per run (rows_for, cached) and the page
only filters and sorts them. Everything drawn as HTML is escaped (tokens are untrusted).

Not here: the statistics themselves (bpe/lab/vocabulary.py).
"""

from __future__ import annotations

import html
import math
import unicodedata
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import streamlit as st

from bpe.lab.threshold import Replay
from bpe.lab.vocabulary import (
    MERGE,
    SPECIAL,
    CompressionPoint,
    TokenRow,
    compression_curve,
    length_histogram,
    rarely_used,
    token_rows,
    zipf,
    zipf_slope,
)
from bpe.tokenizer.tokenizer import Tokenizer
from serve import disk, jobs
from ui import link, work
from ui.chart_style import AXIS, MARK_TEXT
from ui.render import plain
from ui.render import show as show_text

SHOWN = 30  # rows of the token table drawn at once: a projector shows about this many
UNUSED_SHOWN = 16
KIND_ORDER = {MERGE: 0, SPECIAL: 1, "byte": 2}
SORTS = {
    "merge": ("merge order", lambda r: (KIND_ORDER[r.kind], r.rank if r.rank is not None else r.id)),
    "uses": ("most used", lambda r: (-r.uses, r.id)),
    "length": ("longest", lambda r: (-r.length, r.id)),
    "made": ("made from the most pairs", lambda r: (-(r.made or 0), r.id)),
}
BLUE, RED, GREY = "#4c78a8", "#d62728", "#9e9e9e"

TABLE_CSS = """
<style>
table.vocab{border-collapse:collapse;width:100%;font-size:1rem;color:#111}
table.vocab th{text-align:left;padding:4px 10px;border-bottom:2px solid #0003;font-weight:600}
table.vocab td{padding:3px 10px;border-bottom:1px solid #0001}
table.vocab td.num{text-align:right;font-variant-numeric:tabular-nums}
table.vocab .vt{font-family:monospace;font-size:1.1rem;background:#dbe7fb;border:1px solid #0002;border-radius:5px;padding:0 6px;white-space:pre}
table.vocab tr.unused td, .vocab-key{background:#fbd9d9}
table.vocab tr.unused td:first-child, .vocab-key{box-shadow:inset 5px 0 #c62828}
.vocab-key{display:inline-block;width:2.2em;height:1em;vertical-align:-.1em;border:1px solid #0002;margin-right:.4em}
.vocab-note, .vocab-legend{font-size:1rem;margin:.2rem 0 .4rem}
</style>
"""


# ---------------------------------------------------------------------------
# the data, made once per run


@st.cache_resource(max_entries=16, show_spinner=False)
def rows_for(run_key: tuple, n: int, _tok: Tokenizer, _test: Replay) -> tuple[TokenRow, ...]:
    """Every token of the run (run_key names it) with its uses on the held-out text, made once and shared by every session."""
    return tuple(token_rows(_tok, _test.usage(n), n))


@st.cache_resource(max_entries=16, show_spinner=False)
def curve_for(run_key: tuple, n_special: int, _test: Replay) -> tuple[CompressionPoint, ...]:
    return tuple(compression_curve(_test, n_special))


def show(token: bytes) -> str:
    """render.show, and a control character (a byte such as 0x00) as \\xNN, as a projector cannot show it: b'\\x00' -> '\\x00'."""
    return "".join(f"\\x{ord(c):02x}" if unicodedata.category(c) == "Cc" else c for c in show_text(token))


_REAL_ROWS: dict[tuple, tuple[TokenRow, ...]] = {}  # (encoding, its files' paths and sizes) -> rows: made once per server


def real_job(key: str, files: tuple[tuple[str, str], ...]) -> tuple:
    """The pool key of a real tokenizer's rows (ui/warm.py asks for it too)."""
    return ("vocabulary", key, tuple((name, path, Path(path).stat().st_size) for name, path in files))


def real_files(found) -> tuple[tuple[str, str], ...] | None:
    """(name, path) of a real tokenizer's files on this machine (a ui.real.Real), or None when they are not on its disk."""
    from ui import real

    where = real.locate(found.encoding)
    return None if where is None else tuple((f.name, str(path)) for f, path in zip(found.encoding.files, where[0]))


def real_rows(key: str, files: tuple[tuple[str, str], ...], held_out: bytes) -> tuple[TokenRow, ...]:
    """Every token of a real tokenizer with its uses on the held-out text, made once per server in a worker process.

    The worker loads the files itself and counts (seconds for o200k_base): the server only receives the rows.
    While it works the page shows so, polls, and reruns when the rows are ready.
    """
    job = real_job(key, files)
    rows = _REAL_ROWS.get(job)
    if rows is not None:
        return rows
    known = work.pool().status(job)  # built already (ui/warm.py), or being built
    if known is None and (kept := disk.load("vocabulary", jobs.vocabulary_kept(files, held_out))) is not None:  # an earlier start's
        status = work.ask("vocabulary", job, jobs.known, kept, lane="short", inline=True)
    else:
        status = work.ask("vocabulary", job, jobs.vocabulary_rows, files, held_out, lane="short")
    if not status.ended:
        status = work.pool().wait(job, 0.5)
    if status.state == "done":
        rows = _REAL_ROWS[job] = status.result
        return rows
    if status.state == "failed":
        st.error(status.error)
        st.stop()
    doing = "Loading the tokenizer and counting every token's uses on held-out text in a worker process, once for the whole server…"
    work.follow(job, lambda s: st.info(work.waiting(s, "This count") or doing), every=1.0)
    st.stop()


@st.cache_resource(max_entries=16, show_spinner=False)
def zipf_of(run_key: tuple, _rows: tuple[TokenRow, ...]) -> tuple[list[int], float | None]:
    """The Zipf data of a vocabulary and its fitted slope, once per vocabulary."""
    frequencies = zipf({r.token: r.uses for r in _rows})
    return frequencies, zipf_slope(frequencies)


@st.cache_resource(max_entries=32, show_spinner=False)
def ordered(run_key: tuple, sort: str, _rows: tuple[TokenRow, ...]) -> tuple[tuple[TokenRow, ...], tuple[str, ...]]:
    """The rows in one order, and the text each is found by (as typed and as shown), once per vocabulary and order."""
    rows = tuple(sorted(_rows, key=SORTS[sort][1]))
    return rows, tuple(r.token.decode("utf-8", "backslashreplace") + "\0" + show(r.token) for r in rows)


def matching(run_key: tuple, rows: tuple[TokenRow, ...], query: str, sort: str) -> list[TokenRow] | tuple[TokenRow, ...]:
    """Rows whose token contains query (as typed, or as shown: '␣the' finds ' the'), sorted.

    query '' matches every row; 'the' -> ' the', 'the', 'other', ...
    """
    in_order, texts = ordered(run_key, sort, rows)
    if not query:
        return in_order
    return [r for r, text in zip(in_order, texts) if query in text]


# ---------------------------------------------------------------------------
# views


@st.cache_resource(max_entries=16, show_spinner=False)
def made_and_unused(run_key: tuple, _rows: tuple[TokenRow, ...]) -> tuple[int, int]:
    """(tokens made by merges, those never used): the page's one count of 'made but never used' (metric, key, notes),
    once per vocabulary."""
    merged = [r for r in _rows if r.kind == MERGE]
    return len(merged), sum(r.uses == 0 for r in merged)


def metrics(run_key: tuple, rows: tuple[TokenRow, ...], slope: float | None, label: str) -> None:
    merged, unused = made_and_unused(run_key, rows)
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Vocabulary size", f"{len(rows):,}", help="256 bytes + one token per merge + the special tokens")
    c2.metric("Made by merges", f"{merged:,}")
    c3.metric("Made but never used", f"{unused:,}")
    c4.metric(
        "Zipf slope", "—" if slope is None else f"{slope:.2f}", help="The slope of log(uses) against log(rank of use); Zipf's law is −1."
    )
    share = f" ({unused / merged:.0%})" if merged else ""
    st.caption(f"Made but never used: {unused:,} of the {merged:,} tokens made by merges{share} never occur in the tokens of {label}.")


def token_table(rows: Sequence[TokenRow], total: int, query: str, settings, used_on: str, never: int = 0) -> None:
    """The first SHOWN rows as an HTML table (18 px and up on a projector; a canvas dataframe cannot be sized).

    The key to its red rows stands above it: under 30 rows it would be below the first screen. It names the page's one
    count of them (`never`, the metric's), never the rows on screen, which a reader took for another count.
    """
    if not rows:
        st.markdown(f"No token contains **{plain(query)}**. Type part of a token as it is shown, `␣` for a space.")
        return
    body = []
    for r in rows[:SHOWN]:
        href = link.href(r.rank + 1, settings) if r.rank is not None and settings is not None else None  # None: no step page for it
        if r.rank is None:
            merge = "byte" if r.kind != SPECIAL else "special"
        elif href:
            merge = f'<a href="{html.escape(href)}" target="_self">{r.rank + 1:,}</a>'
        else:
            merge = f"{r.rank + 1:,}"
        made = f"{r.made:,}" if r.made is not None else ""
        unused = ' class="unused"' if r.kind == MERGE and r.uses == 0 else ""
        body.append(
            f'<tr{unused}><td class="num">{r.id:,}</td><td><span class="vt">{html.escape(show(r.token))}</span></td>'
            f'<td class="num">{r.length}</td><td class="num">{merge}</td><td class="num">{made}</td><td class="num">{r.uses:,}</td></tr>'
        )
    counted = any(r.made is not None for r in rows[:SHOWN])
    head = f"<tr><th>id</th><th>token</th><th>bytes</th><th>made at merge</th><th>{'pair count then' if counted else ''}</th><th>uses</th></tr>"
    red = sum(r.kind == MERGE and r.uses == 0 for r in rows[:SHOWN])
    key = (
        f'<p class="vocab-legend"><span class="vocab-key"></span>Red rows: made but never used on {html.escape(used_on)} '
        f"({never:,} in this vocabulary, as counted above).</p>"
        if red
        else ""
    )
    st.html(TABLE_CSS + f'{key}<table class="vocab">{head}{"".join(body)}</table>')
    more = f"the first {SHOWN} of {len(rows):,} shown" if len(rows) > SHOWN else f"all {len(rows):,} shown"
    which = f"containing “{plain(query)}”" if query else "in the vocabulary"
    opens = " Merge numbers open the step page at that merge." if settings is not None else ""
    st.caption(f"{len(rows):,} of {total:,} tokens {which}; {more}.{opens}")


LINES = ["tokens of this run", "Zipf: uses ∝ 1 / rank"]


def zipf_chart(frequencies: list[int], slope: float | None, used_on: str) -> None:
    """Uses against rank of use on log-log axes, with Zipf's ideal (first / rank) dashed."""
    if not frequencies:
        st.info("No token is used: the held-out text is empty.")
        return
    n = len(frequencies)
    ranks = sorted({min(n, round(math.exp(math.log(n) * i / 199))) for i in range(200)} | {1, n})  # at most 200 points, log-spaced
    frame = pd.DataFrame(
        {
            "rank": ranks * 2,
            "uses": [frequencies[r - 1] for r in ranks] + [frequencies[0] / r for r in ranks],
            "line": [LINES[0]] * len(ranks) + [LINES[1]] * len(ranks),
        }
    )
    log = {"type": "log"}
    encoding = {
        "x": {"field": "rank", "type": "quantitative", "scale": log, "title": "rank of use (1 = most used)"},
        "y": {"field": "uses", "type": "quantitative", "scale": log, "title": "uses"},
    }
    spec = {
        "height": 300,
        "config": {"axis": AXIS},
        "encoding": encoding,
        "layer": [
            {
                "transform": [{"filter": {"field": "line", "equal": line}}],
                "mark": {"type": "line", "strokeWidth": 3, "color": colour, **mark},
            }
            # subtle: Zipf's line without points: its 200 dots, one per rank drawn, filled the gaps of the dashes and it
            # read as solid while the caption said dashed
            for line, colour, mark in ((LINES[1], GREY, {"strokeDash": [12, 7]}), (LINES[0], BLUE, {"point": {"size": 40, "color": BLUE}}))
        ],
    }
    st.vega_lite_chart(frame, spec, width="stretch")
    fitted = f"fitted slope {slope:.2f}" if slope is not None else "too few tokens to fit a slope"
    st.caption(
        f"Blue: the {n:,} tokens used on {used_on}, {fitted}. Grey, dashed: Zipf's law, uses ∝ 1 / rank (a straight line of slope −1)."
    )


def length_chart(rows: tuple[TokenRow, ...]) -> None:
    """How many of the merged tokens have each length in bytes."""
    histogram = length_histogram([r for r in rows if r.kind == MERGE])
    if not histogram:
        st.info("No merges yet: every token is one byte.")
        return
    frame = pd.DataFrame({"bytes": list(histogram), "tokens": list(histogram.values())})
    spec = {
        "height": 300,
        "config": {"axis": AXIS},
        "layer": [{"mark": {"type": "bar", "color": BLUE}}]
        + (
            [{"mark": {"type": "text", "dy": -10, "fontSize": MARK_TEXT}, "encoding": {"text": {"field": "tokens", "format": ","}}}]
            if len(histogram) <= 12
            else []
        ),
        "encoding": {
            "x": {"field": "bytes", "type": "ordinal", "title": "token length in bytes", "axis": {"labelAngle": 0}},
            "y": {"field": "tokens", "type": "quantitative", "title": "merged tokens"},
        },
    }
    st.vega_lite_chart(frame, spec, width="stretch")
    longest = max(histogram)
    st.caption(f"The 256 single bytes are left out. The longest tokens are {longest} bytes.")


def compression_chart(curve: tuple[CompressionPoint, ...], label: str) -> None:
    """Bytes per token on the held-out text against vocabulary size: each point is the run's first k merges."""
    frame = pd.DataFrame(
        {"vocabulary size": [p.vocab_size for p in curve], "bytes per token": [round(p.bytes_per_token, 3) for p in curve]}
    )
    spec = {
        "height": 300,
        "config": {"axis": AXIS},
        "mark": {"type": "line", "point": {"size": 40}, "strokeWidth": 3, "color": BLUE},
        "encoding": {
            "x": {"field": "vocabulary size", "type": "quantitative", "scale": {"zero": False}, "axis": {"format": ",d", "tickMinStep": 1}},
            "y": {"field": "bytes per token", "type": "quantitative", "scale": {"zero": False}},
            "tooltip": [{"field": "vocabulary size", "format": ","}, {"field": "bytes per token", "format": ".2f"}],
        },
    }
    st.vega_lite_chart(frame, spec, width="stretch")
    first, last = curve[0], curve[-1]
    st.caption(
        f"From {first.bytes_per_token:.2f} bytes per token with {first.vocab_size:,} tokens (bytes only) to "
        f"{last.bytes_per_token:.2f} with {last.vocab_size:,}, measured on {label}. A smaller vocabulary is the first k "
        "merges of this one run: nothing is retrained."
    )


GLITCH = (
    "**Why these matter: glitch tokens.** A language model learns one embedding per token, only from the places the "
    "token occurs in *its* training text. The tokenizer is trained first, and often on other text. GPT-2's tokenizer "
    "was trained on text that included Reddit threads where a few users counted to infinity, so their names, such as "
    "`␣SolidGoldMagikarp`, were frequent enough to become tokens (GPT-2's token 43,453) — yet hardly occur in the "
    "text the models learned from. Their embeddings stayed almost untrained, and GPT-3 models asked to repeat "
    "“SolidGoldMagikarp” answered with other words (“distribute”) or refused. A token made often and then never used "
    "is that kind of token. Here a second cause shows too: a token can be *absorbed* — a later merge makes a longer "
    "token from it wherever it occurs, so the short one is left over."
)


RARELY = [0, 1, 2, 5, 10]  # "used at most" choices: never, then almost never


@st.cache_resource(max_entries=32, show_spinner=False)
def unused_of(run_key: tuple, at_most: int, _rows: tuple[TokenRow, ...]) -> tuple[list[TokenRow], int]:
    """The merged tokens used at most at_most times (the most often made first, else the earliest made) and how many were merged."""
    return rarely_used(_rows, at_most), sum(r.kind == MERGE for r in _rows)


def unused_table(run_key: tuple, rows: tuple[TokenRow, ...], label: str, at_most: int = 0) -> None:
    """The merged tokens never (or at most at_most times) used on the held-out text, the most often made (or the earliest) first."""
    unused, merged = unused_of(run_key, at_most, rows)
    used = "never used" if at_most == 0 else f"used at most {at_most} time{'s' if at_most > 1 else ''}"
    if not unused:
        st.markdown(f"No merged token is {used} when {label} is encoded.")
        return
    counted = unused[0].made is not None
    body = "".join(
        f'<tr class="unused"><td><span class="vt">{html.escape(show(r.token))}</span></td><td class="num">{r.rank + 1:,}</td>'
        f'<td class="num">{f"{r.made:,}" if r.made is not None else ""}</td><td class="num">{r.uses:,}</td></tr>'
        for r in unused[:UNUSED_SHOWN]
    )
    head = f"<tr><th>token</th><th>made at merge</th><th>{'pair count then' if counted else ''}</th><th>uses</th></tr>"
    which = "made from the most pairs" if counted else "made earliest (from the most frequent pairs of its own training text)"
    note = (
        f'<div class="vocab-note"><b>{len(unused):,}</b> of the {merged:,} merged tokens are {used} '
        f"on {html.escape(label)}; the {min(len(unused), UNUSED_SHOWN)} {which}:</div>"
    )
    st.html(TABLE_CSS + note + f'<table class="vocab">{head}{body}</table>')
