"""Position tracking: every pair knows where it occurs in the flat sequence of all pre-tokens.

No de-duplication: the corpus is one long sequence of pre-token occurrences,
held as a doubly linked list so that a merge can remove a token in O(1). A
merge visits only the positions of the winning pair and updates the pairs just
left and right of each site. The best pair is found by a scan over all pairs.

Pairs never cross pre-token boundaries: the links stop at the end of each
occurrence. Memory and time grow with the corpus, not with its vocabulary --
a teaching algorithm, practical up to a few MB.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from .rule import DEFAULT_RULE, Pair
from .trainer import Delta, Merged, Trainer, Word

NONE = -1  # no neighbour: the start or end of a pre-token
MAX_POSITIONS = 200_000_000  # counts that expand to more bytes than this are refused (several GB of lists)


class Positions(Trainer):
    sites = "Positions in the flat sequence"
    name = "positions"
    summary = "pair -> positions in the flat sequence; update only next to merge sites"
    needs_sequence = True  # it walks every occurrence in text order
    colour = "#ff7f0e"
    complexity = (
        "scan every distinct pair: O(pairs scanned)",
        "rewrite each site of the pair: O(positions rewritten), each O(1) in the linked list",
    )
    measured = ("pairs_scanned", "positions_touched")
    slow = "first links every occurrence of every pre-token, then scans all pairs for the best one at each merge."

    def __init__(
        self, words: Mapping[Word, int], sequence: Sequence[Word] | None = None, *, tie_break: str = DEFAULT_RULE, merged: Merged = ()
    ) -> None:
        super().__init__(words, tie_break=tie_break, merged=merged)
        if sequence is None:  # the order of occurrences does not change the merges
            positions = sum(len(w) * c for w, c in words.items())
            if positions > MAX_POSITIONS:
                raise ValueError(
                    f"The positions trainer keeps every byte of every occurrence, and these counts hold {positions:,} "
                    f"(more than {MAX_POSITIONS:,}); train them with another algorithm, such as heap."
                )
            sequence = [w for w, c in words.items() for _ in range(c)]
        self.tok: list[int] = []  # token at each position; NONE once merged into its left neighbour
        self.nxt: list[int] = []
        self.prv: list[int] = []
        self.start: list[int] = []  # first position of the occurrence each position is in
        for occurrence in sequence:
            first = len(self.tok)
            n = len(occurrence)
            self.tok.extend(occurrence)
            self.nxt.extend(range(first + 1, first + n))
            self.nxt.append(NONE)
            self.prv.append(NONE)
            self.prv.extend(range(first, first + n - 1))
            self.start.extend([first] * n)
        self.where: dict[Pair, set[int]] = defaultdict(set)  # pair -> positions of its left token
        pair_counts: dict[Pair, int] = defaultdict(int)
        tok, nxt = self.tok, self.nxt
        for i in range(len(tok)):
            j = nxt[i]
            if j != NONE:
                pair = (tok[i], tok[j])
                pair_counts[pair] += 1
                self.where[pair].add(i)
        self.pair_counts = dict(pair_counts)

    def merge(self, pair: Pair, new_id: int, detail: bool) -> tuple[Delta, int]:
        a, b = pair
        tok, nxt, prv, where = self.tok, self.nxt, self.prv, self.where
        delta: Delta = defaultdict(int)
        sites = sorted(where.pop(pair))  # left to right, so overlapping pairs merge like merge_word
        before = self._occurrences(sites) if detail else None
        merged = 0
        for p in sites:
            q = nxt[p] if tok[p] == a else NONE
            if q == NONE or tok[q] != b:
                continue  # an earlier merge in this pass used one of its tokens (e.g. 'aaa')
            merged += 1
            delta[pair] -= 1
            left, right = prv[p], nxt[q]
            if left != NONE:  # (x, a) at left becomes (x, new)
                self._move(where, delta, (tok[left], a), (tok[left], new_id), left, left)
            if right != NONE:  # (b, y) at q becomes (new, y) at p
                self._move(where, delta, (b, tok[right]), (new_id, tok[right]), q, p)
                prv[right] = p
            tok[p], tok[q], nxt[p] = new_id, NONE, right
            if detail:
                self.record_site(p)
        if detail:
            for occurrence, (old, count) in before.items():
                self.record_word(old, self._tokens(occurrence), count)
        self.work["positions_touched"] += merged
        return delta, merged

    @staticmethod
    def _move(where, delta: Delta, old: Pair, new: Pair, old_at: int, new_at: int) -> None:
        """One occurrence of pair old (at position old_at) becomes one of new (at new_at)."""
        delta[old] -= 1
        delta[new] += 1
        positions = where.get(old)
        if positions is not None:
            positions.discard(old_at)
        where[new].add(new_at)

    # -- detail: the occurrences a merge rewrote, grouped as words ------------
    def _tokens(self, first: int) -> list[int]:
        out, i = [], first
        while i != NONE:
            out.append(self.tok[i])
            i = self.nxt[i]
        return out

    def _occurrences(self, sites: list[int]) -> dict[int, tuple[list[int], int]]:
        """Occurrences holding a site, grouped by word: first position -> (tokens now, occurrences)."""
        groups: dict[tuple[int, ...], list[int]] = {}
        for first in dict.fromkeys(self.start[p] for p in sites):
            groups.setdefault(tuple(self._tokens(first)), []).append(first)
        return {firsts[0]: (list(tokens), len(firsts)) for tokens, firsts in groups.items()}
