"""Several tokenizers on the same text: their chips, counts, bytes per token, and a span diff of where they split differently.

The span diff works on byte offsets. Each tokenizer cuts the text's bytes at
the ends of its tokens; where *every* tokenizer cuts, the text is cut into
segments. A segment inside which some tokenizer cuts and another does not is
a place they split differently ("differs"); the others they split alike.

    'lower' as [low, er] and [lo, wer]: cuts {0,3,5} and {0,2,5} -> one segment (0,5), which differs
    'a b'   as [a, ␣b] and [a, ␣b]:      cuts agree -> (0,1) and (1,3), both alike

A tokenizer whose tokens do not give back the text (the 'whitespace'
pre-tokenizer drops spaces) is drawn but left out of the diff, and says so.
A SentencePiece tokenizer's tokens (Llama 2's ▁The) are drawn as they are and
cut the text where their text falls: '▁' is a space, and the '▁' it put first
is none (`surface`).

No Streamlit here but the cache of a whole comparison: plain functions that
return escaped HTML (the CSS is in ui/style.py).
"""

from __future__ import annotations

import bisect
import html
from dataclasses import dataclass

from bpe import Tokenizer
from ui.render import PALETTE, character_runs, escape, show

SAMPLE = (
    "Tokenizers don't read words: they read pieces. In 2024, GPT-4o had 199,742 merges; 9.11 < 9.9?\n"
    'def greet(name):\n        return f"Hello, {name}!"\n'
    "Der Tokenizer zerlegt Wörter in Stücke. 分词器把文字切成小块。 👩‍💻\n"
)
SHOWN = 2500  # tokens drawn per tokenizer; a longer text is still counted in full


@dataclass(frozen=True)
class Row:
    """One tokenizer's tokens of the text."""

    label: str  # 'GPT-4', 'Trained here'
    tokens: tuple[bytes, ...]
    ids: tuple[int, ...]
    lossless: bool  # the tokens join to exactly the text's bytes (their surface's, for a SentencePiece tokenizer)
    detail: str = ""  # '100,000 merges'

    n_bytes: int = 0  # of the text (a lossy pre-tokenizer's tokens hold fewer)
    spans: tuple[bytes, ...] | None = None  # the text each token stands for, when not its bytes (`surface`); None: the tokens
    family: str = "byte-level"

    @property
    def surfaces(self) -> tuple[bytes, ...]:
        return self.tokens if self.spans is None else self.spans


def shown(data: bytes) -> str:
    """render.show, and the invisible zero-width joiner made visible: b'\xe2\x80\x8d' -> '‹ZWJ›'."""
    return show(data).replace("\u200d", "‹ZWJ›")


SPACE = "▁".encode()


def surface(tokens: tuple[bytes, ...], data: bytes) -> tuple[bytes, ...]:
    """The text a SentencePiece tokenizer's tokens stand for: '▁' a space, the '▁' it put first none.

    (b'\xe2\x96\x81Hello', b'\xe2\x96\x81world') for b'Hello world' -> (b'Hello', b' world')
    """
    spans = [t.replace(SPACE, b" ") for t in tokens]
    if spans and spans[0].startswith(b" "):
        spans[0] = spans[0][1:]  # the '▁' put in front of the text (the dummy prefix): no character of it
    return tuple(spans)


def row(label: str, tok: Tokenizer, text: str, k: int | None = None, detail: str = "") -> Row:
    """The tokens of text under tok's first k merges (all when None)."""
    ids = tok.encode(text, k)
    tokens = tuple(tok.vocab[i] for i in ids)
    data = text.encode("utf-8", "surrogateescape")
    family = getattr(tok, "family", "byte-level")
    spans = surface(tokens, data) if family == "sentencepiece" else None
    return Row(label, tokens, tuple(ids), b"".join(spans if spans is not None else tokens) == data, detail, len(data), spans, family)


def cuts(tokens: tuple[bytes, ...]) -> set[int]:
    """Byte offsets where tokens end (and 0): [b'ab', b'c'] -> {0, 2, 3}."""
    out, at = {0}, 0
    for t in tokens:
        at += len(t)
        out.add(at)
    return out


def segments(data: bytes, rows: list[Row]) -> list[tuple[int, int, bool]]:
    """(start, end, differs) over the text's bytes, cut where every lossless row cuts (see the module docstring).

    subtle: a place where all of them cut inside one character (a byte-level split of 器) is not used as a
    border, so that every segment is whole characters a class can read; the segment differs only if some cut
    inside it is not everyone's.
    """
    sets = [cuts(r.surfaces) for r in rows if r.lossless]
    size = len(data)
    if not sets or size == 0:
        return [(0, size, False)] if size else []
    common = set.intersection(*sets)
    borders = sorted(c for c in common if c == size or not 0x80 <= data[c] <= 0xBF)
    split = sorted(set.union(*sets) - common)  # cuts some make and others do not
    out = []
    for start, end in zip(borders, borders[1:]):
        inside = bisect.bisect_left(split, end) - bisect.bisect_right(split, start)
        out.append((start, end, inside > 0))
    return out


def differing(segs: list[tuple[int, int, bool]]) -> list[tuple[int, int]]:
    return [(s, e) for s, e, d in segs if d]


def in_diff(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    """Whether bytes [start, end) lie in one of the differing spans (sorted)."""
    i = bisect.bisect_right(spans, (start, float("inf"))) - 1
    return i >= 0 and spans[i][0] <= start < spans[i][1]


def chips(r: Row, spans: list[tuple[int, int]], limit: int = SHOWN, show_ids: bool = False) -> str:
    """r's tokens as chips (ui/render.py's look); chips inside a differing span marked 'diff'; each chip's id under it
    (show_ids: a projector has no hover), as the Tokenize page draws them."""
    tokens, surfaces = r.tokens[:limit], r.surfaces[:limit]
    offsets, at = [], 0
    for t in surfaces:
        offsets.append(at)
        at += len(t)
    offsets.append(at)
    parts = []
    for n, (start, end) in enumerate(character_runs(list(tokens))):
        joined = b"".join(tokens[start:end])
        css = "tok" + (" joined" if end - start > 1 else "")
        if r.lossless and spans and in_diff(offsets[start], max(offsets[end], offsets[start] + 1), spans):
            css += " diff"
        ids = ", ".join(str(i) for i in r.ids[start:end])
        title = f"id {ids}" if end - start == 1 else f"{end - start} tokens (ids {ids}) that together make one character"
        text = escape(shown(joined))
        if show_ids:
            text = f'<span class="ttext">{text}</span><span class="tid">{" ".join(str(i) for i in r.ids[start:end])}</span>'
        parts.append(f'<span class="{css}" title="{html.escape(title)}" style="background:{PALETTE[n % len(PALETTE)]}">{text}</span>')
    more = f'<span class="more">… and {len(r.tokens) - limit:,} more</span>' if len(r.tokens) > limit else ""
    return f'<div class="toks{" ids" if show_ids else ""}">{"".join(parts)}{more}</div>'


def per_token(r: Row) -> str:
    return f"{r.n_bytes / len(r.tokens):.2f}" if r.tokens else "–"


def summary(rows: list[Row], text: str) -> str:
    """A table: tokens, bytes per token, characters per token for each tokenizer; the fewest tokens in bold."""
    chars = len(text)
    fewest = min((len(r.tokens) for r in rows), default=0)
    body = []
    for r in rows:
        best = ' class="best"' if len(r.tokens) == fewest and r.tokens else ""
        cpt = f"{chars / len(r.tokens):.2f}" if r.tokens else "–"
        body.append(
            f"<tr{best}><td>{escape(r.label)}</td><td class='n'>{len(r.tokens):,}</td><td class='n'>{per_token(r)}</td>"
            f"<td class='n'>{cpt}</td><td>{escape(r.detail)}</td></tr>"
        )
    head = (
        "<tr><th>tokenizer</th><th class='n'>tokens</th><th class='n'>bytes / token</th><th class='n'>characters / token</th><th></th></tr>"
    )
    return f"<table class='compare'>{head}{''.join(body)}</table>"


def diff_text(data: bytes, segs: list[tuple[int, int, bool]]) -> str:
    """The text with the places the tokenizers split differently highlighted."""
    out = []
    for start, end, differs in segs:
        piece = escape(shown(data[start:end]))
        out.append(f'<span class="diffspan">{piece}</span>' if differs else f"<span>{piece}</span>")
    return f'<div class="difftext">{"".join(out)}</div>'


def diff_sentence(segs: list[tuple[int, int, bool]], rows: list[Row]) -> str:
    n = sum(1 for _, _, d in segs if d)
    left_out = [r.label for r in rows if not r.lossless and r.family != "sentencepiece"]
    changed = [r.label for r in rows if not r.lossless and r.family == "sentencepiece"]
    out = (
        f"They split the text alike everywhere ({len(segs):,} places)."
        if n == 0
        else f"They split {n:,} of {len(segs):,} places differently (highlighted; their chips are underlined in red below)."
    )
    if left_out:
        out += f" Not in the diff: {', '.join(left_out)}, whose tokens leave out part of the text (its pre-tokenizer drops whitespace)."
    if changed:
        out += f" Not in the diff: {', '.join(changed)}, whose normalizer changed the text (its tokens do not spell it back)."
    return out


def comparison(text: str, rows: list[Row], show_ids: bool = True) -> tuple[str, str, str]:
    """(summary table, highlighted text with its sentence, every tokenizer's chips, with their ids) as HTML."""
    data = text.encode("utf-8", "surrogateescape")
    segs = segments(data, rows)
    spans = differing(segs)
    blocks = []
    for r in rows:
        head = f"<div class='rowhead'><b>{escape(r.label)}</b> · {len(r.tokens):,} tokens · {per_token(r)} bytes per token</div>"
        blocks.append(f"<div class='cmp-row'>{head}{chips(r, spans, show_ids=show_ids)}</div>")
    diff = f"{diff_text(data, segs)}<p class='caption'>{escape(diff_sentence(segs, rows))}</p>"
    return summary(rows, text), diff, "".join(blocks)
