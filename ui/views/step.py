"""The step page's views of one merge, built as data from its MergeEvent and MergeDetail.

`merge_view` turns one event into the HTML of every panel (the merge card, the
pair table, the heap diagram, the words rewritten, the pair-count changes);
ui/step_data caches it per (trace, merge), so a click that every student of a
class makes is a lookup, and all sessions share the result. The winning-count
chart is a fixed Vega-Lite spec per trace whose "you are here" data changes
with the merge. `sentence` tokenizes a text at merge k with its pre-token
boundaries. The CSS classes used here are styled in ui/style.py.

No Streamlit here except the one chart call: these are plain functions a test
can call. Every corpus string reaches HTML through ui.render (escaped).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import regex
import streamlit as st

from bpe import ALGORITHMS
from bpe.events import DETAIL_CAP, HeapEntry, MergeEvent
from bpe.rule import DEFAULT_RULE, RULES, explain_tie
from bpe.text.pretokenizers import ENCODING, ERRORS
from bpe.tokenizer.tokenizer import Tokenizer
from bpe.train import work_names
from ui import compat
from ui.chart_style import AXIS, MARK_TEXT
from ui.render import character_runs, chips, show, show_pair
from ui.views.code import step_code

PAIR_ROWS = 10  # rows of the pair table; more when more pairs tie with the winner
PAIR_ROWS_MAX = 15
HEAP_LEVELS = 3  # levels of the heap tree drawn: 7 entries, each readable at projector size
WORD_ROWS = 8
CHANGE_ROWS = 12


@dataclass(frozen=True)
class MergeView:
    """Everything the step page draws for one merge: HTML and small data, built once and shared."""

    top: str  # the merge card, then the pair table beside the heap (or the work, for the other trainers)
    words: str
    changes: str
    now: bytes  # the counts chart's "you are here" row, as Arrow (see arrow)
    code: str = ""  # the trainer's own lines that made this merge, lit (ui.views.code)


def merge_view(
    event: MergeEvent,
    k: int,
    n: int,
    vocab_size: int,
    algorithm: str,
    *,
    tie_break: str = DEFAULT_RULE,
    before: Sequence[tuple[bytes, bytes]] = (),
    n_special: int = 0,
) -> MergeView:
    """The HTML of every panel for merge k (1-based) of n, trained under tie_break after the merges `before`."""
    right = heap_panel(event) if event.detail.heap is not None else work_panel(event, algorithm)
    return MergeView(
        # one element, laid out by CSS: the two panels side by side, one above the other on a narrow screen
        top=f'{merge_card(event, k, n, vocab_size, tie_break, before, n_special)}<div class="step-row"><div class="left">{pair_table(event, k)}</div>'
        f'<div class="right">{right}</div></div>',
        words=affected_words(event),
        changes=pair_changes(event),
        now=arrow({"merge": [k], "count": [event.count], "label": [f"merge {k:,}: {event.count:,}"]}),
        code=step_code(event, algorithm),
    )


def counts_arrow(counts: Sequence[int]) -> bytes:
    """Every merge's winning count as the chart's Arrow data: one column, 32 bits where they fit (4 KB for 1,000 merges).

    Sent with every click, so kept small: the chart numbers the rows (counts_spec), a merge column would
    double it, and 64-bit counts double it again (16 KB a click to every student before).
    """
    wide = max(counts, default=0) >= 2**31
    return compat.arrow_bytes(pa.table({"count": pa.array(counts, pa.int64() if wide else pa.int32())}))


def arrow(columns: dict[str, list]) -> bytes:
    """Chart data as the Arrow bytes st.vega_lite_chart sends, so a click does not convert it again.

    subtle: st.vega_lite_chart passes a named dataset that is already bytes through
    unchanged, and otherwise converts it through pandas on every call (1-4 ms).
    """
    return compat.arrow_bytes(pa.table(columns))


def pill(token: bytes) -> str:
    return f'<span class="pill">{html.escape(show(token))}</span>'


def caption(text: str) -> str:
    """Caption-style text inside a step-page view's HTML (text is escaped here); presenter mode folds these away."""
    return f'<p class="caption view-note">{html.escape(text)}</p>'


def work_line(event: MergeEvent) -> str:
    """This merge's work counters in the race page's names: 'words checked 4 · words rewritten 2'."""
    done = dict(event.work)
    return " · ".join(f"{name} {done[key]:,}" for key, name in work_names().items() if done.get(key))


# ---------------------------------------------------------------------------
# the merge card


def merge_card(
    event: MergeEvent,
    k: int,
    n: int,
    vocab_size: int,
    tie_break: str = DEFAULT_RULE,
    before: Sequence[tuple[bytes, bytes]] = (),
    n_special: int = 0,
) -> str:
    """The headline: which pair won, and why (on a tie, what every rule would take)."""
    if event.runner_up is None:
        why = "It was the only pair left."
    elif event.tie:
        why = f"Tied at {event.count:,} with {tied_with(event)}. " + tie_rules(event, before, n_special, tie_break)
    else:
        why = (
            f"Highest count: {event.count:,}, ahead of {pill(event.runner_up[0])}+{pill(event.runner_up[1])} at {event.runner_up_count:,}."
        )
    return (
        f'<div class="merge-card"><div class="head"><span class="big">{pill(event.left)} + {pill(event.right)} → {pill(event.token)}'
        f' <span class="times">× {event.count:,}</span></span>'
        f'<span class="where">Merge <b>{k:,}</b> of {n:,} · new token id <b>{event.new_id:,}</b> · vocabulary now {vocab_size:,}</span></div>'
        f'<div class="why">{why}</div>'
        f'<div class="work">Work for this merge: {html.escape(work_line(event))}</div></div>'
    )


TIED_NAMED = 3  # the tied pairs a card names; more are counted ("and 4 more")


def tied_with(event: MergeEvent) -> str:
    """Every pair tied with the winner, as pills: 'n+e and e+w'; past TIED_NAMED, 'a+b, c+d, e+f and 4 more'.

    subtle: the trace records DETAIL_CAP pairs; when all of them tie, more may tie: 'and more'.
    """
    others = tied_pairs(event)[1:] or [event.runner_up]
    named = [f"{pill(a)}+{pill(b)}" for a, b in others[:TIED_NAMED]]
    rest = len(others) - len(named)
    if len(event.detail.top_pairs) >= DETAIL_CAP and len(others) + 1 == len(event.detail.top_pairs):
        named.append("more")
    elif rest:
        named.append(f"{rest:,} more")
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]


def tied_pairs(event: MergeEvent) -> list[tuple[bytes, bytes]]:
    """The recorded pairs with the winner's count (the winner first): the pairs a tie-break rule chose among."""
    return [(a, b) for a, b, c in event.detail.top_pairs if c == event.count]


def tie_rules(event: MergeEvent, before: Sequence[tuple[bytes, bytes]], n_special: int, tie_break: str) -> str:
    """Which of the tied pairs each rule merges, on one line, the trace's own rule highlighted; a click opens why.

    Every rule is asked about the same pairs after the same merges (`before`):
    what it would do *here*; from a different choice on, its merges would differ.
    One line, so that a tied merge's card is no taller than another's; the
    table of reasons opens under it (<details>).
    subtle: the trace records DETAIL_CAP pairs; when all of them tie, more may
    tie, and another rule's pick could be one that was not recorded -- said so.
    """
    tied = tied_pairs(event)
    if len(tied) < 2:
        return ""
    picks, rows = [], []
    choices = explain_tie(tied, before, n_special)
    for choice in choices:
        rule = RULES[choice.rule]
        mine = ' class="mine"' if choice.rule == tie_break else ""
        pair = html.escape(show_pair(*choice.pair))
        picks.append(f'<span{mine}><b>{rule.name}</b> <span class="mono">{pair}</span></span>')
        reason = choice.reason.removeprefix(rule.tool + " ")
        rows.append(
            f'<tr{mine}><td class="rule"><b>{rule.name}</b>{" (sidebar)" if mine else ""}</td><td class="pair">{pair}</td>'
            f"<td>{html.escape(rule.tool)} {html.escape(reason)}</td></tr>"
        )
    many = len(tied) >= DETAIL_CAP and len(event.detail.top_pairs) == len(tied)
    tie = f"At least {len(tied)} pairs tie (the trace keeps {DETAIL_CAP}); among those kept" if many else f"{len(tied)} pairs tie"
    when = "at the start" if not before else f"after the same {len(before):,} merge{'s' if len(before) > 1 else ''}"
    if len({c.pair for c in choices}) == 1:
        picked = f'Every rule picks <span class="mono">{html.escape(show_pair(*choices[0].pair))}</span> here.'
    else:
        picked = f"Each rule's pick: {' · '.join(picks)}"
    return (
        f'<details class="tie-rules"><summary>{picked} <span class="open">why?</span></summary>'
        f'<div class="tie-head">{tie}; what each tool\'s rule would merge here, {when}, and why:</div>'
        '<table class="tie-rules"><tr><th>rule</th><th>merges</th><th>why</th></tr>' + "".join(rows) + "</table></details>"
    )


# ---------------------------------------------------------------------------
# the pair table


def status(event: MergeEvent, a: bytes, b: bytes, c: int) -> str:
    if (a, b) == (event.left, event.right):
        return "chosen"
    if event.runner_up == (a, b):
        return "runner-up (tie)" if c == event.count else "runner-up"
    return "tie" if c == event.count else ""


ROW_CLASS = {"chosen": "chosen", "runner-up (tie)": "tie", "tie": "tie", "runner-up": "runner"}
STATUS_WORD = {"chosen": "chosen", "runner-up (tie)": "runner-up", "runner-up": "runner-up"}  # the colour says "tie"
# the legend under the table names the colours of the rows it has, in this order (a tied runner-up's row is yellow)
LEGEND = {"chosen": ("green", "chosen"), "tie": ("yellow", "the same count as the winner"), "runner": ("blue", "runner-up")}
LEGEND_YOURS = {
    "yours": ("red", "your merge"),
    "chosen": ("green", "the reference's"),
    "tie": ("yellow", "the same count as the reference's"),
}


def pair_table(event: MergeEvent, k: int, yours: tuple[bytes, bytes] | None = None, yours_count: int | None = None) -> str:
    """The best pairs before the merge, all rows shown (no inner scrolling), counts with separators.

    With `yours` (the check-your-merges page: a student's merge here, and its count), the chosen pair is marked
    "reference" and theirs "yours" (red), listed below the rest when it is not among the best.
    """
    detail = event.detail
    tied = sum(1 for _, _, c in detail.top_pairs if c == event.count)
    rows = detail.top_pairs[: min(max(PAIR_ROWS, tied + 1), PAIR_ROWS_MAX)]
    body, shown = [], set()
    for a, b, c in rows:
        s = status(event, a, b, c)
        css, word = ROW_CLASS.get(s, ""), STATUS_WORD.get(s, "")
        if yours is not None:
            css, word = ("yours", "yours") if (a, b) == yours else (css, "reference" if s == "chosen" else "")
        shown.add(css)
        body.append(f'<tr class="{css}"><td class="pair">{html.escape(show_pair(a, b))}</td><td class="n">{c:,}</td><td>{word}</td></tr>')
    if yours is not None and yours not in {(a, b) for a, b, _ in rows}:
        count = "–" if yours_count is None else f"{yours_count:,}"
        body.append(
            f'<tr class="gap"><td>…</td><td></td><td></td></tr><tr class="yours"><td class="pair">{html.escape(show_pair(*yours))}</td><td class="n">{count}</td><td>yours</td></tr>'
        )
    colours = LEGEND_YOURS if yours is not None else LEGEND
    note = "; ".join(f"{colour}: {what}" for css, (colour, what) in colours.items() if css in shown or css == "yours")
    return (
        f"<h3>Pair counts before merge {k:,}</h3>"
        '<table class="pairs"><tr><th>pair</th><th class="n">count</th><th></th></tr>' + "".join(body) + "</table>"
        f"{caption(f'Top {len(rows)} of {detail.distinct_pairs:,} distinct pairs. {note[:1].upper()}{note[1:]}.')}"
    )


# ---------------------------------------------------------------------------
# the heap: a binary tree drawn from the array, and the array beside it


@dataclass(frozen=True)
class Node:
    """Where heap entry `index` is drawn: on `level`, over bottom-level slots [start, end)."""

    index: int
    level: int
    start: int
    end: int

    @property
    def centre(self) -> float:
        return (self.start + self.end) / 2


def heap_layout(count: int, levels: int = HEAP_LEVELS) -> list[Node]:
    """The first min(count, 2**levels - 1) heap entries as a binary tree over 2**(levels-1) slots.

    Entry i is on level d = floor(log2(i + 1)), the j-th of its level
    (j = i - 2**d + 1), and spans 2**(levels-1-d) slots: its two children
    (2i+1, 2i+2) split its slots in half, so it sits centred over them.
    levels=2: entry 0 spans slots [0, 2), entry 1 [0, 1), entry 2 [1, 2).
    """
    nodes = []
    for i in range(min(count, 2**levels - 1)):
        depth = (i + 1).bit_length() - 1
        span = 2 ** (levels - 1 - depth)
        j = i - (2**depth - 1)
        nodes.append(Node(i, depth, j * span, (j + 1) * span))
    return nodes


def _node_text(entry: HeapEntry) -> tuple[str, str]:
    if entry.stale:
        return show_pair(entry.left, entry.right), f"{entry.count:,} → {entry.current:,}" if entry.current else f"{entry.count:,} → gone"
    return show_pair(entry.left, entry.right), f"{entry.count:,}"


def heap_tree(entries: tuple[HeapEntry, ...], levels: int = HEAP_LEVELS) -> str:
    """The top levels of the heap as a tree: a CSS grid of 2**(levels-1) slots, a row per level.

    Each node spans its slots (see heap_layout) and is centred in them; the row
    between two levels draws the edges: down from the parent, across to the
    centres of its children, down to each child. Stale entries are dashed red.
    """
    nodes = heap_layout(len(entries), levels)
    slots = 2 ** (levels - 1)
    present = {node.index for node in nodes}
    cells = []
    for node in nodes:
        entry = entries[node.index]
        pair, count = _node_text(entry)
        span = node.end - node.start
        cells.append(
            f'<div class="hnode{" stale" if entry.stale else ""}" data-index="{node.index}" '
            f'style="grid-row:{2 * node.level + 1};grid-column:{node.start + 1}/{node.end + 1};width:calc({100 / span:.4g}% - 10px)">'
            f'<span class="hpair">{html.escape(pair)}</span>'
            f'<span class="hcount"><span class="hidx">[{node.index}]</span> {html.escape(count)}</span></div>'
        )
        left, right = 2 * node.index + 1, 2 * node.index + 2
        if left in present:
            # the bar runs from the left child's centre (25% of the parent's span) to the right child's (75%)
            bar_right = "25%" if right in present else "50%"
            cells.append(
                f'<div class="hedge" style="grid-row:{2 * node.level + 2};grid-column:{node.start + 1}/{node.end + 1}">'
                f'<div class="hstub"></div><div class="hbar{"" if right in present else " one"}" style="left:25%;right:{bar_right}"></div></div>'
            )
    return f'<div class="htree" style="grid-template-columns:repeat({slots},minmax(0,1fr))">{"".join(cells)}</div>'


def heap_array(entries: tuple[HeapEntry, ...], size: int, levels: int = HEAP_LEVELS) -> str:
    """The same entries as the heap stores them: an array, index by index."""
    rows = []
    for i, entry in enumerate(entries[: 2**levels - 1]):
        pair, count = _node_text(entry)
        rows.append(
            f'<tr class="{"stale" if entry.stale else ""}"><td class="n">{i}</td><td class="pair">{html.escape(pair)}</td>'
            f'<td class="n">{html.escape(count)}</td></tr>'
        )
    more = size - len(rows)
    tail = f'<tr><td class="n">…</td><td colspan="2">{more:,} more</td></tr>' if more > 0 else ""
    return (
        '<table class="heap-array"><tr><th class="n">i</th><th>array</th><th class="n">count</th></tr>' + "".join(rows) + tail + "</table>"
    )


def heap_panel(event: MergeEvent, levels: int = HEAP_LEVELS) -> str:
    """The heap as stored when this merge was chosen, and what choosing it popped: first for the winner, then for the runner-up.

    The drawing and the caption describe the same moment: the heap before choosing (HeapView), then the pops in order.
    """
    view = event.detail.heap
    drawn = view.entries[: 2**levels - 1]
    stale = sum(e.stale for e in drawn)
    return (
        "<h3>The heap before this merge, as stored</h3>"
        f'<div class="heap">{heap_tree(view.entries, levels)}{heap_array(view.entries, view.size, levels)}</div>'
        + caption(
            f"Drawn: the top {levels} levels, {len(drawn)} of {view.size:,} entries, {stale} of them stale "
            "(dashed red: the stored count is out of date; the true count follows the arrow). "
            "Entry i's children are entries 2i+1 and 2i+2. " + heap_story(event, drawn)
        )
    )


def heap_story(event: MergeEvent, drawn: Sequence[HeapEntry]) -> str:
    """What choosing this merge popped, in order, from the heap drawn: the winner's pops, then the runner-up's.

    'Finding the winner: the root [0], ␣ + is 7,155, was current, so it was popped at once. Finding the runner-up,
    a + s 6,479, then popped 10 stale entries: s + t [1] 7,151 → 5,904, ...'
    """
    view = event.detail.heap
    winner = f"{show_pair(event.left, event.right)} {event.count:,}"
    for_winner, for_runner = view.stale_popped[: view.winner_pops], view.stale_popped[view.winner_pops :]
    n_runner = view.stale_popped_total - view.winner_pops
    places = _places(drawn, view.stale_popped)
    if view.winner_pops == 0:
        story = f"Finding the winner: the root [0], {winner}, was current, so it was popped at once."
    else:
        story = (
            f"Finding the winner: the root was stale, so {_entries(view.winner_pops)} {'was' if view.winner_pops == 1 else 'were'} popped first "
            f"({_popped(for_winner, places, view.winner_pops)}); then {winner} was current at the top and was popped."
        )
    if event.runner_up is None:  # the pops looking for one emptied the heap (the card's stale pops count them)
        if n_runner == 0:
            return story + " No other pair was left for a runner-up."
        looked = _popped(for_runner, places[len(for_winner) :], n_runner)
        return story + f" Looking for a runner-up, it popped {_entries(n_runner)} ({looked}); then no other pair was left."
    runner = f"{show_pair(*event.runner_up)} {event.runner_up_count:,}"
    if n_runner == 0:
        return story + f" Finding the runner-up: the new top, {runner}, was current."
    return story + (
        f" Finding the runner-up, {runner}, then popped {_entries(n_runner)}: {_popped(for_runner, places[len(for_winner) :], n_runner)}."
    )


def _entries(n: int) -> str:
    return f"{n:,} stale entr{'y' if n == 1 else 'ies'}"


def _places(drawn: Sequence[HeapEntry], popped: Sequence[HeapEntry]) -> list[int | None]:
    """Where each popped entry is in the drawing (its index), or None when it is drawn no more (deeper in the heap)."""
    free = list(enumerate(drawn))
    places = []
    for entry in popped:
        at = next(
            (j for j, (i, e) in enumerate(free) if e.stale and (e.left, e.right, e.count) == (entry.left, entry.right, entry.count)), None
        )
        places.append(None if at is None else free.pop(at)[0])
    return places


def _popped(entries: Sequence[HeapEntry], places: Sequence[int | None], total: int, shown: int = 4) -> str:
    """'s + t [1] 7,151 → 5,904, r + a 6,920 → 3,302 and 8 more': the first `shown`, with their index when drawn."""
    said = []
    for e, at in list(zip(entries, places))[:shown]:
        where = f" [{at}]" if at is not None else ""
        said.append(f"{show_pair(e.left, e.right)}{where} {e.count:,} → {f'{e.current:,}' if e.current else 'gone'}")
    return ", ".join(said) + (f" and {total - len(said):,} more" if total > len(said) else "")


def work_panel(event: MergeEvent, algorithm: str) -> str:
    """For the trainers without a heap: this merge's work counters, and where it went."""
    done = dict(event.work)
    rows = "".join(f'<tr><td>{name}</td><td class="n">{done[key]:,}</td></tr>' for key, name in work_names().items() if done.get(key))
    detail = event.detail
    sites = ""
    if detail.sites:
        where = ALGORITHMS[algorithm].sites
        more = " …" if detail.sites_total > len(detail.sites) else ""
        sites = caption(f"{where} it visited: " + ", ".join(map(str, detail.sites[:20])) + more)
    return (
        "<h3>Where the work went</h3>"
        f'<table class="work-table">{rows}</table>'
        + sites
        + caption(f"{algorithm}: {ALGORITHMS[algorithm].summary}. The race page counts the same work. Pick heap to see its heap.")
    )


# ---------------------------------------------------------------------------
# what the merge changed


def affected_words(event: MergeEvent, limit: int = WORD_ROWS) -> str:
    """The words a merge rewrote, before → after, most frequent first; a word never wraps inside itself.

    Each row wraps, when the column is narrow, between the word before and the rest (→, the word after and
    its count, kept together: a count alone on a line says nothing), and inside a word only when the word
    alone is wider than the column; the befores get the width of the longest, so that the arrows line up
    while a row fits.
    """
    detail = event.detail
    words = detail.words[:limit]
    width = max((_chips_width(w.before) for w in words), default=0)
    rows = [
        f'<div class="wrow"><div class="toks word" style="min-width:min({width}, 100%)">{chips(list(w.before), split=True)}</div>'
        f'<span class="then"><span class="arrow">→</span><div class="toks word">{chips(list(w.after), mark=event.token, split=True)}</div>'
        f'<span class="count">× {w.count:,}</span></span></div>'
        for w in words
    ]
    return f'<h3>Words this merge rewrote</h3><div class="words">{"".join(rows)}</div>' + caption(
        f"{detail.words_total:,} word(s) rewritten in all; showing the {len(words)} most frequent."
    )


def _chips_width(tokens: Sequence[bytes]) -> str:
    """About how wide chips(tokens, split=True) draws: a character (ch) of monospace per shown character, 8 px per chip."""
    shown = sum(len(show(t)) for t in tokens)
    return f"calc({shown}ch + {8 * len(tokens)}px)"


def bar_share(d: int, changes: Sequence[int]) -> float:
    """How long change d's bar is, as a share of the longest: to scale, so that -7,155 is 59 times +122 on the screen too.

    [-7155, 122, 97]: 97 -> 0.0136 (its number is printed beside it); [-4, 2]: 2 -> 0.5
    """
    return abs(d) / max(map(abs, changes))


def pair_changes(event: MergeEvent, limit: int = CHANGE_ROWS) -> str:
    """Diverging bars: pairs that lost occurrences to the left (red), new pairs to the right (green)."""
    detail = event.detail
    if not detail.changes:
        return "<h3>How pair counts changed</h3>" + caption("No pair counts changed.")
    changes = detail.changes[:limit]
    deltas = [d for _, _, d in changes]
    cells = []
    for a, b, d in changes:
        bar = f'<div class="bar" style="width:{max(bar_share(d, deltas) * 80, 0.5):.1f}%"></div>'
        number = f"<span>{d:+,}</span>"
        cells.append(
            f'<div class="pair">{html.escape(show_pair(a, b))}</div>'
            + (
                f'<div class="neg">{number}{bar}</div><div class="pos"></div>'
                if d < 0
                else f'<div class="neg"></div><div class="pos">{bar}{number}</div>'
            )
        )
    return f'<h3>How pair counts changed</h3><div class="changes">{"".join(cells)}</div>' + caption(
        f"{detail.changes_total:,} pair count(s) changed"
        + (f", the {len(changes)} largest shown" if detail.changes_total > len(changes) else "")
        + ": red pairs lost occurrences to the merge, green pairs are new, with the new token. Bar lengths are to scale."
    )


# ---------------------------------------------------------------------------
# the winning count at each merge: one spec per trace, the merge shown is data


def counts_spec(counts: list[int]) -> dict:
    """A Vega-Lite spec over two named datasets: 'counts' (every merge) and 'now' (the merge shown).

    Log scale when the counts span a wide range (as on the threshold page).
    """
    log = log_counts(counts)
    few = len(counts) <= 60
    x = {"field": "merge", "type": "quantitative", "title": "merge", "axis": {"format": ",d", "tickMinStep": 1, **AXIS}}
    y = {
        "field": "count",
        "type": "quantitative",
        "title": "winning count",  # short, so that it is never cut; counts_heading says the scale
        "scale": {"type": "log"} if log else {"zero": True},
        "axis": AXIS,
    }
    return {
        "height": 260,
        "layer": [
            {
                "data": {"name": "counts"},  # the winning counts alone (counts_arrow): merge k is the k-th row
                "transform": [{"window": [{"op": "row_number", "as": "merge"}]}],
                "mark": {"type": "line", "point": few, "strokeWidth": 2.5},
                "encoding": {"x": x, "y": y},
            },
            {
                "data": {"name": "now"},
                "mark": {"type": "rule", "color": "#d62728", "strokeWidth": 2.5},
                "encoding": {"x": {"field": "merge", "type": "quantitative"}},
            },
            {
                "data": {"name": "now"},
                "mark": {"type": "point", "filled": True, "size": 110, "color": "#d62728"},
                "encoding": {"x": {"field": "merge", "type": "quantitative"}, "y": {"field": "count", "type": "quantitative"}},
            },
            {
                "data": {"name": "now"},
                "mark": {"type": "text", "align": "left", "dx": 8, "dy": -12, "fontSize": MARK_TEXT, "color": "#b51d1f"},
                "encoding": {
                    "x": {"field": "merge", "type": "quantitative"},
                    "y": {"field": "count", "type": "quantitative"},
                    "text": {"field": "label"},
                },
            },
        ],
    }


def counts_heading(counts: Sequence[int]) -> str:
    """The chart's heading, with its scale: a y title that long was cut off at 1280x720 ("winning count (log scale")."""
    return "Winning count at each merge" + (" (log scale)" if log_counts(counts) else "")


def log_counts(counts: Sequence[int]) -> bool:
    return max(counts) / max(min(counts), 1) > 30


def counts_chart(spec: dict, counts: bytes, now: bytes) -> None:
    """Draw the spec with its data, both as Arrow bytes built once (per trace, per merge)."""
    st.vega_lite_chart({**spec, "datasets": {"counts": counts, "now": now}}, width="stretch")


# ---------------------------------------------------------------------------
# a sentence tokenized at merge k, with its pre-token boundaries


@dataclass(frozen=True)
class Segment:
    kind: str  # "pretoken", "special" or "dropped" (text the pre-tokenizer throws away, e.g. spaces)
    tokens: tuple[bytes, ...]


def segments(tok: Tokenizer, data: bytes, k: int) -> list[Segment]:
    """data split as the tokenizer does: special tokens whole, each pre-token into its tokens at merge k.

    b'low  lower' (whitespace pre-tokenizer, merges l+o, lo+w) ->
    [pretoken (b'low',), dropped (b'  ',), pretoken (b'low', b'e', b'r')]
    """
    text = data.decode(ENCODING, ERRORS)  # subtle: surrogateescape keeps invalid bytes as they are
    special_tokens = sorted(tok.special_tokens, key=len, reverse=True)
    parts = regex.split("(" + "|".join(regex.escape(t) for t in special_tokens) + ")", text) if special_tokens else [text]
    out: list[Segment] = []
    for n, part in enumerate(parts):
        if n % 2 == 1:
            out.append(Segment("special", (part.encode(ENCODING),)))
            continue
        pos = 0
        for pre in tok.pretokenizer.split(part):
            start = part.find(pre, pos)
            if start > pos:
                out.append(Segment("dropped", (part[pos:start].encode(ENCODING, ERRORS),)))
            out.append(Segment("pretoken", tok.bpe(pre.encode(ENCODING, ERRORS), k)))
            pos = start + len(pre)
        if pos < len(part):
            out.append(Segment("dropped", (part[pos:].encode(ENCODING, ERRORS),)))
    return out


def sentence(tok: Tokenizer, data: bytes, k: int, new_token: bytes) -> tuple[str, str]:
    """(HTML, caption) of data tokenized with the first k merges: one underlined group per pre-token."""
    segs = segments(tok, data, k)
    parts, colour = [], 0
    for seg in segs:
        if seg.kind == "dropped":
            parts.append(f'<span class="dropped" title="dropped by the pre-tokenizer">{html.escape(show(seg.tokens[0]))}</span>')
            continue
        css = "pre" if seg.kind == "pretoken" else "special"
        parts.append(f'<span class="{css}">{chips(list(seg.tokens), mark=new_token, first_colour=colour)}</span>')
        colour += len(seg.tokens)
    tokens = [t for s in segs if s.kind != "dropped" for t in s.tokens]
    dropped = sum(len(s.tokens[0]) for s in segs if s.kind == "dropped")
    found = sum(t == new_token for t in tokens)
    words = sum(s.kind == "pretoken" for s in segs)
    note = f"{len(tokens):,} tokens in {words:,} pre-tokens (underlined), for the text's {len(data):,} bytes"
    if dropped:
        note += f" ({dropped:,} of them whitespace the pre-tokenizer drops, grey: in no token)"
    note += f". Outlined: the token this merge made, {show(new_token)}, found {found} time{'s' if found != 1 else ''} here."
    if any(end - start > 1 for s in segs for start, end in character_runs(list(s.tokens))):
        note += " Dashed: one character whose bytes are split over several tokens."
    return f'<div class="toks sentence">{"".join(parts)}</div>', note
