"""The Encode page's views: the sentence's pre-tokens, one pre-token's steps as rows of chips, a token's merge tree.

Ranks are shown as merge numbers, 1-based as on the step page ("#1" is the
first merge learned); the library's ranks are 0-based (merge #1 is rank 0).
`link(rank)` gives the step page's address for a merge of our own run, or None
(a real tokenizer, or a run a link cannot reproduce); `counts` each merge's
count when it was made (None: unknown, as for every real tokenizer).

Plain functions returning escaped HTML (the CSS is in ui/style.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ui.encoding import Node, Piece, Step
from ui.render import PALETTE, escape, show, text_spans

Link = Callable[[int], str | None]


def number(rank: int) -> str:
    """rank 0 -> '#1': the merge number a class reads."""
    return f"#{rank + 1:,}"


def _chip(token: bytes, colour: int, css: str = "tok") -> str:
    return f'<span class="{css}" style="background:{PALETTE[colour % len(PALETTE)]}">{escape(show(token))}</span>'


def _rank(rank: int | None, hit: bool, link: Link, counts: Sequence[int | None] | None = None) -> str:
    """A pair's merge number (a link to the step page when there is one) and, for our run, its count when it was merged."""
    if rank is None:
        return '<span class="rank none" title="not a merge">·</span>'
    text = escape(number(rank))
    href = link(rank)
    if href:
        text = f'<a href="{escape(href)}" target="_blank" title="merge {rank + 1:,} on the step page">{text}</a>'
    count = counts[rank] if counts is not None and rank < len(counts) else None
    if count is not None:
        text += f'<span class="cnt">×{count:,}</span>'
    return f'<span class="rank{" hit" if hit else ""}">{text}</span>'


def pairs_row(
    parts: Sequence[bytes], ranks: Sequence[int | None], chosen: int | None, link: Link, counts: Sequence[int | None] | None = None
) -> str:
    """Chips with every adjacent pair's merge number between them (and its count, for our run); the pairs of the chosen rank lit."""
    out = []
    hits = {i for i, r in enumerate(ranks) if chosen is not None and r == chosen}
    lit = hits | {i + 1 for i in hits}
    for i, token in enumerate(parts):
        out.append(_chip(token, i, "tok hit" if i in lit else "tok"))
        if i < len(ranks):
            out.append(_rank(ranks[i], i in hits, link, counts))
    return f'<div class="epair">{"".join(out)}</div>'


def step_rows(
    word: bytes,
    steps: Sequence[Step],
    done: int,
    link: Link,
    counts: Sequence[int | None] | None = None,
    start: Sequence[bytes] | None = None,
    unit: str = "bytes",
) -> str:
    """One pre-token after `done` of its steps: a row per step so far (its pairs, the merge chosen lit), then the tokens at the end.

    The row of step `done` (the next to apply) is marked now; once every step is done a last row shows the tokens.
    start: what encoding starts from (its bytes, or a SentencePiece tokenizer's characters: unit "characters").
    """
    rows = []
    for j, step in enumerate(steps[: done + 1]):
        what = unit if j == 0 else f"after {number(steps[j - 1].rank)}"
        rows.append(
            f'<div class="what{" now" if j == done else ""}">{escape(what)}</div>'
            f"<div>{pairs_row(step.before, step.ranks, step.rank, link, counts)}</div>"
        )
    if done >= len(steps):
        final = steps[-1].parts if steps else tuple(start or (bytes([b]) for b in word))
        rows.append(
            f'<div class="what now">{"tokens" if steps else f"{unit} = tokens"}</div>'
            f'<div><div class="epair">{"".join(_chip(t, i) for i, t in enumerate(final))}</div></div>'
        )
    return f'<div class="enc-rows">{"".join(rows)}</div>'


def overview(pieces: Sequence[Piece], current: Sequence[tuple[bytes, ...]], at: int) -> str:
    """The whole text as its pre-tokens: those before `at` as their tokens, `at` as it is now (outlined), the rest as bytes, faded."""
    out = []
    colour = 0
    for i, (piece, parts) in enumerate(zip(pieces, current)):
        css = "pt now" if i == at else ("pt todo" if i > at else "pt")
        if piece.special:
            css += " special"
        chips = []
        for t in parts:
            chips.append(_chip(t, colour))
            colour += 1
        out.append(f'<span class="{css}">{"".join(chips)}</span>')
    return f'<div class="enc-line">{"".join(out)}</div>'


def token_ids(tokens: Sequence[bytes], ids: Sequence[int | None]) -> str:
    """The text's tokens in order, each with its id under it (a projector has no hover), after what they are.

    Every token, repeats too: the sequence a model is given ('The 4 tokens: [the/1820][ cat/8415][ the/279][ cat/8415]').
    """
    n = len(tokens)
    drawn = text_spans(list(tokens), list(ids) if None not in ids else None, show_ids=True)
    return f'<div class="enc-ids"><div class="lead">The {n:,} token{"s and their ids" if n != 1 else " and its id"}:</div>{drawn}</div>'


def explain(step: Step, counts: Sequence[int | None] | None, label: str) -> str:
    """One sentence for a step: the pairs, the lowest merge number, what it makes; and, for our run, when training made it."""
    a, b = step.pair
    others = sorted({r for r in step.ranks if r is not None and r != step.rank})
    times = sum(1 for r in step.ranks if r == step.rank)
    where = f"{'both places' if times == 2 else f'all {times} places'}" if times > 1 else "it"
    out = (
        f"Of the {len(step.ranks)} pairs, {show(a)} + {show(b)} has the lowest merge number, {number(step.rank)}"
        + (f" (the others present: {', '.join(number(r) for r in others[:4])}{'…' if len(others) > 4 else ''})" if others else "")
        + f", so {label} merges {where} into {show(a + b)}."
    )
    count = counts[step.rank] if counts is not None and step.rank < len(counts) else None
    if count is not None:
        out += f" In training this was merge {step.rank + 1:,}, made when the pair occurred {count:,} times."
    return out


def tree(node: Node, link: Link) -> str:
    """A token's merge tree, the token on top and its bytes at the bottom; each merge with its number (and count)."""
    return f'<div class="tree"><ul>{_branch(node, link)}</ul></div>'


def _branch(node: Node, link: Link) -> str:
    if node.rank is None:
        meta = "" if len(node.token) == 1 else '<span class="meta">special</span>'  # a byte: its dashed box says it
        box = f'<div class="tnode byte">{_chip(node.token, 7)}{meta}</div>'
        return f"<li>{box}</li>"
    text = escape(number(node.rank))
    href = link(node.rank)
    if href:
        text = f'<a href="{escape(href)}" target="_blank">{text}</a>'
    count = f" · ×{node.count:,}" if node.count is not None else ""
    box = f'<div class="tnode">{_chip(node.token, node.rank)}<span class="meta">{text}{count}</span></div>'
    return f"<li>{box}<ul>{_branch(node.left, link)}{_branch(node.right, link)}</ul></li>"


def tree_sentence(node: Node, label: str) -> str:
    """'␣lowest' is merge #1,234 of GPT-4: ' low' + 'est'; 3 merges from 7 bytes."""
    if node.rank is None and len(node.token) > 1:
        return f"{show(node.token)} is a special token of {label}: added whole, never made by a merge."
    if node.rank is None:
        return f"{show(node.token)} is a single byte: every tokenizer starts from the 256 bytes, so nothing built it."
    merges = _count(node)
    return (
        f"{show(node.token)} is merge {number(node.rank)} of {label}: {show(node.left.token)} + {show(node.right.token)}. "
        f"It took {merges} merge{'s' if merges != 1 else ''} to build it from {node.leaves} byte{'s' if node.leaves != 1 else ''}; "
        "a merge's number is always higher than those of the tokens it joins."
    )


def _count(node: Node) -> int:
    return 0 if node.rank is None else 1 + _count(node.left) + _count(node.right)


def dropout_rows(found: Sequence[tuple[tuple[bytes, ...], int]], samples: int, plain: tuple[bytes, ...], shown: int = 12) -> str:
    """A word's segmentations under BPE-dropout, the most frequent first: each as chips, a bar of its share, and how many
    of the samples gave it; the one encode() gives without dropout marked; the rarest summed up past `shown` rows."""
    rows = []
    top = max((n for _, n in found), default=1)
    for parts, n in found[:shown]:
        chips = "".join(_chip(t, i) for i, t in enumerate(parts))
        mark = '<span class="drop-plain">without dropout</span>' if parts == plain else ""
        rows.append(
            f'<div class="epair">{chips}</div>'
            f'<div class="drop-bar"><span style="width:{100 * n / top:.1f}%"></span></div>'
            f'<div class="drop-n">{100 * n / samples:.1f} % <span class="cnt">({n:,})</span>{mark}</div>'
        )
    rest = found[shown:]
    if rest:
        n = sum(k for _, k in rest)
        rows.append(
            f'<div class="drop-more">{len(rest):,} more, rarer</div><div></div><div class="drop-n">{100 * n / samples:.1f} % <span class="cnt">({n:,})</span></div>'
        )
    return f'<div class="drop-rows">{"".join(rows)}</div>'


def dropout_sentence(word: bytes, p: float, samples: int, found: Sequence[tuple[tuple[bytes, ...], int]], plain: tuple[bytes, ...]) -> str:
    """What the rows show, in words: 'lowest, encoded 1,000 times with each merge skipped with probability 0.10: ...'."""
    kept = dict(found).get(plain, 0)
    return (
        f"{show(word)}, encoded {samples:,} times with each merge skipped with probability {p:.2f} (as HuggingFace's "
        f"BPE(dropout={p:g})): {len(found):,} different segmentation{'s' if len(found) != 1 else ''}; the one without dropout "
        f"{100 * kept / samples:.1f} % of the time."
    )
