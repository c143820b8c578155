"""Which merge applies first? Questions on encoding one word with a trained tokenizer.

A question is a word of the corpus whose bytes hold at least two pairs that are
merges: the options are those pairs (the answer is the one of the lowest rank,
learned first) and the word's first pair when it is not a merge -- the answer of
someone who thinks the encoder reads left to right. Shown in an order shuffled
but fixed per question (ui.lessons.quiz.shuffle), so a class sees the same A, B, C, D.

Plain functions, no Streamlit: the page draws and keeps the score.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bpe.tokenizer.tokenizer import Tokenizer
from ui.lessons.quiz import LETTERS, OPTIONS, shuffle
from ui.render import show, show_pair

WORDS = 20  # questions from the corpus's most frequent words

Pair = tuple[bytes, bytes]


@dataclass(frozen=True)
class Option:
    letter: str
    pair: Pair
    rank: int | None  # its merge (0-based); None: never merged

    @property
    def label(self) -> str:
        return show_pair(*self.pair)


@dataclass(frozen=True)
class Question:
    id: str
    word: bytes
    options: tuple[Option, ...]  # in the order shown

    @property
    def answer(self) -> Option:
        return min((o for o in self.options if o.rank is not None), key=lambda o: o.rank)

    def option(self, pair: Pair) -> Option | None:
        return next((o for o in self.options if o.pair == pair), None)


def byte_pairs(word: bytes) -> list[Pair]:
    """b'low' -> [(b'l', b'o'), (b'o', b'w')]"""
    return [(word[i : i + 1], word[i + 1 : i + 2]) for i in range(len(word) - 1)]


def askable(tok: Tokenizer, counts: Mapping[bytes, int], limit: int = WORDS) -> list[bytes]:
    """The most frequent words whose bytes hold two or more different merges: a real choice. Most frequent first."""
    words = []
    for word, _ in sorted(counts.items(), key=lambda wc: (-wc[1], wc[0])):
        if len({p for p in byte_pairs(word) if p in tok.ranks}) >= 2:
            words.append(word)
            if len(words) == limit:
                break
    return words


def question(run: str, tok: Tokenizer, word: bytes) -> Question:
    """The word as a question: its merge pairs (the lowest ranks first, at most OPTIONS), and its first pair if that is no merge."""
    pairs = byte_pairs(word)
    merges = sorted({p for p in pairs if p in tok.ranks}, key=tok.ranks.get)
    chosen: list[tuple[Pair, int | None]] = [(p, tok.ranks[p]) for p in merges[: OPTIONS - 1]]
    if pairs[0] not in tok.ranks:
        chosen.append((pairs[0], None))
    elif len(merges) >= OPTIONS:
        chosen.append((merges[OPTIONS - 1], tok.ranks[merges[OPTIONS - 1]]))
    qid = f"{run}#{word.hex()}"
    shuffle(chosen, qid)
    return Question(qid, word, tuple(Option(LETTERS[i], pair, rank) for i, (pair, rank) in enumerate(chosen)))


def explain(q: Question, pick: Pair) -> list[str]:
    """Why the answer applies first, and why the pick does not (one sentence each; plain text, the page escapes it)."""
    answer, word = q.answer, show(q.word)
    others = sorted((o for o in q.options if o.rank is not None and o is not answer), key=lambda o: o.rank)
    later = ", ".join(f"{o.label} is merge {o.rank + 1:,}" for o in others)
    lines = [
        f"{answer.label} is merge {answer.rank + 1:,}, learned before every other merge among the pairs of {word}"
        + (f" ({later})" if later else "")
        + ": the encoder applies it first, wherever it sits in the word."
    ]
    picked = q.option(pick)
    if picked is not None and picked is not answer:
        if picked.rank is None:
            lines.append(
                f"Your pick, {picked.label}, comes first in the word but was never merged: the encoder does not read left to right."
            )
        else:
            lines.append(
                f"Your pick, {picked.label}, is merge {picked.rank + 1:,}: learned later, so it waits (if its bytes are still apart then)."
            )
    return lines
