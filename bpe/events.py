"""What a trainer hands out: one immutable event per merge, plus detail on request.

The step-through page replays these; the race page counts their work. Detail
is capped (DETAIL_CAP rows per list, with the true total alongside) so that a
trace of thousands of merges stays small enough to keep per session.

Also here, so that every page and the CLI say them the same way: the names of
the trainers' work counters (WORK_NAMES) and why a run stopped (StopReason), as a sentence (stop_sentence).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from .renamed import renamed

DETAIL_CAP = 40

Tokens = tuple[bytes, ...]

# the trainers' work counters (Trainer.work, MergeEvent.work) as a page or a table names them
WORK_NAMES = {
    "pairs_counted": "pairs counted (recount)",
    "pairs_scanned": "pairs scanned for the best",
    "words_checked": "words checked",
    "words_touched": "words rewritten",
    "positions_touched": "positions rewritten",
    "heap_pushes": "heap pushes",
    "heap_pops": "heap pops",
    "stale_pops": "stale pops",
}


class StopReason(StrEnum):
    """Why a run stopped: the trainer's three reasons, and the two budgets bpe.lab.race and the app's traces add.

    A StrEnum, so a reason is also its plain string ("vocab_size" == StopReason.VOCAB_SIZE), prints as
    it, and crosses to and from worker processes as it. A time budget may say which: "time budget (30 s)".
    """

    VOCAB_SIZE = "vocab_size"  # made every merge asked for
    NO_PAIRS = "no pairs left"
    MIN_FREQUENCY = "min_pair_frequency"  # the best pair left is rarer than the threshold
    TIME_BUDGET = "time budget"
    WALL_BUDGET = "wall-clock budget"  # a busy machine: the run got under half a processor
    SHOWN = "the step-through shows the first merges"  # of a longer run: ui.runs.TRACE_MERGES


VOCAB_SIZE, NO_PAIRS, MIN_FREQUENCY = StopReason.VOCAB_SIZE, StopReason.NO_PAIRS, StopReason.MIN_FREQUENCY
TIME_BUDGET, WALL_BUDGET = StopReason.TIME_BUDGET, StopReason.WALL_BUDGET


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
    """The heap trainer's heap just before this merge was chosen, and the stale entries choosing it popped.

    Choosing pops twice (Heap.choose): stale entries until the top is current, which is the winner, popped;
    then stale entries again until the top is current, which is the runner-up, left in place. The first
    `winner_pops` of the stale pops came before the winner; the rest were found looking for the runner-up.
    """

    entries: tuple[HeapEntry, ...]  # array order: entries[0] is the root, children of i at 2i+1, 2i+2
    size: int
    stale_popped: tuple[HeapEntry, ...]  # stale entries discarded or refreshed while choosing, in pop order (capped)
    stale_popped_total: int
    winner_pops: int = 0  # how many of the stale pops came before the winner: the root was current when 0


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
    # what the trainer's work counters gained for this merge (choosing it included), in Trainer.work's names
    work: tuple[tuple[str, int], ...] = field(default=(), compare=False)

    @property
    def token(self) -> bytes:
        return self.left + self.right

    @property
    def tie(self) -> bool:
        """The runner-up had the same count, so the tie-break rule decided (rule.py)."""
        return self.runner_up is not None and self.runner_up_count == self.count

    def work_done(self, counter: str) -> int:
        """This merge's share of one work counter: event.work_done("words_checked")."""
        return dict(self.work).get(counter, 0)


@renamed(specials="n_special")
def stop_sentence(reason: str, merges: int, *, vocab_size: int | None = None, n_special: int = 0, min_pair_frequency: int = 1) -> str:
    """Why a run stopped, as a sentence a person can act on.

    ("vocab_size", 0, vocab_size=257, n_special=1) -> 'No merges: a vocab size of 257 is filled by
    the 256 bytes and 1 special token alone, leaving no room for a merge. Raise the vocab size.'
    ("no pairs left", 5) -> 'Stopped after 5 merges: no pair of adjacent tokens was left to merge
    (every pre-token is a single token now).'
    n_special is how many special tokens the vocabulary holds (specials=, its old name, is still accepted).
    """
    made = f"Stopped after {merges:,} merge{'s' if merges != 1 else ''}"
    if reason == VOCAB_SIZE:
        if vocab_size is None:
            return f"Made {merges:,} merges: the vocabulary reached its size."
        s = "" if n_special == 1 else "s"
        if merges == 0:
            fill = f"the 256 bytes and {n_special} special token{s}" if n_special else "the 256 bytes"
            return (
                f"No merges: a vocab size of {vocab_size:,} is filled by {fill} alone, leaving no room for a merge. Raise the vocab size."
            )
        return f"Made {merges:,} merges: the vocabulary reached its size, {vocab_size:,} = 256 bytes + {merges:,} merges + {n_special} special token{s}."
    if reason == NO_PAIRS:
        if merges == 0:
            return "No merges: the corpus has no pair of adjacent tokens to merge (every pre-token is a single byte)."
        return f"{made}: no pair of adjacent tokens was left to merge (every pre-token is a single token now)."
    if reason == MIN_FREQUENCY:
        return f"{made}: the best pair left occurred fewer than {min_pair_frequency:,} times (the min pair frequency)."
    if reason.startswith(TIME_BUDGET):
        return f"{made}: it ran out of its {reason}."
    if reason == StopReason.SHOWN:
        return f"{made}: the step-through shows the first {merges:,} merges."
    if reason == WALL_BUDGET:
        return f"{made}: the server was busy, so its wall-clock budget cut it off."
    return f"{made}: {reason}."
