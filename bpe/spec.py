"""One training run's settings, gathered in one frozen, hashable value: `TrainSpec`.

Every layer that trains -- `train_bpe`, `train`, the CLI, the race, the app's
worker jobs and its caches -- takes a TrainSpec instead of carrying the settings
one by one, the way HuggingFace's trainer gathers one config. Each setting's
default is written here once; the keyword arguments of `train_bpe` and `train`
are a convenience that builds a spec (`TrainSpec.of`).

    spec = TrainSpec(special_tokens=("<|endoftext|>",), tie_break="rustbpe")
    spec.but(algorithm="naive")   # a changed copy; specs are never mutated
    {spec: run}                   # hashable: a cache key as it is

Not here: the size of a run (vocab size or number of merges: one spec serves
many sizes, and a longer run's prefix serves a shorter one), nor checking the
values (train.check_spec knows the trainers and the rules).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from .data.inputs import DEFAULT_READING, Reading
from .heap_c import HeapC
from .renamed import renamed
from .rule import DEFAULT_RULE
from .text.pretokenizers import PreTokenizer, pretokenizer_of

# the default trainer: the heap compiled where the core is built (bpe core), else the heap in Python
DEFAULT_ALGORITHM = HeapC.reference.name if HeapC.missing else HeapC.name


@renamed(pattern="pretokenizer")
@dataclass(frozen=True)
class TrainSpec:
    """How to train: every setting but the size. Frozen and hashable, so it is also the cache key.

    The pre-tokenizer may be given by name or regex (TrainSpec(pretokenizer="cl100k")): it is resolved
    once, here, and held as its PreTokenizer. TrainSpec(pattern=...), its old name, is still accepted.
    """

    pretokenizer: PreTokenizer = DEFAULT_READING.pretokenizer  # how text is cut before merging (text/pretokenizers.py)
    special_tokens: tuple[str, ...] = ()  # never merged; the text is cut at them
    tie_break: str = DEFAULT_RULE  # a name in rule.RULES: whose merges to reproduce when counts tie
    algorithm: str = DEFAULT_ALGORITHM  # a name in train.ALGORITHMS: all make the same merges, at different costs
    min_pair_frequency: int = 1  # stop when the best pair occurs fewer times
    text_field: str = DEFAULT_READING.text_field  # where the text is in a JSON Lines record
    text_column: str = DEFAULT_READING.text_column  # where the text is in a Parquet table
    split_lines: bool = DEFAULT_READING.split_lines  # each line of a text input is a document of its own (read by inputs/count)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pretokenizer", pretokenizer_of(self.pretokenizer))  # ValueError: one sentence
        # subtle: a list of special tokens would make the spec unhashable; callers pass lists freely
        if not isinstance(self.special_tokens, tuple) and not isinstance(self.special_tokens, (str, bytes)):
            object.__setattr__(self, "special_tokens", tuple(self.special_tokens))

    @classmethod
    @renamed(pattern="pretokenizer")
    def of(cls, spec: TrainSpec | None = None, **settings: Any) -> TrainSpec:
        """spec (or the defaults) with settings changed: TrainSpec.of(tie_break="rustbpe"); an unknown name is a TypeError."""
        unknown = set(settings) - {f.name for f in fields(cls)}
        if unknown:
            raise TypeError(
                f"Unknown training setting(s) {', '.join(sorted(unknown))}; a TrainSpec has {', '.join(f.name for f in fields(cls))}."
            )
        return replace(spec or DEFAULT, **settings) if settings else spec or DEFAULT

    def but(self, **settings: Any) -> TrainSpec:
        """A copy with some settings changed: spec.but(algorithm="naive")."""
        return TrainSpec.of(self, **settings)

    def reading(self) -> Reading:
        """How inputs are read for this spec (bpe.data.inputs.Reading).

        With split_lines each line (newline kept) is read as a document of its own.
        """
        return Reading(self.text_field, self.text_column, self.special_tokens, self.pretokenizer, split_lines=self.split_lines)


DEFAULT = TrainSpec()
