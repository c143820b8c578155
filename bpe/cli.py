"""The command line: train a tokenizer, then use it.

    python -m bpe train FILE --vocab-size N --out DIR   # writes every format to DIR
    python -m bpe encode DIR --text "Hello world"       # prints ids: 72 101 ...
    python -m bpe decode DIR 72 101 ...                 # prints the text

encode and decode read any tokenizer load.py knows: a directory written by
train, GPT-2's vocab.json + merges.txt, a HuggingFace tokenizer.json, a
.tiktoken file.

Training shows progress bars for pre-tokenization and merging, then a summary.
Bad input prints one sentence and exits with code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from . import export
from .pretokenize import ENCODING, ERRORS, PATTERNS, check_pattern, pretokenize_file
from .rule import RULES
from .tokenizer import Tokenizer
from .train import ALGORITHMS, build_vocab, check_settings, steps
from .trainer import paused_gc

FILES = (export.VOCAB, export.MERGES, export.HF, export.PLAIN)  # what train writes


class Bar:
    """A one-line progress bar on stderr; on a pipe it prints every quarter instead of redrawing."""

    def __init__(self, label: str, total: float, unit: str = "", scale: float = 1.0) -> None:
        self.label, self.total, self.unit, self.scale = label, total, unit, scale
        self.tty = sys.stderr.isatty()
        self.last_quarter = -1
        self.last_draw = 0.0
        self.start = time.perf_counter()

    def update(self, done: float, total: float | None = None) -> None:
        if total is not None:
            self.total = total
        fraction = done / self.total if self.total else 1.0
        now = time.perf_counter()
        if self.tty:
            if now - self.last_draw < 0.1 and fraction < 1:
                return
            self.last_draw = now
            filled = int(30 * fraction)
            sys.stderr.write(
                f"\r{self.label:<14} [{'#' * filled}{'.' * (30 - filled)}] {fraction:6.1%} "
                f"{done / self.scale:,.1f}/{self.total / self.scale:,.1f}{self.unit}  {now - self.start:5.1f}s"
            )
            sys.stderr.flush()
        else:
            quarter = int(fraction * 4)
            if quarter > self.last_quarter:
                self.last_quarter = quarter
                print(f"{self.label}: {fraction:.0%}", file=sys.stderr)

    def close(self) -> None:
        if self.tty:
            sys.stderr.write("\n")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bpe", description="Train and use byte-pair-encoding tokenizers.")
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train a tokenizer on a text file")
    t.add_argument("file", type=Path, help="UTF-8 text (invalid bytes are kept as bytes)")
    t.add_argument("--vocab-size", type=int, required=True, help="256 bytes + merges + special tokens")
    t.add_argument("--special-token", action="append", default=[], metavar="T", help="repeat for several, e.g. '<|endoftext|>'")
    t.add_argument("--algorithm", default="heap", help=f"one of {', '.join(ALGORITHMS)} (default heap)")
    t.add_argument("--min-pair-frequency", type=int, default=1, metavar="K", help="stop when the best pair occurs fewer than K times")
    t.add_argument("--pretokenizer", default="gpt2", help=f"one of {', '.join(PATTERNS)} (default gpt2)")
    t.add_argument(
        "--tie-break",
        default="cs336",
        metavar="RULE",
        help="how pairs with equal counts are chosen, to match a tool's merges: "
        + "; ".join(f"{name}: {rule.prefers}" for name, rule in RULES.items())
        + " (default cs336)",
    )
    t.add_argument("--workers", type=int, default=None, metavar="W", help="processes for pre-tokenization (default: CPU count)")
    t.add_argument("--out", type=Path, required=True, metavar="DIR", help=f"writes {', '.join(FILES)} to DIR")

    e = sub.add_parser("encode", help="print the token ids of a text, using a tokenizer saved by train (or another tool's)")
    e.add_argument("dir", type=Path, metavar="DIR", help=TOKENIZER_HELP)
    source = e.add_mutually_exclusive_group()
    source.add_argument("--text", metavar="T", help="the text to encode")
    source.add_argument("--file", type=Path, metavar="F", help="a file to encode (any bytes); default: standard input")
    e.add_argument("--k", type=int, default=None, metavar="K", help="use only the first K merges")
    d = sub.add_parser("decode", help="print the text of token ids, using a tokenizer saved by train (or another tool's)")
    d.add_argument("dir", type=Path, metavar="DIR", help=TOKENIZER_HELP)
    d.add_argument("ids", nargs="*", metavar="ID", help="token ids; default: read them from standard input")
    for command in (e, d):  # what GPT-2 and tiktoken files do not record
        command.add_argument("--special-token", action="append", default=[], metavar="T", help="a special token the files do not list")
        command.add_argument(
            "--pretokenizer", default=None, help=f"for GPT-2 and .tiktoken files: one of {', '.join(PATTERNS)} (default gpt2)"
        )
    return p


TOKENIZER_HELP = (
    "a directory written by train, or a tokenizer file: vocab.json / encoder.json, tokenizer.json, *.tiktoken, tokenizer.bpe.json"
)


def load_tokenizer(args: argparse.Namespace) -> Tokenizer:
    return Tokenizer.load(args.dir, pattern=args.pretokenizer, special_tokens=args.special_token)


def train_command(args: argparse.Namespace) -> None:
    num_merges = check_settings(args.vocab_size, args.special_token, args.algorithm, args.min_pair_frequency, args.tie_break)
    check_pattern(args.pretokenizer)
    if args.out.exists() and not args.out.is_dir():
        raise ValueError(f"--out {args.out} exists and is not a directory.")
    t0 = time.perf_counter()
    bar = Bar("pre-tokenize", 1, " MB", 1e6)
    corpus = pretokenize_file(
        args.file,
        pattern=args.pretokenizer,
        special_tokens=args.special_token,
        workers=args.workers,
        keep_sequence=args.algorithm == "positions",
        progress=bar.update,
    )
    bar.close()
    t1 = time.perf_counter()
    with paused_gc():
        trainer, events = steps(
            corpus, num_merges, algorithm=args.algorithm, min_pair_frequency=args.min_pair_frequency, tie_break=args.tie_break
        )
        t2 = time.perf_counter()
        bar = Bar("merge", num_merges, " merges")
        merges, counts = [], []
        for event in events:
            merges.append((event.left, event.right))
            counts.append(event.count)
            bar.update(len(merges))
    bar.update(num_merges if trainer.stop_reason == "vocab_size" else len(merges))
    bar.close()
    t3 = time.perf_counter()
    vocab = build_vocab(merges, args.special_token, distinct=trainer.rule.reuses_tokens)
    paths = export.save_all(args.out, merges, args.special_token, args.pretokenizer, counts)
    t4 = time.perf_counter()

    why = {
        "vocab_size": f"reached vocab size {args.vocab_size}",
        "no pairs left": "no pair was left to merge",
        "min_pair_frequency": f"the best pair occurred fewer than {args.min_pair_frequency} times",
    }[trainer.stop_reason]
    longest = max((a + b for a, b in merges), key=len, default=b"")
    print(
        f"{len(merges):,} merges ({why}); vocab {len(vocab):,} tokens; {len(corpus.counts):,} unique pre-tokens in {corpus.n_bytes / 1e6:,.1f} MB"
    )
    print(
        f"time: pre-tokenize {t1 - t0:.2f}s, initial count {t2 - t1:.2f}s, merges {t3 - t2:.2f}s, write {t4 - t3:.2f}s, total {t4 - t0:.2f}s"
    )
    if longest:
        print(f"longest token: {longest.decode('utf-8', 'backslashreplace')!r} ({len(longest)} bytes)")
    print("wrote " + ", ".join(str(p) for p in paths))


def encode_command(args: argparse.Namespace) -> None:
    tokenizer = load_tokenizer(args)
    if args.text is not None:
        text = args.text
    elif args.file is not None:
        text = args.file.read_bytes().decode(ENCODING, ERRORS)
    else:
        text = sys.stdin.buffer.read().decode(ENCODING, ERRORS)
    ids = tokenizer.encode(text, args.k)
    print(" ".join(map(str, ids)))


def decode_command(args: argparse.Namespace) -> None:
    tokenizer = load_tokenizer(args)
    words = args.ids if args.ids else sys.stdin.read().split()
    ids = []
    for word in words:
        if not (word.isascii() and word.isdigit()):
            raise ValueError(f"{word!r} is not a token id; ids are whole numbers such as 256.")
        ids.append(int(word))
    data = tokenizer.decode_bytes(ids)  # the exact bytes, invalid UTF-8 included
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    if sys.stdout.isatty() and not data.endswith(b"\n"):
        sys.stdout.buffer.write(b"\n")
    sys.stdout.buffer.flush()


COMMANDS = {"train": train_command, "encode": encode_command, "decode": decode_command}


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        COMMANDS[args.command](args)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e.strerror or e}: {e.filename or ''}".rstrip(": "), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted; nothing written.", file=sys.stderr)
        return 130
    return 0
