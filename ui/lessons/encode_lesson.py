"""The second guided lesson, "How a tokenizer encodes": one word walked through the encoder, one step per screen.

The tokenizer is the first lesson's run (the textbook corpus, ui/lessons/lesson.py), so the
merges the class has just watched training make are the ones encoding now applies.
Every screen is data computed from Tokenizer.encode_steps -- the pairs and their
ranks, the merge chosen, the count training made it with -- so the story cannot
drift from what the encoder does (a test compares them).

Not here: drawing (pages/encode_lesson.py, ui/views/encode.py) or the encoder (bpe/tokenizer/tokenizer.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from bpe.tokenizer.tokenizer import EncodeStep, Tokenizer
from ui.render import escape, show, show_pair
from ui.views.compare import Row

WORD = "lowest"  # not in the textbook corpus: made of its pieces (low, est), so the class has not seen it merged


@dataclass(frozen=True)
class Screen:
    title: str
    text: str  # Markdown; every number in it computed from the steps
    step: int  # the encode step whose parts and pair ranks the view shows (0: the bytes)
    merges: tuple[int, ...] = ()  # merges (1-based) it talks about: links to the step page
    rows: tuple[Row, ...] = ()  # the last screen's: one sentence through a tokenizer of each family, drawn side by side


# the last screen: the other family of BPE on one sentence (a word of the lesson's corpus, digits, an emoji)
FAMILIES_TITLE = "The other family: SentencePiece"
FAMILIES_SENTENCE = "The newest llama was born in 2024 🦙"


MERGES_SHOWN = 12  # the first screen lists the merges: the textbook run has 12


def merges_table(tok: Tokenizer) -> str:
    """The tokenizer's first merges as an HTML table (escaped): '#1  s + t  st'."""
    rows = "".join(
        f'<tr><td class="num">#{r + 1}</td><td><span class="vt">{escape(show(a))}</span> + <span class="vt">{escape(show(b))}</span></td>'
        f'<td><span class="vt">{escape(show(a + b))}</span></td></tr>'
        for r, (a, b) in enumerate(tok.merges[:MERGES_SHOWN])
    )
    return f'<table class="vocab merges"><tr><th>merge</th><th>pair</th><th>makes</th></tr>{rows}</table>'


def number(rank: int) -> str:
    """rank 0 -> 'merge 1': merges are numbered from 1 on every page, ranks from 0 in the library."""
    return f"merge {rank + 1}"


def code(token: bytes) -> str:
    return f"`{show(token)}`"


def screens(tok: Tokenizer, word: str = WORD) -> list[Screen]:
    """The lesson's screens for one word: the bytes, the pairs' ranks, one screen per step, what never applied, the rule."""
    steps = tok.encode_steps(word)
    data = word.encode()
    first = steps[1] if len(steps) > 1 else None
    out = [
        Screen(
            "Start from the bytes",
            f"The tokenizer the first lesson trained keeps only its {len(tok.merges)} merges, in the order training made them "
            "(on the right): a merge's number is its *rank*. No counts, no corpus. "
            f"Give it a word it never saw, **{word}**. Encoding starts where training started: "
            f"the word's {len(data)} bytes, {' '.join(code(bytes([b])) for b in data)}.",
            0,
        )
    ]
    if first is None:
        out.append(Screen("No pair is a merge", f"No two neighbouring bytes of {word} were ever merged: it stays {len(data)} tokens.", 0))
        return out
    listed = ", ".join(
        f"{show_pair(data[i : i + 1], data[i + 1 : i + 2])} → {'not a merge' if r is None else number(r)}"
        for i, r in enumerate(first.pair_ranks)
    )
    out.append(
        Screen(
            "Look up every neighbouring pair",
            f"The encoder lists each pair of neighbours and looks it up among the merges: {listed}. "
            "It does not count pairs in the text — the counts were training's job. It only asks: *was this pair merged, and when?*",
            1,
            tuple(sorted({r + 1 for r in first.pair_ranks if r is not None})),
        )
    )
    out += [step_screen(tok, steps, i) for i in range(1, len(steps))]
    out.append(never_screen(tok, steps, word))
    out.append(
        Screen(
            "Training order, not text order",
            f"So encoding **{word}** gave {len(steps[-1].parts)} tokens, {' '.join(code(t) for t in steps[-1].parts)}, in "
            f"{len(steps) - 1} steps, merges {', '.join(f'#{s.rank + 1}' for s in steps[1:])}: always rising. Training picks the "
            "*most frequent* pair; encoding picks the pair *learned first* among those present, wherever it sits in the word, "
            "and merges it everywhere at once. GPT-2, GPT-4 and GPT-4o encode exactly so, with 50,000 to 200,000 merges. "
            "Try other words on the Encode page, then test yourself: which merge applies first?",
            len(steps) - 1,
        )
    )
    return out


def step_screen(tok: Tokenizer, steps: list[EncodeStep], i: int) -> Screen:
    """Step i: why this pair (the lowest rank present), where, and the count training made it with."""
    step, before = steps[i], steps[i - 1]
    left, right = tok.merges[step.rank]
    present = sorted({r for r in step.pair_ranks if r is not None})
    others = [r for r in present if r != step.rank]
    why = (
        f"the lowest rank among the pairs present ({', '.join(str(r + 1) for r in present)})"
        if others
        else "the only merge left among the pairs"
    )
    position = ""
    if step.at[0] == len(before.parts) - 2 and len(before.parts) > 2:
        position = " It sits at the very end of the word: the encoder does not read left to right."
    elif step.at[0] > 0 and any(r is not None for r in step.pair_ranks[: step.at[0]]):
        position = " It is not the leftmost merge in the word: position does not matter, only the rank."
    if others:
        waiting = ", ".join(f"{number(r)} ({show_pair(*tok.merges[r])})" for r in others)
        position += f" Waiting: {waiting}."
    where = "once" if len(step.at) == 1 else f"{len(step.at)} times, left to right"
    made = f" Training made it when the pair occurred {step.count:,} times." if step.count else ""
    return Screen(
        f"Step {i}: {show_pair(left, right)}",
        f"{number(step.rank).capitalize()}, {show_pair(left, right)}, is {why}, so it goes now — {where}.{position}{made} "
        f"The word is now {' '.join(code(t) for t in step.parts)}.",
        i,
        (step.rank + 1,),
    )


def never_screen(tok: Tokenizer, steps: list[EncodeStep], word: str) -> Screen:
    """The merges whose token is inside the word but that never applied: their pieces were taken by an earlier merge."""
    made_here = {t for s in steps for t in s.parts}
    data = word.encode()
    unused = [r for r, (a, b) in enumerate(tok.merges) if a + b in data and a + b not in made_here and len(a + b) > 1]
    last = steps[-1]
    end = " ".join(code(t) for t in last.parts)
    if not unused:
        text = f"No neighbouring pair of {end} is a merge, so encoding stops here."
    else:
        r = unused[0]
        a, b = tok.merges[r]
        text = (
            f"No neighbouring pair of {end} is a merge, so encoding stops. Note what did *not* happen: {code(a + b)} "
            f"({number(r)}, {show_pair(a, b)}) is inside **{word}**, yet never applied — by the time it could, "
            f"its pieces had been joined into other tokens by merges learned earlier. The same text can hold a token "
            "that encoding never makes."
        )
    return Screen("When no pair is a merge, stop", text, len(steps) - 1, tuple(r + 1 for r in unused[:1]))


def families_screen(gpt: Row, llama: Row, sentence: str = FAMILIES_SENTENCE) -> Screen:
    """The same sentence through GPT-4o (byte-level, like the lesson's tokenizer) and Llama 2 (SentencePiece), every number
    in the text counted from their tokens: the space, the digits, the emoji that falls back to bytes."""
    data = sentence.encode()
    digits = next((w for w in sentence.split() if w.isdigit()), "")
    emoji = next((c for c in sentence if ord(c) > 0xFFFF), "")
    at = data.index(digits.encode()) if digits else 0
    spelled = "▁" + sentence.replace(" ", "▁")
    gpt_digits = " ".join(code(t) for t in over(gpt, at, at + len(digits)))
    llama_digits = " ".join(code(t) for t in over(llama, at, at + len(digits)))
    start = data.index(emoji.encode()) if emoji else 0
    fallback = [t for t in over(llama, start, start + len(emoji.encode())) if len(t) == 1 and t[0] >= 0x80]
    gpt_emoji = over(gpt, start, start + len(emoji.encode()))
    spaced = next((t for t in gpt.tokens if t.startswith(b" ") and len(t) > 3), b" ")
    llama_word = [t for t in over(llama, data.index(spaced), data.index(spaced) + len(spaced))]
    text = (
        f"The same sentence through the other family of BPE. **GPT-4o** is byte-level, like this lesson's tokenizer: a regex cuts "
        f"pre-tokens, a space is the first byte of the word after it, {code(spaced)} (GPT-2's files write that byte `Ġ`), and "
        f"numbers come in threes: {gpt_digits}. **Llama 2** is SentencePiece: no regex, just characters with `▁` for every space "
        f"and one put first, `{spelled}`, merged by rank as here: {spaced.decode().strip()} is "
        f"{' '.join(code(t) for t in llama_word)}. Every digit stays alone, {llama_digits}"
        + (
            f", and {emoji}, not in its vocabulary, falls back to its {len(fallback)} UTF-8 bytes, "
            f"{' '.join(f'`<0x{t[0]:02X}>`' for t in fallback)} (GPT-4o: {len(gpt_emoji)} tokens of its own). "
            if fallback
            else ". "
        )
        + f"{len(gpt.tokens)} tokens against {len(llama.tokens)}."
    )
    return Screen(FAMILIES_TITLE, text, 0, rows=(gpt, llama))


def over(row: Row, start: int, end: int) -> list[bytes]:
    """The tokens of a row that hold any of the text's bytes [start, end) (a SentencePiece row by the text its tokens stand for)."""
    out, at = [], 0
    for token, span in zip(row.tokens, row.surfaces):
        if at < end and at + len(span) > start and span:
            out.append(token)
        at += len(span)
    return out
