"""Encoding with a trained BPE, the readable reference: text -> ids, in one sitting.

What it does, in three steps (`Encoder.encode`):
1. cut the text at the special tokens allowed, each one id of its own;
2. pre-tokenize the rest (text/pretokenizers.py: GPT-2's regex, say), so that no merge crosses a pre-token;
3. merge each pre-token's bytes by rank: of the adjacent pairs that are merges, take the one learned
   first (the lowest rank) and merge it everywhere in the pre-token, left to right; again, until no
   pair is a merge.

    merges l+o (rank 0), lo+w (rank 1), e+r (rank 2):  'lower' -> l o w e r -> lo w e r -> low e r -> low er

Step 3 gives the tokens training would give by replaying its merges in order, and the ids GPT-2,
HuggingFace and tiktoken give with the same files. It is where the time goes, so each unique
pre-token is merged once and its ids cached.

BPE-dropout (`merge_dropout`, `encode(..., dropout=)`): step 3 with each merge skipped, when it is
about to be made, with probability p -- so a word gets other segmentations (a regulariser for training
a model; Provilkov et al. 2020), exactly as HuggingFace tokenizers' BPE(dropout=p) skips them. Its own
loop, never cached: the path without dropout does not change.

What it does not do: check a vocabulary, refuse special tokens, take bytes or surrogates as tiktoken
does (tokenizer.py and tiktoken_api.py); encode fast (the compiled core does the same in C, held to
this file by the property tests: encode_c.py); show its steps (steps.py replays `rounds`, this file's
own loop, for the classroom).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from heapq import heapify, heappop, heappush
from random import Random

from ..text.pretokenize import _UNITS, split_gpt2
from ..text.pretokenizers import ENCODING, ERRORS, PreTokenizer, find_specials

CACHE_CAP = 200_000  # cached pre-tokens (and GPT-2 units); cleared when full
Dropout = tuple[float, Random]  # BPE-dropout: the probability of skipping a merge, and the random numbers that decide
LONG_WORD = 64  # pre-tokens longer than this are merged with a heap: O(n log n), not O(n^2)


class Encoder:
    """The ids of text under one vocabulary and its merges (the first `limit` of them on each call)."""

    def __init__(
        self,
        ids: Mapping[bytes, int],
        merges: Sequence[tuple[bytes, bytes]],
        inert: frozenset[int],
        pretokenizer: PreTokenizer,
        whole: Mapping[bytes, int] | None = None,
    ):
        # the merges as ids: (left id << 32 | right id) -> its rank (the first, should a pair be listed twice) ...
        self.ranks: dict[int, int] = {}
        for rank, (a, b) in enumerate(merges):
            if rank not in inert:  # a merge whose part is no token never applies
                self.ranks.setdefault(ids[a] << 32 | ids[b], rank)
        # ... and rank -> the id its merge makes
        self.made = [-1 if rank in inert else ids[a + b] for rank, (a, b) in enumerate(merges)]
        self.byte_ids = {b: ids[bytes([b])] for b in range(256) if bytes([b]) in ids}
        self.pretokenizer = pretokenizer
        # HuggingFace's ignore_merges (Llama 3): a pre-token that is a token of the vocabulary is that token, unmerged
        self.whole = whole
        self.words: dict[tuple[bytes, int], tuple[int, ...]] = {}  # (pre-token, limit) -> ids
        self.units: dict[str, list[int]] = {}  # a GPT-2 unit -> ids, with every merge

    def encode(self, text: str, limit: int, specials: Mapping[str, int], dropout: Dropout | None = None) -> list[int]:
        """The ids of text with the first `limit` merges; `specials` are the special tokens allowed, with their ids.

        dropout: (p, a seeded random.Random): each merge skipped with probability p (merge_dropout).
        """
        out: list[int] = []
        pos = 0
        # 1. the special tokens allowed, each one id; the text between them is ordinary
        for start, token in find_specials(text, specials) if specials else ():
            self.encode_ordinary(text[pos:start], limit, out, dropout)
            out.append(specials[token])
            pos = start + len(token)
        self.encode_ordinary(text[pos:], limit, out, dropout)
        return out

    def encode_ordinary(self, text: str, limit: int, out: list[int], dropout: Dropout | None = None) -> None:
        """Append the ids of text without special tokens to out."""
        if dropout is not None:  # each pre-token merged anew, with merges skipped at random
            for piece in self.pretokenizer.split(text):
                out += self.merge_dropout(self.start(piece.encode(ENCODING, ERRORS)), limit, *dropout)
            return
        if self.pretokenizer.units and limit == len(self.made):
            self._encode_units(text, out)
            return
        # 2. pre-tokenize, 3. merge each pre-token
        for piece in self.pretokenizer.split(text):
            out += self.word_ids(piece.encode(ENCODING, ERRORS), limit)

    def _encode_units(self, text: str, out: list[int]) -> None:
        """encode_ordinary for GPT-2's pre-tokenizer with every merge, a unit at a time.

        No GPT-2 pre-token crosses a unit (a word with the whitespace before it: see pretokenize._UNITS),
        so each unique unit is split and merged once and its ids cached.
        """
        units, limit = self.units, len(self.made)
        for unit in _UNITS.findall(text):
            ids = units.get(unit)
            if ids is None:
                ids = []  # subtle: a list, extended in place: a unit of 100,000 pre-tokens (minified code) stays linear
                for piece in split_gpt2([unit]):
                    ids += self.word_ids(piece.encode(ENCODING, ERRORS), limit)
                if len(units) >= CACHE_CAP:
                    units.clear()
                units[unit] = ids
            out += ids

    def word_ids(self, word: bytes, limit: int) -> tuple[int, ...]:
        """The ids of one pre-token with the first `limit` merges, cached."""
        if self.whole is not None and limit == len(self.made) and word in self.whole:
            return (self.whole[word],)
        key = (word, limit)
        ids = self.words.get(key)
        if ids is None:
            start = self.start(word)
            ids = tuple(self.merge_long(start, limit) if len(start) > LONG_WORD else self.merge(start, limit))
            if len(self.words) >= CACHE_CAP:
                self.words.clear()
            self.words[key] = ids
        return ids

    def start(self, word: bytes) -> list[int]:
        """A pre-token's bytes as ids, before any merge; ValueError with a sentence for a byte the vocabulary lacks."""
        try:
            return [self.byte_ids[b] for b in word]
        except KeyError:
            bad = next(b for b in word if b not in self.byte_ids)
            shown = word.decode(ENCODING, "backslashreplace")[:40]
            raise ValueError(
                f"The text holds byte 0x{bad:02x} (in {shown!r}), which this tokenizer's vocabulary lacks, so it cannot be encoded."
            ) from None

    def merge(self, ids: list[int], limit: int) -> list[int]:
        """3. merge by rank: every round merges the lowest rank present, until none is left (see `rounds`)."""
        ids = list(ids)
        for _ in self.rounds(ids, limit):
            pass
        return ids

    def rounds(self, ids: list[int], limit: int) -> Iterator[tuple[int, list[int]]]:
        """Merge by rank, in place: each round joins every pair of the lowest rank present, left to right.

        Yields each round's rank and where it merged (the left part's index before the round).
        [97, 97, 97] with (97, 97) -> 256 as rank 0: one round, (0, [0]), leaving [256, 97].
        Only the two pairs beside a merge change, so ranks are looked up there, not for the whole word.
        subtle: the pair a merge creates never has the rank being merged (it holds the new token), so
        the next occurrence of that rank is searched for to the right only.
        """
        get, made = self.ranks.get, self.made
        ranks = [get(a << 32 | b, limit) for a, b in zip(ids, ids[1:])]  # ranks[i]: the rank of (ids[i], ids[i + 1])
        while ranks:
            # find the pair learned first
            rank = min(ranks)
            if rank >= limit:
                return
            new = made[rank]
            i = ranks.index(rank)
            more = ranks.count(rank) > 1
            at, merged = [], 0
            while True:
                # merge it here (and note where); only its two neighbours' pairs change
                at.append(i + merged)
                ids[i : i + 2] = [new]
                del ranks[i]
                merged += 1
                if i:
                    ranks[i - 1] = get(ids[i - 1] << 32 | new, limit)
                if i < len(ranks):
                    ranks[i] = get(new << 32 | ids[i + 1], limit)
                if not more or rank not in ranks:  # an overlap ('a a a') can use up the next occurrence
                    break
                i = ranks.index(rank, i + 1)
            yield rank, at

    def merge_dropout(self, ids: list[int], limit: int, p: float, rng: Random) -> list[int]:
        """merge with BPE-dropout, as HuggingFace tokenizers' BPE merges with dropout=p (its word.rs, merge_all).

        The pairs that are merges wait in a heap, lowest rank (then leftmost) first. The first is
        skipped with probability p and put aside, and the next is tried; once one is not skipped, those
        put aside come back. When every pair left is skipped in a row, the word is done. So p=0 is
        `merge`, p=1 leaves the bytes. subtle: the draw comes before the check that the pair is still
        there (an entry an earlier merge used up), as HuggingFace draws it.
        l o w with l+o (rank 0), lo+w (rank 1), p=0.5: 'low' 1/4 of the time (neither skipped), 'lo w' 1/4
        (lo+w skipped, and nothing else to try), 'l o w' 1/2 (l+o skipped: o+w is no merge, so nothing else).
        """
        get, made = self.ranks.get, self.made
        parts = list(ids)  # a part merged into its left neighbour becomes -1
        n = len(parts)
        if n < 2:
            return parts
        nxt, prv = list(range(1, n + 1)), list(range(-1, n - 1))
        nxt[-1] = -1
        queue = [(r, i) for i in range(n - 1) if (r := get(parts[i] << 32 | parts[i + 1], limit)) < limit]
        heapify(queue)
        skipped: list[tuple[int, int]] = []
        while queue:
            top = heappop(queue)
            # drop this merge, this time
            if rng.random() < p:
                skipped.append(top)
                continue
            for entry in skipped:  # the ones skipped come back
                heappush(queue, entry)
            skipped = []
            rank, i = top
            j = nxt[i] if parts[i] >= 0 else -1
            if j < 0 or get(parts[i] << 32 | parts[j], limit) != rank:
                continue  # used up by an earlier merge, or changed since it was pushed
            # merge i and j; the pairs with the neighbours are new candidates
            parts[i], parts[j] = made[rank], -1
            nxt[i] = nxt[j]
            if nxt[i] >= 0:
                prv[nxt[i]] = i
                if (r := get(parts[i] << 32 | parts[nxt[i]], limit)) < limit:
                    heappush(queue, (r, i))
            if prv[i] >= 0 and (r := get(parts[prv[i]] << 32 | parts[i], limit)) < limit:
                heappush(queue, (r, prv[i]))
        return [part for part in parts if part >= 0]

    def merge_long(self, ids: list[int], limit: int) -> list[int]:
        """merge for a long pre-token, in O(n log n): a heap of (rank, position) over a linked list.

        Each round takes every position holding the lowest rank present and merges them left to right,
        skipping those an earlier merge of the round used up -- the same rounds as `rounds`, without its
        O(n) list edits.
        """
        get, made = self.ranks.get, self.made
        parts: list[int] = list(ids)
        n = len(parts)
        if n < 2:
            return parts
        nxt, prv = list(range(1, n + 1)), list(range(-1, n - 1))
        nxt[-1] = -1
        heap = [(r, i) for i in range(n - 1) if (r := get(parts[i] << 32 | parts[i + 1], limit)) < limit]
        heapify(heap)
        while heap:
            rank = heap[0][0]
            sites = []
            while heap and heap[0][0] == rank:
                sites.append(heappop(heap)[1])
            for i in sorted(sites):
                j = nxt[i] if parts[i] >= 0 else -1
                if j < 0 or get(parts[i] << 32 | parts[j], limit) != rank:
                    continue  # used up earlier in this round, or changed since it was pushed
                parts[i], parts[j] = made[rank], -1
                after = nxt[j]
                nxt[i] = after
                if after >= 0:
                    prv[after] = i
                    if (r := get(parts[i] << 32 | parts[after], limit)) < limit:
                        heappush(heap, (r, i))
                before = prv[i]
                if before >= 0 and (r := get(parts[before] << 32 | parts[i], limit)) < limit:
                    heappush(heap, (r, before))
        return [p for p in parts if p >= 0]
