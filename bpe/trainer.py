"""What the four trainers share: the vocabulary, the merge loop, events and detail.

A trainer is built from pre-token counts (its constructor does the initial pair
count) and then yields one MergeEvent per merge from `merges()`. It may also start
where an earlier run stopped (continuing a tokenizer): given the merges made before
(`merged`), it makes their tokens first, as that run did, and the words are then
sequences of token ids (tuples) rather than bytes. Subclasses
supply two steps -- `choose` (find the best pair and the runner-up) and `merge`
(rewrite the words that contain it and return the pair-count changes as data)
-- and the loop here applies the changes, so every trainer updates its counts
the same way and the changes can be shown.

A trainer follows one tie-break rule (rule.py: cs336, huggingface or
rustbpe), given by name when it is built; `keys` holds the rule's key of every
token, kept up to date as tokens are minted.

Not here: reading or pre-tokenizing text (see pretokenize.py), or choosing
between equal counts (see rule.py).
"""

from __future__ import annotations

import gc
import heapq
import threading
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import ClassVar

from .events import DETAIL_CAP, MergeDetail, MergeEvent, StopReason, WordChange
from .rule import DEFAULT_RULE, Pair, best_two, merge_word, rule_for, top_pairs

Delta = dict[Pair, int]
Word = bytes | tuple[int, ...]  # a pre-token: its bytes, or (continuing a run) its token ids
Merged = Sequence[tuple[bytes, bytes]]  # merges made before a trainer starts (continuing a run)


class Trainer:
    """A training algorithm, and what the rest of the code needs to know about it (a plugin: train.ALGORITHMS).

    Everything the CLI, the race and the app's pages say about an algorithm is
    read from these class attributes, so a new trainer is its file plus one
    registry line (`train.register`), and nothing else changes.

    Hooks a subclass supplies: `merge` (always) and `choose` (default: scan every
    pair count). Hooks it may override when its structures need them: `unchoose`
    (undo a choice that was not merged), `apply` (add a merge's pair-count
    changes), `heap_view`, `_top_pairs` and `_detail` (the detail the step page shows).
    """

    name: ClassVar[str]  # its name in ALGORITHMS, the CLI and the app
    summary: ClassVar[str]  # one line: the idea
    needs_sequence: ClassVar[bool] = False  # pre-tokenizing must keep every occurrence in text order (PreTokens.sequence)
    colour: ClassVar[str] = "#9467bd"  # its line and bars, the same in every chart
    complexity: ClassVar[tuple[str, str]] = ("", "")  # big-O of (finding the best pair, making the merge), in its counters' words
    measured: ClassVar[tuple[str, ...]] = ()  # the work counters that measure those two steps
    work_names: ClassVar[dict[str, str]] = {}  # names of counters it keeps beyond events.WORK_NAMES (counter -> as a page says it)
    slow: ClassVar[str] = ""  # why tracing it with detail is slow, as the end of a sentence ("" for a fast one)
    # a compiled trainer: the readable trainer it compiles, which records its detail and runs where it cannot
    reference: ClassVar[type[Trainer] | None] = None
    encodes: ClassVar[bool] = False  # given words of bytes and `merged`, it encodes them itself (else: encode_words, in train.Run)
    missing: ClassVar[str] = ""  # why it cannot run here, as the end of a sentence ("" when it can)
    # what the step page shows of it: the methods that make a merge happen, in order (their lines beside each step)
    shown: ClassVar[tuple[str, ...]] = ("choose",)
    sites: ClassVar[str] = "Word ids"  # what a merge's detail.sites are, as a page names them

    def __init__(
        self,
        words: Mapping[Word, int],
        sequence: Sequence[Word] | None = None,
        *,
        tie_break: str = DEFAULT_RULE,
        merged: Merged = (),
    ) -> None:
        """words: pre-token -> count, each pre-token its bytes (byte b is token b), or, with merged, a tuple of token ids.

        merged: the merges an earlier run made, whose tokens are made first, in order (ids 256, 257, ... as
        that run gave them), so that training goes on as that run would have: the words must hold the ids of
        those tokens (each pre-token encoded with those merges: encode_words; train.Run does it), and
        merges() counts them among its merges.
        """
        self.rule = rule_for(tie_break)
        self.vocab: list[bytes] = [bytes([i]) for i in range(256)]
        self.keys: list[object] = [self.rule.token_key(i, t) for i, t in enumerate(self.vocab)]  # the rule's key of each token
        self.token_ids: dict[bytes, int] = {t: i for i, t in enumerate(self.vocab)}  # bytes -> id, for rules that reuse tokens
        for token in made_tokens(merged, self.rule.reuses_tokens)[256:]:  # the tokens mint() made for them, in order
            self.keys.append(self.rule.token_key(len(self.vocab), token))
            self.token_ids.setdefault(token, len(self.vocab))
            self.vocab.append(token)
        self.made_before = len(merged)  # merges made before this trainer: the rank of its first
        self.pair_counts: dict[Pair, int] = {}
        self.work: Counter[str] = Counter()  # counters that explain the cost
        self.stop_reason: str = ""  # a StopReason once merges() has returned
        # detail of the merge in progress, filled by subclasses only when asked
        self._rewritten: list[tuple[Sequence[int], Sequence[int], int]] = []
        self._sites: list[int] = []
        self._sites_total = 0

    # -- the two steps a subclass supplies ------------------------------------
    def choose(self, detail: bool) -> tuple[Pair, Pair | None] | None:
        """The best pair and the runner-up, or None when no pair is left.

        By default a scan over every pair count; the heap trainer overrides this.
        """
        if not self.pair_counts:
            return None
        self.work["pairs_scanned"] += len(self.pair_counts)
        return best_two(self.pair_counts, self.keys)

    def merge(self, pair: Pair, new_id: int, detail: bool) -> tuple[Delta, int]:
        """Rewrite every occurrence of pair as new_id; return (pair-count changes, words touched)."""
        raise NotImplementedError

    def unchoose(self, pair: Pair) -> None:
        """Undo what choose() did to the trainer's structures (the heap pops its winner)."""

    def heap_view(self, detail: bool):
        return None

    # -- the loop -------------------------------------------------------------
    def merges(self, max_merges: int, min_pair_frequency: int = 1, detail: bool = False) -> Iterator[MergeEvent]:
        """Yield merge events until max_merges new tokens exist; stop early when no pair reaches min_pair_frequency.

        Every merge mints a new token, except under a rule that reuses tokens
        (huggingface), where a merge whose bytes are already a token makes no new
        one -- so the count is of new tokens, as HuggingFace's vocab_size counts.
        """
        self.stop_reason = StopReason.VOCAB_SIZE
        rank = self.made_before
        while len(self.vocab) - 256 < max_merges:
            before = dict(self.work)  # this merge's work is what the counters gain until its event
            heap = self.heap_view(detail)
            top = self._top_pairs() if detail else None
            chosen = self.choose(detail)
            if chosen is None:
                self.stop_reason = StopReason.NO_PAIRS
                return
            pair, runner_up = chosen
            count = self.pair_counts[pair]
            if count < min_pair_frequency:
                self.unchoose(pair)
                self.stop_reason = StopReason.MIN_FREQUENCY
                return
            runner_count = self.pair_counts.get(runner_up, 0) if runner_up else 0
            distinct = len(self.pair_counts)
            new_id = self.mint(pair)
            delta, touched = self.merge(pair, new_id, detail)
            self.apply(delta)
            self.work["merges"] += 1
            yield MergeEvent(
                rank=rank,
                pair=pair,
                left=self.vocab[pair[0]],
                right=self.vocab[pair[1]],
                new_id=new_id,
                count=count,
                runner_up=(self.vocab[runner_up[0]], self.vocab[runner_up[1]]) if runner_up else None,
                runner_up_count=runner_count,
                words=touched,
                detail=self._detail(top, distinct, delta, heap) if detail else None,
                work=spent(self.work, before),
            )
            rank += 1

    def mint(self, pair: Pair) -> int:
        """A new token for pair: its id is the next free one, its bytes the two halves joined.

        subtle: under a rule that reuses tokens (huggingface), a merge whose bytes
        are already a token gets that token's id, as HuggingFace's trainer does.
        Merging whole pre-tokens left to right never makes the same bytes twice
        (a token's pieces evolve exactly as its bytes would alone, so both merges
        would have had to happen at once), so on real text this never fires.
        """
        token = self.vocab[pair[0]] + self.vocab[pair[1]]
        if self.rule.reuses_tokens and token in self.token_ids:
            return self.token_ids[token]
        new_id = len(self.vocab)
        self.vocab.append(token)
        self.keys.append(self.rule.token_key(new_id, token))
        self.token_ids.setdefault(token, new_id)
        return new_id

    def apply(self, delta: Delta) -> None:
        """Add the changes a merge caused to the pair counts; drop pairs that reach zero."""
        counts = self.pair_counts
        for pair, change in delta.items():
            if change:
                n = counts.get(pair, 0) + change
                if n:
                    counts[pair] = n
                else:
                    del counts[pair]

    # -- detail (only when asked) --------------------------------------------
    def _top_pairs(self) -> list[tuple[Pair, int]]:
        return top_pairs(self.pair_counts, self.keys, DETAIL_CAP)

    def record_word(self, before: Sequence[int], after: Sequence[int], count: int) -> None:
        self._rewritten.append((before, after, count))  # capped to the most frequent in _detail

    def record_site(self, site: int) -> None:
        self._sites_total += 1
        if len(self._sites) < DETAIL_CAP:
            self._sites.append(site)

    def _detail(self, top, distinct: int, delta: Delta, heap) -> MergeDetail:
        v = self.vocab
        changes = sorted(((p, d) for p, d in delta.items() if d), key=lambda item: (-abs(item[1]), v[item[0][0]], v[item[0][1]]))
        words = [
            WordChange(tuple(v[t] for t in before), tuple(v[t] for t in after), count)
            for before, after, count in heapq.nlargest(DETAIL_CAP, self._rewritten, key=lambda w: w[2])
        ]
        detail = MergeDetail(
            top_pairs=tuple((v[p[0]], v[p[1]], c) for p, c in top),
            distinct_pairs=distinct,
            words=tuple(words),
            words_total=len(self._rewritten),
            changes=tuple((v[p[0]], v[p[1]], d) for p, d in changes[:DETAIL_CAP]),
            changes_total=len(changes),
            heap=heap,
            sites=tuple(self._sites),
            sites_total=self._sites_total,
        )
        self._rewritten, self._sites, self._sites_total = [], [], 0
        return detail


# ---------------------------------------------------------------------------
# helpers the word-based trainers share


def spent(work: Mapping[str, int], before: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    """What the counters gained since `before`: {'a': 5, 'b': 2}, {'a': 3} -> (('a', 2), ('b', 2))."""
    return tuple((name, n - before.get(name, 0)) for name, n in work.items() if n != before.get(name, 0))


@contextmanager
def paused_gc():
    """Switch off Python's cycle collector for a training run, then restore it.

    subtle: a trainer holds millions of small lists, sets and tuples, so each
    full collection walks all of them, and the merge loop allocates enough to
    trigger many (a third of the time on a 50 MB corpus). Trainers make no
    reference cycles; reference counting still frees everything.

    subtle: the collector belongs to the whole process, so only the main thread
    pauses it (the CLI, a benchmark, a worker process of the app). Any other
    thread shares its process with work that is not ours to starve -- a web
    server's sessions run in threads -- and trains with the collector on.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def made_tokens(merged: Merged, reuses_tokens: bool = False) -> list[bytes]:
    """The vocabulary after the merges `merged`, as Trainer.mint makes it: the 256 bytes, then each merge's
    token in order -- under a rule that reuses tokens, none whose bytes are a token already.

    [(b'a', b'b'), (b'ab', b'c')] -> [b'\\x00', ..., b'\\xff', b'ab', b'abc']
    """
    vocab = [bytes([i]) for i in range(256)]
    known = set(vocab)
    for left, right in merged:
        if left not in known or right not in known:
            raise ValueError(f"The merge {left!r} + {right!r} joins a token that no earlier merge made.")
        token = left + right
        if reuses_tokens and token in known:
            continue
        known.add(token)
        vocab.append(token)
    return vocab


def encode_words(words: Mapping[bytes, int], merged: Merged, reuses_tokens: bool = False) -> dict[tuple[int, ...], int]:
    """Each pre-token as the merges `merged` make it, in the ids of made_tokens(merged), with its count.

    A pre-token is merged as a tokenizer encodes it: of its adjacent pairs that are merges, the one
    made first is merged everywhere in it, left to right; again, until no pair is a merge. (The same
    tokens as replaying the merges in order: a merge's parts are made before it.)
    {b'lower': 2} with merges l+o (256), lo+w (257) -> {(257, 101, 114): 2}
    """
    vocab = made_tokens(merged, reuses_tokens)
    ids: dict[bytes, int] = {}
    for i, token in enumerate(vocab):
        ids.setdefault(token, i)  # subtle: equal bytes share the first id, as a tokenizer's ids do
    ranks: dict[Pair, tuple[int, int]] = {}  # (left, right) -> (rank, the id it makes); a pair listed twice: its first rank
    for rank, (left, right) in enumerate(merged):
        ranks.setdefault((ids[left], ids[right]), (rank, ids[left + right]))
    encoded: dict[tuple[int, ...], int] = {}
    for word, count in words.items():
        tokens = list(word)
        while len(tokens) > 1 and isinstance(word, bytes):  # (a tuple of ids is encoded already)
            # the pair made first, and the token it makes
            found = [ranks[pair] for pair in zip(tokens, tokens[1:]) if pair in ranks]
            if not found:
                break
            rank, new = min(found)
            left, right = merged[rank]
            tokens = merge_word(tokens, (ids[left], ids[right]), new)  # every occurrence, left to right
        key = tuple(tokens)
        encoded[key] = encoded.get(key, 0) + count  # (two pre-tokens never encode alike: the tokens spell the bytes)
    return encoded


def word_lists(words: Mapping[Word, int]) -> tuple[list[list[int]], list[int]]:
    """Pre-token bytes (or token ids) -> lists of token ids, and their counts. Words of one token never merge."""
    kept = [(w, c) for w, c in words.items() if len(w) > 1]
    return [list(w) for w, _ in kept], [c for _, c in kept]


def count_pairs(words: Sequence[Sequence[int]], counts: Sequence[int]) -> dict[Pair, int]:
    """Every adjacent pair, overlapping ones too, weighted by the word's count.

    [[97, 97, 97]], [2] -> {(97, 97): 4}
    """
    pair_counts: dict[Pair, int] = defaultdict(int)
    for word, c in zip(words, counts):
        for pair in zip(word, word[1:]):
            pair_counts[pair] += c
    return dict(pair_counts)


def word_delta(before: Sequence[int], after: Sequence[int], count: int, delta: dict[Pair, int]) -> None:
    """Add to delta what rewriting one word (occurring count times) did to the pair counts.

    Pairs that did not change cancel out: [1, 2, 3] -> [256, 3] for (1, 2)
    gives {(1, 2): -c, (2, 3): -c, (256, 3): +c}.
    """
    for pair in zip(before, before[1:]):
        delta[pair] -= count
    for pair in zip(after, after[1:]):
        delta[pair] += count
