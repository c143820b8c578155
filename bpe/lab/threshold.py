"""What a minimum pair frequency does, read off one training run without retraining.

Training with min_pair_frequency=t stops at the first merge whose winning pair
occurs fewer than t times. The winning count never goes up from one merge to the
next: a merge only lowers the counts of other pairs, and a pair holding the new
token occurs at most as often as the pair that made it. So the merges kept
under t are the first k merges of the run with t = 1, where k is the number of
counts >= t, and one run answers every threshold by a binary search (`kept`).

What those k merges do to a text is read off one encoding too (`Replay`): the
text is encoded once with every merge, and each merge's effect (how many tokens
it joined, which tokens it used up) is kept as data, so the answer for any k is
a sum over the first k merges.

Not here: training (train.py), encoding (tokenizer.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from ..text.pretokenizers import DEFAULT, ENCODING, ERRORS, PreTokenizer, split_on_special
from ..text.tally import pretokenize
from ..tokenizer.tokenizer import BYTES, Tokenizer

Pair = tuple[bytes, bytes]


def kept(counts: Sequence[int], t: int) -> int:
    """How many merges a threshold t keeps, given the winning counts in merge order.

    [9, 9, 7, 2, 2, 1], t=2 -> 5;  t=0 or t=1 -> 6 (every pair that exists occurs once);  t=10 -> 0
    """
    lo, hi = 0, len(counts)
    while lo < hi:  # counts never increase: find the first one below t
        mid = (lo + hi) // 2
        if counts[mid] >= t:
            lo = mid + 1
        else:
            hi = mid
    return lo


def thresholds(counts: Sequence[int], extra: Sequence[int] = ()) -> list[int]:
    """The values of t worth offering: each distinct count (the highest t that still keeps
    its merge), one above the highest (keeps nothing), and any extras.

    [9, 9, 7, 2], extra [0, 5] -> [0, 2, 5, 7, 9, 10]
    """
    values = set(counts) | set(extra)
    if counts:
        values.add(max(counts) + 1)
    return sorted(values)


# ---------------------------------------------------------------------------
# a text, encoded once, answering for every k


@dataclass(frozen=True)
class Sample:
    """Text to measure, pre-tokenized once."""

    words: dict[bytes, int]  # pre-token counts, special tokens cut out
    n_special: int  # special tokens in the text: one token each
    n_bytes: int
    n_words: int  # whitespace-separated words, for tokens per word


def sample_of(text: str | bytes, pretokenizer: str | PreTokenizer = DEFAULT, special_tokens: Sequence[str] = ()) -> Sample:
    data = text if isinstance(text, bytes) else text.encode(ENCODING, ERRORS)
    parts = split_on_special(data.decode(ENCODING, ERRORS), special_tokens)
    corpus = pretokenize(data, pretokenizer=pretokenizer, special_tokens=special_tokens)
    return Sample(corpus.counts, len(parts) - 1, len(data), sum(len(part.split()) for part in parts))


@dataclass(frozen=True)
class Compression:
    n_bytes: int
    n_words: int
    n_tokens: int

    @property
    def bytes_per_token(self) -> float:
        return self.n_bytes / self.n_tokens if self.n_tokens else 0.0

    @property
    def tokens_per_word(self) -> float:
        return self.n_tokens / self.n_words if self.n_words else 0.0


@dataclass(frozen=True)
class Replay:
    """A sample encoded once with every merge, kept as what each merge did to it."""

    n_bytes: int
    n_words: int
    tokens: tuple[int, ...]  # tokens[k]: the sample's token count with the first k merges
    start: dict[bytes, int]  # how often each byte occurs (no merges)
    joins: tuple[dict[Pair, int], ...]  # joins[m]: pair -> times joined, counted for every k > m

    def compression(self, k: int) -> Compression:
        return Compression(self.n_bytes, self.n_words, self.tokens[k])

    def usage(self, k: int) -> Counter[bytes]:
        """How often each token occurs in the sample encoded with the first k merges."""
        counts = Counter(self.start)
        for joined in self.joins[:k]:
            for (left, right), n in joined.items():
                counts[left] -= n
                counts[right] -= n
                counts[left + right] += n
        return +counts  # drop tokens used up entirely


def replay(tokenizer: Tokenizer, sample: Sample) -> Replay:
    """Encode every pre-token once with all merges and record each step.

    Encoding with the first k merges runs the same steps as with all of them
    until the first step whose rank is k or more, and stops there. So step i of
    a word counts for every k above the highest rank among its steps 1..i
    (usually its own rank: ranks come out in increasing order unless two merges
    make the same bytes).
    """
    n = len(tokenizer.merges)
    saved = [0] * n  # saved[m]: tokens removed by steps that count for k > m
    joins: list[dict[Pair, int]] = [{} for _ in range(n)]
    start: Counter[bytes] = Counter()
    for word, count in sample.words.items():
        for b, times in Counter(word).items():
            start[BYTES[b]] += times * count
        size, high = len(word), -1
        for rank, parts in tokenizer.merge_steps(word):
            high = max(high, rank)
            joined = (size - len(parts)) * count
            pair = tokenizer.merges[rank]
            joins[high][pair] = joins[high].get(pair, 0) + joined
            saved[high] += joined
            size = len(parts)
    first = sum(start.values()) + sample.n_special
    tokens = tuple(first - s for s in accumulate(saved, initial=0))
    return Replay(sample.n_bytes, sample.n_words, tokens, dict(start), tuple(joins))
