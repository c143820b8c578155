"""The step page's views of a SentencePiece run, one merge at a time, built as HTML from its PieceMerge and MergeDetail.

What sets this family's merge apart, and so what these views show (bpe/sentencepiece/trainer.py has the rules):
- the rule: the highest frequency, then the *shorter* piece (in characters), then the smaller UTF-8 bytes;
- pairs that occur but are no candidate, because the piece they would make is not valid (two scripts, a digit
  with split_digits, '▁' inside, too long, a character outside the coverage): drawn among the candidates, greyed,
  with the reason;
- the frequency-0 candidates: pairs an earlier merge made and a later one took apart, still merged at the end;
- the characters the coverage kept and those it left out (they became <unk>);
- the pieces the run makes and their scores, -(their place after the meta pieces), which the encoder merges by.

    merge_view(trace, 2).top   # the merge card, then the pair table beside the pieces table

Plain functions returning escaped HTML (the CSS is ui/style.py's, the step page's classes and sp-*); no Streamlit.
ui/sp_step.py keeps each merge's view per trace, shared by every session, as ui/step_data.py does for byte-level runs.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from bpe.sentencepiece.model import BYTE, CONTROL, NORMAL, UNKNOWN, USER_DEFINED
from bpe.sentencepiece.trainer import DIGIT, NOT_TEXT, SPACE_INSIDE, TOO_LONG, TWO_SCRIPTS, UNKNOWN_CHAR, PieceMerge
from serve.sp_jobs import TIME_BUDGET, SpTrace
from ui.render import PALETTE, VISIBLE

PAIR_ROWS = 10  # candidates in the pair table; more when more tie with the winner
PAIR_ROWS_MAX = 15
REFUSED_ROWS = 5  # pairs that are no candidate, drawn among the candidates as frequent as they are
PIECES_AROUND = 3  # merged pieces listed before and after merge k's
CHARACTERS_SHOWN = 60  # kept characters drawn as chips (the rest counted)
KINDS = {UNKNOWN: "unknown", CONTROL: "control", USER_DEFINED: "user-defined", BYTE: "byte", NORMAL: "normal"}
# why a pair is no candidate, in a class's words (the trainer's own phrases are the keys)
WHY = {
    TWO_SCRIPTS: "two scripts",
    DIGIT: "a digit (split digits)",
    SPACE_INSIDE: "▁ inside",
    TOO_LONG: "too long",
    UNKNOWN_CHAR: "a character outside the coverage",
    NOT_TEXT: "a control character",
}


def shown(piece: str) -> str:
    """A piece as a class reads it, escaped: '▁' stays (it is a character of the vocabulary); a tab or newline made visible."""
    return html.escape("".join(VISIBLE.get(c, c) for c in piece))


def pill(piece: str) -> str:
    return f'<span class="pill">{shown(piece)}</span>'


def pair_text(left: str, right: str) -> str:
    return f"{shown(left)} + {shown(right)}"


def caption(text: str) -> str:
    """A view's note (escaped here); presenter mode folds these away, as on the byte-level step page."""
    return f'<p class="caption view-note">{html.escape(text)}</p>'


@dataclass(frozen=True)
class MergeView:
    """What the page draws for merge k: the merge card with the tables, and the characters' panel."""

    top: str
    characters: str


def merge_view(trace: SpTrace, k: int) -> MergeView:
    """The views of merge k (1-based) of the trace."""
    event = trace.events[k - 1]
    return MergeView(
        top=f'{merge_card(event, k, len(trace.events))}<div class="step-row sp"><div class="left">{pair_table(event, k)}</div>'
        f'<div class="right">{pieces_table(trace, k)}</div></div>',
        characters=characters_panel(trace, k),
    )


# ---------------------------------------------------------------------------
# the merge card


def merge_card(event: PieceMerge, k: int, n: int) -> str:
    """The headline: which pair was merged and why, by sentencepiece's rule."""
    return (
        f'<div class="merge-card"><div class="head"><span class="big">{pill(event.left)} + {pill(event.right)} → {pill(event.piece)}'
        f' <span class="times">× {event.frequency:,}</span></span>'
        f'<span class="where">Merge <b>{k:,}</b> of {n:,} · piece id <b>{event.id:,}</b> · score <b>{_score(score(k))}</b></span></div>'
        f'<div class="why">{why(event)}</div>'
        f'<div class="work">{html.escape(rewritten(event))}</div></div>'
    )


def score(k: int) -> float:
    """Merge k's piece's score: -(k - 1), as sentencepiece writes it (the first is -0)."""
    return -float(k - 1)


def rewritten(event: PieceMerge) -> str:
    if event.frequency == 0:
        return "It occurs nowhere now, so nothing was rewritten: it is a piece of the vocabulary all the same."
    return f"Merged in {event.occurrences:,} place{'s' if event.occurrences != 1 else ''} among the distinct words."


def why(event: PieceMerge) -> str:
    """Why this pair: its frequency against the runner-up's, the tie broken by length or bytes, or frequency 0; and the more
    frequent pairs that could not be made."""
    piece = f"{pill(event.piece)}"
    if event.frequency == 0:
        said = (
            "No pair occurs any more. This is a <b>frequency-0 candidate</b>: a pair an earlier merge made and a later one took "
            "apart. sentencepiece never forgets a candidate, so once every pair that occurs is merged, these fill the "
            "vocabulary, best first by the same rule (shorter, then smaller bytes)."
        )
    elif event.runner_up is None:
        said = "It was the only candidate left."
    elif event.runner_up_frequency < event.frequency:
        said = f"Highest frequency: {event.frequency:,}, ahead of {pill(event.runner_up[0])}+{pill(event.runner_up[1])} at {event.runner_up_frequency:,}."
    else:
        other = "".join(event.runner_up)
        runner = f"{pill(event.runner_up[0])}+{pill(event.runner_up[1])}"
        if len(event.piece) < len(other):
            said = (
                f"Tied at {event.frequency:,} with {runner}: sentencepiece takes the <b>shorter</b> piece, {piece} "
                f"({len(event.piece)} characters against {len(other)})."
            )
        else:
            said = (
                f"Tied at {event.frequency:,} with {runner}, both {len(other)} characters long: sentencepiece takes the "
                f"<b>smaller UTF-8 bytes</b>, {piece} before {pill(other)} (byte-level BPE's cs336 rule takes the larger)."
            )
    refused = [r for r in (event.detail.refused if event.detail else ()) if r[2] >= event.frequency]
    if refused and event.frequency > 0:
        named = ", ".join(f"{pill(a)}+{pill(b)} ({n:,}, {html.escape(WHY.get(w, w))})" for a, b, n, w in refused[:2])
        said += f" As frequent or more, but no candidate: {named}{' …' if len(refused) > 2 else ''}."
    return said


# ---------------------------------------------------------------------------
# the pair table: the candidates by the rule, and the pairs that are none


def status(event: PieceMerge, left: str, right: str, frequency: int) -> tuple[str, str]:
    """(row class, word) of a candidate: chosen, runner-up, or why it lost a tie with the winner."""
    if (left, right) == (event.left, event.right):
        return "chosen", "chosen"
    tie = frequency == event.frequency
    if event.runner_up == (left, right):
        return ("tie" if tie else "runner"), "runner-up"
    if frequency == 0:
        return "", "frequency 0"
    if tie:
        return "tie", "longer" if len(left + right) > len(event.piece) else "larger bytes"
    return "", ""


def pair_table(event: PieceMerge, k: int) -> str:
    """The best candidates before the merge, by sentencepiece's rule, and among them (greyed) the pairs as frequent that may
    not be made, each with its reason."""
    detail = event.detail
    if detail is None:
        return ""
    tied = sum(1 for _, _, n in detail.top if n == event.frequency)
    candidates = list(detail.top[: min(max(PAIR_ROWS, tied + 1), PAIR_ROWS_MAX)])
    floor = candidates[-1][2] if candidates else 0
    refused = [r for r in detail.refused if r[2] >= max(floor, 1)][:REFUSED_ROWS]
    # by frequency; at equal frequency the candidates first (in the rule's order), then the pairs that are none
    rows = sorted(
        [(-n, 0, i, (a, b, n, None)) for i, (a, b, n) in enumerate(candidates)] + [(-r[2], 1, i, r) for i, r in enumerate(refused)]
    )
    body, shown_classes = [], set()
    for _, _, _, (a, b, n, reason) in rows:
        if reason is not None:
            css, word, length = "refused", f"refused: {WHY.get(reason, reason)}", "–"
        else:
            (css, word), length = status(event, a, b, n), f"{len(a + b)}"
        shown_classes.add(css)
        body.append(
            f'<tr class="{css}"><td class="pair">{pair_text(a, b)}</td><td class="n">{n:,}</td><td class="n">{length}</td>'
            f"<td>{html.escape(word)}</td></tr>"
        )
    notes = ["sentencepiece's rule: the highest frequency, then the shorter piece, then the smaller UTF-8 bytes"]
    if "refused" in shown_classes:
        notes.append("grey, struck out: pairs that occur but may not be made, and why")
    if event.frequency == 0 or any(n == 0 for _, _, n in candidates):
        notes.append("frequency 0: pairs that occur no more")
    return (
        f"<h3>Pairs before merge {k:,}</h3>"
        '<table class="pairs sp-pairs"><tr><th>pair</th><th class="n">frequency ↓</th><th class="n">length ↑</th><th></th></tr>'
        + "".join(body)
        + "</table>"
        + caption(f"Top {len(candidates)} candidates. " + "; ".join(notes) + ".")
    )


# ---------------------------------------------------------------------------
# the pieces and their scores


def pieces_table(trace: SpTrace, k: int) -> str:
    """The run's pieces in id order, with scores: the meta pieces, the merged pieces around merge k's (lit), the characters."""
    if not trace.pieces:
        return ""
    n = len(trace.events)
    special = [(i, p) for i, p in enumerate(trace.pieces) if p.type != NORMAL]
    normal = [(i, p) for i, p in enumerate(trace.pieces) if p.type == NORMAL]
    merged, chars = normal[:n], normal[n:]
    rows = []
    bytes_ = [i for i, p in special if p.type == BYTE]
    for i, p in special:
        if p.type == BYTE:
            if i == bytes_[0]:
                rows.append(_row(f"{bytes_[0]}–{bytes_[-1]}", html.escape("<0x00> … <0xFF>"), "0", f"{len(bytes_)} bytes", "meta"))
            continue
        rows.append(_row(f"{i:,}", shown(p.piece), _score(p.score), KINDS.get(p.type, ""), "meta"))
    low, high = max(0, k - 1 - PIECES_AROUND), min(len(merged), k + PIECES_AROUND)
    if low > 0:
        rows.append(_gap(f"{low:,} merged pieces before"))
    for r in range(low, high):
        i, p = merged[r]
        css = "chosen" if r == k - 1 else ("later" if r >= k else "")
        rows.append(_row(f"{i:,}", shown(p.piece), _score(p.score), f"merge {r + 1:,}" + (" (to come)" if r >= k else ""), css))
    if high < len(merged):
        rows.append(_gap(f"{len(merged) - high:,} merged pieces after"))
    for i, p in chars[:2]:
        rows.append(_row(f"{i:,}", shown(p.piece), _score(p.score), "character", ""))
    if len(chars) > 2:
        last_id, last = chars[-1]
        rows.append(_gap(f"{len(chars) - 2:,} more characters, down to {shown(last.piece)} (id {last_id:,}, score {_score(last.score)})"))
    note = (
        "A piece's score is −(its place after the meta pieces): merge 1 scores 0 (−0), merge k −(k−1), and the characters come "
        "last. Encoding merges the pair whose piece scores highest first: the order training made them."
    )
    return (
        "<h3>The pieces and their scores</h3>"
        '<table class="pairs sp-pieces"><tr><th class="n">id</th><th>piece</th><th class="n">score</th><th></th></tr>'
        + "".join(rows)
        + "</table>"
        + caption(note)
    )


def _score(value: float) -> str:
    return "−0" if value == 0 and str(value).startswith("-") else f"{value:g}".replace("-", "−")


def _row(i: str, piece: str, value: str, what: str, css: str) -> str:
    """One row of the pieces table (piece already escaped)."""
    return (
        f'<tr class="{css}"><td class="n">{i}</td><td class="pair">{piece}</td><td class="n">{value}</td><td>{html.escape(what)}</td></tr>'
    )


def _gap(text: str) -> str:
    """A row standing for pieces not listed (text already escaped where it holds a piece)."""
    return f'<tr class="gap"><td class="n">…</td><td colspan="3">{text}</td></tr>'


# ---------------------------------------------------------------------------
# the characters: kept by the coverage, or left out


def char_chip(c: str, n: int, colour: int) -> str:
    return f'<span class="tok" style="background:{PALETTE[colour % len(PALETTE)]}">{shown(c)}<span class="cnt">×{n:,}</span></span>'


def characters_panel(trace: SpTrace, k: int) -> str:
    """The characters the coverage kept (the run's first pieces, as SentencePiece counts them) and those it left out; and,
    once the merges reach them, where the frequency-0 candidates begin."""
    chars = trace.characters
    kept = "".join(char_chip(c, n, i) for i, (c, n) in enumerate(chars.kept[:CHARACTERS_SHOWN]))
    more = f'<span class="more">… and {len(chars.kept) - CHARACTERS_SHOWN:,} more</span>' if len(chars.kept) > CHARACTERS_SHOWN else ""
    head = f"The coverage keeps {len(chars.kept):,} characters, {chars.coverage:.2%} of the {chars.counted:,} counted; " + (
        f"{len(chars.dropped):,} fell outside it and became &lt;unk&gt;:"
        if chars.dropped
        else "none fell outside it (no character is rare enough here)."
    )
    dropped = ""
    if chars.dropped:
        dropped = '<div class="toks sp-dropped">' + "".join(char_chip(c, n, 7) for c, n in chars.dropped[:CHARACTERS_SHOWN]) + "</div>"
    zeros = [e.rank + 1 for e in trace.events if e.frequency == 0]
    zero_note = ""
    if zeros:
        zero_note = caption(
            f"Merges {zeros[0]:,} to {zeros[-1]:,} ({len(zeros):,}) are frequency-0 candidates: every pair that occurs had been "
            "merged, and sentencepiece filled the vocabulary with pairs that occurred once and no more."
            if len(zeros) > 1
            else f"Merge {zeros[0]:,} is a frequency-0 candidate: a pair that occurred once and no more."
        )
    return (
        "<h3>Characters: the coverage</h3>"
        f'<p class="sp-chars">{head}</p>{dropped}'
        f'<div class="toks sp-kept">{kept}{more}</div>'
        + caption(
            "Kept, most frequent first: each is a piece, after the merges. A character left out is <unk> in training "
            "(it cuts the word there); encoding writes it as its UTF-8 bytes with byte fallback, else as <unk>."
        )
        + zero_note
    )


def stop_sentence(trace: SpTrace) -> str:
    """Why the run has as many merges as it has, when that is not the vocabulary filled."""
    n = len(trace.events)
    if trace.stop_reason == TIME_BUDGET:
        return f"The trace stopped after {n:,} merges at its time limit ({trace.seconds:.0f} s): a smaller vocab size or corpus shows every merge."
    if trace.stop_reason == "no candidates left":
        return f"No candidate was left after {n:,} merges: every pair this corpus ever held was merged."
    return ""
