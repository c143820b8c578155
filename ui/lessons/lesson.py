"""The guided lesson: a narrated walk through the textbook corpus, one step per screen.

Every number in the narration comes from the run itself -- the pre-token counts
and the trainer's MergeEvents -- so the story cannot drift from what the trainer
does (a test compares them). Steps are data: a title, the narration (Markdown),
the merges on the step page it talks about, and which live view goes beside it.

Not here: drawing (ui/lessons/views.py, pages/lesson.py) or training (ui/corpus.py).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bpe.events import MergeEvent
from bpe.rule import merge_word
from bpe.spec import TrainSpec
from ui import corpus as corpora
from ui.corpus import Settings
from ui.lessons.quiz import greater_because
from ui.render import show, show_pair

PRESET = "textbook"  # a key of ui.corpus.SOURCES: the corpus the lesson walks through
ALGORITHM = "heap"  # the lesson shows the heap, so it trains with the heap trainer

Tokens = tuple[bytes, ...]
NBSP = "\u00a0"  # between the letters of a split word, so a line never breaks inside it


@dataclass(frozen=True)
class Step:
    title: str
    text: str  # Markdown; every number in it computed from the run
    merges: tuple[int, ...]  # merges (1-based) this step talks about: links to the step page
    view: str  # the live view beside the text: words, pairs, tie, history, changes, heap, run
    merge: int = 1  # the merge whose data the view shows


def settings() -> Settings:
    """The sidebar-independent settings of the lesson's run: the textbook preset as the preset defines it."""
    source = corpora.SOURCES[PRESET]
    data = source.text.encode("utf-8")
    spec = TrainSpec(pretokenizer=source.pretokenizer, special_tokens=source.special_tokens, algorithm=ALGORITHM)
    return Settings(corpora.Corpus(source.label, data, corpora.digest(data)), spec, source.merges)


# ---------------------------------------------------------------------------
# the corpus as the trainer sees it


def split_words(counts: Mapping[bytes, int], merges: Sequence[tuple[bytes, bytes]]) -> list[tuple[Tokens, int]]:
    """Each pre-token with its count, split by merges applied in order: the corpus as the trainer sees it.

    {b'low': 5, b'lower': 2}, [(b'l', b'o'), (b'lo', b'w')] -> [((b'low',), 5), ((b'low', b'e', b'r'), 2)]

    subtle: merges are matched by their bytes, as Tokenizer.bpe does (it explains the rare case
    where that differs from the trainer's ids); a test checks the two agree.
    """
    out = []
    for word, count in counts.items():
        tokens = [bytes([b]) for b in word]
        for left, right in merges:
            if left in tokens and right in tokens:  # cheap test first: most merges miss most words
                # merge_word compares by ==, so it merges byte tokens as well as ids
                tokens = merge_word(tokens, (left, right), left + right)
        out.append((tuple(tokens), count))
    return out


def pair_sources(words: Sequence[tuple[Tokens, int]]) -> dict[tuple[bytes, bytes], list[tuple[Tokens, int]]]:
    """Each pair, and what each word adds to its count (occurrences x the word's count).

    [((b'l', b'o', b'w'), 5)] -> {(b'l', b'o'): [((b'l', b'o', b'w'), 5)], (b'o', b'w'): [((b'l', b'o', b'w'), 5)]}
    """
    added: dict[tuple[bytes, bytes], dict[Tokens, int]] = defaultdict(dict)
    for tokens, count in words:
        for pair in zip(tokens, tokens[1:]):
            added[pair][tokens] = added[pair].get(tokens, 0) + count
    return {pair: list(by_word.items()) for pair, by_word in added.items()}


def word(tokens: Tokens) -> str:
    return b"".join(tokens).decode("utf-8", "backslashreplace")


def code(text: str) -> str:
    """text as a Markdown code span (a backtick inside gets a longer fence)."""
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}"


def pair_md(left: bytes, right: bytes) -> str:
    return code(show_pair(left, right))


# ---------------------------------------------------------------------------
# the steps


def steps(text: str, counts: Mapping[bytes, int], events: Sequence[MergeEvent]) -> list[Step]:
    """The lesson for a corpus (text, its pre-token counts) and the merges its trainer made, with detail."""
    return [
        pre_tokens(text, counts),
        counting(counts, events),
        tie(events),
        first_merges(events),
        counts_change(events),
        heap(events),
        whole_run(counts, events),
    ]


def pre_tokens(text: str, counts: Mapping[bytes, int]) -> Step:
    common, n = max(counts.items(), key=lambda wc: wc[1])
    return Step(
        "Pre-tokens: the corpus cut into words",
        f"The corpus is {len(text.encode()):,} bytes of text. Before BPE starts, a **pre-tokenizer** cuts it into "
        f"pieces — here at the spaces — giving **{sum(counts.values()):,} words, only {len(counts):,} of them different**.\n\n"
        "BPE counts each different word once, with how often it occurs, and never merges across two words. "
        f"Every word starts as its bytes: {code(word((common,)))} (× {n:,}) is {code(NBSP.join(show(bytes([b])) for b in common))}.",
        (1,),
        "words",
    )


def counting(counts: Mapping[bytes, int], events: Sequence[MergeEvent]) -> Step:
    sources = pair_sources(split_words(counts, []))
    first = events[0].detail
    # the best pair that more than one word adds to: the sum is the point
    left, right, total = next(((a, b, c) for a, b, c in first.top_pairs if len(sources[(a, b)]) > 1), first.top_pairs[0])
    parts = " + ".join(f"{n:,} from {code(word(t))}" for t, n in sources[(left, right)])
    return Step(
        "Counting pairs",
        "Two tokens side by side in a word make a **pair**. A pair's count adds up, over every word it is in, "
        "how often the word occurs (twice as much if the pair is in the word twice).\n\n"
        f"{pair_md(left, right)}: {parts} = **{total:,}**.\n\n"
        f"The corpus has {first.distinct_pairs:,} different pairs. BPE merges the pair with the highest count.",
        (1,),
        "pairs",
    )


def tie(events: Sequence[MergeEvent]) -> Step:
    k, event = next(((k, e) for k, e in enumerate(events, 1) if e.tie), (1, events[0]))
    winner, runner = (event.left, event.right), event.runner_up
    if not event.tie:
        return Step("The winner", f"{pair_md(*winner)} has the highest count, {event.count:,}.", (k,), "tie", k)
    return Step(
        f"The tie: {show_pair(*winner)} against {show_pair(*runner)}",
        f"Two pairs share the top count, **{event.count:,}**: {pair_md(*winner)} and {pair_md(*runner)}. "
        "Training needs one winner, and every trainer here uses the same rule (CS336's): the higher count wins; "
        "on a tie, the pair whose **bytes are greater**, left token first, then right.\n\n"
        f"Here {greater_because(winner, runner)}. So merge {k} joins {pair_md(*winner)} into the new token "
        f"{code(show(event.token))}, id {event.new_id}.",
        (k,),
        "tie",
        k,
    )


def first_merges(events: Sequence[MergeEvent], n: int = 4) -> Step:
    n = min(n, len(events))
    ties = [k for k, e in enumerate(events[:n], 1) if e.tie]
    built = next((k for k, e in enumerate(events[:n], 1) if len(e.left) > 1 or len(e.right) > 1), None)
    text = "Each merge rewrites every word that holds its pair; then the counting starts again, on the new tokens."
    if ties:
        text += f" {listing('Merge', ties)} {'was a tie' if len(ties) == 1 else 'were ties'}, won on the bytes."
    if built:
        text += f"\n\nMerge {built} joins a token made earlier: long tokens are built from short ones, one pair at a time."
    return Step(f"The first {n} merges", text, tuple(range(1, n + 1)), "history", n)


def listing(noun: str, ks: Sequence[int]) -> str:
    """'Merge', [1, 3, 5] -> 'Merges 1, 3 and 5'."""
    if len(ks) == 1:
        return f"{noun} {ks[0]}"
    return f"{noun}s {', '.join(map(str, ks[:-1]))} and {ks[-1]}"


def counts_change(events: Sequence[MergeEvent]) -> Step:
    # the early merge that moved the most counts: it shows neighbours losing and gaining
    k, event = max(enumerate(events[:3], 1), key=lambda ke: (ke[1].detail.changes_total, -ke[0]))
    detail = event.detail
    lost = [(a, b, -d) for a, b, d in detail.changes if d < 0 and (a, b) != (event.left, event.right)]
    gained = {(a, b): d for a, b, d in detail.changes if d > 0}
    example = ""
    if lost:
        a, b, d = lost[0]
        # a neighbour on the left shares the merge's left token, one on the right its right token
        shared, new = (b, (a, event.token)) if b == event.left else (a, (event.token, b))
        example = (
            f"For example {pair_md(a, b)} loses {d:,}: its {code(show(shared))} is now inside {code(show(event.token))}, "
            f"so the pair there is {pair_md(*new)}" + (f", new with {gained[new]:,}" if new in gained else "") + ".\n\n"
        )
    return Step(
        "Why counts change",
        f"Merge {k}, {pair_md(event.left, event.right)}, rewrote {detail.words_total:,} word(s). Only pairs at the merged "
        f"spot changed: {len(lost) + 1:,} lost counts and {len(gained):,} new ones appeared; "
        f"**the other {detail.distinct_pairs - len(lost) - 1:,} of the {detail.distinct_pairs:,} pairs kept their counts**.\n\n"
        + example
        + "So a trainer need not recount the whole corpus after each merge: it updates the words that held the pair. "
        "That is what makes the fast trainers fast.",
        (k,),
        "changes",
        k,
    )


def heap(events: Sequence[MergeEvent]) -> Step:
    scanned = sum(e.detail.distinct_pairs for e in events)
    k, event = next(((k, e) for k, e in enumerate(events, 1) if e.detail.heap and e.detail.heap.stale_popped), (1, events[0]))
    view = event.detail.heap
    stale = ""
    if view and view.stale_popped:
        s = view.stale_popped[0]
        stale = f": before merge {k}, {pair_md(s.left, s.right)} still said {s.count:,}, though its count was {s.current:,}"
    return Step(
        "Why the heap",
        "The simple trainers look at every pair before every merge: "
        f"{scanned:,} looks for these {len(events):,} merges. Real corpora have far more of both.\n\n"
        "The heap trainer keeps the pairs in a **max-heap**, the best on top. A changed count gets a new entry; "
        f"the old one stays, **stale** (red){stale}. The trainer checks each entry it pops and drops the stale ones: "
        "*lazy deletion*.",
        (k,),
        "heap",
        k,
    )


def whole_run(counts: Mapping[bytes, int], events: Sequence[MergeEvent]) -> Step:
    ties = sum(e.tie for e in events)
    final = split_words(counts, [(e.left, e.right) for e in events])
    whole = sum(len(t) == 1 for t, _ in final)
    return Step(
        "The whole run",
        f"{len(events):,} merges, each one new token: the vocabulary grows from 256 bytes to {256 + len(events):,} "
        f"(plus special tokens). **{ties} of the {len(events)} merges were ties**, decided by the bytes.\n\n"
        f"At the end, {whole} of the {len(final)} different words are a single token.\n\n"
        "Now predict the merges yourself in the quiz, or step through them one by one.",
        (len(events),),
        "run",
        len(events),
    )
