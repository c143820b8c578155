"""Views for the lesson and the quiz, in large type for a projector. Each builds escaped HTML.

Every token and word passes through ui.render (html.escape) before it reaches
HTML; button labels go through `plain`, which escapes Markdown. The step page's
views (ui/views/step.py) are reused where they fit; these are the ones it has no
variant of: words with their counts, a pair table whose counts add up, the
quiz's options with counts revealed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bpe.events import MergeEvent
from ui.lessons.lesson import Tokens, pair_sources, split_words, word
from ui.lessons.quiz import Option, Question
from ui.render import escape, plain, show_pair, token_spans

WIN, TIE, PICK = "#c8f0cf", "#fff1b8", "#fde2e4"

CSS = (
    """
<style>
.lesson{font-size:1.25rem;color:inherit}
.lesson table{border-collapse:collapse;width:100%;max-width:36rem}
.lesson th{font-size:1rem;font-weight:600;text-align:left;opacity:.7;padding:.15rem .5rem}
.lesson td{padding:.2rem .5rem;border-top:1px solid #8884;vertical-align:middle}
.lesson td.n{text-align:right;font-variant-numeric:tabular-nums;font-weight:600;white-space:nowrap}
.lesson .why{font-size:1rem;opacity:.85}
.lesson tr.win td{background:"""
    + WIN
    + """;color:#111}
.lesson tr.tie td{background:"""
    + TIE
    + """;color:#111}
.lesson tr.pick td{background:"""
    + PICK
    + """;color:#111}
.lesson .mono{font-family:monospace;white-space:pre}
.lesson .tokens div{font-size:1.4rem!important}
.lesson .row{display:flex;align-items:center;gap:.8rem;margin:.35rem 0}
.lesson .chips{display:flex;flex-wrap:wrap;gap:.5rem 1.6rem;margin:.3rem 0 .6rem}
.lesson .chips>div{display:flex;align-items:center;gap:.4rem}
.lesson td .tokens div{font-size:1.15rem!important}
.lesson table.compact td{padding:.05rem .5rem;font-size:1.05rem}
.lesson .times{font-weight:700;white-space:nowrap}
.lesson .corpus{font-family:monospace;font-size:1.1rem;line-height:1.5;padding:.5rem .8rem;border:1px dashed #8888;border-radius:8px;margin-bottom:.6rem;overflow-wrap:anywhere}
.lesson .duel{display:flex;gap:1rem;margin:.3rem 0 .8rem}
.lesson .duel>div{flex:1 1 0;min-width:0;border:2px solid #8886;border-radius:10px;padding:.5rem .8rem;text-align:center}
.lesson .duel>div.win{border-color:#2ca02c;background:"""
    + WIN
    + """;color:#111}
.lesson .duel .big{font-family:monospace;font-size:2.2rem;white-space:pre}
.lesson .duel .bytes{font-size:1rem;white-space:normal}
.lesson .plus{color:#1a7f37;font-weight:700}
.lesson .minus{color:#d62728;font-weight:700}
.lesson .verdict{font-size:1.35rem;font-weight:700;margin:.2rem 0 .4rem}
.lesson .verdict.right{color:#1a7f37}
.lesson .verdict.wrong{color:#c62828}
.lesson ul{margin:.2rem 0 .2rem 1.2rem;padding:0}
.lesson li{margin:.25rem 0;font-size:1.15rem;line-height:1.45}
</style>
"""
)


# the pages' own Streamlit elements in large type: the lesson's narration, the quiz's options
PAGE_CSS = """
<style>
.st-key-lesson-text p, .st-key-lesson-text li{font-size:1.15rem;line-height:1.55}
.st-key-lesson-text code{white-space:nowrap}  /* a pair such as `s + t` never breaks across lines */
/* the encode lesson's first screen lists all 12 merges: rows a little closer than the Vocabulary page's, so all fit 720 px */
table.vocab.merges td{padding:0 10px}
table.vocab.merges .vt{line-height:1.3}
.st-key-quiz-options button{min-height:3.2rem}
.st-key-quiz-options button p{font-size:1.35rem;font-family:monospace}
/* a long token wraps inside its button instead of being cut off with an ellipsis */
.st-key-quiz-options button div, .st-key-quiz-options button p{white-space:normal!important;overflow:visible!important;overflow-wrap:anywhere}
</style>
"""


def box(body: str) -> str:
    """body (already escaped) in the lesson's large type."""
    return CSS + f'<div class="lesson">{body}</div>'


def tokens_html(tokens: Tokens) -> str:
    return f'<span class="tokens">{token_spans(list(tokens), wrap=False)}</span>'


# ---------------------------------------------------------------------------
# words


def words(rows: Sequence[tuple[Tokens, int]], note: str = "", above: str = "") -> str:
    """Each word as its tokens, with how often it occurs, side by side while they fit; `above` (text) goes first."""
    chips = "".join(f'<div>{tokens_html(t)}<span class="times">× {n:,}</span></div>' for t, n in rows)
    head = f'<div class="corpus">{escape(above)}</div>' if above else ""
    return box(head + f'<div class="chips">{chips}</div>' + (f'<div class="why">{escape(note)}</div>' if note else ""))


def corpus_and_words(text: str, counts: Mapping[bytes, int]) -> str:
    """The raw text, then its different words as bytes with their counts."""
    return words(split_words(counts, []), above=text if len(text) <= 400 else text[:400] + " …")


def rewritten(event: MergeEvent, limit: int = 6) -> str:
    """The words a merge rewrote, before → after, most frequent first."""
    return "".join(
        f'<div class="row">{tokens_html(w.before)}<span>→</span>{tokens_html(w.after)}<span class="times">× {w.count:,}</span></div>'
        for w in event.detail.words[:limit]
    )


# ---------------------------------------------------------------------------
# the lesson's tables


def pairs(counts: Mapping[bytes, int], event: MergeEvent, limit: int = 8) -> str:
    """The pair counts before the first merge, each with the words it adds up from; ties with the winner in yellow."""
    sources = pair_sources(split_words(counts, []))
    rows = []
    for a, b, c in event.detail.top_pairs[:limit]:
        css = "win" if (a, b) == (event.left, event.right) else "tie" if c == event.count else ""
        parts = " + ".join(f"{n:,} {word(t)}" for t, n in sources.get((a, b), []))
        rows.append(
            f'<tr class="{css}"><td class="mono">{escape(show_pair(a, b))}</td><td class="n">{c:,}</td>'
            f'<td class="why">{escape(parts)}</td></tr>'
        )
    more = event.detail.distinct_pairs - len(rows)
    tail = f'<div class="why">… and {more:,} more pairs</div>' if more > 0 else ""
    return box("<table><tr><th>pair</th><th>count</th><th>adds up from</th></tr>" + "".join(rows) + "</table>" + tail)


def duel(event: MergeEvent) -> str:
    """The winner and the runner-up side by side, with the bytes the tie rule compares."""
    cards = []
    for css, (a, b), c in (("win", (event.left, event.right), event.count), ("", event.runner_up, event.runner_up_count)):
        byte_list = " | ".join(" ".join(str(x) for x in t) for t in (a, b))
        cards.append(
            f'<div class="{css}"><div class="big">{escape(show_pair(a, b))}</div>'
            f'<div class="times">× {c:,}</div><div class="bytes mono">bytes <span class="times">{escape(byte_list)}</span></div>'
            f"<div>{'wins' if css else 'loses'}</div></div>"
        )
    return box(f'<div class="duel">{"".join(cards)}</div>' + rewritten(event))


def history(counts: Mapping[bytes, int], events: Sequence[MergeEvent], n: int) -> str:
    """Every word after 0, 1, ..., n merges: a row per merge, a column per word."""
    merges = [(e.left, e.right) for e in events]
    head = "".join(f"<th>{escape(word(t))}</th>" for t, _ in split_words(counts, []))
    rows = []
    for k in range(n + 1):
        label = "start" if k == 0 else f"{k}. {show_pair(*merges[k - 1])} ×{events[k - 1].count:,}"
        cells = "".join(f"<td>{tokens_html(t)}</td>" for t, _ in split_words(counts, merges[:k]))
        rows.append(f'<tr><td class="mono">{escape(label)}</td>{cells}</tr>')
    return box(f"<table><tr><th>after merge</th>{head}</tr>" + "".join(rows) + "</table>")


def changes(event: MergeEvent) -> str:
    """The words a merge rewrote, and each pair count it changed: before → after."""
    before = {(a, b): c for a, b, c in event.detail.top_pairs}
    rows = []
    for a, b, d in event.detail.changes:
        old = before.get((a, b), 0)
        sign = "plus" if d > 0 else "minus"
        rows.append(
            f'<tr><td class="mono">{escape(show_pair(a, b))}</td><td class="n">{old:,} → {old + d:,}</td>'
            f'<td class="n {sign}">{d:+,}</td></tr>'
        )
    return box(rewritten(event) + "<table><tr><th>pair</th><th>count</th><th>change</th></tr>" + "".join(rows) + "</table>")


def run(events: Sequence[MergeEvent]) -> str:
    """Every merge of the run, one compact row each: number, pair, count; ties in yellow."""
    rows = "".join(
        f'<tr class="{"tie" if e.tie else ""}"><td class="n">{k}</td><td class="mono">{escape(show_pair(e.left, e.right))}</td>'
        f'<td class="n">{e.count:,}</td></tr>'
        for k, e in enumerate(events, 1)
    )
    head = "<tr><th>#</th><th>pair</th><th>count</th></tr>"
    return box(f'<table class="compact">{head}{rows}</table><div class="why">Yellow: a tie, won on the bytes.</div>')


# ---------------------------------------------------------------------------
# the quiz


def reveal(q: Question, pick: tuple[bytes, bytes] | None) -> str:
    """The options with their counts: the winner green, ties yellow, a wrong pick red."""
    rows = []
    for o in sorted(q.options, key=lambda o: o.letter):
        win = o.pair == q.winner.pair
        css = "win" if win else "pick" if o.pair == pick else "tie" if o.count == q.event.count else ""
        mark = "wins" if win else "your pick" if o.pair == pick else "tie" if css == "tie" else ""
        rows.append(
            f'<tr class="{css}"><td class="n">{o.letter}</td><td class="mono">{escape(o.label)}</td>'
            f'<td class="n">{o.count:,}</td><td class="why">{mark}</td></tr>'
        )
    return box("<table><tr><th></th><th>pair</th><th>count</th><th></th></tr>" + "".join(rows) + "</table>")


def verdict(q: Question, pick: tuple[bytes, bytes], lines: Sequence[str], rule: str = "cs336") -> str:
    """The answer's headline (a tie says it is one, and which rule broke it), then the reasons."""
    right = pick == q.winner.pair
    picked = q.option(pick)
    tie = (
        picked is not None
        and picked.count == q.winner.count
        and any(o.count == q.winner.count for o in q.options if o.pair != q.winner.pair)
    )
    if right:
        head = f"✔ Right: {q.winner.label} merges next" + (f" (a tie: the {rule} rule takes it)." if tie else ".")
    elif tie:
        head = f"✘ A tie, and the {rule} rule takes {q.winner.label}: it merges next."
    else:
        head = f"✘ Not this time: {q.winner.label} merges next."
    items = "".join(f"<li>{unbroken(escape(line))}</li>" for line in lines)
    return box(f'<div class="verdict {"right" if right else "wrong"}">{unbroken(escape(head))}</div><ul>{items}</ul>')


def unbroken(text: str) -> str:
    """Keep 'e + st' on one line: show_pair's ' + ' gets non-breaking spaces (tokens show spaces as ␣)."""
    return text.replace(" + ", "\u00a0+\u00a0")


MARK_WORDS = {"right": "✔ right", "wrong": "✘ your pick"}  # said on the button itself: colour alone is not enough


def option_mark(pair, winner, pick) -> str:
    """How an answered option is marked: 'right' (the winner), 'wrong' (a pick that is not), or '' (also before an answer)."""
    if pick is None:
        return ""
    return "right" if pair == winner else "wrong" if pair == pick else ""


def option_colours(marks: dict[int, str]) -> str:
    """CSS for the answered quiz's option buttons (keys quiz_option_i): right green, a wrong pick red, the rest faded.

    subtle: answered options are disabled buttons, which Streamlit draws pale grey; these rules win over that.
    """
    css = {
        "right": "background:" + WIN + "!important;border:3px solid #1a7f37!important;opacity:1!important",
        "wrong": "background:" + PICK + "!important;border:3px solid #c62828!important;opacity:1!important",
    }
    rules = "".join(
        f".st-key-quiz_option_{i} button{{{css[mark]}}}.st-key-quiz_option_{i} button p{{color:#111!important}}"
        for i, mark in marks.items()
        if mark in css
    )
    return f"<style>{rules}</style>"


def option_label(o: Option, mark: str = "") -> str:
    """'A s + t' as a button label: the letter in bold, the pair's text escaped, then mark ('✔ right' or '✘ your pick')."""
    return f"**{o.letter}** {plain(o.label)}" + (f" {mark}" if mark else "")
