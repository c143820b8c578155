"""Continuing a tokenizer (bpe train --from) against training from scratch, on one counts file.

    python benchmarks/make_corpus.py --mb 1000 --out benchmarks/data/corpus1000.txt
    python benchmarks/continued.py --corpus benchmarks/data/corpus1000.txt --base 16000 --vocab-size 32000 --rounds 5

Counts the corpus once (bpe count, <|endoftext|> special), trains the base tokenizer from those counts
(--base tokens), then runs, alternately in each round and each in a fresh process as a user would:
  scratch   bpe train --from-counts COUNTS --vocab-size N --out scratch/
  continue  bpe train --from-counts COUNTS --from base/ --vocab-size N --out continued/
and prints each one's wall time and the phases of its summary, the medians, and whether the two made
the same merges (they must: continuing from a run's first merges on the same counts is that run).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def bpe(*argv: str) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bpe", *argv], cwd=ROOT, capture_output=True, text=True, env=os.environ | {"PYTHONPATH": str(ROOT)}
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"bpe {' '.join(argv)} failed: {done.stderr[-2000:]}")
    return seconds, done.stdout


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--base", type=int, default=16_000)
    p.add_argument("--vocab-size", type=int, default=32_000)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="continued-", dir=ROOT / "benchmarks" / "data") as tmp:
        folder = Path(tmp)
        counts = folder / "counts.parquet"
        seconds, _ = bpe("count", str(args.corpus), "--special-token", "<|endoftext|>", "--out", str(counts))
        print(f"{args.corpus} ({args.corpus.stat().st_size / 1e6:,.0f} MB) counted in {seconds:.1f} s; load {load()}")
        bpe("train", "--from-counts", str(counts), "--vocab-size", str(args.base), "--out", str(folder / "base"))
        commands = {
            "scratch": ["train", "--from-counts", str(counts), "--vocab-size", str(args.vocab_size), "--out", str(folder / "scratch")],
            "continue": ["train", "--from-counts", str(counts), "--from", str(folder / "base"), "--vocab-size", str(args.vocab_size)]
            + ["--out", str(folder / "continued")],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for n in range(args.rounds):
            for name, argv in commands.items():  # alternated: a busy moment hits both
                seconds, summary = bpe(*argv)
                times[name].append(seconds)
                phases = re.search(r"^time: (.*)$", summary, re.M).group(1)
                print(f"round {n + 1} {name}: {seconds:.2f} s; {phases}; load {load()}", flush=True)
        same = (folder / "scratch" / "merges.txt").read_bytes() == (folder / "continued" / "merges.txt").read_bytes()
    medians = {name: statistics.median(t) for name, t in times.items()}
    print(
        f"median of {args.rounds}: from scratch {medians['scratch']:.2f} s, continued from {args.base:,} {medians['continue']:.2f} s "
        f"({medians['continue'] / medians['scratch']:.2f}x); the same merges: {same}; load {load()}"
    )


if __name__ == "__main__":
    main()
