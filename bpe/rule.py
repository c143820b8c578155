"""The two operations every trainer shares: choose the next pair, merge it in a word.

Written once so that the four trainers cannot disagree on them.

Choosing: the pair with the highest count wins; ties go to the pair whose bytes
are lexicographically greater, compared as (bytes of left, bytes of right) -- the
CS336 rule. Two different tokens can have the same bytes (``a bc`` and ``ab c``
both make ``abc``), so the ids break the last ties and the order is total.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence

Pair = tuple[int, int]


def pair_key(pair: Pair, count: int, vocab: Sequence[bytes]) -> tuple:
    """Sort key of a pair: greater key = better pair. Used with max() / sorted(reverse=True)."""
    return (count, vocab[pair[0]], vocab[pair[1]], pair)


def descending(token: bytes) -> tuple[int, ...]:
    """A key that sorts bytes in *descending* order, for the min-heap.

    b'a' > b'' and b'ab' > b'a', so their keys come out in the opposite order:
    (158, 256) < (256,) and (158, 157, 256) < (158, 256).
    subtle: the end marker 256 is above every inverted byte, so a prefix sorts
    after the longer token, which is what descending order needs.
    """
    return tuple(255 - x for x in token) + (256,)


def heap_entry(pair: Pair, count: int, keys: Sequence[tuple[int, ...]]) -> tuple:
    """Min-heap entry whose order is the reverse of pair_key: the best pair pops first.

    keys[i] is descending(vocab[i]). The entry stores everything needed to check,
    when it is popped, whether its count is still current: (-count, key_a, key_b, -a, -b).
    """
    a, b = pair
    return (-count, keys[a], keys[b], -a, -b)


def entry_pair(entry: tuple) -> Pair:
    return (-entry[3], -entry[4])


def best_two(pair_counts: Mapping[Pair, int], vocab: Sequence[bytes]) -> tuple[Pair, Pair | None]:
    """The winning pair and the runner-up, by a scan over all pairs.

    The max count is found at C speed first; the Python-level key only runs on
    the pairs that tie for it (and for second place).
    """
    counts = pair_counts.values()
    top = max(counts)
    tied = [p for p, c in pair_counts.items() if c == top]
    if len(tied) >= 2:
        tied.sort(key=lambda p: pair_key(p, top, vocab), reverse=True)
        return tied[0], tied[1]
    second = max((c for c in counts if c < top), default=0)
    if second == 0:
        return tied[0], None
    runners = [p for p, c in pair_counts.items() if c == second]
    return tied[0], max(runners, key=lambda p: pair_key(p, second, vocab))


def top_pairs(pair_counts: Mapping[Pair, int], vocab: Sequence[bytes], n: int) -> list[tuple[Pair, int]]:
    """The n best pairs in rule order, for display.

    The n-th highest count is found first (cheap comparisons of ints), so the
    Python-level key only sorts the pairs that can make the list.
    """
    if not pair_counts or n <= 0:
        return []
    cutoff = heapq.nlargest(n, pair_counts.values())[-1]
    candidates = [(p, c) for p, c in pair_counts.items() if c >= cutoff]
    candidates.sort(key=lambda item: pair_key(item[0], item[1], vocab), reverse=True)
    return candidates[:n]


def merge_word(word: Sequence[int], pair: Pair, new_id: int) -> list[int]:
    """Replace every non-overlapping occurrence of pair, left to right.

    [1, 2, 3, 1, 2], (1, 2) -> 256 gives [256, 3, 256]
    [97, 97, 97],    (97, 97) -> 256 gives [256, 97]    (left to right, no overlap)
    """
    a, b = pair
    out: list[int] = []
    i, n = 0, len(word)
    while i < n:
        if word[i] == a and i + 1 < n and word[i + 1] == b:
            out.append(new_id)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out
