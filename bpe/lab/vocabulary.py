"""The vocabulary as a whole: which tokens were made, how long, how often each is used.

What it does: list every token of a tokenizer with the first k merges (`token_rows`:
id, the merge that made it, its count then, its length, how often it is used when a
held-out text is encoded), the data of a Zipf plot (`zipf`, `zipf_slope`), a length
histogram, compression against vocabulary size from one run (`compression_curve`:
a prefix of the merges is a smaller tokenizer, so no retraining), and the tokens made
but never or almost never used (`rarely_used`), the stuff glitch tokens are made of.

What it does not do: train, encode (tokenizer.py), or draw (the app's ui/views/vocabulary.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..renamed import renamed
from ..tokenizer.tokenizer import BYTES, Tokenizer
from .threshold import Replay

BYTE, MERGE, SPECIAL = "byte", "merge", "special"


@dataclass(frozen=True)
class TokenRow:
    """One token of the vocabulary."""

    id: int
    token: bytes
    kind: str  # byte, merge or special
    rank: int | None  # the merge that made it (0-based); None for a byte or a special token
    made: int | None  # that merge's count when it was made, when the tokenizer knows it
    uses: int  # how often it occurs when the held-out text is encoded (with the same k)

    @property
    def length(self) -> int:
        return len(self.token)


def token_rows(tokenizer: Tokenizer, uses: Mapping[bytes, int], k: int | None = None) -> list[TokenRow]:
    """Every token with the first k merges, in id order: the 256 bytes, the merges, the special tokens.

    uses: how often each token occurs in a held-out text (Tokenizer.token_counts, or Replay.usage(k)).
    """
    limit = len(tokenizer.merges) if k is None else min(k, len(tokenizer.merges))
    made_by, counts, ids = tokenizer.made_by, tokenizer.counts, tokenizer.ids
    special_bytes = {t.encode("utf-8") for t in tokenizer.special_tokens}
    rows = []
    for token, i in ids.items():
        rank = made_by.get(token)
        if token in special_bytes:
            kind, rank = SPECIAL, None
        elif rank is not None:
            if rank >= limit:
                continue  # not made yet at merge k
            kind = MERGE
        elif len(token) == 1:
            kind = BYTE
        else:
            continue  # an entry no merge makes (an inert merge's)
        rows.append(TokenRow(i, token, kind, rank, counts[rank] if rank is not None else None, uses.get(token, 0)))
    return sorted(rows, key=lambda row: row.id)


def zipf(uses: Mapping[bytes, int]) -> list[int]:
    """Frequencies of the tokens used, most used first: plotted against their rank (1, 2, ...) on log-log axes.

    {a: 1, b: 5, c: 0, d: 2} -> [5, 2, 1]
    """
    return sorted((n for n in uses.values() if n > 0), reverse=True)


def zipf_slope(frequencies: Sequence[int]) -> float | None:
    """The least-squares slope of log(frequency) against log(rank); Zipf's law says about -1.

    [12, 6, 4, 3] (12 / rank) -> -1.0; [8, 4, 2, 1] falls faster -> -1.46. None with fewer than 2 points.
    """
    points = [(math.log(r), math.log(f)) for r, f in enumerate(frequencies, start=1) if f > 0]
    if len(points) < 2:
        return None
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx


def length_histogram(rows: Sequence[TokenRow]) -> dict[int, int]:
    """How many tokens have each length in bytes (special tokens left out): {1: 256, 2: 40, 3: 12, ...}."""
    histogram: dict[int, int] = {}
    for row in rows:
        if row.kind != SPECIAL:
            histogram[row.length] = histogram.get(row.length, 0) + 1
    return dict(sorted(histogram.items()))


@dataclass(frozen=True)
class CompressionPoint:
    k: int  # merges used
    vocab_size: int  # 256 + k + special tokens
    bytes_per_token: float


@renamed(specials="n_special")
def compression_curve(replay: Replay, n_special: int = 0, points: int = 60) -> list[CompressionPoint]:
    """Bytes per token of one text against vocabulary size, for about `points` prefixes of the merges.

    One replay answers every k (threshold.replay): no retraining. The prefixes are spaced
    evenly on a log scale of k, so the early merges, which change most, get most points.
    n_special special tokens count in the vocabulary size (specials=, its old name, is still accepted).
    """
    n = len(replay.tokens) - 1
    ks = sorted({0, n} | {round(math.expm1(math.log1p(n) * i / max(points - 1, 1))) for i in range(points)})
    return [CompressionPoint(k, len(BYTES) + k + n_special, replay.compression(k).bytes_per_token) for k in ks]


def rarely_used(rows: Sequence[TokenRow], at_most: int = 0) -> list[TokenRow]:
    """Merged tokens used at most `at_most` times on the held-out text, the most often made first.

    A token made from a pair counted 1,197 times in training and used 0 times on new text is the
    kind of token that becomes a glitch token in a language model: its embedding is barely trained.
    """
    unused = [row for row in rows if row.kind == MERGE and row.uses <= at_most]
    return sorted(unused, key=lambda row: (-(row.made or 0), row.rank))
