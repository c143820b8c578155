"""Parent sets: every word knows its pair counts, every pair knows the words it occurs in.

A merge visits only the parents of the winning pair. For each one it compares
the word's pair counts before and after (set differences: pairs removed, added
and changed) and passes the changes on. The best pair is still found by a scan
over all pairs -- the cost the heap trainer removes.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

from .rule import DEFAULT_RULE, Pair, merge_word
from .trainer import Delta, Merged, Trainer, Word, word_lists


class ParentSet(Trainer):
    name = "parent_set"
    summary = "pairs know their parent words; a merge visits only those; best pair by a scan"
    colour = "#2ca02c"
    complexity = ("scan every distinct pair: O(pairs scanned)", "rewrite the pair's parent words: O(words rewritten × word length)")
    measured = ("pairs_scanned", "words_touched")
    slow = "scans all pairs for the best one at each merge."
    rewrite = staticmethod(merge_word)  # how a word is rewritten; bpe/lab/diagnose.py's mistaken trainer swaps it
    start = staticmethod(word_lists)  # how words start (as bytes); the mistaken trainer can start them from characters

    def __init__(
        self, words: Mapping[Word, int], sequence: Sequence[Word] | None = None, *, tie_break: str = DEFAULT_RULE, merged: Merged = ()
    ) -> None:
        super().__init__(words, tie_break=tie_break, merged=merged)
        self.words, self.counts = self.start(words)
        self.word_pairs: list[Counter[Pair]] = [Counter(zip(w, w[1:])) for w in self.words]
        self.parents: dict[Pair, set[int]] = defaultdict(set)
        pair_counts: dict[Pair, int] = defaultdict(int)
        for i, (pairs, c) in enumerate(zip(self.word_pairs, self.counts)):
            for pair, n in pairs.items():
                pair_counts[pair] += n * c
                self.parents[pair].add(i)
        self.pair_counts = dict(pair_counts)

    def merge(self, pair: Pair, new_id: int, detail: bool) -> tuple[Delta, int]:
        delta: Delta = defaultdict(int)
        parents = self.parents.pop(pair)
        for i in parents:
            word, c = self.words[i], self.counts[i]
            new = self.rewrite(word, pair, new_id)
            old_pairs, new_pairs = self.word_pairs[i], Counter(zip(new, new[1:]))
            # the three set differences: removed, added, changed
            for p in old_pairs.keys() - new_pairs.keys():
                delta[p] -= old_pairs[p] * c
                if p != pair:
                    self.parents[p].discard(i)
            for p in new_pairs.keys() - old_pairs.keys():
                delta[p] += new_pairs[p] * c
                self.parents[p].add(i)
            for p in old_pairs.keys() & new_pairs.keys():
                if old_pairs[p] != new_pairs[p]:
                    delta[p] += (new_pairs[p] - old_pairs[p]) * c
            if detail:
                self.record_word(word, new, c)
                self.record_site(i)
            self.words[i], self.word_pairs[i] = new, new_pairs
        self.work["words_touched"] += len(parents)
        return delta, len(parents)
