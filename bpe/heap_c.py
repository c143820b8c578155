"""The heap trainer compiled: bpe/heap.py's algorithm in C (bpe/c/heap.c), handing out the same events.

Same inverted index, same lazy max-heap, same words merged in place, so the
same merges, counts, runners-up, stop reasons and work counters under every
tie-break rule (tests/test_heap_c.py holds the two to it); what it leaves out is
the interpreter. It is the default trainer where the core is built (spec.py)
and a fifth runner in the race, so a class sees what the interpreter costs next
to what the algorithm saves.

Not here: detail. `merges(detail=True)` hands the run to the Python heap (the
`reference`), which records what the step page shows -- the same merges. Where
the core is absent (bpe/core/ says why), bpe.train runs the reference instead.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence

from .core import core, missing
from .events import MergeEvent, StopReason
from .heap import Heap
from .rule import DEFAULT_RULE, Pair, Rule, rule_for
from .trainer import Merged, Trainer, Word, made_tokens


def core_rule(rule: Rule) -> tuple[int, bytes]:
    """How the C heap breaks ties under rule: by the tokens' bytes (cs336), or by one integer key per token.

    Integer keys: each byte's as rule.py gives it (huggingface: its GPT-2 character order), a merge's is its id.
    """
    if isinstance(rule.token_key(0, b"\x00"), tuple):
        return core.RULE_BYTES, b""
    if rule.token_key(300, b"ab") != 300:
        raise ValueError(f"The compiled heap cannot follow the {rule.name} rule: a merged token's key is not its id.")
    return core.RULE_IDS, array("I", [rule.token_key(i, bytes([i])) for i in range(256)]).tobytes()


class HeapC(Trainer):
    name = "heap_c"
    summary = "the heap trainer compiled to C (bpe/c/heap.c): the same algorithm and work, without the interpreter"
    colour = "#17344f"  # the heap's blue, darker
    complexity = Heap.complexity
    measured = Heap.measured
    reference = Heap
    missing = missing
    encodes = True  # given words of bytes and merged, it encodes them itself, in C (as trainer.encode_words does)

    def __init__(
        self, words: Mapping[Word, int], sequence: Sequence[Word] | None = None, *, tie_break: str = DEFAULT_RULE, merged: Merged = ()
    ) -> None:
        if core is None:
            raise ValueError(f"The compiled heap is not available: {missing}.")
        # not Trainer.__init__: the C object holds the counts, the keys and the work
        self.rule = rule_for(tie_break)
        self.vocab: list[bytes] = made_tokens(merged, self.rule.reuses_tokens)  # the 256 bytes, and the tokens merged made
        self.stop_reason: str = ""
        self._events = 0
        self._merged = tuple(merged)
        self._python: Heap | None = None  # the reference, when detail was asked for
        kind, byte_keys = core_rule(self.rule)
        # a counts file's columns as the core holds them (counts_file.CountedWords), or a dict
        words = getattr(words, "compiled", None) or (words if isinstance(words, dict) else dict(words))
        self._ids = isinstance(words, dict) and isinstance(next(iter(words), None), tuple)  # words of token ids (continuing a run)
        if self._ids:  # each one's ids as 4-byte numbers, as the core reads them (width 4)
            words = {array("I", word).tobytes(): count for word, count in words.items()}
        ranks = b""
        if merged and not self._ids:  # words of bytes, encoded in C with the merges: as (left, right, made) ids in rank order
            ids: dict[bytes, int] = {}
            for i, token in enumerate(self.vocab):
                ids.setdefault(token, i)
            ranks = array("I", [i for left, right in merged for i in (ids[left], ids[right], ids[left + right])]).tobytes()
        # the C object appends each new token's bytes to self.vocab and makes each MergeEvent itself
        width = array("I").itemsize if self._ids else 1
        self._core = core.Heap(words, kind, byte_keys, self.rule.reuses_tokens, self.vocab, MergeEvent, width, len(merged), ranks)

    @property
    def work(self) -> Counter[str]:
        """The work counters, as Trainer.work: the C object's totals and the merges made."""
        if self._python is not None:
            return self._python.work
        work = Counter({name: n for name, n in self._core.work().items() if n})
        if self._events:
            work["merges"] = self._events
        return work

    @property
    def pair_counts(self) -> dict[Pair, int]:
        """Every pair some word holds -> its count (built from the C object on each call: for tests and inspection)."""
        return self._python.pair_counts if self._python is not None else self._core.pair_counts()

    def merge(self, pair: Pair, new_id: int, detail: bool):
        raise NotImplementedError("The compiled heap merges inside merges(); bpe/heap.py's merge is the readable one.")

    def merges(self, max_merges: int, min_pair_frequency: int = 1, detail: bool = False) -> Iterator[MergeEvent]:
        """Trainer.merges, one C step a merge; with detail, the Python heap's run (the same merges)."""
        if detail:
            yield from self._reference_merges(max_merges, min_pair_frequency)
            return
        step, vocab = self._core.step, self.vocab
        self.stop_reason = StopReason.VOCAB_SIZE
        while len(vocab) - 256 < max_merges:
            event = step(min_pair_frequency)  # a MergeEvent with its share of the work, or why it stopped
            if event.__class__ is int:
                self.stop_reason = StopReason.NO_PAIRS if event == core.STOP_NO_PAIRS else StopReason.MIN_FREQUENCY
                return
            self._events += 1
            yield event

    def _reference_merges(self, max_merges: int, min_pair_frequency: int) -> Iterator[MergeEvent]:
        """The Python heap on the same words, which records the detail the step page shows."""
        if self._events:
            raise ValueError("Detail is recorded from the first merge: train a new heap_c trainer with detail=True.")
        if self._ids or self._merged:  # no merge made yet: the words as they were given, or as the merges made them
            words = {tuple(ids): count for ids, count in self._core.words()}
        else:  # ... ids are bytes
            words = {bytes(ids): count for ids, count in self._core.words()}
        self._python = Heap(words, tie_break=self.rule.name, merged=self._merged)
        yield from self._python.merges(max_merges, min_pair_frequency, detail=True)
        self.vocab, self.stop_reason = self._python.vocab, self._python.stop_reason
