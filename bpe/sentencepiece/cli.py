"""`bpe train --sentencepiece`: training the SentencePiece family from the command line, with spm_train's options.

    bpe train corpus.txt --sentencepiece --vocab-size 8000 --byte-fallback --out tok/
    # writes tok/tokenizer.model (sentencepiece loads it), tok/tokenizer.json (HuggingFace), tok/tokenizer.vocab

The options are spm_train's, spelt with dashes (--character-coverage, --split-digits, --user-defined-symbol ...,
the switches with a --no- form: --no-add-dummy-prefix); SentencePieceSpec checks them as sentencepiece does.
Progress and the summary are the byte-level train's (bpe/cli.py Phases): read and normalize (the lines, the
characters, the words), initial count, merges (a bar a merge), write; then the coverage, the lines dropped and why, time,
processor time and peak memory per phase.

The three files go to disk together (bpe.atomic.write_together): tokenizer.vocab is sentencepiece's own vocab
file, one piece a line with its score after a tab, as spm_train writes model_prefix.vocab.
Not here: the byte-level family's options (--pretokenizer, --special-token, --algorithm...), which this refuses beside
--sentencepiece, in one sentence.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .spec import SentencePieceSpec

# spm_train's options this command takes: (the SentencePieceSpec field, how argparse reads it)
OPTIONS: dict[str, dict] = {
    "character_coverage": {"type": float, "metavar": "F", "help": "share of the characters kept, in [0.98, 1] (0.9995)"},
    "byte_fallback": {"action": argparse.BooleanOptionalAction, "help": "256 <0xNN> pieces: no character is ever <unk>"},
    "split_digits": {"action": argparse.BooleanOptionalAction, "help": "every digit a piece of its own"},
    "split_by_whitespace": {"action": argparse.BooleanOptionalAction, "help": "pieces do not cross a space (on)"},
    "split_by_number": {"action": argparse.BooleanOptionalAction, "help": "a digit does not join a letter (on)"},
    "split_by_unicode_script": {"action": argparse.BooleanOptionalAction, "help": "one script a piece (on)"},
    "treat_whitespace_as_suffix": {"action": argparse.BooleanOptionalAction, "help": "'hello▁' instead of '▁hello'"},
    "allow_whitespace_only_pieces": {"action": argparse.BooleanOptionalAction, "help": "'▁▁▁' may be a piece"},
    "max_sentencepiece_length": {"type": int, "metavar": "N", "help": "code points in a piece at most (16)"},
    "max_sentence_length": {"type": int, "metavar": "B", "help": "longer lines (in bytes) are skipped (4192)"},
    "input_sentence_size": {"type": int, "metavar": "N", "help": "train on the first N lines kept (0: all)"},
    "hard_vocab_limit": {"action": argparse.BooleanOptionalAction, "help": "too few pieces is an error (on); off: a smaller vocabulary"},
    "user_defined_symbol": {"action": "append", "metavar": "S", "help": "always one piece (repeat for several)"},
    "control_symbol": {"action": "append", "metavar": "S", "help": "an id of its own, never made from text (repeat)"},
    "required_chars": {"metavar": "CHARS", "help": "characters kept whatever their count"},
    "normalization": {"choices": ["nmt_nfkc", "identity"], "help": "the character map (nmt_nfkc)"},
    "add_dummy_prefix": {"action": argparse.BooleanOptionalAction, "help": "a '▁' before the text (on)"},
    "remove_extra_whitespaces": {"action": argparse.BooleanOptionalAction, "help": "no leading, trailing or double spaces (on)"},
    "num_threads": {"type": int, "metavar": "N", "help": "threads that normalize and count (16, at most the processors)"},
}
FIELDS = {"user_defined_symbol": "user_defined_symbols", "control_symbol": "control_symbols", "normalization": "normalization_rule_name"}
# the byte-level train's options, refused beside --sentencepiece when given
BYTE_LEVEL = ("special_token", "pretokenizer", "algorithm", "tie_break", "min_pair_frequency", "workers", "from_counts", "split_lines")
BYTE_LEVEL += ("text_field", "text_column", "compiled", "start", "held_out", "no_held_out")


def add_options(p: argparse.ArgumentParser) -> None:
    """--sentencepiece and spm_train's options, on `bpe train`'s parser (each None unless given)."""
    # what the byte-level options are when not given, to tell them given (parsed before these, so known here)
    p.set_defaults(byte_level_defaults={name: p.get_default(name) for name in BYTE_LEVEL})
    group = p.add_argument_group("the SentencePiece family (with --sentencepiece; spm_train's options and defaults)")
    group.add_argument("--sentencepiece", action="store_true", help="train a SentencePiece BPE model, exactly as sentencepiece 0.2.3")
    for name, how in OPTIONS.items():
        group.add_argument("--" + name.replace("_", "-"), dest="spm_" + name, default=None, **how)


def given(args: argparse.Namespace) -> dict[str, object]:
    """The SentencePiece options on the command line, as SentencePieceSpec's fields."""
    out = {}
    for name in OPTIONS:
        value = getattr(args, "spm_" + name, None)
        if value is not None:
            out[FIELDS.get(name, name)] = tuple(value) if isinstance(value, list) else value
    return out


def check_family(args: argparse.Namespace) -> None:
    """Refuse a mix of the two families' options, in one sentence."""
    if not args.sentencepiece:
        spm_options = [name for name in OPTIONS if getattr(args, "spm_" + name, None) is not None]
        if spm_options:
            raise ValueError(f"--{spm_options[0].replace('_', '-')} is an option of the SentencePiece family: add --sentencepiece.")
        return
    for name, unset in getattr(args, "byte_level_defaults", {}).items():
        if getattr(args, name, unset) != unset:
            flag = "--no-compiled" if name == "compiled" else "--" + name.replace("_", "-")
            raise ValueError(f"{flag} is for byte-level BPE; with --sentencepiece use spm_train's options (bpe train --help).")


def train_command(args: argparse.Namespace) -> None:
    """bpe train --sentencepiece: read, normalize, merge, write; progress and a summary as the byte-level train's."""
    from .. import atomic
    from ..progress import Phases, bar, say
    from ..trainer import paused_gc
    from .compiled import core
    from .hf import tokenizer_json
    from .model_file import model_bytes
    from .trainer import Trainer, prepare, read_lines, select
    from .trainer_c import CompiledTrainer, prepare_files

    check_family(args)
    if not args.inputs:
        raise ValueError("Name the text to train on (files, one sentence a line).")
    spec = SentencePieceSpec(vocab_size=args.vocab_size, **given(args))
    atomic.check_folder(args.out)  # before the work, not after it
    paths = _inputs(args.inputs)
    phases = Phases()
    compiled = core() is not None
    with paused_gc():
        if compiled:  # the core reads, normalizes and counts in one go, on num_threads threads
            with phases.phase("read and normalize"):
                corpus = prepare_files(paths, spec)
        else:
            with phases.phase("read"):
                lines = select(read_lines(paths), spec)
            with phases.phase("normalize"):
                corpus = prepare(lines, spec)
        lines = corpus.lines
        say(f"read: {lines.kept:,} lines, {len(corpus.required):,} characters kept")
        with phases.phase("initial count"):
            trainer = CompiledTrainer(corpus, spec) if compiled else Trainer(corpus, spec)
        target = max(0, spec.vocab_size - len(trainer.meta) - len(corpus.required))
        with phases.phase("merges"), bar("merges", target, " merges") as progress:
            for _ in trainer.merges():
                progress.update(1)
        say(f"merges: {len(trainer.merged):,} in {phases.seconds['merges']:.1f}s")
        with phases.phase("write"):
            model = trainer.model()
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            files = {
                out / "tokenizer.model": model_bytes(model),
                out / "tokenizer.json": (json.dumps(tokenizer_json(model), ensure_ascii=False, indent=2) + "\n").encode(),
                out / "tokenizer.vocab": "".join(f"{p.piece}\t{p.score:g}\n" for p in model.pieces).encode(),
            }
            atomic.write_together(files)
    merged = len(trainer.merged)
    if trainer.stop_reason == "vocab_size":
        why = f"Made {merged:,} merges: the vocabulary reached its size, {len(model.pieces):,} pieces"
    else:
        why = f"Stopped after {merged:,} merges: no pair was left to merge; the vocabulary has {len(model.pieces):,} pieces (hard_vocab_limit off)"
    kinds = f"{len(trainer.meta):,} meta pieces, {merged:,} merged, {len(corpus.required):,} characters"
    print(f"{why} ({kinds}).")
    dropped = corpus.dropped
    shown = ", ".join(f"{c!r} ×{n:,}" for c, n in dropped[:5])
    print(
        f"characters: {len(corpus.required):,} kept, covering {corpus.coverage:.4%} of {corpus.characters:,}"
        + (f"; {len(dropped):,} fell out and are <unk> ({shown}{', ...' if len(dropped) > 5 else ''})" if dropped else "")
    )
    skipped = f"{lines.empty:,} empty, {lines.too_long:,} over {spec.max_sentence_length:,} bytes, {lines.reserved:,} holding U+2585"
    print(f"lines: {lines.kept:,} read ({skipped} skipped)")
    print(f"merges made by {'the compiled SentencePiece trainer (bpe/c/spm.c)' if compiled else 'the Python SentencePiece trainer'}")
    print("\n".join(phases.summary()))
    longest = max((piece for piece, _ in trainer.merged), key=len, default="")
    if longest:
        print(f"longest piece: {longest!r} ({len(longest)} characters)")
    print("wrote " + ", ".join(str(p) for p in files))


def _inputs(patterns: list[str]) -> list[Path]:
    """Paths and globs -> files, in the order given (each glob sorted); one that names nothing is refused."""
    import glob

    paths: list[Path] = []
    for pattern in patterns:
        found = sorted(glob.glob(pattern)) if any(ch in pattern for ch in "*?[") else [pattern]
        if not found:
            raise ValueError(f"No file matches {pattern}.")
        for name in found:
            if not Path(name).is_file():
                raise ValueError(f"Cannot read {name}: it is not a file.")
            paths.append(Path(name))
    return paths
