"""The check-your-merges page's views: the verdict, both lists around the first difference, the mistakes tried.

Plain functions from a serve.jobs.Checked to HTML (the pair table is the step
page's, ui/views/step.pair_table, with the student's pair marked). Every token
and every sentence reaches HTML through html.escape: a student's file is
untrusted ('<script>' is a token like any other). The CSS classes are in ui/style.py.
"""

from __future__ import annotations

import html

from bpe.lab.diagnose import KIND_WORDS, MISTAKES, Diagnosis, kind_words, label
from serve.jobs import Checked
from ui.render import show, show_pair


def verdict(checked: Checked) -> str:
    """In large type: where their merges part from the reference and what kind of difference it is; then the likely
    cause in words (its id is the JSON's), and how much of their list it makes."""
    d = checked.diagnosis
    n = d.their_merges
    if d.kind == "same":
        text = f"Your {n:,} merges are the reference's, merge for merge."
    elif d.first_difference is None:
        text = f"Your {n:,} merges agree with the reference as far as both go: {KIND_WORDS[d.kind]}."
    else:
        text = f"Your merges part from the reference at merge {d.first_difference + 1:,} of {n:,}: {kind_words(d)}."
    css = "diff-head same" if d.kind == "same" else "diff-head"
    why = f'<div class="why">{likely(d)}</div>' if d.cause is not None else ""
    return f'<div class="{css}"><div>{html.escape(text)}</div>{why}</div>'


def likely(d: Diagnosis) -> str:
    """The likely cause, as HTML: 'Likely cause: <b>ties to the smaller bytes</b>: a trainer with it makes all of your 12 merges.'"""
    n, k = d.their_merges, (d.first_difference or 0) + 1
    made = "all" if d.reproduced_through == n else f"the first {d.reproduced_through:,}"
    if d.trained:
        causes = [d.cause, *d.also]
        named = " or ".join(f"<b>{html.escape(label(c))}</b>" for c in causes[:2])
        named += f" or {len(causes) - 2} more (below)" if len(causes) > 2 else ""
        if "+" in d.cause:
            a, b = d.cause.split("+")
            named = f"two mistakes at once, <b>{html.escape(label(a))}</b> and <b>{html.escape(label(b))}</b>"
        with_it = "both" if "+" in d.cause else "either" if d.also else "it"
        return f"Likely cause: {named}: a trainer with {with_it} makes {made} of your {n:,} merges."
    if d.cause == "not_the_maximum":
        return f"Likely cause: <b>{html.escape(label(d.cause))}</b>: at every other merge yours is the most frequent pair."
    if d.foreign is not None:
        return f"Likely cause: <b>{html.escape(label(d.cause))}</b>: your merge {d.foreign[0] + 1:,} makes a token this corpus never holds."
    return f"No known mistake makes your list past merge {k:,}: <b>{html.escape(label(d.cause))}</b>."


def lists(checked: Checked) -> str:
    """Theirs and the reference's side by side around the first difference; that row red (theirs) and green (the reference's)."""
    d = checked.diagnosis
    reference = d.reference_merges
    at = d.first_difference
    rows = []
    end = max(checked.start + len(checked.theirs), min(len(reference), (at if at is not None else len(reference)) + 5))
    for i in range(checked.start, end):
        mine = checked.theirs[i - checked.start] if i - checked.start < len(checked.theirs) else None
        ref = reference[i] if i < len(reference) else None
        css = "first" if i == at or (at is None and d.kind in ("shorter", "longer") and (mine is None) != (ref is None)) else ""
        css = css or ("after" if at is not None and i > at else "")
        rows.append(f'<tr class="{css}"><td class="n">{i + 1:,}</td><td>{cell(mine)}</td><td class="ref">{cell(ref)}</td></tr>')
    return '<table class="lists"><tr><th class="n">merge</th><th>yours</th><th>reference</th></tr>' + "".join(rows) + "</table>"


def cell(pair: tuple[bytes, bytes] | None) -> str:
    return "—" if pair is None else html.escape(show_pair(*pair))


def cause(d: Diagnosis) -> str:
    """The whole sentence: where, both pairs and their counts, what the rule compares, the cause."""
    return f'<div class="diff-cause"><p>{html.escape(d.sentence)}</p></div>'


def tried(d: Diagnosis) -> str:
    """Each known mistake trained, and how many of their merges it makes (a bar of their list's length); the cause first.
    Two mistakes at once are listed only when they are the cause (the others made no more than one alone)."""
    n = max(d.their_merges, 1)
    shown = [t for t in d.tried if "+" not in t.cause or t.cause == d.cause]
    rows = sorted(shown, key=lambda t: (t.cause != d.cause, -t.reproduced_through))
    body = []
    for t in rows:
        css = ' class="cause"' if t.cause == d.cause else ""
        width = 100 * t.reproduced_through / n
        body.append(
            f"<tr{css}><td>{html.escape(label(t.cause))}</td>"
            f'<td class="n">{t.reproduced_through:,} of {d.their_merges:,}</td>'
            f'<td style="width:34%"><div class="bar" style="width:{width:.1f}%"></div></td></tr>'
        )
    return (
        '<table class="tried"><tr><th>a trainer with</th><th class="n">makes</th><th>of your merges, from the first</th></tr>'
        + "".join(body)
        + "</table>"
    )


def pair_words(d: Diagnosis) -> str:
    """'yours ' ' + 'd' (609) against the reference's ' a' + 'nd' (609)', for a caption."""
    count = "not a token yet" if d.missing is not None else f"{d.theirs_count:,}"
    return f"yours {show(d.theirs[0])} + {show(d.theirs[1])} ({count}) against the reference's {show(d.reference[0])} + {show(d.reference[1])} ({d.reference_count:,})"


def untried(d: Diagnosis) -> list[str]:
    """The mistakes that apply but were not trained (a mistake already made all of their list), by label."""
    done = {t.cause for t in d.tried}
    return [m.label for m in MISTAKES if m.applies(d.spec) and m.cause not in done]
