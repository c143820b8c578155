"""A student's BPE trainer, as a CS336 student writes it, with the mistakes students make.

Written apart from bpe/ on purpose (its own regex, counting, choosing and
merging; nothing imported from the library), so that tests/test_diagnose.py
checks bpe.lab.diagnose against trainers it did not write. One plain recount loop:
count every pair of every pre-token, take the best, merge it everywhere, again.
A mistake is one flag:

    tie:smaller          min where the rule takes max
    tie:concatenated     ties compared on left + right joined
    tie:token_ids        ties to the smaller pair of token ids (rustbpe's rule)
    tie:first_seen       max(counts, key=counts.get): whichever tied pair was counted first
    special_tokens_not_split, whitespace_split, no_pretokenization
    overlap_right_to_left  'a a a' -> 'a aa'
    stale_counts         an incremental loop that forgets to lower the neighbours' counts
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from functools import cache

import regex

# the CS336 handout's pre-tokenizer (GPT-2's)
PAT = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

Word = tuple[bytes, ...]


def pretokens(text: str, special_tokens: list[str], mistake: str | None = None) -> Counter[Word]:
    """Each pre-token as a tuple of single bytes, with its count."""
    if special_tokens and mistake != "special_tokens_not_split":
        pieces = re.split("|".join(re.escape(t) for t in sorted(special_tokens, key=len, reverse=True)), text)
    else:
        pieces = [text]
    counts: Counter[Word] = Counter()
    for piece in pieces:
        if mistake == "whitespace_split":
            words = piece.split()
        elif mistake == "no_pretokenization":
            words = [piece] if piece else []
        else:
            words = [m.group() for m in regex.finditer(PAT, piece)]
        for word in words:
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


def pick(counts: dict[tuple[bytes, bytes], int], mistake: str | None, ids: dict[bytes, int]) -> tuple[bytes, bytes]:
    if mistake == "tie:smaller":
        return min(counts, key=lambda p: (-counts[p], p))
    if mistake == "tie:concatenated":
        return max(counts, key=lambda p: (counts[p], p[0] + p[1]))
    if mistake == "tie:token_ids":
        return min(counts, key=lambda p: (-counts[p], ids[p[0]], ids[p[1]]))
    if mistake == "tie:first_seen":
        return max(counts, key=counts.get)
    return max(counts, key=lambda p: (counts[p], p))  # CS336's rule


@cache
def train(text: str, num_merges: int, special_tokens: tuple[str, ...] = (), mistake: str | None = None) -> tuple[tuple[bytes, bytes], ...]:
    """The merges a student's trainer makes on text, with one mistake (or none); kept for the tests that ask again."""
    return tuple(_train(text, num_merges, special_tokens, mistake))


def _train(text: str, num_merges: int, special_tokens: tuple[str, ...], mistake: str | None) -> list[tuple[bytes, bytes]]:
    words = dict(pretokens(text, list(special_tokens), mistake))
    if mistake == "stale_counts":
        return train_incrementally(words, num_merges)
    ids = {bytes([i]): i for i in range(256)}
    merges = []
    for _ in range(num_merges):
        counts = count_pairs(words)
        if not counts:
            break
        best = pick(counts, mistake, ids)
        merges.append(best)
        ids.setdefault(best[0] + best[1], 256 + len(merges) - 1)
        a, b = best
        words = {(merge(w, best, mistake == "overlap_right_to_left") if a in w and b in w else w): n for w, n in words.items()}
    return merges


def train_incrementally(words: dict[Word, int], num_merges: int) -> list[tuple[bytes, bytes]]:
    """Count once, then after each merge add the new pairs -- and forget to subtract the old neighbours."""
    counts = count_pairs(words)
    merges = []
    for _ in range(num_merges):
        if not counts:
            break
        best = max(counts, key=lambda p: (counts[p], p))
        merges.append(best)
        new_words = {}
        for word, n in words.items():
            new = merge(word, best)
            if new != word:
                old_pairs, new_pairs = Counter(zip(word, word[1:])), Counter(zip(new, new[1:]))
                for pair, k in new_pairs.items():
                    if k > old_pairs[pair]:
                        counts[pair] = counts.get(pair, 0) + (k - old_pairs[pair]) * n  # the new pairs, added
                # the bug: (x, a) and (b, y) beside each merged occurrence keep their counts
            new_words[new] = n
        del counts[best]
        words = new_words
    return merges


@cache
def counts_after(text: str, special_tokens: tuple[str, ...], merges: tuple[tuple[bytes, bytes], ...]) -> dict[tuple[bytes, bytes], int]:
    """Every pair's count after the given merges, counted correctly: the reference's counts there."""
    words = dict(pretokens(text, list(special_tokens)))
    for a, b in merges:
        words = {(merge(w, (a, b)) if a in w and b in w else w): n for w, n in words.items()}
    return count_pairs(words)
