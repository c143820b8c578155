"""Check a student's merges: where they part from the reference, and why.

    d = diagnose(their_merges, "corpus.en", TrainSpec(special_tokens=("<|endoftext|>",)))
    d.first_difference, d.kind, d.cause   # 31, 'tie', 'tie:concatenated'
    print(d.sentence)                     # both pairs, their counts, the rule, the likely cause and its fix

What it does, in four steps:
1. train the reference (the heap trainer under the spec) on the same inputs,
   only until it parts from theirs (and a few merges more, to show);
2. replay the reference to just before that merge, and read its counts of both
   pairs there: the same count is a tie broken another way (`tie`), a lower
   one a different count (`count`); a pair that cannot be formed is `impossible`;
   a list that is a prefix of the other is `shorter` or `longer`;
3. train every known mistake (MISTAKES) on the same inputs, each only until it
   parts from theirs, and name the one that reproduces the most of their merges;
4. say it in a sentence, with the fix (for a tie, what the rule compares and
   which pair it takes, as rule.explain_tie says).

A mistake is data, not a trainer: a setting changed (another tie-break rule,
another pre-tokenizer, special tokens left in the text), or one of three changes
to the parent-set trainer (`Mistaken`): ties broken by another key, words
rewritten right to left, neighbours' counts left stale.

Not here: reading a student's file (merges_file.py), drawing the diagnosis
(ui/views/diff.py), or training for real (train.py).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..data.count import Paths, pretokenize_files
from ..events import MergeEvent, stop_sentence
from ..heap import Heap
from ..parent_set import ParentSet
from ..rule import RULES, Pair, descending, explain_tie
from ..spec import DEFAULT_ALGORITHM, TrainSpec
from ..text.gpt2_bytes import to_unicode
from ..text.pretokenize import PreTokens
from ..text.tally import pretokenize
from ..train import check_spec, trainer_for
from ..trainer import Delta, Trainer, paused_gc

Merge = tuple[bytes, bytes]
Progress = Callable[[str, float], None]  # (what it is doing, share done 0..1)

KINDS = ("same", "tie", "count", "impossible", "shorter", "longer")
CONTEXT = 5  # merges the reference makes past the first difference, to show both lists around it


# ---------------------------------------------------------------------------
# the mistakes a student's trainer makes, as data


def merge_right_to_left(word: Sequence[int], pair: Pair, new_id: int) -> list[int]:
    """merge_word from the wrong end: overlapping occurrences merge right to left.

    [97, 97, 97], (97, 97) -> 256 gives [97, 256]   (merge_word gives [256, 97])
    [1, 2, 3, 1, 2], (1, 2) -> 256 gives [256, 3, 256]   (no overlap: the same)
    """
    a, b = pair
    out: list[int] = []
    i = len(word) - 1
    while i >= 0:
        if i > 0 and word[i - 1] == a and word[i] == b:
            out.append(new_id)
            i -= 2
        else:
            out.append(word[i])
            i -= 1
    out.reverse()
    return out


def smaller_bytes(left: bytes, right: bytes) -> tuple:
    """Ties go to the smaller (left, right): min where the cs336 rule takes max."""
    return (left, right)


def joined_bytes(left: bytes, right: bytes) -> tuple:
    """Ties go to the greater left + right, joined: b' ' + b'd' (b' d') beats b' a' + b'nd' (b' and').

    The cs336 rule compares the left tokens first, and b' a' > b' '. Pairs that
    join to the same bytes fall back to the cs336 order.
    """
    return (descending(left + right), descending(left), descending(right))


@dataclass(frozen=True)
class Mistake:
    """One mistake a student's trainer makes, as the change it is to the reference."""

    cause: str  # its id: 'tie:smaller', 'stale_counts', ...
    label: str  # a few words: 'ties to the smaller bytes'
    does: str  # what their trainer does, after "Your trainer "
    fix: str  # the fix, one sentence; a tie's is followed by what the rule asked for takes (RULE_FIX)
    settings: tuple[tuple[str, Any], ...] = ()  # TrainSpec settings it changes
    tie: Callable[[bytes, bytes], object] | None = None  # the key their ties follow (the smaller wins)
    rewrite: Callable[[Sequence[int], Pair, int], list[int]] | None = None  # how their trainer rewrites a word
    stale: bool = False  # neighbours' counts are not lowered after a merge

    @property
    def is_tie(self) -> bool:
        return self.cause.startswith("tie:")

    def spec(self, spec: TrainSpec) -> TrainSpec:
        """The settings their trainer runs under: spec with this mistake's changes."""
        return spec.but(**dict(self.settings)) if self.settings else spec

    def applies(self, spec: TrainSpec) -> bool:
        """Whether the mistake changes anything under spec (no special tokens: none to leave in; cs336 asked: not a cs336 mistake)."""
        return not self.settings or self.spec(spec) != spec

    def fix_for(self, spec: TrainSpec) -> str:
        """The fix under spec: for a tie, what the rule asked for takes."""
        if not self.is_tie:
            return self.fix
        rule = dict(self.settings).get("tie_break")
        follows = (
            f" Your merges follow the {rule} rule: to compare them with {RULES[rule].tool}, diagnose under that tie-break rule."
            if rule
            else ""
        )
        return " ".join(part for part in (self.fix, RULE_FIX[spec.tie_break]) if part) + follows


MISTAKES: tuple[Mistake, ...] = (
    Mistake(
        "tie:token_ids",
        "ties to the smaller token ids (rustbpe)",
        "breaks ties toward the smaller pair of token ids (bytes 0-255, then merges in order), as rustbpe does",
        "",
        settings=(("tie_break", "rustbpe"),),
    ),
    Mistake(
        "tie:huggingface",
        "ties as HuggingFace breaks them",
        "breaks ties as HuggingFace tokenizers does: toward the smaller pair of its ids, which number the bytes in GPT-2's character order",
        "",
        settings=(("tie_break", "huggingface"),),
    ),
    Mistake(
        "tie:cs336",
        "ties as CS336's reference breaks them",
        "breaks ties as CS336's reference does: toward the greater (left bytes, right bytes)",
        "",
        settings=(("tie_break", "cs336"),),
    ),
    Mistake(
        "tie:smaller",
        "ties to the smaller bytes",
        "breaks ties toward the smaller (left bytes, right bytes): min where the rule takes max, or a sort the wrong way round",
        "",
        tie=smaller_bytes,
    ),
    Mistake(
        "tie:concatenated",
        "ties by the joined bytes left + right",
        "breaks ties by the joined bytes left + right, where the rule compares the pair (left, right), the left token first",
        "Compare the pair as a tuple (left, right), not the joined left + right.",
        tie=joined_bytes,
    ),
    Mistake(
        "special_tokens_not_split",
        "special tokens left in the text",
        "pre-tokenizes the special tokens as ordinary text, so '<|endoftext|>' becomes '<|', 'endoftext', '|>' and its bytes get merged",
        "Cut the text at the special tokens first (re.split on re.escape of each, longest first), pre-tokenize each piece, and never count a pair across a cut.",
        settings=(("special_tokens", ()),),
    ),
    Mistake(
        "whitespace_split",
        "split at whitespace, not the regex",
        "splits the text at whitespace (str.split()) instead of with the pre-tokenizer's regex, so words lose their leading space",
        "Pre-tokenize with the regex: each match of regex.finditer(PAT, text) is a pre-token, its leading space included.",
        settings=(("pretokenizer", "whitespace"),),
    ),
    Mistake(
        "no_pretokenization",
        "pairs counted across pre-tokens",
        "counts pairs across pre-token boundaries: no pre-tokenization, each document one long sequence",
        "Pre-tokenize with the regex first, and count pairs only inside each pre-token: no pair spans two.",
        settings=(("pretokenizer", "none"),),
    ),
    Mistake(
        "overlap_right_to_left",
        "overlaps merged right to left",
        "merges overlapping occurrences right to left, so 'a a a' becomes 'a aa'",
        "Merge each word left to right, stepping past every merge you make: 'a a a' becomes 'aa a'.",
        rewrite=merge_right_to_left,
    ),
    Mistake(
        "stale_counts",
        "neighbours' counts left stale",
        "does not lower the counts of the pairs beside each merged occurrence: merging a + b in x a b y must remove x a and b y as it adds x ab and ab y",
        "After each merge, subtract the old pairs of every word that changed and add its new ones (or recount all pairs).",
        stale=True,
    ),
)
BY_CAUSE = {m.cause: m for m in MISTAKES}

# what is said when no mistake reproduces their merges past the first difference: by the kind of difference,
# and "impossible" also when one of their tokens occurs nowhere in the input (first_foreign)
FALLBACK = {
    "tie": Mistake(
        "tie:other",
        "ties broken another way",
        "breaks ties by none of the rules tried (cs336, huggingface, rustbpe, the smaller bytes, the joined bytes); "
        "max(counts, key=counts.get) is a common one: it takes whichever tied pair the dict holds first",
        "",
    ),
    "count": Mistake(
        "count:other",
        "pairs counted another way",
        "counts this pair differently from the reference, in a way none of the known mistakes reproduces",
        "Compare your pair counts with the reference's at this merge: overlapping pairs ('a a a' holds a + a twice), "
        "each pre-token counted as often as it occurs, and no pair across pre-tokens.",
    ),
    "impossible": Mistake(
        "different_input",
        "different input or settings",
        "ran on other text or with other settings: it merges what this corpus cannot make",
        "Train on the same input with the same settings (pre-tokenizer, special tokens); if you did, "
        "look for a merge step that makes pairs that are not there.",
    ),
}
CAUSES = tuple(m.cause for m in MISTAKES) + tuple(m.cause for m in FALLBACK.values())
LABELS = {m.cause: m.label for m in MISTAKES + tuple(FALLBACK.values())}

# what each rule asks of a student's trainer, said as the fix of a tie
RULE_FIX = {
    "cs336": "Among pairs with the same count take the greater (left bytes, right bytes), compared as a tuple: "
    "max(counts, key=lambda pair: (counts[pair], pair)).",
    "huggingface": "Among pairs with the same count take the smaller pair of HuggingFace's ids: the bytes numbered in the "
    "order of their GPT-2 characters ('!' first), then the merges in order.",
    "rustbpe": "Among pairs with the same count take the smaller pair of token ids: bytes 0-255, then the merges in order.",
}


class Ties(Heap):
    """The heap trainer, seeing every tie: `tied` holds the pairs that share the best count before each merge (None if none do).

    Given `tie` (a key of (left bytes, right bytes); the smaller wins), it breaks
    ties by that instead of by its rule: a student's tie-break, trained at the
    heap's speed. subtle: the heap has popped its own winner; when another pair
    wins, `unchoose` puts it back, and the new winner's entry goes stale once it
    is merged, as every merged pair's does.
    """

    name = "ties"
    summary = "the heap trainer, breaking ties by another key"

    def __init__(self, words: Mapping[bytes, int], *, tie_break: str, tie: Callable[[bytes, bytes], object] | None = None) -> None:
        super().__init__(words, tie_break=tie_break)
        self.tie = tie
        self.tied: list[Pair] | None = None

    def choose(self, detail: bool) -> tuple[Pair, Pair | None] | None:
        chosen = super().choose(detail)
        self.tied = None
        if chosen is None or chosen[1] is None:
            return chosen
        best, runner = chosen
        top = self.pair_counts[best]
        if self.pair_counts[runner] != top:
            return chosen
        self.tied = [p for p, c in self.pair_counts.items() if c == top]  # only on a tie is every pair scanned
        if self.tie is None:
            return chosen
        v, tie = self.vocab, self.tie
        first, second = heapq.nsmallest(2, self.tied, key=lambda p: tie(v[p[0]], v[p[1]]))
        if first != best:
            self.unchoose(best)
        return first, second


class Mistaken(ParentSet):
    """The parent-set trainer counting another way: words rewritten right to left, or neighbours' counts left stale.

    Neither is registered in train.ALGORITHMS: no page offers them; only diagnose trains them.
    """

    name = "mistaken"
    summary = "the parent-set trainer with one of a student's counting mistakes"

    def __init__(self, words: Mapping[bytes, int], *, tie_break: str, mistake: Mistake) -> None:
        super().__init__(words, tie_break=tie_break)
        self.stale = mistake.stale
        if mistake.rewrite is not None:
            self.rewrite = mistake.rewrite
        self._chosen: Pair | None = None

    def merge(self, pair: Pair, new_id: int, detail: bool) -> tuple[Delta, int]:
        self._chosen = pair
        self.parents[pair]  # subtle: a stale count can choose a pair no word holds any more; it has no parents then
        return super().merge(pair, new_id, detail)

    def apply(self, delta: Delta) -> None:
        if not self.stale:
            return super().apply(delta)
        # only what went up is added; the merged pair alone is taken away, wholly
        super().apply({p: d for p, d in delta.items() if d > 0})
        self.pair_counts.pop(self._chosen, None)


# ---------------------------------------------------------------------------
# the result


@dataclass(frozen=True)
class Tried:
    """One mistake trained: how many of their merges, from the first, it makes in order."""

    cause: str
    reproduced_through: int
    complete: bool = True  # False: stopped at the time budget while it still agreed (it makes at least that many)


@dataclass(frozen=True)
class Diagnosis:
    """Where a student's merges part from the reference trained under spec, of what kind, and the likely cause."""

    spec: TrainSpec
    num_merges: int  # the merges the reference was asked for (default: as many as theirs)
    their_merges: int  # how many merges theirs has
    first_difference: int | None  # 0-based; None when one list is a prefix of the other (or both are the same)
    theirs: Merge | None  # their merge there (None past the end of their list)
    reference: Merge | None  # the reference's merge there (None past its end)
    theirs_count: int | None  # the reference's count of their pair just before that merge (None: a part is not a token yet)
    reference_count: int | None  # the count of the reference's own pair there
    kind: str  # one of KINDS
    cause: str | None  # one of CAUSES, or None (same, shorter, longer)
    reproduced_through: int  # how many of their merges the cause reproduces (for same, shorter, longer: the ones they share)
    sentence: str  # the whole story, for a person: where, both pairs and counts, why, the cause
    fix: str  # what to change, one sentence ("" when nothing differs)
    complete: bool = True  # False: the cause was still making their merges when its time budget ran out (at least that many)
    tried: tuple[Tried, ...] = ()  # the mistakes tried, in MISTAKES order (counting ones not once a mistake made all of theirs)
    also: tuple[str, ...] = ()  # other mistakes that make as many of theirs as the cause: more merges would tell them apart
    reference_merges: tuple[Merge, ...] = ()  # the reference's merges, up to CONTEXT past the first difference
    event: MergeEvent | None = None  # the reference's merge at the first difference, with its detail (the pair table)
    missing: bytes | None = None  # a part of their pair that is not a token at that point
    stop_reason: str = ""  # why the reference stopped, when it made fewer merges than asked
    foreign: tuple[int, bytes] | None = None  # their first merge (0-based) whose token occurs nowhere in the input, and that token

    def as_dict(self) -> dict[str, Any]:
        """The JSON `bpe diff --json` prints: tokens as GPT-2 writes them in merges.txt (byte-to-unicode)."""
        detail = self.event.detail if self.event is not None else None
        return {
            "first_difference": self.first_difference,
            "merge": None if self.first_difference is None else self.first_difference + 1,
            "theirs": gpt2_pair(self.theirs),
            "reference": gpt2_pair(self.reference),
            "kind": self.kind,
            "cause": self.cause,
            "reproduced_through": self.reproduced_through,
            "complete": self.complete,
            "their_merges": self.their_merges,
            "theirs_count": self.theirs_count,
            "reference_count": self.reference_count,
            "missing": None if self.missing is None else to_unicode(self.missing),
            "foreign_merge": None if self.foreign is None else self.foreign[0],
            "foreign_token": None if self.foreign is None else to_unicode(self.foreign[1]),
            "sentence": self.sentence,
            "fix": self.fix,
            "also": list(self.also),
            "tried": {t.cause: t.reproduced_through for t in self.tried},
            "top_pairs": [[to_unicode(a), to_unicode(b), c] for a, b, c in detail.top_pairs] if detail else [],
            "settings": {
                "pretokenizer": self.spec.pretokenizer.spelled,
                "special_tokens": list(self.spec.special_tokens),
                "tie_break": self.spec.tie_break,
                "num_merges": self.num_merges,
            },
        }


def gpt2_pair(pair: Merge | None) -> list[str] | None:
    return None if pair is None else [to_unicode(pair[0]), to_unicode(pair[1])]


# ---------------------------------------------------------------------------
# diagnosing


def diagnose(
    theirs: Sequence[Merge],
    inputs: Paths | bytes,
    spec: TrainSpec | None = None,
    *,
    vocab_size: int | None = None,
    workers: int | None = None,
    compiled: bool = True,
    budget_s: float | None = None,
    on_progress: Progress | None = None,
) -> Diagnosis:
    """Where theirs part from the reference trained on inputs under spec, and the likely cause.

    inputs: paths and globs as train_bpe takes them, or the text itself as bytes.
    vocab_size: the reference's, as train_bpe counts it (default: as many merges as theirs).
    workers and compiled: how files are read (count.pretokenize_files); on_progress(doing, share) hears what it is doing.
    budget_s: seconds each mistake may train (None: no limit) once past the first difference; one still agreeing
    then makes at least that many.
    Mistakes are trained over their first vocab_size's merges at most (the reference makes no more).
    """
    spec = spec or TrainSpec()
    theirs = check_theirs(theirs)
    num_merges = check_spec(spec, vocab_size) if vocab_size is not None else len(theirs)
    report = on_progress or (lambda doing, share: None)
    corpora = Corpora(inputs, workers, compiled)

    with paused_gc():
        report("Pre-tokenizing the corpus…", 0.0)
        corpus = corpora.get(spec)
        report("Training the reference until it parts from your merges…", 0.05)
        made, d, stop_reason = reference_run(corpus, spec, num_merges, theirs)
        base = dict(spec=spec, num_merges=num_merges, their_merges=len(theirs), reference_merges=tuple(made), stop_reason=stop_reason)
        if d is None:
            return agreed(theirs, made, base)
        applies = [m for m in MISTAKES if m.applies(spec)]
        at = replay(corpus, spec, d, theirs[d], [m for m in applies if m.is_tie])
        tried = tuple(try_mistakes(corpora, spec, theirs[:num_merges], d, at, applies, report, budget_s))
    found = [t for t in tried if t.reproduced_through > d]
    best = max(found, key=lambda t: t.reproduced_through, default=None)  # max keeps the first of equals: MISTAKES order
    also = tuple(t.cause for t in found if best and t.reproduced_through == best.reproduced_through and t is not best)
    foreign = None if best or at.kind == "tie" else first_foreign(theirs, corpora, spec)
    mistake = BY_CAUSE[best.cause] if best else FALLBACK["impossible" if foreign is not None else at.kind]
    event = at.event
    diagnosis = Diagnosis(
        **base,
        first_difference=d,
        theirs=theirs[d],
        reference=(event.left, event.right),
        theirs_count=None if at.missing is not None else at.theirs_count,
        reference_count=event.count,
        kind=at.kind,
        cause=mistake.cause,
        reproduced_through=best.reproduced_through if best else d,
        complete=best.complete if best else True,
        sentence="",
        fix="",
        tried=tried,
        also=also,
        event=replace(event, rank=d),
        missing=at.missing,
        foreign=foreign,
    )
    return replace(diagnosis, sentence=explain(diagnosis, mistake, at.before), fix=mistake.fix_for(spec))


def make_mistake(cause: str, inputs: Paths | bytes, spec: TrainSpec | None = None, num_merges: int = 100) -> list[Merge]:
    """The merges a trainer with one of MISTAKES makes on inputs under spec: a student's list to try diagnose on.

    make_mistake("tie:smaller", b"low lower widest newest", TrainSpec(pretokenizer="whitespace"), 5)
    """
    if cause not in BY_CAUSE:
        raise ValueError(f"Unknown mistake {cause!r}; choose one of {', '.join(BY_CAUSE)}.")
    spec = spec or TrainSpec()
    mistake = BY_CAUSE[cause]
    their_spec = mistake.spec(spec)
    trainer = trainer_of(Corpora(inputs).get(their_spec), their_spec, mistake)
    with paused_gc():
        return [(e.left, e.right) for e in trainer.merges(num_merges, spec.min_pair_frequency)]


def check_theirs(theirs: Sequence[Merge]) -> list[Merge]:
    """Their merges as a list of (bytes, bytes); a ValueError names the first that is not a pair of non-empty bytes."""
    out = []
    for rank, pair in enumerate(theirs):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(p, (bytes, bytearray)) and p for p in pair)):
            raise ValueError(f"Merge {rank + 1} is not a pair of non-empty bytes: {str(pair)[:60]}.")
        out.append((bytes(pair[0]), bytes(pair[1])))
    return out


class Corpora:
    """The inputs pre-tokenized under each setting a mistake asks for, each once."""

    def __init__(self, inputs: Paths | bytes, workers: int | None = None, compiled: bool = True) -> None:
        self.inputs, self.workers, self.compiled = inputs, workers, compiled
        self.made: dict[tuple, PreTokens] = {}

    def get(self, spec: TrainSpec) -> PreTokens:
        key = (spec.pretokenizer, spec.special_tokens, spec.split_lines, spec.text_field, spec.text_column)
        if key not in self.made:
            if isinstance(self.inputs, (bytes, bytearray)):
                made = pretokenize(
                    bytes(self.inputs), pretokenizer=spec.pretokenizer, special_tokens=spec.special_tokens, split_lines=spec.split_lines
                )
            else:
                made = pretokenize_files(
                    self.inputs,
                    pretokenizer=spec.pretokenizer,
                    special_tokens=spec.special_tokens,
                    workers=self.workers,
                    text_field=spec.text_field,
                    text_column=spec.text_column,
                    split_lines=spec.split_lines,
                    compiled=self.compiled,
                )
            self.made[key] = made
        return self.made[key]

    def text(self, spec: TrainSpec) -> bytes:
        """The input's bytes (for files: each document once, joined by NUL bytes)."""
        if isinstance(self.inputs, (bytes, bytearray)):
            return bytes(self.inputs)
        whole = self.get(spec.but(pretokenizer="none", special_tokens=()))  # a document is one pre-token
        return b"\0".join(whole.counts)


def reference_run(corpus: PreTokens, spec: TrainSpec, num_merges: int, theirs: Sequence[Merge]) -> tuple[list[Merge], int | None, str]:
    """The reference's merges, to CONTEXT past the first that differs from theirs; that index (None: none differs); why it stopped.

    When theirs end first, one merge past them is made (what the reference does next) and no more.
    """
    trainer = fastest(corpus, spec.tie_break)
    made: list[Merge] = []
    d = None
    for event in trainer.merges(num_merges, spec.min_pair_frequency):
        made.append((event.left, event.right))
        k = len(made) - 1
        if d is None and k >= len(theirs):
            return made, None, ""
        if d is None and made[k] != theirs[k]:
            d = k
        if d is not None and k >= d + CONTEXT:
            return made, d, ""
    return made, d, trainer.stop_reason


@dataclass(frozen=True)
class At:
    """The reference just before the first difference: its merges so far, its merge there (with detail), their pair's count there."""

    before: list[Merge]
    event: MergeEvent
    theirs_count: int  # 0 when their pair occurs nowhere (or a part is not a token: missing)
    missing: bytes | None  # a part of their pair that is not a token yet
    parted: dict[str, int]  # tie mistakes that part from theirs by merge d -> how many of theirs they make
    kind: str


def replay(corpus: PreTokens, spec: TrainSpec, d: int, their_pair: Merge, ties: Sequence[Mistake]) -> At:
    """Replay the reference to merge d (0-based), and follow every tie mistake while it shares the reference's counts.

    subtle: a mistake in breaking ties makes the reference's merges, with the
    reference's counts, until the first tie it breaks another way; so one replay
    tells how far each gets, as long as it agrees with theirs (which are the
    reference's up to d). Only one that also makes their merge d must be trained.
    """
    trainer = Ties(corpus.counts, tie_break=spec.tie_break)
    ranks = {m.cause: ranker(m, spec, trainer.vocab) for m in ties}
    parted: dict[str, int] = {}

    def follow(k: int, pair: Pair) -> None:
        """At merge k the reference (or theirs) merged pair: a mistake that takes another of the tied pairs parts there."""
        if trainer.tied:
            for cause, rank in ranks.items():
                if cause not in parted and min(trainer.tied, key=rank) != pair:
                    parted[cause] = k

    before = []
    for k, event in enumerate(trainer.merges(d, spec.min_pair_frequency)):
        follow(k, event.pair)
        before.append((event.left, event.right))
    ids = trainer.token_ids
    missing = next((part for part in their_pair if part not in ids), None)
    count = 0 if missing is not None else trainer.pair_counts.get((ids[their_pair[0]], ids[their_pair[1]]), 0)
    event = next(trainer.merges(d + 1, spec.min_pair_frequency, detail=True))
    kind = "impossible" if not count else "tie" if count == event.count else "count"
    if kind == "tie":
        follow(d, (ids[their_pair[0]], ids[their_pair[1]]))
    else:  # their pair is not among the best, and a tie mistake only ever takes one of those
        parted.update({cause: d for cause in ranks if cause not in parted})
    return At(before, event, count, missing, parted, kind)


def ranker(mistake: Mistake, spec: TrainSpec, vocab: Sequence[bytes]) -> Callable[[Pair], object]:
    """How a tie mistake orders tied pairs (the smaller first), on a trainer's vocab of the same merges."""
    tie = mistake.tie
    if tie is not None:
        return lambda p: tie(vocab[p[0]], vocab[p[1]])
    key = RULES[mistake.spec(spec).tie_break].token_key
    return lambda p: (key(p[0], vocab[p[0]]), key(p[1], vocab[p[1]]), p[0], p[1])


def try_mistakes(
    corpora: Corpora,
    spec: TrainSpec,
    theirs: Sequence[Merge],
    d: int,
    at: At,
    applies: Sequence[Mistake],
    report: Progress,
    budget_s: float | None = None,
) -> Iterator[Tried]:
    """How far each mistake that applies makes theirs, in MISTAKES order (the tie mistakes first).

    Each is trained only where the replay cannot tell, and only until it parts
    from theirs; once one has made all of theirs, the counting mistakes are not tried.
    """
    reference = corpora.get(spec)
    overlaps = any(a == b for a, b in theirs[:d])  # merging right to left changes nothing until a pair such as a + a is merged
    everything = False  # a mistake made all of theirs: the counting mistakes after it could at most equal it, and come second
    for n, mistake in enumerate(applies):
        if everything and not mistake.is_tie:
            return
        if mistake.cause in at.parted:
            yield Tried(mistake.cause, at.parted[mistake.cause])
            continue
        if mistake.rewrite is merge_right_to_left and not overlaps:
            yield Tried(mistake.cause, d)  # its words are the reference's up to d: it parts where the reference does
            continue
        report(f"Trying mistake {n + 1} of {len(applies)}: {mistake.label}…", 0.2 + 0.8 * n / len(applies))
        their_spec = mistake.spec(spec)
        corpus = corpora.get(their_spec)
        if mistake.settings and not mistake.is_tie and corpus.counts == reference.counts:
            yield Tried(mistake.cause, d)  # the same pre-tokens: it is the reference, and parts where it does
            continue
        made, complete = reach(trainer_of(corpus, their_spec, mistake), theirs, spec.min_pair_frequency, budget_s, past=d)
        yield Tried(mistake.cause, made, complete)
        everything = everything or made == len(theirs)


def fastest(corpus: PreTokens, tie_break: str) -> Trainer:
    """The default trainer: the compiled heap where it is built, else the Python heap (the same merges)."""
    return trainer_for(DEFAULT_ALGORITHM)(corpus.counts, tie_break=tie_break)


def trainer_of(corpus: PreTokens, spec: TrainSpec, mistake: Mistake) -> Trainer:
    """The trainer that makes this mistake: the heap (breaking ties its way), or the parent-set trainer counting its way."""
    if mistake.tie is not None:
        return Ties(corpus.counts, tie_break=spec.tie_break, tie=mistake.tie)
    if mistake.rewrite is None and not mistake.stale:
        return fastest(corpus, spec.tie_break)
    return Mistaken(corpus.counts, tie_break=spec.tie_break, mistake=mistake)


def reach(
    trainer: Trainer, theirs: Sequence[Merge], min_pair_frequency: int, budget_s: float | None = None, past: int = 0
) -> tuple[int, bool]:
    """How many of theirs, from the first, the trainer makes in order before it parts from them; and whether it got to
    the end of that (False: still agreeing, past `past` merges, when budget_s seconds had passed)."""
    n, start = 0, time.perf_counter()
    for event in trainer.merges(len(theirs), min_pair_frequency):
        if n >= len(theirs) or (event.left, event.right) != theirs[n]:
            break
        n += 1
        if budget_s is not None and n > past and n < len(theirs) and time.perf_counter() - start > budget_s:
            return n, False
    return n, True


def first_foreign(theirs: Sequence[Merge], corpora: Corpora, spec: TrainSpec) -> tuple[int, bytes] | None:
    """Their first merge whose token occurs nowhere in the input, even across pre-tokens (None if every one does).

    No mistake in counting pairs makes bytes that are not in the text; other text does.
    """
    text = corpora.text(spec)
    for rank, (a, b) in enumerate(theirs):
        if a + b not in text:
            return rank, a + b
    return None


def agreed(theirs: Sequence[Merge], made: Sequence[Merge], base: dict) -> Diagnosis:
    """Theirs and the reference agree as far as both go: the same, or one a prefix of the other."""
    n, m = len(theirs), len(made)
    spec, stop_reason = base["spec"], base["stop_reason"]
    rule = f"under the {spec.tie_break} rule"
    if n == m:
        sentence = f"Your {n:,} merges are the reference's, merge for merge ({rule}, pre-tokenizer {spec.pretokenizer.name})."
        return Diagnosis(
            **base,
            first_difference=None,
            theirs=None,
            reference=None,
            theirs_count=None,
            reference_count=None,
            kind="same",
            cause=None,
            reproduced_through=n,
            sentence=sentence,
            fix="",
        )
    if n < m:
        sentence = (
            f"Your {n:,} merges are the reference's first {n:,}, but the reference makes more ({rule}): your list stops early, "
            f"at merge {n + 1:,} the reference merges {show_pair(made[n])}."
        )
        fix = "Check your vocab_size arithmetic: it counts the 256 bytes, every merge and the special tokens."
        return Diagnosis(
            **base,
            first_difference=None,
            theirs=None,
            reference=made[n],
            theirs_count=None,
            reference_count=None,
            kind="shorter",
            cause=None,
            reproduced_through=n,
            sentence=sentence,
            fix=fix,
        )
    why = stop_sentence(stop_reason, m, vocab_size=256 + base["num_merges"] + len(spec.special_tokens), n_special=len(spec.special_tokens))
    sentence = f"The reference's {m:,} merges are your first {m:,}, and yours go on to {n:,}. {why}"
    fix = (
        "Stop when no pair is left to merge."
        if stop_reason != "vocab_size"
        else "Give the vocab size you trained with (256 bytes + merges + special tokens), or check that arithmetic in your trainer."
    )
    return Diagnosis(
        **base,
        first_difference=None,
        theirs=theirs[m],
        reference=None,
        theirs_count=None,
        reference_count=None,
        kind="longer",
        cause=None,
        reproduced_through=m,
        sentence=sentence,
        fix=fix,
    )


# ---------------------------------------------------------------------------
# saying it


def show_token(token: bytes) -> str:
    """b' a' -> "' a'": a token as Python shows text (invalid UTF-8 as \\xNN)."""
    return repr(token.decode("utf-8", "backslashreplace"))


def show_pair(pair: Merge) -> str:
    return f"{show_token(pair[0])} + {show_token(pair[1])}"


def explain(d: Diagnosis, mistake: Mistake, before: Sequence[Merge]) -> str:
    """The sentence for a person: where, both pairs with their counts, what kind of difference, the cause and its fix."""
    k = d.first_difference + 1
    mine, theirs = show_pair(d.reference), show_pair(d.theirs)
    if d.kind == "tie":
        what = f"At merge {k:,} yours is {theirs} and the reference's {mine}: both occur {d.reference_count:,} times there, a tie broken another way."
        tie = tie_reason(d, before)
        what += f" {tie}" if tie else ""
    elif d.kind == "count":
        what = (
            f"At merge {k:,} yours is {theirs}, which occurs {d.theirs_count:,} times there, "
            f"fewer than the reference's {mine} ({d.reference_count:,}): the counts differ."
        )
    elif d.missing is not None:
        what = (
            f"At merge {k:,} yours is {theirs}, but {show_token(d.missing)} is not a token yet at that point, "
            f"so no trainer on this corpus can make that merge; the reference merges {mine} ({d.reference_count:,})."
        )
    else:
        what = (
            f"At merge {k:,} yours is {theirs}, a pair that occurs nowhere in the corpus at that point; "
            f"the reference merges {mine} ({d.reference_count:,})."
        )
    if d.foreign is not None:
        rank, token = d.foreign
        why = (
            f"Likely cause ({mistake.cause}): your merge {rank + 1:,} makes {show_token(token)}, which occurs nowhere in this corpus, "
            "so your merges come from other text or other settings."
        )
    elif mistake.cause in BY_CAUSE:
        of = "all" if d.reproduced_through == d.their_merges else f"the first {d.reproduced_through:,}"
        of = of if d.complete else f"at least the first {d.reproduced_through:,} (it was stopped at its time budget)"
        why = f"Likely cause ({mistake.cause}): your trainer {mistake.does}. A trainer with that mistake makes {of} of your {d.their_merges:,} merges."
        if d.also:
            others = ", ".join(f"{LABELS[c]} ({c})" for c in d.also)
            why += f" So do trainers with {others}: more of your merges would tell them apart."
    else:
        why = f"Likely cause ({mistake.cause}): your trainer {mistake.does}."
    return f"{what} {why}"


def tie_reason(d: Diagnosis, before: Sequence[Merge]) -> str:
    """What the reference's rule compares for the two tied pairs and which it takes, as rule.explain_tie says."""
    try:
        choices = explain_tie([d.reference, d.theirs], before, len(d.spec.special_tokens))
    except ValueError:
        return ""
    return next((c.reason for c in choices if c.rule == d.spec.tie_break), "")
