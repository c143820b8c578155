"""Where the time of an end-to-end run goes: cProfile of each phase, one process.

    python benchmarks/profile_train.py                       # the 50 MB corpus, vocab 10,000
    python benchmarks/profile_train.py --corpus FILE --vocab 32000 --top 25

What it does: run the three phases of `bpe train` one after the other in this
process, each under cProfile, and print each phase's processor time (without
the profiler, measured first) and its most expensive functions by own time:
(1) pre-tokenize: count the corpus with one worker (the work two workers
share), (2) initial count: build the heap trainer, (3) merge loop.

What it does not do: measure the pool (start-up, combining the workers'
counts); `bpe train --workers 2` prints that wall and processor time per phase.
The profiler's own overhead inflates absolute figures; read the shares.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bpe.data.count import count_inputs  # noqa: E402
from bpe.heap import Heap  # noqa: E402

SPECIAL = "<|endoftext|>"


def timed(f):
    """(result, processor seconds) of f() without the profiler."""
    start = time.process_time()
    result = f()
    return result, time.process_time() - start


def profiled(title: str, f, top: int):
    """Run f once plain (timed) and once under cProfile; print both; return the plain result."""
    result, seconds = timed(f)
    profile = cProfile.Profile()
    profile.runcall(f)
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(top)
    print(f"\n## {title}: {seconds:.2f} s processor time (without the profiler)")
    print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:6000])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT / "benchmarks" / "data" / "corpus50.txt")
    parser.add_argument("--vocab", type=int, default=10_000)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    gc.disable()  # as train() does
    counts = profiled("pre-tokenize (one worker)", lambda: count_inputs(args.corpus, special_tokens=[SPECIAL], workers=1).counts, args.top)
    print(f"{len(counts):,} unique pre-tokens")
    profiled("initial count (Heap(counts))", lambda: Heap(counts), args.top)
    merges = args.vocab - 256 - 1

    def merge_loop():
        trainer = Heap(counts)
        start = time.process_time()
        for _ in trainer.merges(merges):
            pass
        return time.process_time() - start, dict(trainer.work)

    (seconds, work), _ = timed(merge_loop)
    print(f"\nmerge loop alone: {seconds:.2f} s processor time; work: {work}")
    profiled("initial count + merge loop", merge_loop, args.top)


if __name__ == "__main__":
    main()
