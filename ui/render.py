"""Showing tokens as text a class can read, and as escaped HTML.

Every string that reaches HTML passes through html.escape here: corpora and
tokens are untrusted ('<script>' is just text).
"""

from __future__ import annotations

import html

# characters a projector cannot show, replaced by visible stand-ins
VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}

# token colours: light enough for dark text, distinct side by side
PALETTE = ["#fde2e4", "#d7f0dd", "#dbe7fb", "#fff1c1", "#eadcf8", "#d3f2f4", "#ffe0c7", "#e4e4e4"]


def show(token: bytes) -> str:
    """b' the\\n' -> '␣the↵'; invalid UTF-8 shows as \\xNN."""
    text = token.decode("utf-8", "backslashreplace")
    return "".join(VISIBLE.get(c, c) for c in text)


def show_pair(left: bytes, right: bytes) -> str:
    return f"{show(left)} + {show(right)}"


def token_spans(tokens: list[bytes], ids: list[int] | None = None, wrap: bool = True) -> str:
    """Tokens as coloured, escaped <span>s; the id (if given) shows on hover."""
    parts = []
    for n, token in enumerate(tokens):
        title = f' title="id {ids[n]}"' if ids else ""
        colour = PALETTE[n % len(PALETTE)]
        parts.append(f'<span class="tok"{title} style="background:{colour}">{html.escape(show(token))}</span>')
    return (
        f'<div style="display:flex;flex-wrap:{"wrap" if wrap else "nowrap"};row-gap:6px;font-family:monospace;font-size:1.15rem">'
        + "".join(parts)
        + "</div>"
        + "<style>.tok{white-space:pre;padding:2px 3px;margin:0 1px;border-radius:4px;border:1px solid #0002;color:#111}</style>"
    )


def escape(text: str) -> str:
    return html.escape(text)
