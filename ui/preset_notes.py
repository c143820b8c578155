"""The sidebar's note under a classroom preset, written from the run it describes.

A note that names merges ("'aa' first, then 'ab'") is true under one tie-break
rule and false under another: on aaabdaaabac the cs336 rule's second merge is
aa + a (tied with a + b at 2), huggingface's and rustbpe's is a + b. So a note
is a template whose merges are filled in from training the preset's own text
under the sidebar's rule (a few merges of a sentence: microseconds, remembered).

Fields a template may use:
  {rule}    the tie-break rule's name
  {merges}  the first MERGES_NAMED merges: "a + a → aa, then aa + a → aaa, then …"
  {tied}    the pairs tied for the first merge: "s + t and e + s"
  {first}   the first merge's pair: "s + t"
  {ties}    how many of the preset's merges were ties, and of how many: "5 of 8"
"""

from __future__ import annotations

from functools import cache

from bpe import pretokenize, train
from bpe.events import MergeEvent
from ui.corpus import SOURCES
from ui.render import show, show_pair

MERGES_NAMED = 3


@cache
def preset_run(key: str, tie_break: str) -> tuple[MergeEvent, ...]:
    """The merges of a preset's text under tie_break, with the pairs each chose among (detail on)."""
    source = SOURCES[key]
    corpus = pretokenize(source.text.encode("utf-8"), pretokenizer=source.pretokenizer, special_tokens=source.special_tokens)
    return train(corpus, source.merges, special_tokens=source.special_tokens, detail=True, tie_break=tie_break).events


def merge_text(event: MergeEvent) -> str:
    return f"{show_pair(event.left, event.right)} → {show(event.token)}"


def preset_note(key: str, tie_break: str) -> str:
    """SOURCES[key].note with its fields filled in from the preset's run under tie_break."""
    note = SOURCES[key].note
    if "{" not in note:
        return note
    events = preset_run(key, tie_break)
    first = events[0]
    tied = [show_pair(a, b) for a, b, c in first.detail.top_pairs if c == first.count]
    more = " …" if len(events) > MERGES_NAMED else ""
    return note.format(
        rule=tie_break,
        merges=", then ".join(merge_text(e) for e in events[:MERGES_NAMED]) + more,
        tied=", ".join(tied[:-1]) + " and " + tied[-1] if len(tied) > 1 else tied[0],
        first=show_pair(first.left, first.right),
        ties=f"{sum(e.tie for e in events)} of {len(events)}",
    )
