"""Views of one merge, built from its MergeEvent and MergeDetail. Each returns nothing and draws."""

from __future__ import annotations

import html

import altair as alt
import pandas as pd
import streamlit as st

from bpe.events import HeapEntry, MergeEvent

from .render import show, show_pair, token_spans

CHOSEN, TIE, RUNNER = "#c8f0cf", "#fff1b8", "#e3ecfb"

CARD_CSS = """
<style>
.merge-card{border:2px solid #4c78a8;border-radius:10px;padding:.8rem 1.1rem;margin-bottom:.6rem;background:#f6f9fd;color:#111}
.merge-card .big{font-size:1.9rem;font-family:monospace}
.merge-card .why{font-size:1.05rem;margin-top:.3rem}
.pill{display:inline-block;padding:1px 8px;border-radius:6px;background:#fff;border:1px solid #0003;margin:0 2px}
.heap-level{display:flex;justify-content:space-around;gap:4px;margin:6px 0}
.heap-node{flex:0 1 auto;min-width:0;overflow:hidden;white-space:nowrap;font-family:monospace;font-size:.95rem;border:2px solid #4c78a8;border-radius:8px;padding:3px 5px;background:#fff;color:#111;text-align:center}
.heap-level.deep .heap-node{font-size:.78rem;padding:2px 3px}
.heap-node.stale{border:2px dashed #d62728;background:#fdecec}
.heap-node .n{font-size:.8rem;color:#555}
.word-row{display:flex;align-items:center;gap:6px;font-family:monospace;font-size:1.05rem;margin:4px 0}
.word-row .arrow{margin:0 6px}
</style>
"""


def pill(token: bytes) -> str:
    return f'<span class="pill">{html.escape(show(token))}</span>'


def merge_card(event: MergeEvent, k: int, n: int, vocab_size: int) -> None:
    """The headline: which pair won, and why."""
    if event.runner_up is None:
        why = "It was the only pair left."
    elif event.tie:
        why = (
            f"Tied at {event.count:,} with {pill(event.runner_up[0])}+{pill(event.runner_up[1])}: "
            "ties go to the pair whose bytes are greater, compared left token first, then right."
        )
    else:
        why = (
            f"Highest count: {event.count:,}, ahead of {pill(event.runner_up[0])}+{pill(event.runner_up[1])} at {event.runner_up_count:,}."
        )
    st.html(
        CARD_CSS + f'<div class="merge-card"><div>Merge <b>{k}</b> of {n} · new token id <b>{event.new_id}</b> · '
        f"vocabulary now {vocab_size:,}</div>"
        f'<div class="big">{pill(event.left)} + {pill(event.right)} → {pill(event.token)}'
        f' <span style="font-size:1.1rem">× {event.count:,}</span></div>'
        f'<div class="why">{why}</div></div>'
    )


def pair_table(event: MergeEvent) -> None:
    detail = event.detail
    rows = [{"pair": show_pair(a, b), "count": c, "status": _status(event, a, b, c)} for a, b, c in detail.top_pairs[:15]]
    frame = pd.DataFrame(rows)

    def colour(row):
        bg = {"chosen": CHOSEN, "runner-up (tie)": TIE, "tie": TIE, "runner-up": RUNNER}.get(row["status"], "")
        return [f"background-color: {bg}; color: #111" if bg else ""] * len(row)

    st.dataframe(frame.style.apply(colour, axis=1), hide_index=True, width="stretch")
    st.caption(f"Top {len(rows)} of {detail.distinct_pairs:,} distinct pairs before this merge. Yellow: same count as the winner.")


def _status(event: MergeEvent, a: bytes, b: bytes, c: int) -> str:
    if (a, b) == (event.left, event.right):
        return "chosen"
    if event.runner_up == (a, b):
        return "runner-up (tie)" if c == event.count else "runner-up"
    return "tie" if c == event.count else ""


def heap_tree(event: MergeEvent, levels: int = 4) -> None:
    """The top levels of the heap as stored: stale entries (count out of date) dashed red."""
    view = event.detail.heap
    rows, start = [], 0
    for level in range(levels):
        width = 2**level
        entries = view.entries[start : start + width]
        if not entries:
            break
        css = "heap-level deep" if level >= 3 else "heap-level"
        rows.append(f'<div class="{css}">' + "".join(_node(e) for e in entries) + "</div>")
        start += width
    st.html(CARD_CSS + "".join(rows))
    stale_now = sum(e.stale for e in view.entries)
    st.caption(
        f"Heap size {view.size:,} entries. In the top {len(view.entries)}: {stale_now} stale. "
        f"Stale entries popped while finding this merge: {view.stale_popped_total}"
        + (
            " — " + ", ".join(f"{show_pair(e.left, e.right)} stored {e.count} now {e.current}" for e in view.stale_popped[:6])
            if view.stale_popped
            else ""
        )
    )


def _node(entry: HeapEntry) -> str:
    label = html.escape(show_pair(entry.left, entry.right))
    if entry.stale:
        count = f"<s>{entry.count}</s> → {entry.current}" if entry.current else f"<s>{entry.count}</s> → gone"
        return f'<div class="heap-node stale" title="stale: stored count out of date">{label}<div class="n">{count}</div></div>'
    return f'<div class="heap-node">{label}<div class="n">{entry.count}</div></div>'


def affected_words(event: MergeEvent, limit: int = 12) -> None:
    detail = event.detail
    rows = []
    for w in detail.words[:limit]:
        rows.append(
            '<div class="word-row">'
            + token_spans(list(w.before), wrap=False)
            + '<span class="arrow">→</span>'
            + token_spans(list(w.after), wrap=False)
            + f' <b class="arrow">× {w.count:,}</b></div>'
        )
    st.html(CARD_CSS + "".join(rows))
    shown = min(limit, len(detail.words))
    st.caption(f"{detail.words_total:,} word(s) rewritten in all; showing the {shown} most frequent.")


def pair_changes(event: MergeEvent, limit: int = 16) -> None:
    detail = event.detail
    if not detail.changes:
        st.caption("No pair counts changed.")
        return
    frame = pd.DataFrame([{"pair": show_pair(a, b), "change": d} for a, b, d in detail.changes[:limit]])
    chart = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("change:Q", title="change in count"),
            y=alt.Y("pair:N", sort=None, title=None, axis=alt.Axis(labelFontSize=13, labelLimit=220)),
            color=alt.condition("datum.change > 0", alt.value("#2ca02c"), alt.value("#d62728")),
            tooltip=["pair", "change"],
        )
        .properties(height=alt.Step(26))
    )
    st.altair_chart(chart, width="stretch")
    st.caption(f"{detail.changes_total:,} pair count(s) changed: red lost occurrences, green are new pairs with the new token.")


def counts_chart(events: tuple[MergeEvent, ...], k: int) -> None:
    frame = pd.DataFrame({"merge": range(1, len(events) + 1), "count": [e.count for e in events]})
    line = (
        alt.Chart(frame)
        .mark_line(point=len(events) <= 60)
        .encode(
            x=alt.X("merge:Q", title="merge", axis=alt.Axis(tickMinStep=1, format="d")),
            y=alt.Y("count:Q", title="count of the winning pair"),
            tooltip=["merge", "count"],
        )
    )
    rule = alt.Chart(pd.DataFrame({"merge": [k]})).mark_rule(color="#d62728", strokeWidth=2).encode(x="merge:Q")
    st.altair_chart((line + rule).properties(height=220), width="stretch")
