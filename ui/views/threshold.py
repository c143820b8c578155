"""The threshold explorer's views.

The page trains once with no threshold; a threshold t then keeps the first
kept(counts, t) merges (bpe.lab.threshold), and the held-out and training texts are
encoded once with every merge (bpe.lab.threshold.replay, in ui.corpus.replays_for),
so a slider move is a binary search plus a sum: nothing is retrained or re-encoded.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from bpe.events import MergeEvent
from bpe.lab.threshold import Compression, Replay, kept
from ui import corpus as corpora
from ui import state
from ui.chart_style import MARK_TEXT, config
from ui.render import BYTES_MEANING, show, show_pair


@dataclass(frozen=True)
class Preset:
    label: str
    t: int
    help: str


PRESETS = (
    Preset(
        "HuggingFace BpeTrainer",
        0,
        "tokenizers.trainers.BpeTrainer(min_frequency=0) is the default; it stops when a pair's count is below min_frequency, so 0 behaves like 1.",
    ),
    Preset(
        "HF ByteLevelBPETokenizer",
        2,
        "ByteLevelBPETokenizer.train(..., min_frequency=2): the default of HuggingFace's ready-made byte-level BPE.",
    ),
    Preset(
        "subword-nmt learn-bpe", 2, "subword-nmt learn-bpe --min-frequency 2 (default): 'Stop if no symbol pair has frequency >= FREQ'."
    ),
    Preset(
        "simple early-exit BPE",
        5,
        "A minimal teaching implementation of BPE (one found on GitHub) stops when the best pair occurs fewer than 5 times by default.",
    ),
)
PRESET_VALUES = sorted({p.t for p in PRESETS} | {1})

KEPT, DROPPED, RULE = "#4c78a8", "#c7c7c7", "#d62728"


# ---------------------------------------------------------------------------
# the corpus to measure on, and the slider


def held_out(source: str, data: bytes) -> tuple[str, str, bytes]:
    """Text to measure compression on: (which, a label saying what it is, its bytes)."""
    if source == "stdlib":
        text = corpora.stdlib_held_out()
        return "held-out", f"held-out text: the next {len(text) / 1e3:,.0f} KB of standard-library docstrings, never trained on", text
    return "train", "the training text itself: only the stdlib corpus comes with held-out text", data


def snap(t: int, options: list[int]) -> int:
    """The smallest offered value >= t: it keeps the same merges as t."""
    return next((o for o in options if o >= t), options[-1])


# ---------------------------------------------------------------------------
# views


def restore_slider(options: list[int]) -> None:
    """Give the slider the session's t (snapped to the options), writing the widget's state only when it must.

    subtle: writing a widget's state makes the run send its value to the
    browser. Written on every run, a run still going when the student has moved
    the slider on would send the slider back to an older t; so it is written
    only when the browser's value cannot be right: the widget has no state (a
    visit to another page dropped it), or other options (another corpus, whose
    slider the browser resets to its first value while the server keeps t).
    """
    t = snap(st.session_state["threshold"], options)
    st.session_state["threshold"] = t
    drawn = (len(options), options[0], options[-1], hash(tuple(options)))
    if st.session_state.get("w_threshold") not in options or st.session_state["threshold_options"] != drawn:
        st.session_state["w_threshold"] = t
        st.session_state["threshold_options"] = drawn


def choose(t: int) -> None:
    st.session_state["threshold"] = st.session_state["w_threshold"] = t


def slider(options: list[int]) -> int:
    """The slider over the values where the answer changes, and a number box beside it for any t.

    On a big corpus the useful cuts (t = 173 … 953 on the stdlib prose) share the slider's track with every winning
    count up to 36,505: a typed t goes straight there, snapped to the smallest offered value at or above it, which
    keeps the same merges.
    """
    left, right = st.columns([4, 1], vertical_alignment="bottom")
    with left:
        t = state.widget(
            st.select_slider,
            "Minimum pair frequency t",
            options=options,
            key="threshold",
            format_func=lambda v: f"{v:,}",
            help="The slider stops at each winning count (and at the presets): the values where the answer changes.",
        )
    # subtle: the box shows the slider's t, set here on every run; a run cut short (a student holding an arrow key)
    # leaves the browser's box at an older t, which it sends along with the next slider move. A box value that comes
    # with a slider the box was not last set for is that old t, not typing: it is set back (state.widget's stale)
    st.session_state["threshold_typed"] = st.session_state["threshold_box_for"] = t
    state.widget(
        right.number_input,
        "or type t",
        key="threshold_typed",
        min_value=0,
        max_value=options[-1],
        step=1,
        on_change=lambda: choose(snap(int(st.session_state["threshold_typed"]), options)),
        stale=lambda: st.session_state.get("w_threshold") != st.session_state["threshold_box_for"],
        help="Any t: it is moved up to the next value on the slider, which keeps the same merges.",
    )
    return st.session_state["threshold"]


SHARES = (0.75, 0.5, 0.25)  # the corpus's own presets keep about these shares of the merges


def corpus_presets(counts: list[int], skip: set[int] = frozenset()) -> list[tuple[int, int]]:
    """Thresholds that matter for this run, from its winning counts: (t, merges kept) keeping about 3/4, 1/2 and 1/4.

    t is the count of the last merge to keep, so it keeps that merge and any after it with the same count;
    a t that keeps every merge is left out.
    [9, 9, 7, 5, 2, 2, 1, 1] -> [(2, 6), (5, 4), (9, 2)]; values in skip (the tools' presets) are left out.
    """
    found: dict[int, int] = {}
    for share in SHARES:
        t = counts[max(1, round(len(counts) * share)) - 1] if counts else 0
        if t > 1 and t not in skip and kept(counts, t) < len(counts):
            found.setdefault(t, kept(counts, t))
    return sorted(found.items())


def presets(current: int, options: list[int], counts: list[int]) -> None:
    """The tools' defaults as buttons, two to a row so that every label (its t first) shows whole; then thresholds for this corpus.

    On a big corpus every winning count may be far above the tools' defaults, so they keep every merge: said so.
    """
    st.markdown("**What tools do by default** — click to set the slider:")
    columns = st.columns(2)
    for i, preset in enumerate(PRESETS):
        columns[i % 2].button(
            f"t = {preset.t:,} · {preset.label}",
            help=preset.help,
            on_click=choose,
            args=(snap(preset.t, options),),
            type="primary" if preset.t == current else "secondary",
            width="stretch",
        )
    tools = {p.t for p in PRESETS}
    if counts and kept(counts, max(tools)) == len(counts):
        st.caption(
            f"On this corpus every winning count is at least {min(counts):,}, so the tools' defaults "
            f"(t = {', '.join(f'{t:,}' for t in sorted(tools))}) keep all {len(counts):,} merges: they stop training only on "
            "small corpora or long runs. The thresholds below cut this run."
        )
    ours = corpus_presets(counts, tools)
    if ours:
        st.markdown("**For this corpus** — thresholds from its winning counts:")
        for column, (t, k) in zip(st.columns(len(ours)), ours):
            column.button(
                f"t = {t:,} · keeps {k:,} of {len(counts):,}",
                key=f"corpus_t_{t}",
                on_click=choose,
                args=(snap(t, options),),
                type="primary" if t == current else "secondary",
                width="stretch",
            )


def metrics(t: int, k: int, n: int, vocab_size: int, now: Compression, full: Compression) -> None:
    """Four numbers for threshold t, each label naming t, so that none can be read as another t's."""
    c1, c2, c3, c4 = st.columns(4)
    dropped = f"{n - k:,} of {n:,} dropped" if k < n else f"all {n:,} kept"
    c1.metric(f"Merges kept at t = {t:,}", f"{k:,}", delta=dropped, delta_color="off", delta_arrow="off")
    c2.metric(f"Vocabulary at t = {t:,}", f"{vocab_size:,}", help="256 bytes + merges kept + special tokens")
    c3.metric(
        "Bytes per token",
        f"{now.bytes_per_token:.2f}",
        help=f"Higher is better: each token carries more text. Bytes: {BYTES_MEANING}.",
        **versus(now.bytes_per_token, full.bytes_per_token, "normal"),
    )
    c4.metric(
        "Tokens per word",
        f"{now.tokens_per_word:.2f}",
        help="Lower is better. Words are whitespace-separated.",
        **versus(now.tokens_per_word, full.tokens_per_word, "inverse"),
    )


def versus(value: float, without: float, colour: str) -> dict:
    """A metric's delta against no threshold, as shown (two decimals): a difference that shows as 0.00 is no change.

    2.31 vs 2.31 -> 'same as with no threshold', no arrow, no colour; 2.10 vs 2.31 -> '-0.21 vs no threshold'.
    """
    shown = round(value, 2) - round(without, 2)
    if abs(shown) < 0.005:
        return {"delta": "same as with no threshold", "delta_color": "off", "delta_arrow": "off"}
    return {"delta": f"{shown:+.2f} vs no threshold", "delta_color": colour}


# Both charts keep their spec fixed for a corpus and carry t and k in the data: when
# only the data changes, the browser updates the drawn chart instead of rebuilding it.


def counts_chart(events: tuple[MergeEvent, ...], t: int, k: int) -> None:
    """The winning pair's count at each merge, with the threshold drawn across it."""
    counts = [e.count for e in events]
    frame = pd.DataFrame(
        {
            "merge": range(1, len(events) + 1),
            "count": counts,
            "pair": [show_pair(e.left, e.right) for e in events],
            "status": ["kept" if i < k else "dropped" for i in range(len(events))],
            "t": max(t, 1),  # t = 0 keeps the same merges as t = 1
            "label": f"t = {t:,}",
        }
    )
    log = max(counts) / max(min(counts), 1) > 30
    few = len(events) <= 80  # a bar per merge; beyond that, a line (cheap to draw)
    mark = {"type": "bar", "width": {"band": 0.8}} if few else {"type": "line", "strokeWidth": 3}
    x = {
        "field": "merge",
        "type": "ordinal" if few else "quantitative",
        "title": "merge",
        "axis": {"labelAngle": 0} if few else {"format": ",d"},
    }
    threshold = {"y": {"field": "t", "type": "quantitative"}}
    spec = {
        "height": 300,
        "config": config(),
        "layer": [
            {
                "mark": mark,
                "encoding": {
                    "x": x,
                    "y": {
                        "field": "count",
                        "type": "quantitative",
                        "title": "count of the winning pair",
                        **({"scale": {"type": "log"}} if log else {}),
                    },
                    "color": {
                        "field": "status",
                        "type": "nominal",
                        "scale": {"domain": ["kept", "dropped"], "range": [KEPT, DROPPED]},
                        "legend": {"title": None, "orient": "top"},
                    },
                    "tooltip": [{"field": f} for f in ("merge", "pair", "count", "status")],
                },
            },
            {
                "transform": [{"filter": "datum.merge == 1"}],
                "mark": {"type": "rule", "color": RULE, "strokeWidth": 2, "strokeDash": [6, 3]},
                "encoding": threshold,
            },
            {
                "transform": [{"filter": "datum.merge == 1"}],
                "mark": {"type": "text", "color": RULE, "align": "right", "dx": -2, "dy": -10, "fontSize": MARK_TEXT, "fontWeight": "bold"},
                "encoding": {**threshold, "x": {"value": "width"}, "text": {"field": "label"}},
            },
        ],
    }
    st.vega_lite_chart(frame, spec, width="stretch")


def compression_chart(test: Replay, k: int, label: str) -> None:
    """Bytes per token on the test text after each number of merges; the threshold's k marked."""
    n = len(test.tokens) - 1
    step = max(1, n // 1500)  # at most ~1500 points on the wire
    ks = sorted(set(range(0, n + 1, step)) | {n, k})
    frame = pd.DataFrame({"merges": ks, "bytes per token": [round(test.compression(i).bytes_per_token, 4) for i in ks], "k": k})
    x = {"field": "merges", "type": "quantitative", "title": "merges used", "axis": {"format": ",d"}}
    y = {"field": "bytes per token", "type": "quantitative", "scale": {"zero": False}}
    here = [{"filter": "datum.merges == datum.k"}]
    spec = {
        "height": 300,
        "config": config(),
        "layer": [
            {
                "mark": {"type": "line", "color": KEPT, "strokeWidth": 2},
                "encoding": {"x": x, "y": y, "tooltip": [{"field": "merges"}, {"field": "bytes per token", "format": ".3f"}]},
            },
            {"transform": here, "mark": {"type": "rule", "color": RULE, "strokeWidth": 2, "strokeDash": [6, 3]}, "encoding": {"x": x}},
            {"transform": here, "mark": {"type": "point", "color": RULE, "size": 120, "filled": True}, "encoding": {"x": x, "y": y}},
        ],
    }
    st.vega_lite_chart(frame, spec, width="stretch")
    st.caption(f"Measured on {label}.")


CUT_CSS = """
<style>
.cut{border-collapse:collapse;font-size:1.05rem;width:100%}
.cut td,.cut th{padding:4px 10px;border-bottom:1px solid #0001;text-align:left}
.cut .tok{font-family:monospace}
.cut .num{text-align:right}
.cut tr.dropped td{color:#999}
.cut tr.edge td{border-bottom:3px dashed #d62728}
</style>
"""


def cut_table(events: tuple[MergeEvent, ...], k: int, around: int = 3) -> None:
    """The last merges the threshold keeps and the first it drops, the cut drawn between them."""
    lo, hi = max(0, k - around), min(len(events), k + around)
    rows = []
    for i, e in enumerate(events[lo:hi], start=lo):
        kind = "kept" if i < k else "dropped"
        edge = " edge" if i == k - 1 and k < len(events) else ""
        rows.append(
            f'<tr class="{kind}{edge}"><td class="num">{i + 1:,}</td><td class="tok">{html.escape(show_pair(e.left, e.right))}</td>'
            f'<td class="tok">{html.escape(show(e.token))}</td><td class="num">{e.count:,}</td><td>{kind}</td></tr>'
        )
    head = "<tr><th>merge</th><th>pair</th><th>new token</th><th>count</th><th></th></tr>"
    st.html(CUT_CSS + f'<table class="cut">{head}{"".join(rows)}</table>')


EXPLAIN = """
**Pair threshold** (this page; HuggingFace's `min_frequency`, subword-nmt's `--min-frequency`):
while training, stop as soon as the best remaining pair occurs fewer than *t* times. It decides
*which merges are learned*. The winning count never goes up, so the merges kept under *t* are
exactly the first *k* merges of the run with no threshold — which is why this page never retrains.

**Token threshold** (a minimum token frequency, e.g. subword-nmt's `apply-bpe --vocabulary-threshold`):
after training, look at how often each token is *used* once the text is tokenized, and drop the
tokens used fewer than *t* times (subword-nmt undoes the merges that would produce them, so they are
split into smaller pieces). A token can be used far less often than the pair that made it: when a
later merge absorbs it (`e` + `st` → `est`), the shorter token is left over.
"""


def rare_tokens(events: tuple[MergeEvent, ...], t: int, k: int, usage: dict[bytes, int]) -> None:
    """The tokens these k merges make that a token threshold of t would drop (used fewer than t times)."""
    floor = max(t, 1)  # a token threshold of 0 drops nothing; 1 drops the tokens never used
    made: dict[bytes, int] = {}
    for e in events[:k]:
        made.setdefault(e.token, e.count)
    rare = sorted(
        ((token, count, usage.get(token, 0)) for token, count in made.items() if usage.get(token, 0) < floor),
        key=lambda row: (row[2], -row[1]),
    )
    if not made:
        st.markdown("No merge is kept at this threshold, so no token is made and none could be dropped.")
        return
    if not rare:
        st.markdown(
            f"{'The one token' if len(made) == 1 else f'Every one of the {len(made):,} tokens'} these merges make is used at least {floor:,} "
            f"time{'s' if floor > 1 else ''} in the tokenized training text, so a token threshold of {floor:,} would drop none of them."
        )
        return
    chips = "".join(
        f'<span class="chip"><b>{html.escape(show(token))}</b> made ×{count:,}, used ×{used:,}</span>' for token, count, used in rare[:12]
    )
    used = "never used" if floor == 1 else f"used fewer than {floor:,} times"
    st.html(
        "<style>.chip{display:inline-block;font-family:monospace;font-size:1.05rem;padding:2px 8px;margin:3px;"
        "border-radius:6px;background:#fff1c1;border:1px solid #0002;color:#111}"
        ".rare{font-size:1.05rem;margin-bottom:4px}</style>"
        f'<div class="rare">A token threshold of {floor:,} would drop <b>{len(rare):,}</b> of the {len(made):,} tokens '
        f"these merges make: they are {used} in the tokenized training text, although every merge here was "
        f"made from a pair seen at least {floor:,} time{'s' if floor > 1 else ''}.</div><div>{chips}</div>"
    )
