"""Showing tokens as text a class can read, and as escaped HTML.

Bytes are shown as the bytes they are, the same way on every page: UTF-8 text
as its characters, whitespace as visible stand-ins, and a byte that is not
part of a valid character as \\xNN. Nothing is decoded with 'replace' or
'ignore'. When a character's bytes are split over several tokens (an emoji or
a CJK character early in training), those tokens are drawn as one chip with a
dashed border, since a lone \\xe5 means nothing to a reader.

Every string that reaches HTML passes through html.escape here: corpora and
tokens are untrusted ('<script>' is just text). The CSS for these classes is
in ui/style.py.
"""

from __future__ import annotations

import html
import re

# characters a projector cannot show, replaced by visible stand-ins; a carriage return as \r, like the other
# control bytes: its picture ␍ (U+240D) is in few fonts and drew as an empty box (Debian with Noto, DejaVu)
VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "\\r"}

# token colours: light enough for dark text, distinct side by side
PALETTE = ["#fde2e4", "#d7f0dd", "#dbe7fb", "#fff1c1", "#eadcf8", "#d3f2f4", "#ffe0c7", "#e4e4e4"]

# what every page means by a text's bytes (and so by bytes per token): one definition, said where a count is shown
BYTES_MEANING = "the text's bytes in UTF-8, whitespace that a pre-tokenizer drops included"
MAX_CHAR_BYTES = 4  # a UTF-8 character is at most 4 bytes, so a split one spans at most 4 tokens


class Html(str):
    """HTML that st.html takes as it is: st.html(Html(body)).

    subtle: st.html dedents a plain string (textwrap.dedent, ~170 µs for the 9 KB of a tokenized sentence: ~5 % of
    the step page's Next click); an object with _repr_html_ (a documented kind of body) is taken without it. Our
    HTML is built on one line, so there is nothing to dedent.
    """

    def _repr_html_(self) -> str:
        return str(self)


def show(token: bytes) -> str:
    """b' the\\n' -> '␣the↵'; bytes that are not valid UTF-8 show as \\xNN: b'caf\\xe9' -> 'caf\\\\xe9'."""
    text = token.decode("utf-8", "backslashreplace")
    return "".join(VISIBLE.get(c, c) for c in text)


def show_pair(left: bytes, right: bytes) -> str:
    return f"{show(left)} + {show(right)}"


def is_text(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def character_runs(tokens: list[bytes]) -> list[tuple[int, int]]:
    """Split token indices into runs drawn as one chip each: [start, end).

    A token that is valid UTF-8 is a run of its own; a token that is not is
    joined with the fewest following tokens that complete its characters.
    [b'a', b'\\xe5', b'\\xa4', b'\\xa7'] ('a', then 大 in three tokens) -> [(0, 1), (1, 4)];
    a byte no following token completes (Latin-1 b'\\xe9') stays alone.
    """
    runs, i, n = [], 0, len(tokens)
    while i < n:
        end = i + 1
        if not is_text(tokens[i]):
            for j in range(i + 2, min(n, i + MAX_CHAR_BYTES) + 1):
                if is_text(b"".join(tokens[i:j])):
                    end = j
                    break
        runs.append((i, end))
        i = end
    return runs


def chips(
    tokens: list[bytes],
    ids: list[int] | None = None,
    mark: bytes | None = None,
    first_colour: int = 0,
    split: bool = False,
    show_ids: bool = False,
) -> str:
    """Tokens as coloured, escaped <span class="tok"> chips; ids (if given) show on hover, and under each chip with show_ids
    (a projector has no hover: tiktokenizer's Text / Token IDs, both at once).

    A character split over several tokens is one dashed chip that says, inside
    it, how many tokens it is (×4): a projector has no hover. With split=True
    (where the boundaries are the point: the words a merge rewrote) every token
    is a chip of its own and a part of a character shows as its bytes (\\xe2),
    the parts grouped under the character they make: [\\xe2][\\x80][\\x93]=–.

    Tokens equal to `mark` (the token a merge just made) get a thick outline.
    """
    parts = []
    for n, (start, end) in enumerate(character_runs(tokens)):
        colour = PALETTE[(first_colour + n) % len(PALETTE)]
        if end - start == 1:
            parts.append(_chip(tokens[start], ids[start] if ids else None, mark, colour, show_id=show_ids))
            continue
        joined = b"".join(tokens[start:end])
        pieces = " · ".join(show(t) for t in tokens[start:end])
        id_text = f" (ids {', '.join(str(i) for i in ids[start:end])})" if ids else ""
        title = html.escape(f"{end - start} tokens that together make {show(joined)}: {pieces}{id_text}", quote=True)
        if split:
            inner = "".join(_chip(t, ids[i] if ids else None, mark, colour, part=True) for i, t in enumerate(tokens[start:end], start))
            parts.append(
                f'<span class="char" data-tokens="{end - start}" title="{title}">{inner}<span class="of">={html.escape(show(joined))}</span></span>'
            )
            continue
        text = f'{html.escape(show(joined))}<span class="ntok">×{end - start}</span>'
        if show_ids and ids:
            text = f'<span class="ttext">{text}</span><span class="tid">{" ".join(str(i) for i in ids[start:end])}</span>'
        parts.append(f'<span class="tok joined" data-tokens="{end - start}" title="{title}" style="background:{colour}">{text}</span>')
    return "".join(parts)


def _chip(token: bytes, id_: int | None, mark: bytes | None, colour: str, part: bool = False, show_id: bool = False) -> str:
    css = "tok" + (" new" if token == mark else "") + (" part" if part else "")
    title = f' title="id {id_}"' if id_ is not None else ""
    text = html.escape(show(token))
    if show_id and id_ is not None:
        text = f'<span class="ttext">{text}</span><span class="tid">{id_}</span>'
    return f'<span class="{css}"{title} style="background:{colour}">{text}</span>'


def offset_runs(tokens: list[bytes]) -> list[tuple[int, int, str]] | None:
    """Tokens grouped by the characters each is drawn over, as decode_with_offsets places them: (start, end, text).

    Each character is drawn once, on the token where decode_with_offsets starts it
    (the token that holds its last byte); tokens left with no character of their own
    join the next one's chip. [b'a', b'\xf0\x9f', b'\x99\x82'] -> [(0, 1, 'a'), (1, 3, '🙂')];
    [b' \xc4', b'\xa0\xe9\x99\xa4'] (' Ġ除': the Ġ split) -> [(0, 1, ' '), (1, 2, 'Ġ除')].
    None when the tokens are not UTF-8 text together (chips() draws them then).
    """
    from bpe.tokenizer.tokenizer import token_offsets

    joined = b"".join(tokens)
    if not is_text(joined):
        return None
    text = joined.decode("utf-8")
    ends = [*token_offsets(tokens)[1:], len(text)]
    runs, start, at = [], 0, 0
    for i, end in enumerate(ends):
        if end > at or i == len(tokens) - 1:
            runs.append((start, i + 1, text[at:end]))
            start, at = i + 1, end
    return runs


def text_spans(tokens: list[bytes], ids: list[int] | None = None, show_ids: bool = False) -> str:
    """Tokens drawn over exactly their characters (offset_runs): a chip each, a dashed one with ×N for tokens that
    share a character. A last token cut inside a character (a page's worth of tokens) is drawn as its bytes."""
    whole = len(tokens)
    while whole and offset_runs(tokens[:whole]) is None and len(tokens) - whole < MAX_CHAR_BYTES:
        whole -= 1
    runs = offset_runs(tokens[:whole]) if whole else []
    if runs is None:
        return token_spans(tokens, ids, show_ids=show_ids)
    parts = []
    for n, (start, end, text) in enumerate(runs):
        colour = PALETTE[n % len(PALETTE)]
        shown = html.escape("".join(VISIBLE.get(c, c) for c in text))
        run_ids = ids[start:end] if ids else []
        pieces = " · ".join(show(t) for t in tokens[start:end])
        if end - start == 1:
            exact = "" if tokens[start] == text.encode("utf-8") else f" · its bytes {pieces}"
            title = html.escape(f"id {run_ids[0]}{exact}" if run_ids else exact.lstrip(" ·"), quote=True)
            inner = f'<span class="ttext">{shown}</span><span class="tid">{run_ids[0]}</span>' if show_ids and run_ids else shown
            parts.append(f'<span class="tok" title="{title}" style="background:{colour}">{inner}</span>')
            continue
        id_text = f" (ids {', '.join(map(str, run_ids))})" if run_ids else ""
        title = html.escape(f"{end - start} tokens that together make {show(text.encode('utf-8'))}: {pieces}{id_text}", quote=True)
        inner = f'{shown}<span class="ntok">×{end - start}</span>'
        if show_ids and run_ids:
            inner = f'<span class="ttext">{inner}</span><span class="tid">{" ".join(map(str, run_ids))}</span>'
        parts.append(f'<span class="tok joined" data-tokens="{end - start}" title="{title}" style="background:{colour}">{inner}</span>')
    rest = chips(tokens[whole:], ids[whole:] if ids else None, first_colour=len(runs), show_ids=show_ids) if whole < len(tokens) else ""
    css = "toks" + (" ids" if show_ids and ids else "")
    return f'<div class="{css}">{"".join(parts)}{rest}</div>'


def offset_note(tokens: list[bytes]) -> str | None:
    """When text_spans(tokens) draws fewer chips than tokens, a sentence that says so (for a caption), else None."""
    runs = offset_runs(tokens)
    drawn = len(runs) if runs is not None else len(character_runs(tokens))
    if drawn == len(tokens):
        return None
    return (
        f"{len(tokens):,} tokens, drawn as {drawn:,} chips: each token is drawn over the characters it ends "
        "(decode_with_offsets); a dashed chip is a character whose bytes are split over several tokens, and ×N says how many."
    )


def token_spans(
    tokens: list[bytes], ids: list[int] | None = None, wrap: bool = True, mark: bytes | None = None, show_ids: bool = False
) -> str:
    """Tokens as a row of chips (see chips), wrapping onto more lines unless wrap=False; each chip's id under it with show_ids."""
    css = "toks" + ("" if wrap else " nowrap") + (" ids" if show_ids and ids else "")
    return f'<div class="{css}">{chips(tokens, ids, mark, show_ids=show_ids)}</div>'


def split_note(tokens: list[bytes]) -> str | None:
    """When chips(tokens) draws fewer chips than tokens, a sentence that says so (for a caption), else None.

    [b'a', b'\\xf0', b'\\x9f', b'\\xa6', b'\\x99'] (a, then a llama in 4 tokens) -> '5 tokens, drawn as 2 chips: ...'
    """
    drawn = len(character_runs(tokens))
    if drawn == len(tokens):
        return None
    return (
        f"{len(tokens):,} tokens, drawn as {drawn:,} chips: a dashed chip is one character whose bytes are split over "
        "several tokens, and ×N on it says how many."
    )


def escape(text: str) -> str:
    return html.escape(text)


def plain(text: str) -> str:
    """text for Markdown (a widget label, a message): every Markdown character escaped.

    '*a* [x](y)' -> '\\*a\\* \\[x\\]\\(y\\)'
    """
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~:$&=^])", r"\\\1", text)
