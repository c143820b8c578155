"""Naive recount: before every merge, count every pair of every unique word again.

The simplest correct trainer and the baseline for the race: each merge costs a
full pass over the corpus's pairs, however few words the merge changes. It stops
early when no pair is left (or none reaches min_pair_frequency).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from .rule import DEFAULT_RULE, Pair, merge_word
from .trainer import Delta, Merged, Trainer, Word, count_pairs, word_delta, word_lists


class Naive(Trainer):
    shown = ("choose", "merge")  # it recounts every pair, then rewrites every word
    name = "naive"
    summary = "recount every pair of every word before each merge"
    colour = "#d62728"
    complexity = (
        "recount every pair of every word, then scan them all: O(pairs counted + pairs scanned)",
        "check every word: O(words checked × word length)",
    )
    measured = ("pairs_counted", "words_checked")
    slow = "recounts every pair of every word before each merge."

    def __init__(
        self, words: Mapping[Word, int], sequence: Sequence[Word] | None = None, *, tie_break: str = DEFAULT_RULE, merged: Merged = ()
    ) -> None:
        super().__init__(words, tie_break=tie_break, merged=merged)
        self.words, self.counts = word_lists(words)
        self.pair_counts = count_pairs(self.words, self.counts)

    def choose(self, detail: bool) -> tuple[Pair, Pair | None] | None:
        # count every pair again: this pass is the whole cost of the algorithm
        self.pair_counts = count_pairs(self.words, self.counts)
        self.work["pairs_counted"] += sum(len(w) - 1 for w in self.words)
        return super().choose(detail)

    def merge(self, pair: Pair, new_id: int, detail: bool) -> tuple[Delta, int]:
        delta: Delta = defaultdict(int)
        touched = 0
        for i, word in enumerate(self.words):
            self.work["words_checked"] += 1
            new = merge_word(word, pair, new_id)
            if len(new) == len(word):
                continue
            touched += 1
            word_delta(word, new, self.counts[i], delta)
            if detail:
                self.record_word(word, new, self.counts[i])
            self.words[i] = new
        self.work["words_touched"] += touched
        return delta, touched
