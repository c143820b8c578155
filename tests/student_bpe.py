"""A student's BPE trainer, as a CS336 student writes it, with the mistakes students make.

Written apart from bpe/ on purpose (its own regex, counting, choosing and
merging; nothing imported from the library), so that tests/test_diagnose.py
checks bpe.lab.diagnose against trainers it did not write. One plain recount loop:
count every pair of every pre-token, take the best, merge it everywhere, again;
the two incremental mistakes count once and update. A mistake is one flag, and
two at once are joined by '+' ("characters_not_bytes+special_tokens_not_split"):

    tie:smaller            min where the rule takes max
    tie:concatenated       ties compared on left + right joined
    tie:token_ids          ties to the smaller pair of token ids (rustbpe's rule)
    tie:greater_token_ids  max((count, (id1, id2))): ties to the greater pair of token ids
    tie:first_seen         max(counts, key=counts.get): whichever tied pair was counted first
    characters_not_bytes   [c.encode() for c in word]: a character of several bytes is one token from the start
    special_tokens_not_split, special_tokens_removed (text.replace(special, "")),
    line_by_line (for line in file: ...), whitespace_split, no_pretokenization
    overlap_right_to_left  'a a a' -> 'a aa'
    stale_counts           an incremental loop that forgets to lower the neighbours' counts
    adjacent_occurrences   an incremental loop that reads each occurrence's neighbours in the old word, so two
                           occurrences side by side (br in g in g) lower (g, in) twice and add (ing, in) and (g, ing)
"""

from __future__ import annotations

import io
import re
from collections import Counter, defaultdict
from functools import cache

import regex

# the CS336 handout's pre-tokenizer (GPT-2's)
PAT = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

Word = tuple[bytes, ...]


def pretokens(text: str, special_tokens: list[str], mistake: str | None = None) -> Counter[Word]:
    """Each pre-token as a tuple of single bytes (or of characters' bytes), with its count."""
    flags = set((mistake or "").split("+"))
    if "special_tokens_removed" in flags:
        for special in special_tokens:
            text = text.replace(special, "")
    documents = list(io.StringIO(text)) if "line_by_line" in flags else [text]  # a file read line by line keeps each '\n'
    split = special_tokens and not flags & {"special_tokens_not_split", "special_tokens_removed"}
    pieces = []
    for document in documents:
        if split:
            pieces += re.split("|".join(re.escape(t) for t in sorted(special_tokens, key=len, reverse=True)), document)
        else:
            pieces.append(document)
    counts: Counter[Word] = Counter()
    for piece in pieces:
        if "whitespace_split" in flags:
            words = piece.split()
        elif "no_pretokenization" in flags:
            words = [piece] if piece else []
        else:
            words = [m.group() for m in regex.finditer(PAT, piece)]
        for word in words:
            if "characters_not_bytes" in flags:
                counts[tuple(c.encode("utf-8") for c in word)] += 1
            else:
                counts[tuple(bytes([b]) for b in word.encode("utf-8"))] += 1
    return counts


def count_pairs(words: dict[Word, int]) -> dict[tuple[bytes, bytes], int]:
    counts: dict[tuple[bytes, bytes], int] = defaultdict(int)
    for word, n in words.items():
        for pair in zip(word, word[1:]):
            counts[pair] += n
    return dict(counts)


def merge(word: Word, pair: tuple[bytes, bytes], right_to_left: bool = False) -> Word:
    a, b = pair
    if right_to_left:
        return _merge_from_right(word, pair)
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and word[i] == a and word[i + 1] == b:
            out.append(a + b)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def _merge_from_right(word: Word, pair: tuple[bytes, bytes]) -> Word:
    a, b = pair
    out, i = [], len(word) - 1
    while i >= 0:
        if i >= 1 and word[i - 1] == a and word[i] == b:
            out.append(a + b)
            i -= 2
        else:
            out.append(word[i])
            i -= 1
    return tuple(reversed(out))


def pick(counts: dict[tuple[bytes, bytes], int], flags: set[str], ids: dict[bytes, int]) -> tuple[bytes, bytes]:
    if "tie:smaller" in flags:
        return min(counts, key=lambda p: (-counts[p], p))
    if "tie:concatenated" in flags:
        return max(counts, key=lambda p: (counts[p], p[0] + p[1]))
    if "tie:token_ids" in flags:
        return min(counts, key=lambda p: (-counts[p], ids[p[0]], ids[p[1]]))
    if "tie:greater_token_ids" in flags:
        return max(counts, key=lambda p: (counts[p], (ids[p[0]], ids[p[1]])))
    if "tie:first_seen" in flags:
        return max(counts, key=counts.get)
    return max(counts, key=lambda p: (counts[p], p))  # CS336's rule


@cache
def train(
    text: str, num_merges: int, special_tokens: tuple[str, ...] = (), mistake: str | None = None, incremental: bool = False
) -> tuple[tuple[bytes, bytes], ...]:
    """The merges a student's trainer makes on text, with one mistake (or none); kept for the tests that ask again.

    incremental: count once and update the counts after each merge (right, unless the mistake is in the update), as a
    student does whose recount loop was too slow; the same merges as recounting, sooner.
    """
    return tuple(_train(text, num_merges, special_tokens, mistake, incremental))


def _train(
    text: str, num_merges: int, special_tokens: tuple[str, ...], mistake: str | None, incremental: bool
) -> list[tuple[bytes, bytes]]:
    flags = set((mistake or "").split("+"))
    words = dict(pretokens(text, list(special_tokens), mistake))
    if incremental or flags & {"stale_counts", "adjacent_occurrences"}:
        return train_incrementally(words, num_merges, flags)
    ids = {bytes([i]): i for i in range(256)}
    for word in words:  # a student starting from characters numbers each character of several bytes after the bytes
        for token in word:
            ids.setdefault(token, len(ids))
    merges = []
    for _ in range(num_merges):
        counts = count_pairs(words)
        if not counts:
            break
        best = pick(counts, flags, ids)
        merges.append(best)
        ids.setdefault(best[0] + best[1], len(ids))
        a, b = best
        words = {(merge(w, best, "overlap_right_to_left" in flags) if a in w and b in w else w): n for w, n in words.items()}
    return merges


def train_incrementally(words: dict[Word, int], num_merges: int, flags: set[str]) -> list[tuple[bytes, bytes]]:
    """Count once, then update the counts after each merge: right, or wrongly (stale_counts, adjacent_occurrences)."""
    counts = count_pairs(words)
    merges = []
    for _ in range(num_merges):
        if not counts:
            break
        best = max(counts, key=lambda p: (counts[p], p))
        merges.append(best)
        a, b = best
        new_words = {}
        for word, n in words.items():
            new = merge(word, best) if a in word and b in word else word
            if new != word:
                old_pairs, new_pairs = Counter(zip(word, word[1:])), Counter(zip(new, new[1:]))
                if "adjacent_occurrences" in flags:
                    update_neighbours(counts, word, best, n)
                elif "stale_counts" in flags:
                    for pair, k in new_pairs.items():
                        if k > old_pairs[pair]:
                            counts[pair] = counts.get(pair, 0) + (k - old_pairs[pair]) * n  # the new pairs, added
                    # the bug: (x, a) and (b, y) beside each merged occurrence keep their counts
                else:
                    for pair, k in old_pairs.items():
                        counts[pair] -= k * n
                    for pair, k in new_pairs.items():
                        counts[pair] = counts.get(pair, 0) + k * n
            new_words[new] = n
        del counts[best]
        counts = {p: c for p, c in counts.items() if c} if "adjacent_occurrences" not in flags and "stale_counts" not in flags else counts
        words = new_words
    return merges


def update_neighbours(counts: dict[tuple[bytes, bytes], int], word: Word, best: tuple[bytes, bytes], n: int) -> None:
    """For each occurrence of best in word: x a b y loses (x, a), (b, y) and gains (x, ab), (ab, y).

    The bug: x and y are read from the old word, so where two occurrences touch
    (br in g in g, merging in + g) the second's x is the first's g, not ing.
    """
    a, b = best
    ab = a + b
    i = 0
    while i < len(word) - 1:
        if word[i] == a and word[i + 1] == b:
            if i > 0:
                counts[(word[i - 1], a)] = counts.get((word[i - 1], a), 0) - n
                counts[(word[i - 1], ab)] = counts.get((word[i - 1], ab), 0) + n
            if i + 2 < len(word):
                counts[(b, word[i + 2])] = counts.get((b, word[i + 2]), 0) - n
                counts[(ab, word[i + 2])] = counts.get((ab, word[i + 2]), 0) + n
            i += 2
        else:
            i += 1


@cache
def counts_after(text: str, special_tokens: tuple[str, ...], merges: tuple[tuple[bytes, bytes], ...]) -> dict[tuple[bytes, bytes], int]:
    """Every pair's count after the given merges, counted correctly: the reference's counts there."""
    words = dict(pretokens(text, list(special_tokens)))
    for a, b in merges:
        words = {(merge(w, (a, b)) if a in w and b in w else w): n for w, n in words.items()}
    return count_pairs(words)
