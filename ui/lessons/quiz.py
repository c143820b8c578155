"""Predict the next merge: questions from a training trace, their options, and why the answer is right.

A question is one merge of the trace: the options are the pair that won and the
pairs that came closest (the runner-up first, then the next best), shown in an
order that is shuffled but fixed per question, so a reload or a classmate sees
the same A, B, C, D. The explanation follows the rule every trainer uses
(bpe/rule.py): the higher count wins; a tie goes, under the default cs336 rule,
to the greater bytes, compared left token first, then right (under another
tie-break rule, to what bpe.explain_tie says that rule takes).

Plain functions over MergeEvents, no Streamlit: the page draws and keeps the
score; not here either is the corpus's words (ui/lessons/lesson.py `split_words`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from bpe.events import MergeEvent
from bpe.rule import DEFAULT_RULE, RULES, explain_tie
from ui.render import show, show_pair

OPTIONS = 4  # A-D: enough for a real choice, few enough to read out in class
LETTERS = "ABCDEFGH"

Pair = tuple[bytes, bytes]


@dataclass(frozen=True)
class Option:
    letter: str
    left: bytes
    right: bytes
    count: int  # the pair's count before the merge

    @property
    def pair(self) -> Pair:
        return (self.left, self.right)

    @property
    def label(self) -> str:
        return show_pair(self.left, self.right)


@dataclass(frozen=True)
class Question:
    id: str  # names the run and the merge: answers and the shuffle are keyed on it
    merge: int  # 1-based, as on the step page
    event: MergeEvent
    options: tuple[Option, ...]  # in the order shown

    @property
    def winner(self) -> Option:
        return next(o for o in self.options if o.pair == (self.event.left, self.event.right))

    def option(self, pair: Pair) -> Option | None:
        return next((o for o in self.options if o.pair == pair), None)


@dataclass(frozen=True)
class Answer:
    """What a student picked for one question, and whether it was the pair that merged."""

    pick: Pair
    right: bool


# ---------------------------------------------------------------------------
# questions


def askable(events: Sequence[MergeEvent]) -> list[int]:
    """The merges (1-based) worth asking about: those with at least two pairs to choose from."""
    return [k for k, event in enumerate(events, 1) if event.runner_up is not None and event.detail is not None]


def question(run: str, events: Sequence[MergeEvent], k: int, n_options: int = OPTIONS) -> Question:
    """Merge k of the run as a question: the winner, the runner-up and the next best pairs, shuffled by the question's id."""
    event = events[k - 1]
    qid = f"{run}#{k}"
    chosen: list[tuple[bytes, bytes, int]] = [(event.left, event.right, event.count)]
    if event.runner_up is not None:
        chosen.append((*event.runner_up, event.runner_up_count))
    for left, right, count in event.detail.top_pairs:
        if len(chosen) >= n_options:
            break
        if all((left, right) != (a, b) for a, b, _ in chosen):
            chosen.append((left, right, count))
    shuffle(chosen, qid)
    options = tuple(Option(LETTERS[i], left, right, count) for i, (left, right, count) in enumerate(chosen))
    return Question(qid, k, event, options)


def shuffle(items: list, seed: str) -> None:
    """Shuffle in place, the same way every time for the same seed (in any process).

    subtle: random.Random seeds a str through SHA-512, not hash(), so the order
    does not change with PYTHONHASHSEED or between the server's worker processes.
    """
    random.Random(seed).shuffle(items)


# ---------------------------------------------------------------------------
# explanations: plain sentences (the page escapes them)


def explain(
    q: Question, pick: Pair | None = None, tie_break: str = DEFAULT_RULE, before: Sequence[Pair] = (), n_special: int = 0
) -> list[str]:
    """Why the winner won, and (when pick is another pair) why pick did not; one sentence each.

    tie_break is the rule the trace was trained under; before, the merges made
    before this one (another rule than cs336 needs them: its ids come from them).
    """
    event, winner = q.event, q.winner
    tied = [(a, b) for a, b, c in event.detail.top_pairs if c == event.count and (a, b) != winner.pair]
    if not tied:
        runner = show_pair(*event.runner_up)
        lines = [f"{winner.label} occurs {times(event.count)}, more than any other pair (next: {runner}, {times(event.runner_up_count)})."]
    else:
        names = [winner.label] + [show_pair(*p) for p in tied[:3]] + ([f"{len(tied) - 3} more"] if len(tied) > 3 else [])
        lines = [
            f"A tie: {', '.join(names[:-1])} and {names[-1]} {'both' if len(names) == 2 else 'all'} occur {times(event.count)}.",
            tie_reason(winner.pair, tied[0], tie_break, before, n_special),
        ]
    picked = q.option(pick) if pick is not None else None
    if picked is not None and picked.pair != winner.pair:
        if picked.count < event.count:
            lines.append(
                f"Your pick, {picked.label}, occurs {times(picked.count)}: {event.count - picked.count:,} fewer than {winner.label}."
            )
        elif picked.pair == tied[0]:
            lost = "lost on the bytes" if tie_break == "cs336" else f"lost the tie under the {tie_break} rule"
            lines.append(f"Your pick, {picked.label}, has the same count and {lost}.")
        elif tie_break != "cs336":
            lines.append(
                f"Your pick, {picked.label}, has the same count, but {lost_tie(winner.pair, picked.pair, tie_break, before, n_special)}"
            )
        else:
            lines.append(f"Your pick, {picked.label}, has the same count, but {greater_because(winner.pair, picked.pair)}.")
    return lines


def tie_reason(winner: Pair, other: Pair, tie_break: str, before: Sequence[Pair], n_special: int) -> str:
    """Why winner beat other on a tie, under tie_break, as sentences."""
    if tie_break == "cs336":
        return f"Ties go to the pair whose bytes are greater, left token first, then right. {capital(greater_because(winner, other))}."
    return f"Ties go to {RULES[tie_break].prefers}: {lost_tie(winner, other, tie_break, before, n_special)}"


def lost_tie(winner: Pair, other: Pair, tie_break: str, before: Sequence[Pair], n_special: int) -> str:
    """bpe.explain_tie's sentence for the rule tie_break over the two pairs: "karpathy's rustbpe ... takes ... (101, 115) < ..."."""
    return next(c.reason for c in explain_tie([winner, other], before, n_special) if c.rule == tie_break)


def greater_because(a: Pair, b: Pair) -> str:
    """Why pair a is greater than pair b by the tie rule, as a clause.

    (b's', b't') vs (b'e', b's') -> "the left tokens decide: s (byte 115) is greater than e (byte 101)"
    (b'e', b'st') vs (b'e', b's') -> "the left tokens are the same (e), so the right tokens decide:
    st starts like s and is longer, so it is greater"
    """
    if a[0] != b[0]:
        x, y, lead = a[0], b[0], "the left tokens decide: "
    elif a[1] != b[1]:
        x, y, lead = a[1], b[1], f"the left tokens are the same ({show(a[0])}), so the right tokens decide: "
    else:
        return "both pairs make the same bytes, so the token ids decide (the greater ids, made later, win)"
    for i, (p, q) in enumerate(zip(x, y)):
        if p != q:
            agree = f"{show(x)} and {show(y)} agree on {i} byte(s), then " if i else ""
            return lead + f"{agree}{show(bytes([p]))} (byte {p}) is greater than {show(bytes([q]))} (byte {q})"
    return lead + f"{show(x)} starts like {show(y)} and is longer, so it is greater"


def capital(clause: str) -> str:
    return clause[:1].upper() + clause[1:]


def times(n: int) -> str:
    """1 -> 'once', 2 -> 'twice', 1234 -> '1,234 times'."""
    return {1: "once", 2: "twice"}.get(n, f"{n:,} times")


def score(answers: dict[str, Answer]) -> tuple[int, int]:
    """(right, wrong) over every answer this session gave."""
    right = sum(a.right for a in answers.values())
    return right, len(answers) - right
