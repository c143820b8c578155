"""The sidebar's preset notes say what the preset's run does, under every tie-break rule.

The merges a note names are checked against training the preset's text with
bpe.train_bpe_text, and the pairs it calls tied against a pair count made here
from the words; neither goes through ui.preset_notes.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from conftest import open_app

from bpe import pretokenize, train_bpe_text
from bpe.rule import RULES
from ui.corpus import SOURCES
from ui.preset_notes import preset_note
from ui.render import show

PRESETS = [key for key, source in SOURCES.items() if source.text]
MERGE = re.compile(r"([^\s,]+) \+ ([^\s,]+) → ([^\s,]+)")


def run(key: str, rule: str) -> list[tuple[bytes, bytes]]:
    source = SOURCES[key]
    special_tokens = list(source.special_tokens)
    return train_bpe_text(
        source.text, 256 + source.merges + len(special_tokens), special_tokens, pretokenizer=source.pretokenizer, tie_break=rule
    )[1]


def first_tied(key: str) -> set[str]:
    """The pairs with the highest count before the first merge, counted here from the pre-tokens."""
    source = SOURCES[key]
    pairs: Counter = Counter()
    for word, n in pretokenize(source.text.encode(), pretokenizer=source.pretokenizer).counts.items():
        for a, b in zip(word, word[1:]):
            pairs[(bytes([a]), bytes([b]))] += n
    top = max(pairs.values())
    return {f"{show(a)} + {show(b)}" for (a, b), c in pairs.items() if c == top}


@pytest.mark.parametrize("rule", list(RULES))
@pytest.mark.parametrize("key", PRESETS)
def test_merges_a_note_names_are_the_runs_first_merges_in_order(key, rule):
    named = MERGE.findall(preset_note(key, rule))
    merges = run(key, rule)
    assert [(a, b, t) for a, b, t in named] == [(show(x), show(y), show(x + y)) for x, y in merges[: len(named)]]


@pytest.mark.parametrize("rule", list(RULES))
def test_wikipedia_note_under_each_rule(rule):
    note = preset_note("wikipedia", rule)
    second = "aa + a → aaa" if rule == "cs336" else "a + b → ab"  # merge 2 is a tie at 2 between aa + a and a + b
    assert second in note
    assert f"Under the {rule} rule" in note


@pytest.mark.parametrize("rule", list(RULES))
def test_textbook_note_names_the_tied_pairs_and_the_rules_pick(rule):
    note = preset_note("textbook", rule)
    tied = first_tied("textbook")
    assert len(tied) == 2 and all(pair in note for pair in tied)
    a, b = run("textbook", rule)[0]
    assert note.endswith(f"{rule} takes {show(a)} + {show(b)}.")


def test_sidebar_note_follows_the_tie_break_rule():
    at = open_app(source="wikipedia")
    assert any("aa + a → aaa" in c.value for c in at.sidebar.caption)
    at.sidebar.selectbox(key="tie_break").set_value("huggingface").run()
    captions = [c.value for c in at.sidebar.caption]
    assert any("a + b → ab" in c for c in captions) and not any("aa + a → aaa" in c for c in captions)
