"""Check a student's merges: where they part from the reference, and why.

    d = diagnose(their_merges, "corpus.en", TrainSpec(special_tokens=("<|endoftext|>",)))
    d.first_difference, d.kind, d.cause   # 31, 'tie', 'tie:concatenated'
    print(d.sentence)                     # both pairs, their counts, the rule, the likely cause and its fix

What it does, in five steps:
1. train the reference (the heap trainer under the spec) on the same inputs,
   only until it parts from theirs (and a few merges more, to show);
2. replay the reference to just before that merge, and read its counts of both
   pairs there: the same count looks like a tie broken another way (`tie`), a
   lower one is a different count (`count`); a pair that cannot be formed is
   `impossible`; a list that is a prefix of the other is `shorter` or `longer`;
3. train every known mistake (MISTAKES, and the settings the input suggests:
   a special token it spells many times when none was given) on the same
   inputs, each only until it parts from theirs, and name the one that makes
   the most of their merges past the first difference; when it does not make
   them all, try each other mistake with it (two mistakes at once);
4. judge the kind from their own list as well: a tie that a counting mistake
   reproduces is a count difference (said with that trainer's counts). When no
   mistake makes their list past the first difference, none is named: their list
   is walked under the true counts instead (`walk`), and a list that takes a pair
   below the highest count only there did not take the maximum
   (`not_the_maximum`), one that does so elsewhere too counts another way
   (`count:other`, even where the first difference looks like a tie), and one
   whose every pair is the most frequent breaks ties another way (`tie:other`);
5. say it in a sentence, with the fix (for a tie, what the rule compares and
   which pair it takes, as rule.explain_tie says).

A mistake is data, not a trainer: a setting changed (another tie-break rule,
another pre-tokenizer, special tokens left in the text or deleted from it, lines
read one by one), a key their ties follow, or one of the changes to the
parent-set trainer (`Mistaken`): words started from characters, rewritten right
to left, neighbours' counts left stale or read from the word before the merge.

Not here: reading a student's file (merges_file.py), drawing the diagnosis
(ui/views/diff.py), or training for real (train.py).
"""

from __future__ import annotations

import heapq
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..data.count import Paths, pretokenize_files
from ..events import MergeEvent, stop_sentence
from ..heap import Heap
from ..parent_set import ParentSet
from ..rule import RULES, Pair, descending, entry_pair, explain_tie, heap_entry, show_pair, show_token
from ..spec import DEFAULT_ALGORITHM, TrainSpec
from ..text.gpt2_bytes import to_unicode
from ..text.pretokenize import PreTokens
from ..text.tally import pretokenize
from ..train import check_spec, trainer_for
from ..trainer import Delta, Trainer, paused_gc, word_lists

Merge = tuple[bytes, bytes]
Progress = Callable[[str, float], None]  # (what it is doing, share done 0..1)
TieKey = Callable[[Pair, Sequence[bytes]], object]  # (pair of token ids, the vocab) -> key; the smaller wins a tie

KINDS = ("same", "tie", "count", "impossible", "shorter", "longer")
KIND_WORDS = {  # each kind as the page and the CLI say it
    "tie": "a tie broken another way",
    "count": "a difference in counts",
    "impossible": "a merge that cannot be made there",
    "shorter": "your list stops early",
    "longer": "your list goes on past the reference's",
    "same": "the same merges",
}
CONTEXT = 5  # merges the reference makes past the first difference, to show both lists around it
SHOWN_NOT_TOP = 5  # merges of their list below the highest count kept to show (all are counted)

# special tokens tokenizers' corpora spell, tried as a setting when none was given (the most common first)
COMMON_SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|eot_id|>",
    "</s>",
    "<s>",
    "[SEP]",
    "[CLS]",
)


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


def neighbour_delta(words: Sequence[tuple[Sequence[int], int]], pair: Pair, new_id: int) -> Delta:
    """The count changes of an incremental update that reads each occurrence's neighbours in the word before the merge.

    For each occurrence x a b y: (x, a) and (b, y) lose the word's count, (x, ab) and (ab, y) gain it. Right
    where occurrences do not touch; where they do, x or y is the other occurrence's old token:
    [br, in, g, in, g] (count 1), (in, g) -> ing gives (br, in) -1, (br, ing) +1, (g, in) -2, (ing, in) +1,
    (g, ing) +1 -- the new word [br, ing, ing] holds (br, ing) and (ing, ing). (The pair itself is not in it.)
    """
    a, b = pair
    delta: Delta = defaultdict(int)
    for word, count in words:
        i, n = 0, len(word)
        while i < n - 1:
            if word[i] == a and word[i + 1] == b:
                if i > 0:
                    delta[(word[i - 1], a)] -= count
                    delta[(word[i - 1], new_id)] += count
                if i + 2 < n:
                    delta[(b, word[i + 2])] -= count
                    delta[(new_id, word[i + 2])] += count
                i += 2
            else:
                i += 1
    delta.pop(pair, None)  # the merged pair's count is dropped whole
    return delta


def smaller_bytes(pair: Pair, vocab: Sequence[bytes]) -> tuple:
    """Ties go to the smaller (left, right) bytes: min where the cs336 rule takes max."""
    return (vocab[pair[0]], vocab[pair[1]])


def joined_bytes(pair: Pair, vocab: Sequence[bytes]) -> tuple:
    """Ties go to the greater left + right, joined: b' ' + b'd' (b' d') beats b' a' + b'nd' (b' and').

    The cs336 rule compares the left tokens first, and b' a' > b' '. Pairs that
    join to the same bytes fall back to the cs336 order.
    """
    left, right = vocab[pair[0]], vocab[pair[1]]
    return (descending(left + right), descending(left), descending(right))


def greater_ids(pair: Pair, vocab: Sequence[bytes]) -> tuple:
    """Ties go to the greater pair of token ids: max((count, (id1, id2))), the mirror of rustbpe's rule."""
    return (-pair[0], -pair[1])


@dataclass(frozen=True)
class Mistake:
    """One mistake a student's trainer makes (or two at once: `parts`), as the change it is to the reference."""

    cause: str  # its id: 'tie:smaller', 'stale_counts', ...; two at once 'characters_not_bytes+special_tokens_not_split'
    label: str  # a few words: 'ties to the smaller bytes'
    does: str  # what their trainer does, after "Your trainer "
    fix: str  # the fix, one sentence; a tie's is followed by what the rule asked for takes (RULE_FIX)
    settings: tuple[tuple[str, Any], ...] = ()  # TrainSpec settings it changes
    tie: TieKey | None = None  # the key their ties follow
    rewrite: Callable[[Sequence[int], Pair, int], list[int]] | None = None  # how their trainer rewrites a word
    stale: bool = False  # neighbours' counts are not lowered after a merge
    adjacent: bool = False  # neighbours are read in the word before the merge (neighbour_delta)
    characters: bool = False  # words start as characters, a character of several bytes one token
    removes_special_tokens: bool = False  # the special tokens are deleted from the text (settings leave them out too)
    parts: tuple[Mistake, ...] = ()  # the two mistakes of one made at once (both)

    @property
    def is_tie(self) -> bool:
        """A mistake in breaking ties alone: it has the reference's counts, so the replay tells how far it gets."""
        return self.cause.startswith("tie:") and not self.parts

    @property
    def counts_another_way(self) -> bool:
        """It needs the parent-set trainer changed (Mistaken), not only other settings or another tie key."""
        return self.characters or self.rewrite is not None or self.stale or self.adjacent

    def spec(self, spec: TrainSpec) -> TrainSpec:
        """The settings their trainer runs under: spec with this mistake's changes."""
        return spec.but(**dict(self.settings)) if self.settings else spec

    def applies(self, spec: TrainSpec) -> bool:
        """Whether the mistake changes anything under spec (no special tokens: none to leave in; cs336 asked: not a cs336 mistake)."""
        return not self.settings or self.spec(spec) != spec

    def fix_for(self, spec: TrainSpec, alone: bool = True) -> str:
        """The fix under spec: for a tie, what the rule asked for takes (and, alone: no other mistake makes their list as
        well, the tool whose rule their merges follow)."""
        if self.parts:
            return " ".join(part.fix_for(spec) for part in self.parts)
        if not self.is_tie:
            return self.fix
        rule = dict(self.settings).get("tie_break")
        follows = (
            f" Your merges follow the {rule} rule: to compare them with {RULES[rule].tool}, diagnose under that tie-break rule."
            if rule and alone
            else ""
        )
        return " ".join(part for part in (self.fix, RULE_FIX[spec.tie_break]) if part) + follows


def both(a: Mistake, b: Mistake) -> Mistake:
    """Two mistakes made at once: what each changes, together; named in MISTAKES order, whichever was tried first."""
    order = [m.cause for m in MISTAKES]
    if b.cause in order and (a.cause not in order or order.index(b.cause) < order.index(a.cause)):
        a, b = b, a
    return Mistake(
        f"{a.cause}+{b.cause}",
        f"{a.label}, and {b.label}",
        f"{a.does}; and it {b.does}",
        "",
        settings=a.settings + b.settings,
        tie=a.tie or b.tie,
        rewrite=a.rewrite or b.rewrite,
        stale=a.stale or b.stale,
        adjacent=a.adjacent or b.adjacent,
        characters=a.characters or b.characters,
        removes_special_tokens=a.removes_special_tokens or b.removes_special_tokens,
        parts=(a, b),
    )


def compatible(a: Mistake, b: Mistake) -> bool:
    """Whether one trainer can make both: not two settings of one name, two tie rules, two rewrites or two updates."""
    keys_a, keys_b = {k for k, _ in a.settings}, {k for k, _ in b.settings}
    ties = [m for m in (a, b) if m.tie is not None or "tie_break" in {k for k, _ in m.settings}]
    return (
        not keys_a & keys_b
        and len(ties) < 2
        and not (a.rewrite is not None and b.rewrite is not None)
        and not ((a.stale or a.adjacent) and (b.stale or b.adjacent))
        and a.cause != b.cause
    )


MISTAKES: tuple[Mistake, ...] = (
    # ties: the replay tells how far each gets
    Mistake(
        "tie:token_ids",
        "ties to the smaller token ids (rustbpe's rule)",
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
        "tie:greater_token_ids",
        "ties to the greater token ids",
        "breaks ties toward the greater pair of token ids (bytes 0-255, then merges in order), as max((count, (id1, id2))) does",
        "Compare the tokens' bytes, not their ids.",
        tie=greater_ids,
    ),
    # other settings: trained at the compiled heap's speed
    Mistake(
        "special_tokens_not_split",
        "special tokens left in the text",
        "pre-tokenizes the special tokens as ordinary text, so '<|endoftext|>' becomes '<|', 'endoftext', '|>' and its bytes get merged",
        "Cut the text at the special tokens first (re.split on re.escape of each, longest first), pre-tokenize each piece, and never count a pair across a cut.",
        settings=(("special_tokens", ()),),
    ),
    Mistake(
        "special_tokens_removed",
        "special tokens deleted from the text",
        "deletes the special tokens from the text (text.replace(special, '')), which joins the end of each document to the start "
        "of the next, so pairs and pre-tokens run across documents",
        "Split the text at the special tokens (re.split on re.escape of each) and pre-tokenize each piece on its own; do not delete them.",
        settings=(("special_tokens", ()),),
        removes_special_tokens=True,
    ),
    Mistake(
        "line_by_line",
        "the text read line by line",
        "pre-tokenizes each line on its own (for line in f), where the reference reads each document whole, "
        "so whitespace that runs across a line end ('\\n\\n', a newline before an indented line) is cut at it",
        "Read each document whole (f.read()), split it at the special tokens, and pre-tokenize each piece.",
        settings=(("split_lines", True),),
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
    # counting: the parent-set trainer changed
    Mistake(
        "characters_not_bytes",
        "characters, not bytes",
        "starts each pre-token from its characters ([c.encode() for c in word]), not its bytes, so a character of several bytes "
        "(b'\\xc3\\xa4', 'ä') is one token from the start: it never merges two lone bytes of one character, and its list holds "
        "tokens no merge of its own made",
        "Start every pre-token from its bytes, tuple(bytes([b]) for b in word.encode('utf-8')): a character of several bytes is then merged like any pair.",
        characters=True,
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
    Mistake(
        "adjacent_occurrences",
        "touching occurrences updated from the old word",
        "updates the counts after a merge reading each occurrence's neighbours in the word before the merge, so where two occurrences "
        "touch ('br in g in g', merging 'in' + 'g') it lowers ('g', 'in') twice, adds ('ing', 'in') and ('g', 'ing'), which the "
        "new word does not hold, and never adds ('ing', 'ing')",
        "Take each occurrence's left neighbour from the word as merged so far (the new token when the occurrence just before was "
        "merged), or subtract the old word's pairs and add the new word's.",
        adjacent=True,
    ),
)
BY_CAUSE = {m.cause: m for m in MISTAKES}


def special_token_not_given(token: str, spelled: int) -> Mistake:
    """The settings check: a correct trainer given `token` as a special token, where the check was given none."""
    return Mistake(
        "different_input",
        "different input or settings",
        f"was given {token!r} as a special token, which this corpus spells {spelled:,} times, and this check was given none",
        f"Give the check that special token: --special-token '{token}' (bpe diff), or list it in the sidebar's special tokens (the app).",
        settings=(("special_tokens", (token,)),),
    )


# what is said when no mistake reproduces their merges past the first difference: by the kind of difference,
# and "impossible" also when one of their tokens occurs nowhere in the input (first_foreign)
FALLBACK = {
    "tie": Mistake(
        "tie:other",
        "ties broken another way",
        "takes the most frequent pair at every merge, but breaks ties in a way none of the known mistakes reproduces",
        "",
    ),
    "count": Mistake(
        "count:other",
        "pairs counted another way",
        "counts pairs in a way none of the known mistakes reproduces",
        "Compare your pair counts with the reference's at this merge: overlapping pairs ('a a a' holds a + a twice), "
        "each pre-token counted as often as it occurs, no pair across pre-tokens, and every count updated after each merge.",
    ),
    "impossible": Mistake(
        "different_input",
        "different input or settings",
        "ran on other text or with other settings: it merges what this corpus cannot make",
        "Train on the same input with the same settings (pre-tokenizer, special tokens); if you did, "
        "look for a merge step that makes pairs that are not there.",
    ),
    "not_the_maximum": Mistake(
        "not_the_maximum",
        "a pair taken below the highest count",
        "takes a pair that is not the most frequent at this merge, though at every other merge of your list yours is the most "
        "frequent pair (so your counts are right): the maximum is taken wrongly here, or two merges were swapped",
        "Take the pair with the highest count after each merge's updates: max(counts, key=lambda pair: (counts[pair], pair)) over every pair.",
    ),
}
CAUSES = tuple(m.cause for m in MISTAKES) + tuple(dict.fromkeys(m.cause for m in FALLBACK.values()))
LABELS = {m.cause: m.label for m in MISTAKES + tuple(FALLBACK.values())}

# what each rule asks of a student's trainer, said as the fix of a tie
RULE_FIX = {
    "cs336": "Among pairs with the same count take the greater (left bytes, right bytes), compared as a tuple: "
    "max(counts, key=lambda pair: (counts[pair], pair)).",
    "huggingface": "Among pairs with the same count take the smaller pair of HuggingFace's ids: the bytes numbered in the "
    "order of their GPT-2 characters ('!' first), then the merges in order.",
    "rustbpe": "Among pairs with the same count take the smaller pair of token ids: bytes 0-255, then the merges in order.",
}


def label(cause: str) -> str:
    """A cause in words, for a person (two at once joined): 'characters, not bytes, and special tokens left in the text'."""
    return ", and ".join(LABELS.get(c, c) for c in cause.split("+"))


def mistake_of(cause: str) -> Mistake:
    """The Mistake of a cause id in MISTAKES, or of two joined by '+'; ValueError names the choices."""
    parts = cause.split("+")
    unknown = [c for c in parts if c not in BY_CAUSE]
    if unknown or len(parts) > 2:
        raise ValueError(f"Unknown mistake {cause!r}; choose one of {', '.join(BY_CAUSE)}, or two joined by '+'.")
    return BY_CAUSE[parts[0]] if len(parts) == 1 else both(BY_CAUSE[parts[0]], BY_CAUSE[parts[1]])


# ---------------------------------------------------------------------------
# the trainers that make them


def tied_pairs(heap: list[tuple], counts: Mapping[Pair, int], top: int) -> list[Pair]:
    """Every pair whose count is top, read off a lazy heap of rule entries (heap.py's: each pair has an entry stored at
    least as high as its count), without changing it.

    The entries stored at top or higher are a subtree at the root (a child is stored no higher than its parent), so only
    it is walked: a few entries where a scan of every pair reads thousands.
    """
    found: dict[Pair, None] = {}
    stack = [0] if heap else []
    while stack:
        i = stack.pop()
        entry = heap[i]
        if -entry[0] < top:
            continue
        pair = entry_pair(entry)
        if counts.get(pair) == top:
            found[pair] = None
        stack.extend(c for c in (2 * i + 1, 2 * i + 2) if c < len(heap))
    return list(found)


class Ties(Heap):
    """The heap trainer, seeing every tie: `tied` holds the pairs that share the best count before each merge (None if none do).

    Given `tie` (a TieKey), it breaks ties by that instead of by its rule: a
    student's tie-break, trained at the heap's speed. subtle: the heap has popped
    its own winner; when another pair wins, `unchoose` puts it back, and the new
    winner's entry goes stale once it is merged, as every merged pair's does.
    """

    name = "ties"
    summary = "the heap trainer, breaking ties by another key"

    def __init__(self, words: Mapping[bytes, int], *, tie_break: str, tie: TieKey | None = None) -> None:
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
        self.tied = [best] + [p for p in tied_pairs(self.heap, self.pair_counts, top) if p != best]
        if self.tie is None:
            return chosen
        v, tie = self.vocab, self.tie
        first, second = heapq.nsmallest(2, self.tied, key=lambda p: tie(p, v))
        if first != best:
            self.unchoose(best)
        return first, second


class Mistaken(ParentSet):
    """The parent-set trainer counting another way: words started from characters, rewritten right to left, neighbours'
    counts left stale or read from the word before the merge; ties by another key.

    The words and the index of the words each pair occurs in stay true (a merge rewrites every word that holds the pair);
    only the counts the trainer chooses by are wrong, as a student's are. It chooses by a lazy heap over those counts, as
    the heap trainer does (every pair whose count goes up gets an entry), not by a scan: a scan of every pair per merge
    was most of a diagnosis's time. Not registered in train.ALGORITHMS: no page offers it; only diagnose trains it.
    """

    name = "mistaken"
    summary = "the parent-set trainer with a student's counting mistakes"

    def __init__(self, words: Mapping[bytes, int], *, tie_break: str, mistake: Mistake) -> None:
        self.characters = mistake.characters
        self.extra = 0  # tokens of one character of several bytes, made before any merge (characters)
        super().__init__(words, tie_break=tie_break)
        self.stale, self.adjacent, self.tie = mistake.stale, mistake.adjacent, mistake.tie
        if mistake.rewrite is not None:
            self.rewrite = mistake.rewrite
        self._chosen: Pair | None = None
        self.heap = [heap_entry(p, c, self.keys) for p, c in self.pair_counts.items()]
        heapq.heapify(self.heap)

    def start(self, words: Mapping[bytes, int]) -> tuple[list[list[int]], list[int]]:
        """The words as token ids: bytes, or (characters) each character one token, a new one for several bytes."""
        if not self.characters:
            return word_lists(words)
        lists, counts = [], []
        for word, count in words.items():
            ids = [self.character(c) for c in word.decode("utf-8", "surrogateescape")]
            if len(ids) > 1:
                lists.append(ids)
                counts.append(count)
        return lists, counts

    def character(self, c: str) -> int:
        token = c.encode("utf-8", "surrogateescape")
        if len(token) == 1:
            return token[0]
        if token not in self.token_ids:
            self.token_ids[token] = len(self.vocab)
            self.keys.append(self.rule.token_key(len(self.vocab), token))
            self.vocab.append(token)
            self.extra += 1
        return self.token_ids[token]

    def merges(self, max_merges: int, min_pair_frequency: int = 1, detail: bool = False) -> Iterator[MergeEvent]:
        return super().merges(max_merges + self.extra, min_pair_frequency, detail)  # the characters' tokens are no merges

    def choose(self, detail: bool) -> tuple[Pair, Pair | None] | None:
        heap, counts = self.heap, self.pair_counts
        while heap:  # drop or refresh stale entries until the top one is current
            pair = entry_pair(heap[0])
            current = counts.get(pair, 0)
            if current == -heap[0][0]:
                break
            heapq.heappop(heap)
            if current:
                heapq.heappush(heap, heap_entry(pair, current, self.keys))
        if not heap:
            return None
        best = entry_pair(heapq.heappop(heap))
        if self.tie is not None:
            tied = tied_pairs(heap, counts, counts[best])
            if tied:
                first = min([best, *tied], key=lambda p: self.tie(p, self.vocab))
                if first != best:
                    self.unchoose(best)
                    best = first
        return best, None

    def unchoose(self, pair: Pair) -> None:
        heapq.heappush(self.heap, heap_entry(pair, self.pair_counts[pair], self.keys))

    def merge(self, pair: Pair, new_id: int, detail: bool) -> tuple[Delta, int]:
        self._chosen = pair
        parents = self.parents[pair]  # subtle: a wrong count can choose a pair no word holds any more; it has no parents then
        old = [(self.words[i], self.counts[i]) for i in parents] if self.adjacent else None
        delta, touched = super().merge(pair, new_id, detail)
        return (neighbour_delta(old, pair, new_id) if old is not None else delta), touched

    def apply(self, delta: Delta) -> None:
        if self.stale:  # only what went up is added; the merged pair alone is taken away, wholly
            delta = {p: d for p, d in delta.items() if d > 0}
        super().apply(delta)
        counts = self.pair_counts
        if self.stale or self.adjacent:
            counts.pop(self._chosen, None)
        for p, d in delta.items():
            if d > 0 and p in counts:
                heapq.heappush(self.heap, heap_entry(p, counts[p], self.keys))


# ---------------------------------------------------------------------------
# the result


@dataclass(frozen=True)
class Tried:
    """One mistake trained: how many of their merges, from the first, it makes in order."""

    cause: str
    reproduced_through: int
    complete: bool = True  # False: stopped at the time budget while it still agreed (it makes at least that many)
    counts: tuple[int, int] | None = None  # its counts of (their pair, the reference's pair) just before the first difference


@dataclass(frozen=True)
class NotTop:
    """A merge of their list whose pair is not the most frequent there, under the true counts (walk)."""

    index: int  # 0-based
    theirs: Merge
    count: int  # its true count there
    top: Merge  # the most frequent pair there
    top_count: int


@dataclass(frozen=True)
class Walk:
    """Their list merge by merge under the true counts (the reference's counting of the same pre-tokens, their choices)."""

    walked: int  # how many of their merges (to the end, or one that cannot be made there, or the time budget)
    not_top: tuple[NotTop, ...]  # the first SHOWN_NOT_TOP merges whose pair is not the most frequent
    not_top_total: int
    ties_followed: int  # merges where two or more pairs share the highest count and theirs is the one the rule takes
    ties_broken: int  # ... and theirs is another of them
    complete: bool = True


@dataclass(frozen=True)
class Diagnosis:
    """Where a student's merges part from the reference trained under spec, of what kind, and the likely cause."""

    spec: TrainSpec
    num_merges: int  # the merges the reference was asked for (default: as many as theirs)
    their_merges: int  # how many merges theirs has
    first_difference: int | None  # 0-based; None when one list is a prefix of the other (or both are the same)
    theirs: Merge | None  # their merge there (None past the end of their list)
    reference: Merge | None  # the reference's merge there (None past its end)
    theirs_count: int | None  # the true count (the reference's) of their pair just before that merge (None: a part is not a token yet)
    reference_count: int | None  # the true count of the reference's own pair there
    kind: str  # one of KINDS
    cause: str | None  # one of CAUSES (or two joined by '+'), or None (same, shorter, longer)
    reproduced_through: int  # how many of their merges the cause reproduces (for same, shorter, longer: the ones they share)
    sentence: str  # the whole story, for a person: where, both pairs and counts, why, the cause
    fix: str  # what to change, one sentence ("" when nothing differs)
    complete: bool = True  # False: the cause was still making their merges when its time budget ran out (at least that many)
    tried: tuple[Tried, ...] = ()  # the mistakes tried, in MISTAKES order, then two at once (counting ones not once one made all)
    also: tuple[str, ...] = ()  # other mistakes that make as many of theirs as the cause: more merges would tell them apart
    reference_merges: tuple[Merge, ...] = ()  # the reference's merges, up to CONTEXT past the first difference
    event: MergeEvent | None = None  # the reference's merge at the first difference, with its detail (the pair table)
    missing: bytes | None = None  # a part of their pair that is not a token at that point
    stop_reason: str = ""  # why the reference stopped, when it made fewer merges than asked
    foreign: tuple[int, bytes] | None = None  # their first merge (0-based) whose token occurs nowhere in the input, and that token
    implied: tuple[int, int] | None = None  # a trainer with the cause: its counts of (their pair, the reference's pair) there
    walk: Walk | None = None  # their list under the true counts, when no mistake makes it past the first difference
    labels: tuple[str, ...] = field(default=(), compare=False)  # the cause and `also`, in words

    @property
    def trained(self) -> bool:
        """Whether the cause is a mistake trained that makes their list past the first difference (not what their list
        alone shows: not_the_maximum, or the fallbacks tie:other, count:other, different_input)."""
        d = self.first_difference
        return d is not None and self.reproduced_through > d and any(t.cause == self.cause for t in self.tried)

    def as_dict(self) -> dict[str, Any]:
        """The JSON `bpe diff --json` prints: tokens as GPT-2 writes them in merges.txt (byte-to-unicode)."""
        detail = self.event.detail if self.event is not None else None
        implied = self.implied or (None, None)
        walk = self.walk
        return {
            "first_difference": self.first_difference,
            "merge": None if self.first_difference is None else self.first_difference + 1,
            "theirs": gpt2_pair(self.theirs),
            "reference": gpt2_pair(self.reference),
            "kind": self.kind,
            "cause": self.cause,
            "cause_label": None if self.cause is None else label(self.cause),
            "cause_trained": self.trained,
            "reproduced_through": self.reproduced_through,
            "complete": self.complete,
            "their_merges": self.their_merges,
            "true_count_of_theirs": self.theirs_count,
            "true_count_of_reference": self.reference_count,
            "implied_count_of_theirs": implied[0],
            "implied_count_of_reference": implied[1],
            "missing": None if self.missing is None else to_unicode(self.missing),
            "foreign_merge": None if self.foreign is None else self.foreign[0] + 1,
            "foreign_token": None if self.foreign is None else to_unicode(self.foreign[1]),
            "sentence": self.sentence,
            "fix": self.fix,
            "also": list(self.also),
            "tried": {t.cause: t.reproduced_through for t in self.tried},
            "not_most_frequent": None
            if walk is None
            else {
                "merges": walk.not_top_total,
                "walked": walk.walked,
                "first": [
                    {
                        "merge": n.index + 1,
                        "theirs": gpt2_pair(n.theirs),
                        "count": n.count,
                        "top": gpt2_pair(n.top),
                        "top_count": n.top_count,
                    }
                    for n in walk.not_top
                ],
                "ties_followed": walk.ties_followed,
                "ties_broken": walk.ties_broken,
            },
            "top_pairs": [[to_unicode(a), to_unicode(b), c] for a, b, c in detail.top_pairs] if detail else [],
            "settings": {
                "pretokenizer": self.spec.pretokenizer.spelled,
                "special_tokens": list(self.spec.special_tokens),
                "tie_break": self.spec.tie_break,
                "num_merges": self.num_merges,
            },
        }


def kind_words(d: Diagnosis) -> str:
    """The kind of difference in words: KIND_WORDS', but a pair below the highest count when their counts are right."""
    return "a pair below the highest count" if d.cause == "not_the_maximum" else KIND_WORDS[d.kind]


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
    asked = theirs[:num_merges]

    with paused_gc():
        report("Pre-tokenizing the corpus…", 0.0)
        corpus = corpora.get(spec)
        report("Training the reference until it parts from your merges…", 0.05)
        made, d, stop_reason = reference_run(corpus, spec, num_merges, theirs)
        base = dict(spec=spec, num_merges=num_merges, their_merges=len(theirs), reference_merges=tuple(made), stop_reason=stop_reason)
        if d is None:
            return agreed(theirs, made, base)
        applies = [m for m in MISTAKES if m.applies(spec)]
        applies[:0] = settings_checks(corpora, spec)  # a correct trainer under other settings is the likeliest
        applies.sort(key=lambda m: not m.is_tie)  # the ties first: the replay tells how far each gets
        at = replay(corpus, spec, d, theirs[d], [m for m in applies if m.is_tie])
        tried = list(try_mistakes(corpora, spec, asked, d, at, applies, report, budget_s))
        closest = pick(tried, d, len(asked))
        if closest is not None and closest.reproduced_through < len(asked):
            anchor = mistake_of_tried(closest.cause, applies)
            pairs = [both(anchor, m) for m in applies if compatible(anchor, m)]
            report("Trying two mistakes at once…", 0.9)
            tried += try_mistakes(corpora, spec, asked, d, at, pairs, lambda doing, share: None, budget_s, alone=False)
        causes = nameable(tried, d, len(asked), applies)
        best = pick(causes, d, len(asked))
        walk = None
        if best is None and at.kind in ("tie", "count"):
            report("Walking your merges under the true counts…", 0.95)
            walk = walk_theirs(corpus, spec, asked, budget_s)
    also = tuple(t.cause for t in causes if best and t.reproduced_through == best.reproduced_through and t is not best)
    foreign = None if best or at.kind == "tie" else first_foreign(theirs, corpora, spec)
    kind, cause, reproduced = at.kind, None, d
    if best is not None:
        mistake = mistake_of_tried(best.cause, applies)
        if not mistake.is_tie and at.kind == "tie":
            kind = "count"  # their counts differ: the pair the reference's counts tie with wins by count in theirs
        cause, reproduced = best.cause, best.reproduced_through
    elif foreign is not None or at.kind == "impossible":
        mistake = FALLBACK["impossible"]
    else:
        mistake, kind, reproduced = judged(walk, at.kind, d)
    event = at.event
    diagnosis = Diagnosis(
        **base,
        first_difference=d,
        theirs=theirs[d],
        reference=(event.left, event.right),
        theirs_count=None if at.missing is not None else at.theirs_count,
        reference_count=event.count,
        kind=kind,
        cause=cause or mistake.cause,
        reproduced_through=reproduced,
        complete=best.complete if best else walk.complete if walk and mistake.cause == "not_the_maximum" else True,
        sentence="",
        fix="",
        tried=tuple(tried),
        also=also,
        event=replace(event, rank=d),
        missing=at.missing,
        foreign=foreign,
        implied=best.counts if best and not mistake.is_tie else None,
        walk=walk,
        labels=tuple(label(c) for c in ((cause or mistake.cause), *also)),
    )
    return replace(diagnosis, sentence=explain(diagnosis, mistake, at.before), fix=fix_of(diagnosis, mistake, applies))


def pick(tried: Sequence[Tried], d: int, n: int) -> Tried | None:
    """The mistake that makes the most of their n merges past the first difference d (the first of equals: the order
    tried, MISTAKES'), or None."""
    found = [t for t in tried if t.reproduced_through > d]
    return max(found, key=lambda t: t.reproduced_through, default=None)


def nameable(tried: Sequence[Tried], d: int, n: int, applied: Sequence[Mistake]) -> list[Tried]:
    """The mistakes tried that may be named as the cause of their n merges: each that makes them past d, but a tie rule
    only if it makes them all, and two at once only if they make more than either alone.

    subtle: a mistake in breaking ties has the reference's counts, so it makes all of a list that breaks ties its way;
    one that makes part of theirs, then parts at a tie, agreed with their rule by chance for a while, and is not their
    rule (unless it was stopped at its time budget while it still agreed).
    """
    ties = {m.cause for m in applied if m.is_tie}
    alone = {t.cause: t.reproduced_through for t in tried}

    def may_be_named(t: Tried) -> bool:
        if t.cause in ties and t.complete and t.reproduced_through < n:
            return False
        return all(t.reproduced_through > alone[c] for c in t.cause.split("+")) if "+" in t.cause else True

    return [t for t in tried if t.reproduced_through > d and may_be_named(t)]


def mistake_of_tried(cause: str, applies: Sequence[Mistake]) -> Mistake:
    """The Mistake a Tried names: one of applies (the settings checks are made per corpus), or two of them at once."""
    by_cause = {m.cause: m for m in applies}
    if cause in by_cause:
        return by_cause[cause]
    a, b = cause.split("+")
    return both(by_cause[a], by_cause[b])


def judged(walk: Walk | None, kind: str, d: int) -> tuple[Mistake, str, int]:
    """No mistake makes their list past d: what their list under the true counts says (the mistake said, the kind, how far).

    Their pair below the highest count at d alone, every other merge the most frequent pair: not_the_maximum,
    which the reference's rule with that one choice makes (their list to the end). Below it elsewhere too: they
    count another way, and a tie at d only looks like one. Never below it: ties broken another way.
    """
    if walk is None:
        return FALLBACK[kind], kind, d
    elsewhere = [n for n in walk.not_top if n.index != d]
    if kind == "count" and not elsewhere and walk.not_top_total == 1 and not walk.ties_broken:
        return FALLBACK["not_the_maximum"], "count", walk.walked
    if elsewhere or (kind == "count"):
        return FALLBACK["count"], "count", d
    return FALLBACK["tie"], "tie", d


def fix_of(d: Diagnosis, mistake: Mistake, applies: Sequence[Mistake]) -> str:
    """The fix: the cause's; for a tie rule that several real tools' rules reproduce alike, naming them all."""
    rules = [dict(m.settings).get("tie_break") for m in applies if m.cause in (d.cause, *d.also)]
    if len(rules) < 2 or not all(rules):  # one mistake, or tools' rules and others alike: name no tool
        return mistake.fix_for(d.spec, alone=not d.also)
    tools = " and ".join(f"the {r} rule ({RULES[r].tool})" for r in rules)
    return f"{RULE_FIX[d.spec.tie_break]} Your merges follow {tools} alike: to compare them with one of those tools, diagnose under its tie-break rule."


def make_mistake(cause: str, inputs: Paths | bytes, spec: TrainSpec | None = None, num_merges: int = 100) -> list[Merge]:
    """The merges a trainer with one of MISTAKES (or two joined by '+') makes on inputs under spec: a student's list to try diagnose on.

    make_mistake("tie:smaller", b"low lower widest newest", TrainSpec(pretokenizer="whitespace"), 5)
    """
    spec = spec or TrainSpec()
    mistake = mistake_of(cause)
    their_spec = mistake.spec(spec)
    corpora = Corpora(inputs)
    trainer = trainer_of(corpora.get(their_spec, removed(mistake, spec)), their_spec, mistake)
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

    def get(self, spec: TrainSpec, removed: tuple[str, ...] = ()) -> PreTokens:
        """The pre-tokens under spec; removed: special tokens deleted from each document first (text.replace)."""
        key = (spec.pretokenizer, spec.special_tokens, spec.split_lines, spec.text_field, spec.text_column, removed)
        if key not in self.made:
            if removed:
                self.made[key] = self.deleting(spec, removed)
            elif isinstance(self.inputs, (bytes, bytearray)):
                self.made[key] = pretokenize(
                    bytes(self.inputs), pretokenizer=spec.pretokenizer, special_tokens=spec.special_tokens, split_lines=spec.split_lines
                )
            else:
                self.made[key] = pretokenize_files(
                    self.inputs,
                    pretokenizer=spec.pretokenizer,
                    special_tokens=spec.special_tokens,
                    workers=self.workers,
                    text_field=spec.text_field,
                    text_column=spec.text_column,
                    split_lines=spec.split_lines,
                    compiled=self.compiled,
                )
        return self.made[key]

    def deleting(self, spec: TrainSpec, removed: tuple[str, ...]) -> PreTokens:
        """Each document with the special tokens deleted from it, pre-tokenized under spec."""
        counts: dict[bytes, int] = defaultdict(int)
        size = 0
        for document, n in self.documents(spec).items():
            size += len(document) * n
            for special in removed:
                document = document.replace(special.encode("utf-8"), b"")
            made = pretokenize(document, pretokenizer=spec.pretokenizer, special_tokens=spec.special_tokens, split_lines=spec.split_lines)
            for word, k in made.counts.items():
                counts[word] += k * n
        return PreTokens(dict(counts), None, size)

    def documents(self, spec: TrainSpec) -> Mapping[bytes, int]:
        """The input's documents as spec reads them (its text field or column), each as its bytes, with how often it
        occurs (bytes given: that one document)."""
        if isinstance(self.inputs, (bytes, bytearray)):
            return {bytes(self.inputs): 1}
        return self.get(spec.but(pretokenizer="none", special_tokens=(), split_lines=False)).counts  # a document is one pre-token

    def text(self, spec: TrainSpec) -> bytes:
        """The input's bytes (for files: each document once, joined by NUL bytes)."""
        if isinstance(self.inputs, (bytes, bytearray)):
            return bytes(self.inputs)
        return b"\0".join(self.documents(spec))


def removed(mistake: Mistake, spec: TrainSpec) -> tuple[str, ...]:
    """The special tokens a mistake deletes from the text: spec's, when it deletes them."""
    return spec.special_tokens if mistake.removes_special_tokens else ()


def settings_checks(corpora: Corpora, spec: TrainSpec) -> list[Mistake]:
    """The settings the input suggests: with no special token given, each common one the corpus spells, as a correct
    trainer given it (most spelled first). A corpus that never spells one suggests none."""
    if spec.special_tokens:
        return []
    text = corpora.text(spec)
    spelled = [(token, text.count(token.encode())) for token in COMMON_SPECIAL_TOKENS]
    return [special_token_not_given(token, n) for token, n in sorted(spelled, key=lambda s: -s[1]) if n]


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
        return lambda p: tie(p, vocab)
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
    alone: bool = True,
) -> Iterator[Tried]:
    """How far each mistake makes theirs, in the order given (the tie mistakes first).

    Each is trained only where the replay cannot tell, and only until it parts
    from theirs; once one has made all of theirs, the counting mistakes after it
    are not tried (alone: False, for two at once, tries them all).
    """
    reference = corpora.get(spec)
    overlaps = any(a == b for a, b in theirs[:d])  # merging right to left changes nothing until a pair such as a + a is merged
    ascii_only = all(word.isascii() for word in reference.counts)  # characters are bytes then
    everything = False  # a mistake made all of theirs: the counting mistakes after it could at most equal it, and come second
    probe = (d, theirs[d], (at.event.left, at.event.right))
    for n, mistake in enumerate(applies):
        if alone and everything and not mistake.is_tie:
            return
        if mistake.cause in at.parted:
            yield Tried(mistake.cause, at.parted[mistake.cause])
            continue
        if (mistake.rewrite is merge_right_to_left and not overlaps) or (mistake.characters and ascii_only and alone):
            yield Tried(mistake.cause, d)  # its words are the reference's up to d: it parts where the reference does
            continue
        if alone:
            report(f"Trying mistake {n + 1} of {len(applies)}: {mistake.label}…", 0.2 + 0.7 * n / len(applies))
        their_spec = mistake.spec(spec)
        corpus = corpora.get(their_spec, removed(mistake, spec))
        same = corpus.counts is reference.counts or corpus.counts == reference.counts
        if alone and not mistake.is_tie and not mistake.counts_another_way and mistake.tie is None and same:
            yield Tried(mistake.cause, d)  # the same pre-tokens: it is the reference, and parts where it does
            continue
        made, complete, counts = reach(
            trainer_of(corpus, their_spec, mistake), theirs, spec.min_pair_frequency, budget_s, past=d, probe=probe
        )
        yield Tried(mistake.cause, made, complete, counts)
        everything = everything or made == len(theirs)


def fastest(corpus: PreTokens, tie_break: str) -> Trainer:
    """The default trainer: the compiled heap where it is built, else the Python heap (the same merges)."""
    return trainer_for(DEFAULT_ALGORITHM)(corpus.counts, tie_break=tie_break)


def trainer_of(corpus: PreTokens, spec: TrainSpec, mistake: Mistake) -> Trainer:
    """The trainer that makes this mistake: the parent-set trainer counting its way, the heap breaking ties its way, or the
    default trainer (other settings alone)."""
    if mistake.counts_another_way:
        return Mistaken(corpus.counts, tie_break=spec.tie_break, mistake=mistake)
    if mistake.tie is not None:
        return Ties(corpus.counts, tie_break=spec.tie_break, tie=mistake.tie)
    return fastest(corpus, spec.tie_break)


def reach(
    trainer: Trainer,
    theirs: Sequence[Merge],
    min_pair_frequency: int,
    budget_s: float | None = None,
    past: int = 0,
    probe: tuple[int, Merge, Merge] | None = None,
) -> tuple[int, bool, tuple[int, int] | None]:
    """How many of theirs, from the first, the trainer makes in order before it parts from them; whether it got to
    the end of that (False: still agreeing, past `past` merges, when budget_s seconds had passed); and, given a probe
    (d, their pair, the reference's pair), the trainer's counts of both just before merge d (None if it parts sooner)."""
    n, start = 0, time.perf_counter()
    counts = None
    if probe is not None and probe[0] == 0:
        counts = counts_of(trainer, probe[1:])
    for event in trainer.merges(len(theirs), min_pair_frequency):
        if n >= len(theirs) or (event.left, event.right) != theirs[n]:
            break
        n += 1
        if probe is not None and n == probe[0]:
            counts = counts_of(trainer, probe[1:])
        if budget_s is not None and n > past and n < len(theirs) and time.perf_counter() - start > budget_s:
            return n, False, counts
    return n, True, counts


def counts_of(trainer: Trainer, pairs: Sequence[Merge]) -> tuple[int, ...] | None:
    """A trainer's counts of pairs of bytes now (0 for a pair it has not; None if a part is not one of its tokens)."""
    ids: dict[bytes, int] = {}
    for i, token in enumerate(trainer.vocab):
        ids.setdefault(token, i)
    if any(part not in ids for pair in pairs for part in pair):
        return None
    counts = trainer.pair_counts
    return tuple(counts.get((ids[a], ids[b]), 0) for a, b in pairs)


def walk_theirs(corpus: PreTokens, spec: TrainSpec, theirs: Sequence[Merge], budget_s: float | None = None) -> Walk:
    """Their list merge by merge on the reference's pre-tokens, counted right: at each merge, is theirs the most frequent
    pair, and at a tie, the one the rule takes? Stops at a pair that cannot be made there (a part not a token, or no
    occurrence) and at the time budget.

    A mistake in breaking ties never takes a pair below the highest count, a mistake in counting soon does: this tells
    the two apart without training either.
    """
    trainer = Heap(corpus.counts, tie_break=spec.tie_break)
    ids, counts = trainer.token_ids, trainer.pair_counts
    not_top: list[NotTop] = []
    total = followed = broken = 0
    start = time.perf_counter()
    k = 0
    for k, (a, b) in enumerate(theirs):
        if budget_s is not None and time.perf_counter() - start > budget_s:
            return Walk(k, tuple(not_top), total, followed, broken, complete=False)
        if a not in ids or b not in ids:
            break
        pair = (ids[a], ids[b])
        count = counts.get(pair, 0)
        chosen = trainer.choose(False)  # pops the rule's best; the runner-up is then on top
        if chosen is None or not count:
            break
        best, runner = chosen
        top = counts[best]
        if pair != best:
            trainer.unchoose(best)
        if count < top:
            total += 1
            if len(not_top) < SHOWN_NOT_TOP:
                not_top.append(NotTop(k, (a, b), count, (trainer.vocab[best[0]], trainer.vocab[best[1]]), top))
        elif pair != best:
            broken += 1
        elif runner is not None and counts.get(runner) == top:
            followed += 1
        delta, _ = trainer.merge(pair, trainer.mint(pair), False)
        trainer.apply(delta)
    else:
        k = len(theirs)
    return Walk(k, tuple(not_top), total, followed, broken)


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


def explain(d: Diagnosis, mistake: Mistake, before: Sequence[Merge]) -> str:
    """The sentence for a person: where, both pairs with their counts, what kind of difference, the cause and its fix."""
    k = d.first_difference + 1
    mine, theirs = show_pair(d.reference), show_pair(d.theirs)
    looks_tied = d.theirs_count == d.reference_count
    if d.kind == "tie":
        what = f"At merge {k:,} yours is {theirs} and the reference's {mine}: both occur {d.reference_count:,} times there, a tie broken another way."
        tie = tie_reason(d, before)
        what += f" {tie}" if tie else ""
    elif d.kind == "count" and looks_tied:
        what = (
            f"At merge {k:,} yours is {theirs} and the reference's {mine}: both occur {d.reference_count:,} times there, "
            f"so it looks like a tie, but it is a count difference: {implied(d, mine, theirs)}"
        )
    elif d.kind == "count":
        what = (
            f"At merge {k:,} yours is {theirs}, which occurs {d.theirs_count:,} times there, "
            f"fewer than the reference's {mine} ({d.reference_count:,}): the counts differ"
        )
        what += f"; {implied(d, mine, theirs)}" if d.implied else "."
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
    return f"{what} {why(d, mistake)}"


def implied(d: Diagnosis, mine: str, theirs: str) -> str:
    """The counts their trainer has at the first difference: a trainer with the cause's, or what their list implies."""
    if d.implied is not None and not d.implied[1]:
        return f"a trainer that makes your list never holds {mine} there, and counts {theirs} {d.implied[0]:,} times."
    if d.implied is not None:
        return f"a trainer that makes your list counts {mine} {d.implied[1]:,} times there and {theirs} {d.implied[0]:,}."
    rule = d.spec.tie_break
    walk = d.walk
    followed = f" at the {walk.ties_followed:,} other ties it meets" if walk and walk.ties_followed else ""
    return (
        f"your list follows the {rule} rule{followed} and takes pairs that are not the most frequent elsewhere, so your trainer "
        f"must count {mine} fewer than {d.reference_count:,} times here (or {theirs} more)."
    )


def why(d: Diagnosis, mistake: Mistake) -> str:
    """The likely cause, said without its id: a mistake that makes their list, or what their list itself shows."""
    if d.foreign is not None:
        rank, token = d.foreign
        return (
            f"Likely cause: your merge {rank + 1:,} makes {show_token(token)}, which occurs nowhere in this corpus, "
            "so your merges come from other text or other settings."
        )
    if d.cause == "not_the_maximum":
        return f"Likely cause: your trainer {mistake.does}."
    if mistake in FALLBACK.values():
        said = f"None of the known mistakes makes your list past merge {d.first_difference + 1:,}"
        said += f" ({how_far(d.tried)})." if d.tried else "."
        if d.walk is not None and d.walk.not_top_total:
            said += " " + not_top_sentence(d.walk)
        elif d.walk is not None and d.kind == "tie":
            said += f" Your list takes the most frequent pair at every one of the {d.walk.walked:,} merges walked, so your counts are right and your trainer breaks ties another way."
        return said
    of = "all" if d.reproduced_through == d.their_merges else f"the first {d.reproduced_through:,}"
    of = of if d.complete else f"at least the first {d.reproduced_through:,} (it was stopped at its time budget)"
    if mistake.parts:
        said = f"Likely cause, two mistakes at once: your trainer {mistake.does}. A trainer with both makes {of} of your {d.their_merges:,} merges."
    else:
        said = f"Likely cause: your trainer {mistake.does}. A trainer with that mistake makes {of} of your {d.their_merges:,} merges."
    if d.also:
        others = "; ".join(label(c) for c in d.also)
        said += f" So do trainers with {others}: more of your merges would tell them apart."
    return said


def how_far(tried: Sequence[Tried]) -> str:
    """'ties to the smaller bytes and 4 more make your first 31 merges; special tokens left in the text makes your first 92'."""
    groups: dict[int, list[str]] = defaultdict(list)
    for t in tried:
        if "+" not in t.cause:
            groups[t.reproduced_through].append(LABELS.get(t.cause, t.cause))
    said = []
    for n, labels in sorted(groups.items(), reverse=True):
        named = labels[0] if len(labels) == 1 else f"{labels[0]} and {len(labels) - 1} more"
        said.append(
            f"{named} make{'s' if len(labels) == 1 else ''} your first {n:,}"
            if n
            else f"{named} make{'s' if len(labels) == 1 else ''} none"
        )
    return "; ".join(said)


def not_top_sentence(walk: Walk) -> str:
    """'At 12 of your merges yours is not the most frequent pair: at merge 420 ...'."""
    first = walk.not_top[0]
    many = f"At {walk.not_top_total:,} of your merges" if walk.not_top_total > 1 else "At one of your merges"
    return (
        f"{many} yours is not the most frequent pair, counted right: at merge {first.index + 1:,} yours is {show_pair(first.theirs)} "
        f"({first.count:,}) while {show_pair(first.top)} occurs {first.top_count:,} times."
    )


def tie_reason(d: Diagnosis, before: Sequence[Merge]) -> str:
    """What the reference's rule compares for the two tied pairs and which it takes, as rule.explain_tie says."""
    try:
        choices = explain_tie([d.reference, d.theirs], before, len(d.spec.special_tokens))
    except ValueError:
        return ""
    return next((c.reason for c in choices if c.rule == d.spec.tie_break), "")
