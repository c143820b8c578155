"""The command line: count, train a tokenizer, then use it.

    bpe train INPUT... --vocab-size N --out DIR        # writes every format to DIR
    bpe count INPUT... --out counts.parquet            # pre-token counts, to train from many times
    bpe train --from-counts counts.parquet --vocab-size N --out DIR
    bpe count --merge a.parquet b.parquet --out c.parquet
    bpe encode DIR --text "Hello world"                # prints ids: 72 101 ...
    bpe decode DIR 72 101 ...                          # prints the text
    bpe diff MERGES --corpus INPUT...                  # where and why your merges part from the reference
    bpe core                                           # is the compiled core built here (and if not, why)

`bpe` is `python -m bpe`. INPUT is a path or glob of plain or compressed text,
JSON Lines or Parquet. Training shows tqdm progress for each phase (on a pipe,
one line per phase), then a summary of time and peak memory per phase. encode
and decode read any tokenizer load.py knows: a directory written by train,
GPT-2's vocab.json + merges.txt, a HuggingFace tokenizer.json, a .tiktoken file,
a SentencePiece .model (Llama 2's family, whose tokenizer.json is read too).
Bad input prints one sentence and exits with code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from . import atomic
from .data.count import Counted, count_with, pretokenize_with
from .events import VOCAB_SIZE, MergeEvent, stop_sentence
from .files import formats, merges_file
from .memory import megabytes, peak_rss, reset_peak
from .progress import Phases, bar, follow, say
from .rule import RULES
from .spec import DEFAULT, TrainSpec
from .text.pretokenize import PreTokens, not_text
from .text.pretokenizers import ENCODING, PRETOKENIZERS, check_special_tokens, pretokenizer_of
from .tokenizer.encode_files import SPECIAL_TEXT
from .train import ALGORITHMS, Run, build_vocab, check_spec, keeps_sequence
from .trainer import paused_gc

if TYPE_CHECKING:  # imported to encode and decode: training does without it (~20 ms of start-up)
    from .tokenizer.sentencepiece_tokenizer import SentencePieceTokenizer
    from .tokenizer.tokenizer import Tokenizer


def spec_of(args: argparse.Namespace, **settings) -> TrainSpec:
    """The TrainSpec a command line asks for (settings given here override the arguments)."""
    given = {
        "special_tokens": args.special_token or (),
        "pretokenizer": args.pretokenizer or DEFAULT.pretokenizer,
        "text_field": args.text_field,
        "text_column": args.text_column,
    }
    for name in ("algorithm", "min_pair_frequency", "tie_break"):
        if hasattr(args, name):
            given[name] = getattr(args, name)
    given["split_lines"] = bool(getattr(args, "split_lines", False))  # None: not given
    return TrainSpec.of(**{**given, **settings})


def counting(args: argparse.Namespace, phases: Phases, spec: TrainSpec, only=None) -> Counted:
    """Count the inputs' pre-tokens with a progress bar in MB (only: these shards of them; see count_with)."""
    with phases.phase("pre-tokenize"), bar("pre-tokenize", 0, "B", scale=True) as progress:
        counted = count_with(args.inputs, replace(spec.reading(), compiled=args.compiled), args.workers, follow(progress), only=only)
    seconds = phases.seconds["pre-tokenize"]
    if counted.workers > 1:
        phases.notes["pre-tokenize"] = f" (+ {counted.workers} workers, each at most {megabytes(counted.worker_peak_rss)})"
        phases.notes["pre-tokenize cpu"] = f" (+ {counted.workers} workers {counted.worker_cpu_seconds:.2f}s)"
    say(
        f"pre-tokenize: {counted.disk_bytes / 1e6:,.1f} MB in {len(counted.inputs)} file(s), {seconds:.1f}s "
        f"({counted.disk_bytes / 1e6 / max(seconds, 1e-9):,.1f} MB/s), {len(counted.counts):,} unique pre-tokens"
    )
    return counted


# ---------------------------------------------------------------------------
# commands


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bpe", description="Train and use byte-pair-encoding tokenizers.")
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train a tokenizer on text files (or on a counts file)")
    t.add_argument("inputs", nargs="*", metavar="INPUT", help="text (.gz .bz2 .xz .zst too), .jsonl or .parquet files, or globs")
    t.add_argument(
        "--vocab-size",
        required=True,
        metavar="N[,N...]",
        help="256 bytes + merges + special tokens; several (8000,16000,32000): one run, a folder for each size in --out "
        "(DIR/8000/, ...), each a prefix of the next, with each one's bytes per token on held-out text",
    )
    t.add_argument(
        "--held-out",
        nargs="+",
        metavar="INPUT",
        help="with several --vocab-size: the text to measure them on (files or globs); default: about 1%% of the INPUTs, "
        "every 100th of ~1,000 pieces, not trained on",
    )
    t.add_argument("--no-held-out", action="store_true", help="with several --vocab-size: train on all of the INPUTs, measure nothing")
    t.add_argument("--special-token", action="append", default=None, metavar="T", help="repeat for several, e.g. '<|endoftext|>'")
    t.add_argument("--algorithm", default=DEFAULT.algorithm, help=f"one of {', '.join(ALGORITHMS)} (default {DEFAULT.algorithm})")
    t.add_argument(
        "--min-pair-frequency",
        type=int,
        default=DEFAULT.min_pair_frequency,
        metavar="K",
        help="stop when the best pair occurs fewer than K times",
    )
    t.add_argument(
        "--pretokenizer",
        "--pattern",
        default=None,
        help=f"{PRETOKENIZER_CHOICES} (default {DEFAULT.pretokenizer.name}, or the counts file's)",
    )
    t.add_argument(
        "--tie-break",
        default=DEFAULT.tie_break,
        metavar="RULE",
        help="how pairs with equal counts are chosen, to match a tool's merges: "
        + "; ".join(f"{name}: {rule.prefers}" for name, rule in RULES.items())
        + f" (default {DEFAULT.tie_break})",
    )
    t.add_argument("--workers", type=int, default=None, metavar="W", help="processes for pre-tokenization (default: CPU count)")
    t.add_argument("--out", type=Path, required=True, metavar="DIR", help=f"writes {', '.join(formats.file_names())} to DIR")
    add_reading_options(t)
    t.add_argument("--from-counts", type=Path, metavar="FILE", help="train from a counts file written by `bpe count` instead of INPUTs")
    t.add_argument(
        "--from",
        dest="start",
        type=Path,
        metavar="TOKENIZER",
        help="continue this tokenizer's training on the INPUTs (or --from-counts): its ids and merges kept, new merges after them "
        "until --vocab-size tokens in all; the new text is pre-tokenized as it does, each pre-token encoded with its merges. "
        + TOKENIZER_HELP,
    )

    # the SentencePiece family: `bpe train --sentencepiece` and spm_train's options (bpe/sentencepiece/cli.py)
    from .sentencepiece.cli import add_options as add_sentencepiece_options

    add_sentencepiece_options(t)

    c = sub.add_parser("count", help="count pre-tokens once into a Parquet file, to train from many times")
    c.add_argument("inputs", nargs="*", metavar="INPUT", help="as for train; with --merge, counts files to add up")
    c.add_argument("--out", type=Path, required=True, metavar="FILE", help="the counts file to write (.parquet)")
    c.add_argument("--special-token", action="append", default=[], metavar="T", help="repeat for several, e.g. '<|endoftext|>'")
    c.add_argument("--pretokenizer", "--pattern", default=None, help=f"{PRETOKENIZER_CHOICES} (default {DEFAULT.pretokenizer.name})")
    c.add_argument("--workers", type=int, default=None, metavar="W", help="processes (default: CPU count)")
    add_reading_options(c)
    c.add_argument("--merge", action="store_true", help="add up the counts files given as INPUTs (made with the same settings)")
    c.add_argument("--ray", metavar="ADDRESS", help="count on a Ray cluster: 'auto' (the one this machine belongs to) or ADDRESS")

    e = sub.add_parser("encode", help="encode datasets into an array of token ids (.npy), or print the ids of a text")
    e.add_argument("dir", type=Path, metavar="TOKENIZER", help=TOKENIZER_HELP)
    e.add_argument(
        "inputs", nargs="*", metavar="INPUT", help="files or globs to encode into --out: text (.gz .bz2 .xz .zst too), .jsonl or .parquet"
    )
    e.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="where the INPUTs' ids go: ids.npy (NumPy: uint16 when every id fits, else uint32; np.load(path, mmap_mode='r')) "
        "or ids.bin (raw little-endian, its dtype and length in ids.bin.json)",
    )
    source = e.add_mutually_exclusive_group()
    source.add_argument("--text", metavar="T", help="a text whose ids to print")
    source.add_argument("--file", type=Path, metavar="F", help="a file whose ids to print (any bytes, streamed); default: standard input")
    e.add_argument("--workers", type=int, default=None, metavar="W", help="processes for INPUTs (default: CPU count; one below 16 MB)")
    e.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="encode the INPUTs on a Ray cluster: 'auto' (the one this machine belongs to) or ADDRESS; "
        "--out DIR writes shards and DIR/manifest.json (bpe decode reads it as one array), --out ids.npy joins them",
    )
    eot = e.add_mutually_exclusive_group()
    eot.add_argument(
        "--eot",
        metavar="TOKEN",
        default=None,
        help="the special token after each document (a JSON Lines record, a Parquet row, a text file); "
        "default <|endoftext|> where the tokenizer has it",
    )
    eot.add_argument("--no-eot", action="store_true", help="nothing after each document")
    e.add_argument(
        "--special-text",
        choices=list(SPECIAL_TEXT),
        default=None,
        help="what text that spells a special token becomes: "
        + "; ".join(f"{k}: {v}" for k, v in SPECIAL_TEXT.items())
        + ". Default: special for your tokenizers (as CS336), refuse for OpenAI's encodings (as tiktoken)",
    )
    e.add_argument("--k", type=int, default=None, metavar="K", help="use only the first K merges")
    e.add_argument(
        "--add-special-tokens",
        action="store_true",
        help="the SentencePiece family (Llama 2's): put what the tokenizer adds around each text or document "
        "(a tokenizer.json's post-processor: <s> first; a .model's bos piece), as HuggingFace's encode does by default",
    )
    e.add_argument(
        "--text-field", default=None, metavar="F", help=f"the field holding the text in JSON Lines (default {DEFAULT.text_field})"
    )
    e.add_argument(
        "--text-column", default=None, metavar="C", help=f"the column holding the text in Parquet (default {DEFAULT.text_column})"
    )
    d = sub.add_parser("decode", help="the text of token ids (arguments, standard input or a file of ids, streamed)")
    d.add_argument("dir", type=Path, metavar="TOKENIZER", help=TOKENIZER_HELP)
    d.add_argument("ids", nargs="*", metavar="ID", help="token ids; default: --file, or standard input")
    d.add_argument(
        "--file", type=Path, metavar="F", help="ids.npy, ids.bin (with its ids.bin.json) or a text file of ids, read as a stream"
    )
    d.add_argument("--out", type=Path, metavar="FILE", help="write the text to FILE (whole, or not at all) instead of standard output")
    f = sub.add_parser("diff", help="where and why your merges part from the reference trained on the same text")
    f.add_argument("theirs", type=Path, metavar="THEIRS", help=f"your merges: {merges_file.EXPECTED}")
    f.add_argument(
        "--corpus", nargs="+", required=True, metavar="INPUT", help="the text they were trained on (files or globs, as for train)"
    )
    f.add_argument(
        "--vocab-size", type=int, default=None, help="the reference's (default: 256 + as many merges as THEIRS + special tokens)"
    )
    f.add_argument("--special-token", action="append", default=[], metavar="T", help="repeat for several, e.g. '<|endoftext|>'")
    f.add_argument("--pretokenizer", "--pattern", default=None, help=f"{PRETOKENIZER_CHOICES} (default {DEFAULT.pretokenizer.name})")
    f.add_argument(
        "--tie-break",
        default=DEFAULT.tie_break,
        metavar="RULE",
        help=f"whose rule the reference follows: {', '.join(RULES)} (default {DEFAULT.tie_break})",
    )
    f.add_argument("--workers", type=int, default=None, metavar="W", help="processes for pre-tokenization (default: CPU count)")
    f.add_argument("--json", action="store_true", help="print one JSON object (first_difference, theirs, reference, kind, cause, ...)")
    add_reading_options(f)
    p.commands = {"train": t, "count": c, "encode": e, "decode": d, "diff": f}  # type: ignore[attr-defined]
    for command in (e, d):  # what GPT-2 and tiktoken files do not record
        command.add_argument("--special-token", action="append", default=[], metavar="T", help="a special token the files do not list")
        command.add_argument(
            "--pretokenizer",
            "--pattern",
            default=None,
            help=f"for GPT-2 and .tiktoken files: {PRETOKENIZER_CHOICES} (default {DEFAULT.pretokenizer.name}; OpenAI's own .tiktoken files know theirs)",
        )
    sub.add_parser("core", help="say whether the compiled core (C) is built here, and if not why; and which trainer trains by default")
    return p


PRETOKENIZER_CHOICES = (
    f"the pre-tokenizer: one of {', '.join(PRETOKENIZERS)} (gpt4 = cl100k), or a regex such as tiktoken's pat_str (--pattern: its old name)"
)

TOKENIZER_HELP = (
    f"a directory written by train, another tool's tokenizer ({formats.upload_hint()}), "
    "or one of OpenAI's encodings by name (cl100k_base, o200k_base, gpt2, ... or a model's: gpt-4o)"
)


def load_tokenizer(args: argparse.Namespace) -> Tokenizer | SentencePieceTokenizer:
    """The tokenizer named: files, or one of OpenAI's encodings by name ('cl100k_base', 'gpt-4o') where no such file is.

    --pretokenizer is refused in one sentence where the files record their own (OpenAI's encodings know theirs).
    """
    from .tokenizer.tokenizer import Tokenizer

    if _openai_name(args):
        return _openai(args)
    loaded = read_tokenizer(args)
    try:
        return Tokenizer.from_loaded(loaded, special_tokens=args.special_token)
    except ValueError as e:  # what the loader let through and the constructor refused: still name the file
        raise ValueError(f"{args.dir}: {e}") from None


def read_tokenizer(args: argparse.Namespace):
    """What the tokenizer's files hold (load.Loaded), with --pretokenizer where they record none (refused where they do)."""
    from .files.load import Loaded

    if _openai_name(args):  # one of OpenAI's encodings by name: what its files hold
        tok = _openai(args)
        return Loaded(list(tok.merges), tok.special_tokens, tok.pretokenizer, None, dict(tok.vocab), "tiktoken", tok.name)
    given = pretokenizer_of(args.pretokenizer) if args.pretokenizer is not None else None
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", formats.FolderChanged)
        loaded = formats.read(args.dir)
    for w in said:  # another tool rewrote files of a folder this tool saved: which, and what loads
        if issubclass(w.category, formats.FolderChanged):
            print(f"note: {w.message}", file=sys.stderr)
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    if given is not None and loaded.family == "sentencepiece":
        raise ValueError(
            f"--pretokenizer {args.pretokenizer}: {args.dir} is a SentencePiece tokenizer, which cuts no pre-tokens by a regex; "
            "leave the option out."
        )
    if given is not None:
        records = formats.records_pretokenizer(loaded) or loaded.encoding
        if records and given.regex != loaded.pretokenizer.regex:
            shown = "a regex of its own" if loaded.pretokenizer.name == "regex" else loaded.pretokenizer.name
            raise ValueError(
                f"--pretokenizer {args.pretokenizer}: {args.dir} records its own pre-tokenizer ({shown}); leave the option out."
            )
        loaded = formats.with_pretokenizer(loaded, given, keep_openai=False)
    return loaded


def _openai_name(args: argparse.Namespace) -> bool:
    """Does TOKENIZER name one of OpenAI's encodings or a model of theirs (what Tokenizer.from_openai takes), no such file being there?"""
    from .files import openai

    if Path(args.dir).exists():
        return False
    try:
        openai.encoding_of(str(args.dir))
    except ValueError:
        return False
    return True


def _openai(args: argparse.Namespace) -> Tokenizer:
    """OpenAI's encoding args.dir names, as tiktoken has it; --pretokenizer and other --special-tokens refused in one sentence."""
    from .files import openai
    from .tokenizer.tokenizer import Tokenizer

    if args.pretokenizer is not None:
        raise ValueError(f"--pretokenizer {args.pretokenizer}: {args.dir} is OpenAI's encoding, which knows its own; leave the option out.")
    tok = Tokenizer.from_openai(str(args.dir))
    extra = [t for t in getattr(args, "special_token", ()) if t not in tok.special_tokens]
    if extra:
        name = openai.encoding_of(str(args.dir)).name
        raise ValueError(f"--special-token {extra[0]}: {name} has its own special tokens ({', '.join(tok.special_tokens)}).")
    return tok


def add_reading_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--text-field",
        default=DEFAULT.text_field,
        metavar="F",
        help=f"the field holding the text in JSON Lines (default {DEFAULT.text_field})",
    )
    p.add_argument(
        "--text-column",
        default=DEFAULT.text_column,
        metavar="C",
        help=f"the column holding the text in Parquet (default {DEFAULT.text_column})",
    )
    p.add_argument(
        "--split-lines",
        action="store_true",
        default=None,  # None: not given (train --from-counts then takes the file's setting)
        help="each line (newline kept) is a document of its own, as HuggingFace's Tokenizer.train(files) reads files",
    )
    p.add_argument(
        "--no-compiled",
        dest="compiled",
        action="store_false",
        help="count with the Python pre-tokenizer only (the reference), even where the compiled one (gigatoken) is exact",
    )


def train_command(args: argparse.Namespace) -> None:
    from .lab.ladder import parse_sizes
    from .sentencepiece.cli import check_family
    from .sentencepiece.cli import train_command as sentencepiece_train

    check_family(args)
    sizes = parse_sizes(str(args.vocab_size))
    if args.sentencepiece:
        if len(sizes) > 1:
            raise ValueError("--sentencepiece trains one --vocab-size at a time; several sizes are for byte-level BPE.")
        args.vocab_size = sizes[0]
        return sentencepiece_train(args)
    args.vocab_size = sizes[-1]  # one run, to the largest
    atomic.check_folder(args.out)  # before the work, not after it
    if len(sizes) == 1 and (args.held_out or args.no_held_out):
        raise ValueError("--held-out and --no-held-out go with several --vocab-size (8000,16000,32000): they measure the sizes.")
    if args.start is not None:
        if len(sizes) > 1:
            raise ValueError("--from continues to one --vocab-size; run it once for each size.")
        continue_command(args)
        return
    phases = Phases()
    held = None  # the ladder's held-out text: lab/ladder.py
    if args.from_counts is not None:
        if args.inputs:
            raise ValueError("Give INPUT files or --from-counts, not both.")
        corpus, spec = load_counted(args, phases)
        how = ""  # counted when the counts file was written
    else:
        if not args.inputs:
            raise ValueError("Name the text to train on (files or globs), or a counts file with --from-counts.")
        spec = spec_of(args)
        check_spec(spec, args.vocab_size)
        if keeps_sequence(spec):  # it walks the occurrences in text order, read in this process
            with phases.phase("pre-tokenize"), bar("pre-tokenize", 0, "B", scale=True) as progress:
                # the occurrences in order come from the Python path: the counts too (compiled=False)
                reading = replace(spec.reading(), compiled=False)
                corpus = pretokenize_with(args.inputs, reading, keep_sequence=True, progress=follow(progress))
            how = "counted in Python (the positions algorithm reads every occurrence in order)"
        else:
            only = None
            if len(sizes) > 1 and not args.held_out and not args.no_held_out:
                from .lab.ladder import hold_out

                held = hold_out(args.inputs, replace(spec.reading(), compiled=args.compiled))
                only = held.kept
            counted = counting(args, phases, spec, only)
            corpus, how = PreTokens(counted.counts, None, counted.text_bytes), counted.counted_by()
            del counted
    special_tokens, pretokenizer = list(spec.special_tokens), spec.pretokenizer
    num_merges = check_spec(spec, args.vocab_size)
    unique, n_bytes = len(corpus.counts), corpus.n_bytes
    warning = check_text(args, corpus, spec)

    with paused_gc():
        with phases.phase("initial count"):
            try:
                going = Run(corpus, num_merges, spec)
            except ValueError as e:  # a trainer that refuses these counts (positions: too many occurrences)
                if args.from_counts is None:
                    raise
                raise ValueError(f"Cannot train on {args.from_counts}: {str(e)[:1].lower()}{str(e)[1:]}") from None
            del corpus  # the trainer keeps its own copy of the words: the counts by bytes can go
        merges, counts = [], []
        with phases.phase("merges"), bar("merges", num_merges, " merges") as progress:

            def made(event: MergeEvent) -> None:
                merges.append((event.left, event.right))
                counts.append(event.count)
                progress.update(1)

            going.until(on_merge=made)
            stop_reason, distinct, trained_by = going.stop_reason, going.trainer.rule.reuses_tokens, going.trained_by
            del going  # the trainer is freed here, before the collector is back and would walk its millions of objects
        say(f"merges: {len(merges):,} in {phases.seconds['merges']:.1f}s")
    if len(sizes) > 1:
        ladder_summary(args, phases, spec, sizes, merges, counts, distinct, held, stop_reason, trained_by, warning, how, unique, n_bytes)
        return
    # the files' text is ~100,000 new strings and tuples, none in a cycle: the collector walked them ~200 times (20 ms)
    with phases.phase("write"), paused_gc():
        vocab = build_vocab(merges, special_tokens, distinct=distinct)
        paths = formats.save(args.out, formats.files(merges, special_tokens, pretokenizer, counts))

    why = stop_sentence(
        stop_reason,
        len(merges),
        vocab_size=args.vocab_size,
        n_special=len(special_tokens),
        min_pair_frequency=args.min_pair_frequency,
    )
    longest = max((a + b for a, b in merges), key=len, default=b"")
    print(f"{why} Vocab {len(vocab):,} tokens; {unique:,} unique pre-tokens in {n_bytes / 1e6:,.1f} MB of text")
    if warning:
        print(f"warning: {warning}")
    if how:
        print(f"pre-tokens {how}")
    print(f"merges made by {trained_by}")
    print("\n".join(phases.summary()))
    if longest:
        print(f"longest token: {shown(longest)} ({len(longest)} bytes)")
    print("wrote " + ", ".join(str(p) for p in paths))


def ladder_summary(
    args, phases, spec, sizes, merges, counts, distinct, held, stop_reason, trained_by, warning, how, unique, n_bytes
) -> None:
    """bpe train --vocab-size 8000,16000,32000: a folder for each size (each the run's first merges), and each one's
    bytes per token on held-out text (lab/ladder.py)."""
    from .data.inputs import resolve_inputs, shards
    from .lab.ladder import bytes_per_token, held_out_documents, ladder
    from .tokenizer.tokenizer import Tokenizer

    special_tokens, pretokenizer = list(spec.special_tokens), spec.pretokenizer
    steps = ladder(sizes, merges, len(special_tokens), distinct=distinct)
    folders = []
    with phases.phase("write"), paused_gc():
        for size, k in steps:
            folder = args.out / str(size)
            formats.save(folder, formats.files(merges[:k], special_tokens, pretokenizer, counts[:k]))
            folders.append(folder)
    measured, held_how = None, ""
    if args.held_out:
        pieces = [piece for source in resolve_inputs(args.held_out) for piece in shards(source, spec.reading())]
        held_how = f"{', '.join(args.held_out)} (given with --held-out)"
    elif held is not None and held.held:
        pieces, held_how = held.held, held.how
    else:
        pieces = []
        held_how = held.how if held is not None else ("nothing (--no-held-out)" if args.no_held_out else "nothing: give --held-out")
    if pieces:
        with phases.phase("measure"):
            documents, measured_bytes = held_out_documents(pieces, spec.reading())
            tok = Tokenizer.from_merges(merges, special_tokens, pretokenizer)
            measured = bytes_per_token(tok, documents, [k for _, k in steps])
    why = stop_sentence(
        stop_reason, len(merges), vocab_size=args.vocab_size, n_special=len(special_tokens), min_pair_frequency=args.min_pair_frequency
    )
    print(f"{why} One run to {args.vocab_size:,}; {unique:,} unique pre-tokens in {n_bytes / 1e6:,.1f} MB of text")
    print("a tokenizer for each size, each the run's first merges (a prefix of the next):")
    print(f"  {'vocab size':>10}  {'merges':>8}  {'bytes per token (held out)':>26}")
    for i, (size, k) in enumerate(steps):
        short = "" if 256 + len(special_tokens) + k >= size or distinct else f"  (the run stopped at {k:,} merges)"
        figure = f"{measured[i][1]:.3f}" if measured else "-"
        print(f"  {size:>10,}  {k:>8,}  {figure:>26}{short}")
    held_text = f", {measured_bytes / 1e6:,.2f} MB of text measured" if pieces else ""
    print(f"held out: {held_how}{held_text}")
    if warning:
        print(f"warning: {warning}")
    if how:
        print(f"pre-tokens {how}")
    print(f"merges made by {trained_by}")
    print("\n".join(phases.summary()))
    print("wrote " + ", ".join(f"{folder}/" for folder in folders))


def continue_command(args: argparse.Namespace) -> None:
    """bpe train --from TOKENIZER: its training continued on the INPUTs or a counts file (tokenizer/continued.py)."""
    from .tokenizer.continued import continue_from_counts, continuing_spec

    if args.from_counts is not None and args.inputs:
        raise ValueError("Give INPUT files or --from-counts, not both.")
    if args.from_counts is None and not args.inputs:
        raise ValueError("Name the text to continue training on (files or globs), or a counts file with --from-counts.")
    phases = Phases()
    with phases.phase("load tokenizer"):  # its files' content: neither it nor the new one is built as a Tokenizer
        tok = read_tokenizer(argparse.Namespace(dir=args.start, pretokenizer=args.pretokenizer))
    settings = {"tie_break": args.tie_break, "algorithm": args.algorithm, "min_pair_frequency": args.min_pair_frequency}
    settings |= {"text_field": args.text_field, "text_column": args.text_column, "split_lines": bool(args.split_lines)}
    spec = continuing_spec(tok, args.special_token or (), **settings)
    if args.from_counts is not None:
        from .data.counts_file import check_request, read_counts

        arrow_without_numpy()
        check_request(args.from_counts, tok.pretokenizer, spec.special_tokens, args.split_lines)
        with phases.phase("load counts"):
            counts, info = read_counts(args.from_counts)
        say(f"load counts: {len(counts):,} unique pre-tokens from {args.from_counts} in {phases.seconds['load counts']:.1f}s")
        corpus, how = PreTokens(counts, None, info.text_bytes), ""
    else:
        counted = counting(args, phases, spec)
        corpus, how = PreTokens(counted.counts, None, counted.text_bytes), counted.counted_by()
        del counted
    warning = check_text(args, corpus, spec)
    old = tok.full_vocab
    new = args.vocab_size - len(old) - len([t for t in spec.special_tokens if t not in tok.special_tokens])
    with bar("merges", max(new, 0), " merges") as progress:
        try:
            done = continue_from_counts(
                tok, corpus.counts, args.vocab_size, spec, on_merge=lambda e: progress.update(1), phase=phases.phase
            )
        except ValueError as e:  # a broken merge of the files: name them
            raise ValueError(f"{args.start}: {e}" if str(e).startswith("Merge ") else str(e)) from None
    say(f"merges: {len(done.added):,} in {phases.seconds['merges']:.1f}s")
    with phases.phase("write"), paused_gc():
        paths = formats.save(args.out, done.files())
    grown = done.grown.full_vocab
    ids = sorted(set(grown) - set(old))
    span = f"ids {ids[0]:,}..{ids[-1]:,}" if ids else "no new id"
    why = (
        ""
        if done.stop_reason == VOCAB_SIZE
        else " " + stop_sentence(done.stop_reason, len(done.added), min_pair_frequency=args.min_pair_frequency)
    )
    named = f"{args.start}{f' ({tok.encoding})' if tok.encoding else ''}"
    print(
        f"Continued {named}: its {len(tok.merges):,} merges and {len(old):,} tokens kept, {len(done.added):,} new merges ({span}); "
        f"vocab {len(grown):,} tokens.{why}"
    )
    print(
        f"learned on {done.words:,} unique pre-tokens in {corpus.n_bytes / 1e6:,.1f} MB of text, each encoded with its merges first "
        f"(pre-tokenizer {tok.pretokenizer.name}, special tokens {list(spec.special_tokens)}, tie-break {spec.tie_break})"
    )
    if warning:
        print(f"warning: {warning}")
    if how:
        print(f"pre-tokens {how}")
    print(f"merges made by {done.trained_by}")
    print("\n".join(phases.summary()))
    print("wrote " + ", ".join(str(p) for p in paths))


def check_text(args: argparse.Namespace, corpus: PreTokens, spec: TrainSpec, doing: str = "train on") -> str | None:
    """Refuse input with nothing to train on (or count), in one sentence; return a warning when it is mostly not text."""
    if getattr(args, "from_counts", None) is not None:
        what = str(args.from_counts)
    else:
        what = args.inputs[0] if len(args.inputs) == 1 else f"the {len(args.inputs)} inputs"
    if not corpus.counts:
        if not corpus.n_bytes:
            raise ValueError(f"Nothing to {doing}: {what} holds no text.")
        dropped = f" and what the {spec.pretokenizer.name} pre-tokenizer drops" if not spec.pretokenizer.lossless else ""
        raise ValueError(f"Nothing to {doing}: {what} holds only special tokens{dropped}.")
    return not_text(corpus.counts)


def shown(token: bytes, limit: int = 60) -> str:
    """A token for a summary line: b'\\x00' * 256 -> "'\\x00' × 256"; one longer than limit characters is cut with '…'."""
    text = token.decode(ENCODING, "backslashreplace")
    if len(text) > 3 and len(set(text)) == 1:
        return f"{text[0]!r} × {len(text)}"
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}…"


def arrow_without_numpy() -> None:
    """Import pyarrow with numpy kept out, unless something imported numpy already.

    Training from a counts file needs neither numpy nor pyarrow's numpy interop, and numpy is a third of
    pyarrow's import (~40 ms of a 0.95 s `train --from-counts` run). subtle: None in sys.modules makes `import
    numpy` fail, which pyarrow takes as numpy absent (it is optional since pyarrow 16); the entry goes again, so
    numpy can still be imported later, but pyarrow stays without it: only for a command that needs no more.
    """
    if "numpy" in sys.modules or "pyarrow" in sys.modules:
        return
    sys.modules["numpy"] = None
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:  # a pyarrow that cannot do without numpy: forget the attempt, and import both
        for name in [name for name in sys.modules if name == "pyarrow" or name.startswith("pyarrow.")]:
            del sys.modules[name]
    finally:
        del sys.modules["numpy"]


def load_counted(args: argparse.Namespace, phases: Phases) -> tuple[PreTokens, TrainSpec]:
    """A counts file's pre-tokens, checked against the request (settings not given are taken from the file)."""
    from .data.counts_file import check_request, read_counts

    arrow_without_numpy()

    special_tokens = check_request(args.from_counts, args.pretokenizer, args.special_token, args.split_lines)
    check_spec(spec_of(args, special_tokens=special_tokens), args.vocab_size)
    with phases.phase("load counts"):
        counts, info = read_counts(args.from_counts)  # held by the core where it is built: the compiled heap reads it as is
    say(f"load counts: {len(counts):,} unique pre-tokens from {args.from_counts} in {phases.seconds['load counts']:.1f}s")
    spec = spec_of(args, special_tokens=special_tokens, pretokenizer=info.pretokenizer, split_lines=info.split_lines)
    return PreTokens(counts, None, info.text_bytes), spec


def count_command(args: argparse.Namespace) -> None:
    from .data.counts_file import CountsInfo, describe_inputs, merge_counts_files, save_counts

    if not args.inputs:
        raise ValueError("Name the inputs to count (files or globs), or the counts files to --merge.")
    atomic.check_writable(args.out, parents=True)  # before the work, not after it
    phases = Phases()
    warning = None
    if args.merge:
        with phases.phase("merge"):
            info = merge_counts_files(args.inputs, args.out)
    else:
        spec = spec_of(args)
        check_special_tokens(spec.special_tokens)
        if args.ray:
            from .data.ray_count import count_on_ray_with

            with phases.phase("pre-tokenize"), bar("pre-tokenize", 0, "B", scale=True) as progress:
                counted = count_on_ray_with(args.inputs, args.ray, replace(spec.reading(), compiled=args.compiled), follow(progress))
            phases.notes["pre-tokenize"] = (
                f" (+ {counted.workers} Ray map tasks, each process at most {megabytes(counted.worker_peak_rss)})"
            )
        else:
            counted = counting(args, phases, spec)
        warning = check_text(args, PreTokens(counted.counts, None, counted.text_bytes), spec, "count")
        with phases.phase("write"):
            described = describe_inputs(counted.inputs, spec.text_field, spec.text_column)
            info = CountsInfo(spec.pretokenizer.spelled, spec.special_tokens, described, counted.text_bytes, split_lines=spec.split_lines)
            info = save_counts(args.out, counted.counts, info)
    print(
        f"{info.unique:,} unique pre-tokens, {info.pre_tokens:,} in all, from {len(info.inputs)} input(s) "
        f"({info.text_bytes / 1e6:,.1f} MB of text); pre-tokenizer {info.pretokenizer}, special tokens {list(info.special_tokens)}"
        + (", each line a document" if info.split_lines else "")
    )
    if warning:
        print(f"warning: {warning}")
    if not args.merge:
        print(f"pre-tokens {counted.counted_by()}")
    print("\n".join(phases.summary()))
    print(f"wrote {args.out}")


def encode_command(args: argparse.Namespace) -> None:
    dataset_only = {"--workers": args.workers, "--ray": args.ray, "--eot": args.eot, "--no-eot": args.no_eot or None}
    dataset_only |= {"--text-field": args.text_field, "--text-column": args.text_column, "--out": args.out}
    if args.inputs and (args.text is not None or args.file is not None):
        raise ValueError("Give INPUT files to encode into --out, or --text/--file to print the ids of one text, not both.")
    if not args.inputs:
        given = next((name for name, value in dataset_only.items() if value is not None), None)
        if given:
            raise ValueError(f"{given} is for encoding INPUT files into an array: bpe encode TOKENIZER data.jsonl --out ids.npy.")
    elif args.out is None:
        raise ValueError("Name where the ids go: --out ids.npy (NumPy) or --out ids.bin (raw).")
    elif args.ray is not None:
        from .tokenizer.ray_encode import is_folder_output

        if args.workers is not None:
            raise ValueError("--workers is for encoding here; on Ray every CPU of the cluster encodes (leave --workers out).")
        atomic.check_folder(args.out) if is_folder_output(args.out) else atomic.check_writable(args.out)
    else:
        from .files.ids import kind_of

        kind_of(args.out)
        atomic.check_writable(args.out)  # before the work
    tokenizer = load_tokenizer(args)
    if tokenizer.family == "sentencepiece":
        refused = {"--k": args.k, "--special-text": args.special_text}
        given = next((name for name, value in refused.items() if value is not None), None)
        if given:
            raise ValueError(f"{given} is for byte-level tokenizers; {args.dir} is a SentencePiece tokenizer (Llama 2's family).")
    elif args.add_special_tokens:
        raise ValueError(
            f"--add-special-tokens is for the SentencePiece family (Llama 2's <s>); {args.dir} is byte-level and adds nothing."
        )
    if args.inputs:
        encode_dataset(args, tokenizer)
    else:
        print_ids(args, tokenizer)


def special_options(args: argparse.Namespace, tok: Tokenizer) -> tuple[str, dict]:
    """--special-text (or the tokenizer's default) and the encode() keywords that do it."""
    from .tokenizer.encode_files import default_special

    special = args.special_text or default_special(tok)
    allowed = "all" if special == "special" else ()
    return special, {"allowed_special": allowed, "disallowed_special": "all" if special == "refuse" else ()}


def print_ids(args: argparse.Namespace, tok: Tokenizer | SentencePieceTokenizer) -> None:
    """The ids of --text, --file or standard input, printed as they are made (a file of any size, in flat memory).

    The SentencePiece family: --text is one text, encoded whole; a file, or standard input, is read as lines, each
    encoded on its own as spm_encode does (SentencePieceTokenizer.encode_iterable).
    """
    if args.text is None:
        stream = open(args.file, "rb") if args.file is not None else sys.stdin.buffer  # noqa: SIM115  (closed below)
    if tok.family == "sentencepiece":
        try:
            if args.text is not None:
                ids = iter(tok.encode(args.text, add_special_tokens=args.add_special_tokens))
            else:
                ids = tok.encode_iterable(iter(lambda: stream.read(1 << 20), b""), add_special_tokens=args.add_special_tokens)
            written = 0
            while block := list(itertools.islice(ids, 1 << 16)):
                written += _print_block(block, written)
        finally:
            if args.text is None and args.file is not None:
                stream.close()
        print()
        return
    special, options = special_options(args, tok)
    if args.text is not None:
        pieces = [args.text]
    else:
        pieces = iter(lambda: stream.read(1 << 20), b"")
    special_ids = {tok.ids[t.encode(ENCODING)] for t in tok.special_tokens}
    seen: set[int] = set()
    written, block = 0, []
    try:
        for i in tok.encode_iterable(pieces, args.k, **options):
            block.append(i)
            if len(block) >= 1 << 16:
                written += _print_block(block, written)
                seen |= special_ids.intersection(block)
                block = []
    except ValueError as e:
        raise ValueError(_refusal(str(e), tok)) from None
    finally:
        if args.text is None and args.file is not None:
            stream.close()
    _print_block(block, written)
    seen |= special_ids.intersection(block)
    print()
    if seen:  # say what was done with them: tiktoken would have refused them
        shown = ", ".join(f"{tok.vocab[i].decode(ENCODING, 'replace')} -> {i}" for i in sorted(seen))
        print(f"note: special-token text in the input was {SPECIAL_TEXT[special]} ({shown}); --special-text chooses.", file=sys.stderr)


def _print_block(block: list[int], written: int) -> int:
    if block:
        sys.stdout.write((" " if written else "") + " ".join(map(str, block)))
    return len(block)


def _refusal(message: str, tok: Tokenizer) -> str:
    """tiktoken's several lines about a disallowed special token, as one sentence for the command line."""
    if not message.startswith("Encountered text corresponding to disallowed special token"):
        return message
    token = message.split("token ", 1)[1].split(".\n", 1)[0]
    return (
        f"the text spells the special token {token}, which {tok.name or 'this tokenizer'} refuses by default, as tiktoken does; "
        "--special-text special encodes it as that token, --special-text text as plain text."
    )


def encode_dataset(args: argparse.Namespace, tok: Tokenizer | SentencePieceTokenizer) -> None:
    from .tokenizer.encode_files import encode_files

    special = special_options(args, tok)[0] if tok.family != "sentencepiece" else None
    if args.no_eot:
        eot = None
    elif args.eot is not None:
        if args.eot not in tok.special_tokens:
            raise ValueError(
                f"--eot {args.eot}: not a special token of {args.dir} (its special tokens: {', '.join(tok.special_tokens) or 'none'}); "
                "--special-token adds one."
            )
        eot = tok.ids[args.eot.encode(ENCODING)]
    else:
        eot = "default"
    reset_peak()
    options = {"special": special, "eot": eot, "text_field": args.text_field or DEFAULT.text_field}
    options |= {"text_column": args.text_column or DEFAULT.text_column, "k": args.k}
    with bar("encode", 0, "B", scale=True) as progress:
        if args.ray is not None:
            from .tokenizer.ray_encode import encode_on_ray

            if tok.family == "sentencepiece":
                raise ValueError("--ray encodes with byte-level tokenizers; encode a SentencePiece tokenizer's dataset with --workers.")
            done = encode_on_ray(tok, args.inputs, args.out, args.ray, progress=follow(progress), **options)
        else:
            done = encode_files(
                tok,
                args.inputs,
                args.out,
                workers=args.workers,
                progress=follow(progress),
                add_special_tokens=args.add_special_tokens,
                **options,
            )
    seconds = max(done.seconds, 1e-9)
    per_token = done.text_bytes / done.tokens if done.tokens else 0
    print(
        f"encoded {done.documents:,} document{'s' if done.documents != 1 else ''}, {done.text_bytes / 1e6:,.1f} MB of text "
        f"in {len(done.inputs)} file(s), "
        f"into {done.tokens:,} tokens ({per_token:.2f} bytes per token) in {done.seconds:.1f}s ({done.disk_bytes / 1e6 / seconds:,.1f} MB/s)"
    )
    eot_text = "nothing" if done.eot is None else f"{tok.vocab[done.eot].decode(ENCODING, 'replace')} ({done.eot})"
    before = ""
    if tok.family == "sentencepiece":
        added = tok.encode("", add_special_tokens=True) if args.add_special_tokens else []
        before = f"; before each: {' '.join(f'{tok.pieces[i]} ({i})' for i in added) or 'nothing'}"
        if any(source.format == "text" for source in done.inputs):
            before += "; a text file's documents are its lines (as sentencepiece reads a file)"
    print(f"special-token text: {SPECIAL_TEXT[done.special]}; after each document: {eot_text}{before}")
    print(f"encoder: {done.encoder}; tokenizer {args.dir}{f' ({tok.name})' if tok.name else ''}, {len(tok.vocab):,} tokens")
    on_ray = getattr(done, "phases", None) is not None
    if on_ray:
        print("time: " + ", ".join(f"{name} {s:.2f}s" for name, s in done.phases.items()) + f", total {done.seconds:.2f}s")
        lost = f"; {done.lost} lost with its worker and run again" if done.lost else ""
        print(
            f"Ray: {done.tasks} task(s), one a shard, on {done.cpus} CPU(s){lost}; processor time in the tasks {done.worker_cpu_seconds:.2f}s"
        )
    workers = f", {done.workers} workers each at most {megabytes(done.worker_peak_rss)}" if done.workers > 1 else ""
    if on_ray:
        workers = f", each Ray worker process at most {megabytes(done.worker_peak_rss)}"
    print(f"peak memory (resident): this process {megabytes(peak_rss())}{workers}")
    if getattr(done, "shards", False):
        from .files.ids import MANIFEST, shard_files

        size = sum(path.stat().st_size for path, _ in shard_files(done.out))
        print(
            f"wrote {done.out}/ ({done.tasks} shard(s), {size / 1e6:,.1f} MB, {done.dtype}; listed in order in {done.out / MANIFEST}, "
            f'which bpe decode --file {done.out} and bpe.files.ids.load_ids("{done.out}") read as one array)'
        )
        return
    size = done.out.stat().st_size
    how = f'np.load("{done.out}", mmap_mode="r")' if done.out.suffix.lower() == ".npy" else f"dtype and length in {done.out.name}.json"
    print(f"wrote {done.out} ({size / 1e6:,.1f} MB, {done.dtype}; {how})")


def decode_command(args: argparse.Namespace) -> None:
    """The text of ids, streamed: byte-level, each token's bytes; the SentencePiece family, as its tool decodes (the
    first '▁' dropped, byte pieces joined) with the special tokens' text written, as tokenizers' decode(ids,
    skip_special_tokens=False) does, so that documents stay apart as <|endoftext|> keeps them in the byte-level family."""
    from .files.ids import Decoder, parse_ids, read_ids, text_ids

    tokenizer = load_tokenizer(args)
    if args.ids and args.file is not None:
        raise ValueError("Give the ids as arguments or --file, not both.")
    if args.out is not None:
        atomic.check_writable(args.out)
    if args.ids:
        blocks = [parse_ids(" ".join(args.ids))]
    elif args.file is not None:
        blocks = read_ids(args.file)
    else:
        blocks = text_ids(sys.stdin.buffer, "standard input")
    if tokenizer.family == "sentencepiece":
        chunks = tokenizer.decode_blocks(blocks, skip_special_tokens=False)
    else:
        decoder = Decoder(tokenizer.vocab)
        chunks = (decoder.decode(block) for block in blocks)
    if args.out is not None:
        with atomic.output(args.out) as tmp, open(tmp, "wb") as f:
            for data in chunks:
                f.write(data)  # the exact bytes, invalid UTF-8 included
        return
    sys.stdout.flush()
    last = b""
    for data in chunks:
        sys.stdout.buffer.write(data)
        last = data[-1:] or last
    if sys.stdout.isatty() and last != b"\n":
        sys.stdout.buffer.write(b"\n")
    sys.stdout.buffer.flush()


def core_command(args: argparse.Namespace) -> None:
    from .core import describe

    print(describe())
    print(f"bpe train trains with {ALGORITHMS[DEFAULT.algorithm].name} by default: {ALGORITHMS[DEFAULT.algorithm].summary}")


def diff_command(args: argparse.Namespace) -> None:
    from .lab.diagnose import diagnose, kind_words, show_pair

    theirs = merges_file.read_merges(args.theirs)
    spec = spec_of(args)
    vocab_size = args.vocab_size if args.vocab_size is not None else 256 + len(theirs) + len(spec.special_tokens)
    found = diagnose(theirs, args.corpus, spec, vocab_size=vocab_size, workers=args.workers, compiled=args.compiled)
    if args.json:
        print(json.dumps(found.as_dict(), ensure_ascii=False))
        return
    d = found.first_difference
    if d is None:
        print(found.sentence)
    else:
        print(f"Your merges part from the reference at merge {d + 1:,} of {len(theirs):,}: {kind_words(found)}.")
        counted = "not a token yet" if found.missing is not None else f"{found.theirs_count:,}"
        print(f"  yours:     {show_pair(found.theirs)}  ({counted} there, counted right)")
        print(f"  reference: {show_pair(found.reference)}  ({found.reference_count:,})")
        also = f"; as many: {', '.join(found.also)}" if found.also else ""
        print(f"  cause:     {found.labels[0]} ({found.cause}){also}")
        print(found.sentence)
        print(step_hint(args.corpus, spec, vocab_size, d + 1))
    if found.fix:
        print(f"Fix: {found.fix}")


APP = "http://127.0.0.1:8501/"  # where bash scripts/app.sh serves the app: Streamlit's port, on this machine only


def step_hint(corpus: list[str], spec: TrainSpec, vocab_size: int, merge: int) -> str:
    """A command that serves the app with this corpus, and the link that opens its step page at merge on this run.

    The server offers its BPE_CORPUS file as the corpus 'file' (serve/settings.py), and the link names every setting
    as ui/link.py reads a link (tests/test_app_diff.py follows one); a corpus of several files, or of JSON Lines,
    Parquet or a compressed file, is no text file the app can serve, and a regex pre-tokenizer cannot travel in a link.
    """
    from urllib.parse import quote

    from .data.inputs import resolve_inputs

    try:
        inputs = resolve_inputs(corpus)
    except ValueError:
        inputs = []
    if len(inputs) != 1 or inputs[0].format != "text" or inputs[0].compression:
        return f"Step through it in the app: serve one text file as its corpus (BPE_CORPUS=FILE bash scripts/app.sh), then merge {merge:,}."
    params = {"corpus": "file", "vocab_size": str(vocab_size), "special_tokens": ",".join(spec.special_tokens), "rule": spec.tie_break}
    if spec.pretokenizer.name != "regex":  # a link names a registered pre-tokenizer; a regex of the user's has no place in one
        params["pretokenizer"] = spec.pretokenizer.name
    link = APP + "?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in {**params, "merge": str(merge)}.items())
    path = quote(str(inputs[0].path.resolve()), safe="/._-+")
    return f"Step through merge {merge:,} in the app: BPE_CORPUS={path} bash scripts/app.sh, then open {link}"


COMMANDS: dict[str, Callable[[argparse.Namespace], None]] = {
    "train": train_command,
    "count": count_command,
    "encode": encode_command,
    "decode": decode_command,
    "core": core_command,
    "diff": diff_command,
}


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so that it ends as Ctrl-C does: workers ended, temporary files removed."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


@contextmanager
def said_after() -> Iterator[None]:
    """The library's CutWarnings (inputs.py) printed as 'warning: ...' lines when the command ends, not amid its progress bars."""
    from .data.inputs import CutWarning

    kept: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("always", CutWarning)  # every run says so, not only a process's first
        show = warnings.showwarning

        def keep(message, category, *where, **more) -> None:
            if issubclass(category, CutWarning):
                kept.append(str(message))
            else:
                show(message, category, *where, **more)

        warnings.showwarning = keep
        try:
            yield
        finally:
            for sentence in kept:
                print(f"warning: {sentence}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    if "numpy" not in sys.modules:
        # subtle: pyarrow brings numpy, whose OpenBLAS starts a thread per core that spins while we work; nothing
        # here multiplies matrices (~70 ms of a `train --from-counts` run of ~1.5 s)
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    p = parser()
    args, unknown = p.parse_known_args(argv)
    if unknown:  # `bpe train corpus.txt --bogus`: train's usage, not the top level's
        p.commands[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    # subtle: by default SIGTERM (kill, systemd, Slurm, CI time-outs) ends the process on the spot,
    # leaving temporary files behind; raised as an exception, it unwinds like Ctrl-C
    previous = signal.signal(signal.SIGTERM, _terminate) if threading.current_thread() is threading.main_thread() else None
    try:
        with said_after():
            COMMANDS[args.command](args)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e.strerror or e}: {e.filename or ''}".rstrip(": "), file=sys.stderr)
        return 2
    except Terminated:
        print("\nterminated; nothing written.", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("\ninterrupted; nothing written.", file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 0
