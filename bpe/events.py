"""What a trainer hands out: one immutable event per merge, plus detail on request.

The step-through page replays these; the race page counts their work. Detail
is capped (DETAIL_CAP rows per list, with the true total alongside) so that a
trace of thousands of merges stays small enough to keep per session.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DETAIL_CAP = 40

Tokens = tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class WordChange:
    """One word the merge rewrote: its tokens before and after, and how often it occurs."""

    before: Tokens
    after: Tokens
    count: int


@dataclass(frozen=True, slots=True)
class HeapEntry:
    """A heap entry as stored, and whether it is stale (its count is out of date)."""

    count: int  # the count stored in the entry
    left: bytes
    right: bytes
    current: int  # the pair's true count now; != count means stale

    @property
    def stale(self) -> bool:
        return self.count != self.current


@dataclass(frozen=True, slots=True)
class HeapView:
    """The heap trainer's heap just before this merge was chosen."""

    entries: tuple[HeapEntry, ...]  # array order: entries[0] is the root, children of i at 2i+1, 2i+2
    size: int
    stale_popped: tuple[HeapEntry, ...]  # stale entries discarded or refreshed while finding this merge
    stale_popped_total: int


@dataclass(frozen=True, slots=True)
class MergeDetail:
    """What the page shows for one merge; only built when a trainer is asked for detail."""

    top_pairs: tuple[tuple[bytes, bytes, int], ...]  # before the merge, best first
    distinct_pairs: int
    words: tuple[WordChange, ...]  # the words the merge rewrote (capped)
    words_total: int
    changes: tuple[tuple[bytes, bytes, int], ...]  # pair-count changes, largest first (capped)
    changes_total: int
    heap: HeapView | None = None  # heap trainer only
    sites: tuple[int, ...] = ()  # positions updated (positions) or parents touched (parent_set), capped
    sites_total: int = 0


@dataclass(frozen=True, slots=True)
class MergeEvent:
    rank: int  # 0 for the first merge
    pair: tuple[int, int]
    left: bytes
    right: bytes
    new_id: int
    count: int
    runner_up: tuple[bytes, bytes] | None
    runner_up_count: int
    words: int  # words (or positions) this merge touched
    detail: MergeDetail | None = field(default=None, compare=False)

    @property
    def token(self) -> bytes:
        return self.left + self.right

    @property
    def tie(self) -> bool:
        """The runner-up had the same count, so the tie-break rule decided (rule.py)."""
        return self.runner_up is not None and self.runner_up_count == self.count
