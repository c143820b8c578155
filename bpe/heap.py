"""Inverted index + lazy max-heap: the fast trainer.

Phases: (1) index the words that hold each pair and count each pair from its
words, (2) heapify one entry per pair, (3) merge loop: pop the best entry,
rewrite only the words the index lists, push entries for the new pairs.

subtle: lazy deletion. When a merge lowers a pair's count the old heap entry is
left in place. Every pair whose count goes *up* gets a new entry with its true
count (normally only new pairs, which contain the new token; under the
huggingface rule a reused token can also raise an old pair). So every pair has
an entry whose stored count is at least its true one: when a stale entry
reaches the top it is pushed back with its true count (or dropped at zero),
and the first entry popped whose count is current is the true best. An entry
stored *below* the true count is harmless: a current one pops before it.
Why the heap needs no rebuilding: outside the huggingface rule a pair's count
goes up only in the merge that makes the pair, so a live pair has one entry and
the other entries are pairs that died and have not reached the top yet (on
50 MB of text: 240,000 entries for 192,000 live pairs after 9,743 merges).

subtle: the index is lazy too, so it is plain arrays of word numbers that are
only ever appended to. A word is listed under a pair when it gains it (at the
start once per occurrence, 'banana' twice under (a, n), so that a pair's count
is the sum of its listed words' counts) and stays listed when it loses it: a
merge checks each listed word once, and one that no longer holds the pair is
skipped. A pair leaves the index when its count reaches zero.

How a word is held: as a string with one character per token (`as_text`), so
that finding and merging a pair are str methods, in C, and a word costs about
half a list of ints.

Not here: choosing between equal counts (rule.py) or the loop itself (trainer.py).
"""

from __future__ import annotations

from array import array
from bisect import insort
from collections import defaultdict
from collections.abc import Mapping, Sequence
from functools import partial
from heapq import heapify, heappop, heappush
from itertools import repeat

from .events import DETAIL_CAP, HeapEntry, HeapView
from .rule import DEFAULT_RULE, Pair, entry_pair, heap_entry
from .trainer import Delta, Merged, Trainer, Word

# levels of the heap tree kept in a snapshot: 2**5 - 1 = 31 entries
SNAPSHOT_ENTRIES = 31

# the most tokens a word of characters can hold: one character per token, up to U+10FFFF
MAX_TOKENS = 0x110000

Listed = array  # array('I'): the numbers of the words listed under one pair, 4 bytes each


class Heap(Trainer):
    shown = ("choose", "apply")  # it pops the heap, then pushes the pairs whose count went up
    name = "heap"
    summary = "inverted index pair -> words, and a max-heap with lazy deletion"
    colour = "#1f77b4"
    complexity = (
        "pop the heap, pushing stale entries back: O((1 + stale pops) × log heap size)",
        "rewrite the words its index lists: O(words checked × word length), then O(heap pushes × log heap size)",
    )
    measured = ("stale_pops", "words_checked")

    def __init__(
        self, words: Mapping[Word, int], sequence: Sequence[Word] | None = None, *, tie_break: str = DEFAULT_RULE, merged: Merged = ()
    ) -> None:
        super().__init__(words, tie_break=tie_break, merged=merged)
        # words of one byte never merge; subtle: numbered in byte order, so that words which share pairs
        # (' the', ' then', ' there') sit side by side in memory: a merge visits fewer far-apart words
        # (words kept in the counts' hash order: 14 % slower merge loop on 48 MB)
        kept = sorted(w for w in words if len(w) > 1)
        self.counts: list[int] = list(map(words.__getitem__, kept))
        # phase 1: list every word under each pair it holds (zip over bytes gives pairs of byte ids) ...
        where: dict[Pair, Listed] = defaultdict(partial(array, "I"))
        for i, word in enumerate(kept):
            for pair in zip(word, word[1:]):
                where[pair].append(i)
        self.where = dict(where)
        # ... then a pair's count is the sum of its words' counts (a word listed twice holds it twice), added up in C
        self.pair_counts = {pair: self.total(listed) for pair, listed in where.items()}
        del where
        if kept and isinstance(kept[0], tuple):  # words of token ids (continuing a run)
            self.words: list[str] = list(map(as_text, kept))
        else:
            self.words = list(map(bytes.decode, kept, repeat("latin-1")))  # as_text(w): byte b is chr(b)
        self.ids: list[int] = list(range(len(self.vocab)))  # every token id once, so that pairs share their ints
        # phase 2: one heap entry per pair
        self.heap = [heap_entry(p, c, self.keys) for p, c in self.pair_counts.items()]
        heapify(self.heap)
        self._stale: list[HeapEntry] = []
        self._winner_pops = 0

    def total(self, listed: Sequence[int]) -> int:
        """The summed counts of the words listed: [0, 2, 2] with counts [5, 1, 3] -> 11."""
        return sum(map(self.counts.__getitem__, listed))

    # -- choosing: the heap ---------------------------------------------------
    def _clean_top(self, detail: bool) -> None:
        """Pop stale entries until the top one is current: refresh them, or drop them at zero."""
        heap, counts = self.heap, self.pair_counts
        while heap:
            entry = heap[0]
            current = counts.get(entry_pair(entry), 0)
            if current == -entry[0]:
                return
            heappop(heap)
            self.work["stale_pops"] += 1
            if detail:
                pair = entry_pair(entry)
                self._stale.append(HeapEntry(-entry[0], self.vocab[pair[0]], self.vocab[pair[1]], current))
            if current:
                heappush(heap, (-current,) + entry[1:])
                self.work["heap_pushes"] += 1

    def choose(self, detail: bool) -> tuple[Pair, Pair | None] | None:
        self._clean_top(detail)
        if not self.heap:
            return None
        if detail:
            self._winner_pops = len(self._stale)  # the stale pops so far found the winner; the rest, the runner-up
        best = entry_pair(heappop(self.heap))
        self.work["heap_pops"] += 1
        # the runner-up is the next current entry
        self._clean_top(detail)
        return best, (entry_pair(self.heap[0]) if self.heap else None)

    def unchoose(self, pair: Pair) -> None:
        heappush(self.heap, heap_entry(pair, self.pair_counts[pair], self.keys))

    # -- merging: the index ---------------------------------------------------
    def merge(self, pair: Pair, new_id: int, detail: bool) -> tuple[Delta, int]:
        """Rewrite the words the index lists for pair; return the pair-count changes.

        Each word is split at its first site by str.partition, in C. Most words
        hold the pair once, and then every change is named by a neighbour of the
        site alone: x just before it loses (x, a) and gains (x, new); y just after
        it loses (b, y) and gains (new, y). So the loop only lists the word under
        x and under y -- no pair to build or hash -- and `fold` adds up each
        neighbour's changes once, after the loop. A word with several sites
        (rarer) is compared pair by pair (`merge_sites`).

        'lowly', pair (l, o) -> 256 = 'Ā': 'lowly'.partition('lo') is
        ('', 'lo', 'wly'): no x, y = 'w', so the word is listed under after['w']
        and becomes 'Āwly'; fold then moves its count from (o, w) to (256, w).
        """
        if new_id >= MAX_TOKENS:
            raise ValueError(f"The heap trainer holds at most {MAX_TOKENS:,} tokens (one character each); ask for fewer merges.")
        self.ids.extend(range(len(self.ids), new_id + 1))  # usually the one new id; none when a token is reused
        a, b = pair
        ab, merged = chr(a) + chr(b), chr(new_id)
        words, counts = self.words, self.counts
        delta: Delta = defaultdict(int)
        before: dict[str, list[int]] = defaultdict(list)  # x -> the words with x just before their one site
        after: dict[str, list[int]] = defaultdict(list)  # y -> the words with y just after it
        touched = 0
        # subtle: a word is listed once per occurrence it gained; dict.fromkeys checks it once (in C)
        candidates = dict.fromkeys(self.where.pop(pair))
        for i in candidates:
            head, found, tail = words[i].partition(ab)
            if not found:
                continue  # listed lazily: the word no longer holds the pair
            if ab in tail:  # several sites
                new = self.merge_sites(words[i], pair, new_id, i, delta)
            else:  # one site
                if head:
                    before[head[-1]].append(i)
                if tail:
                    after[tail[0]].append(i)
                new = head + merged + tail
            if detail:
                self.record_word(as_ids(words[i]), as_ids(new), counts[i])
            words[i] = new
            touched += 1
        self.fold(pair, new_id, before, after, delta)
        self.work["words_checked"] += len(candidates)
        self.work["words_touched"] += touched
        return delta, touched

    def merge_sites(self, word: str, pair: Pair, new_id: int, i: int, delta: Delta) -> str:
        """Merge word number i, which holds pair at several sites; add its changes to delta and index it.

        Only the pairs that touch a site change: (x, a) and (b, y) lose the
        word's count, (x, new) and (new, y) gain it. str.replace merges left to
        right without overlap, as merge_word does. (The pair's own count is set
        by fold.) 'abcab', (a, b) -> 'Ā': sites 0 and 3; (b, c) and (c, a) lose,
        (Ā, c) and (c, Ā) gain; returns 'ĀcĀ'.
        subtle: when two sites are adjacent ('abab') the pair between them is
        shared: the left site removes (b, a) and adds (Ā, Ā), the right one must not.
        """
        a, b = pair
        ab = chr(a) + chr(b)
        new = word.replace(ab, chr(new_id))
        ids, where, count = self.ids, self.where, self.counts[i]
        n, m = len(word), len(new)
        site, previous, k = word.find(ab), -3, 0
        born: set[Pair] = set()  # the new pairs, each listed once however many sites make it
        while site >= 0:
            shared = site - previous == 2  # this site starts where the previous one ended
            if site > 0 and not shared:
                delta[(ids[ord(word[site - 1])], a)] -= count
            if site + 2 < n:
                delta[(b, ids[ord(word[site + 2])])] -= count
            j = site - k  # where the new token sits in the new word
            if j > 0 and not shared:
                p = (ids[ord(new[j - 1])], new_id)
                delta[p] += count
                born.add(p)
            if j + 1 < m:
                p = (new_id, ids[ord(new[j + 1])])
                delta[p] += count
                born.add(p)
            previous, k = site, k + 1
            site = word.find(ab, site + 2)
        for p in born:
            index(where, p, [i])
        return new

    def fold(self, pair: Pair, new_id: int, before: dict[str, list[int]], after: dict[str, list[int]], delta: Delta) -> None:
        """Turn the words listed by neighbour into pair-count changes, and index them under their new pairs.

        before {'x': [3, 9]}, words 3 and 9 occurring 5 and 2 times: (x, a) -7,
        (x, new) +7, and words 3 and 9 listed under (x, new).
        """
        a, b = pair
        ids, where = self.ids, self.where
        for x, listed in before.items():
            x = ids[ord(x)]  # subtle: the shared int, not a new one from ord (28 bytes a pair)
            p = (x, new_id)  # subtle: one tuple for delta, pair_counts and where alike
            n = self.total(listed)
            delta[(x, a)] -= n
            delta[p] += n
            index(where, p, listed)
        for y, listed in after.items():
            y = ids[ord(y)]
            p = (new_id, y)
            n = self.total(listed)
            delta[(b, y)] -= n
            delta[p] += n
            index(where, p, listed)
        # subtle: merging left to right leaves no occurrence of the pair in any
        # word ('aaa' -> 'Āa'), and the index lists every word that held it
        delta[pair] = -self.pair_counts[pair]

    def apply(self, delta: Delta) -> None:
        """Apply the changes, and push an entry for each pair whose count went up (those with the new token).

        Pairs that went down keep their entries: they go stale and are fixed when
        popped. A pair whose count reaches zero leaves the index: no word holds it.
        Trainer.apply written out with the push, so the changes are walked once (hot path).
        """
        counts, heap, keys, where = self.pair_counts, self.heap, self.keys, self.where
        pushes = 0
        for pair, change in delta.items():
            if change:
                n = counts.get(pair, 0) + change
                if n:
                    counts[pair] = n
                else:
                    del counts[pair]
                    where.pop(pair, None)
                if change > 0:
                    heappush(heap, heap_entry(pair, n, keys))
                    pushes += 1
        self.work["heap_pushes"] += pushes

    # -- detail (only when asked) --------------------------------------------
    def _top_pairs(self) -> list[tuple[Pair, int]]:
        """The best pairs, read off the heap itself without changing it.

        Walk the heap tree best-first from the root. Every pair has an entry whose
        stored count is at least the true one, so once the next stored entry is
        worse than the DETAIL_CAP-th best true entry found, nothing further down
        can make the list. (A pair with two entries is listed once.)
        """
        heap, counts, found, seen = self.heap, self.pair_counts, [], set()
        frontier = [(heap[0], 0)] if heap else []
        while frontier:
            entry, i = heappop(frontier)
            if len(found) >= DETAIL_CAP and entry > found[DETAIL_CAP - 1]:
                break
            pair = entry_pair(entry)
            count = counts.get(pair, 0)
            if count and pair not in seen:
                seen.add(pair)
                insort(found, heap_entry(pair, count, self.keys))
            for child in (2 * i + 1, 2 * i + 2):
                if child < len(heap):
                    heappush(frontier, (heap[child], child))
        return [(entry_pair(e), -e[0]) for e in found[:DETAIL_CAP]]

    def heap_view(self, detail: bool) -> HeapView | None:
        """The heap as stored, before this merge is chosen: stale entries included."""
        if not detail:
            return None
        view = self._snapshot(self.heap[:SNAPSHOT_ENTRIES])
        self._view_size = len(self.heap)
        return view

    def _snapshot(self, entries) -> tuple[HeapEntry, ...]:
        return tuple(
            HeapEntry(-e[0], self.vocab[entry_pair(e)[0]], self.vocab[entry_pair(e)[1]], self.pair_counts.get(entry_pair(e), 0))
            for e in entries
        )

    def _detail(self, top, distinct, delta, heap):
        if heap is not None:
            stale = tuple(self._stale[:DETAIL_CAP])
            heap = HeapView(
                entries=heap, size=self._view_size, stale_popped=stale, stale_popped_total=len(self._stale), winner_pops=self._winner_pops
            )
            self._stale = []
        return super()._detail(top, distinct, delta, heap)


# ---------------------------------------------------------------------------
# words as strings, and the index


def as_text(ids: Sequence[int]) -> str:
    """Token ids as a string with one character per token: [108, 111, 119] -> 'low', [256, 119] -> 'Āw'.

    The first 256 characters are the bytes (a pre-token decoded as latin-1 is
    as_text of its bytes), so the first merged token is 'Ā', the character
    after 'ÿ'. subtle: a character is at most U+10FFFF, hence MAX_TOKENS.
    """
    return "".join(map(chr, ids))


def as_ids(word: str) -> list[int]:
    """as_text undone: 'Āw' -> [256, 119]."""
    return list(map(ord, word))


def index(where: dict[Pair, Listed], pair: Pair, listed: list[int]) -> None:
    """List words under pair: {(1, 2): array('I', [4])}, (1, 2), [7, 9] -> {(1, 2): array('I', [4, 7, 9])}."""
    known = where.get(pair)
    if known is None:  # the usual case: the pair was born in this merge
        where[pair] = array("I", listed)
    else:
        known.extend(listed)
