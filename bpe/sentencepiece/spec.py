"""A SentencePiece BPE run's settings in one frozen, hashable value, under sentencepiece's own names: `SentencePieceSpec`.

Each field is the `spm_train` flag of the same name with the same default (sentencepiece_model.proto), so a run
reads like the command it reproduces:

    spec = SentencePieceSpec(vocab_size=8000, byte_fallback=True, split_digits=True)
    spm_train --model_type=bpe --vocab_size=8000 --byte_fallback=true --split_digits=true   # the same run
    spec.but(character_coverage=1.0)   # a changed copy; {spec: model} works as a cache key

Rules sentencepiece checks before it reads a line (trainer_interface.cc: VerifySpec), checked here as one sentence:
- `character_coverage` lies in [0.98, 1.0] (since 0.2.3; older versions took any value in (0, 1]);
- `max_sentencepiece_length` in [1, 512], `max_sentence_length` in [10, 1073741824], `num_threads` in [1, 1024];
- `input_sentence_size` is 0 (every line) or more than 100.
- subtle: `input_sentence_size` here always means the *first* N lines (spm_train's
  `--shuffle_input_sentence=false`). spm_train's default samples N lines at random with a reservoir sampler
  seeded 12345678 on absl's random bit generator, whose output absl does not promise across versions or
  platforms; so a sample cannot be reproduced outside that very binary, and this tool does not pretend to.

Not here: what the settings do (trainer.py: loading, coverage, the validity rule, the merge loop; normalizer.py:
the normalization switches), or the settings spm_train has that change nothing a BPE run makes (seeds and sizes
of the unigram trainer, `vocabulary_output_piece_score`, `self_test_sample_size`...).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from .normalizer import NAMES, NormalizerSpec


@dataclass(frozen=True)
class SentencePieceSpec:
    """`spm_train --model_type=bpe` as a value: every option that changes the pieces, with spm_train's defaults."""

    vocab_size: int = 8000
    character_coverage: float = 0.9995  # the share of characters (by count) kept; the rest become <unk>
    byte_fallback: bool = False  # 256 <0xNN> pieces, so that no character is ever <unk> when encoding
    split_digits: bool = False  # every digit is a piece of its own
    split_by_number: bool = True  # a digit may not join a letter ('F1'); False lets numbers join any script
    split_by_unicode_script: bool = True  # a piece holds one script (Hiragana, Katakana and ー count as Han)
    split_by_whitespace: bool = True  # pieces do not cross a ▁ (train on words, not whole lines)
    treat_whitespace_as_suffix: bool = False  # ▁ ends a word ('hello▁') instead of starting it ('▁hello')
    allow_whitespace_only_pieces: bool = False  # '▁▁▁' may be a piece
    max_sentencepiece_length: int = 16  # code points in a piece at most
    max_sentence_length: int = 4192  # bytes in a line at most; longer lines are skipped whole
    input_sentence_size: int = 0  # read only the first N lines (0: all); see the module docstring
    hard_vocab_limit: bool = True  # too few pieces to fill vocab_size is an error; False shrinks the vocabulary
    user_defined_symbols: tuple[str, ...] = ()  # always one piece, never split, never merged
    control_symbols: tuple[str, ...] = ()  # an id of their own, never made from text
    required_chars: str = ""  # characters kept whatever their count
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    pad_id: int = -1  # -1: no such piece
    unk_piece: str = "<unk>"
    bos_piece: str = "<s>"
    eos_piece: str = "</s>"
    pad_piece: str = "<pad>"
    unk_surface: str = " \u2047 "  # what decoding writes for <unk>
    pretokenization_delimiter: str = ""  # a string that cuts words apart and is removed
    normalization_rule_name: str = "nmt_nfkc"  # nmt_nfkc or identity
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    num_threads: int = 16  # changes no piece; recorded in the model file as spm_train does

    def __post_init__(self) -> None:
        # subtle: lists would make the spec unhashable; callers pass lists freely
        for name in ("user_defined_symbols", "control_symbols"):
            value = getattr(self, name)
            if isinstance(value, str):
                value = (value,)
            object.__setattr__(self, name, tuple(value))
        check(self)

    @classmethod
    def of(cls, spec: SentencePieceSpec | None = None, **settings: Any) -> SentencePieceSpec:
        """spec (or the defaults) with settings changed; an unknown name is a TypeError that lists the known ones."""
        unknown = set(settings) - {f.name for f in fields(cls)}
        if unknown:
            raise TypeError(
                f"Unknown SentencePiece setting(s) {', '.join(sorted(unknown))}; known: {', '.join(f.name for f in fields(cls))}."
            )
        return replace(spec or cls(), **settings)

    def but(self, **settings: Any) -> SentencePieceSpec:
        """A copy with some settings changed: spec.but(byte_fallback=True)."""
        return SentencePieceSpec.of(self, **settings)

    def normalizer_spec(self) -> NormalizerSpec:
        """The NormalizerSpec a model trained with this spec carries (escape_whitespaces is always on for BPE)."""
        return NormalizerSpec.named(
            self.normalization_rule_name, add_dummy_prefix=self.add_dummy_prefix, remove_extra_whitespaces=self.remove_extra_whitespaces
        )


def check(spec: SentencePieceSpec) -> None:
    """VerifySpec's checks, each refused with one sentence (ValueError)."""

    def within(name: str, low: float, high: float) -> None:
        value = getattr(spec, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise ValueError(f"{name} must be between {low:g} and {high:g} (sentencepiece's own range); it is {value!r}.")

    if isinstance(spec.vocab_size, bool) or not isinstance(spec.vocab_size, int) or spec.vocab_size <= 0:
        raise ValueError(f"vocab_size must be a positive whole number; it is {spec.vocab_size!r}.")
    within("character_coverage", 0.98, 1.0)
    within("max_sentencepiece_length", 1, 512)
    within("max_sentence_length", 10, 1073741824)
    within("num_threads", 1, 1024)
    if not isinstance(spec.input_sentence_size, int) or 0 < spec.input_sentence_size <= 100:
        raise ValueError(
            f"input_sentence_size must be 0 (every line) or more than 100 (sentencepiece's rule); it is {spec.input_sentence_size!r}."
        )
    if spec.normalization_rule_name not in NAMES:
        raise ValueError(f"normalization_rule_name must be one of {', '.join(NAMES)}; it is {spec.normalization_rule_name!r}.")
    for name in ("unk_piece", "bos_piece", "eos_piece", "pad_piece"):
        if not getattr(spec, name):
            raise ValueError(f"{name} must not be empty.")
    for symbol in (*spec.user_defined_symbols, *spec.control_symbols):
        if not isinstance(symbol, str) or not symbol:
            raise ValueError(f"A user-defined or control symbol must be a non-empty string; got {symbol!r}.")
