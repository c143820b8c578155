"""The merge loop alone: the heap trainer in Python and compiled (heap_c) on the same pre-token counts.

    python benchmarks/merge_loop.py                                          # the 48 MB corpus, 10k and 32k merges
    python benchmarks/merge_loop.py --counts owt.counts.parquet --merges 31743 --rounds 5
    python benchmarks/merge_loop.py --corpus FILE --algorithms heap_c --rule rustbpe

What it does: count the corpus once (or load a counts file), then for each round
run every algorithm in turn (A, B, A, B, ...: a shared machine's load falls on
both alike) and print the processor time of its initial count and of its merge
loop (this process's clock: a busy machine inflates it less than wall time),
the work counters, and whether its merges equal the first algorithm's; then the
medians. Detail is off and the cycle collector paused, as in `bpe train`.

What it does not do: pre-tokenize, write files or start a process: `scale.py`
times `bpe train` end to end against the other tools.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bpe import PreTokens  # noqa: E402
from bpe.data.count import count_inputs  # noqa: E402
from bpe.spec import TrainSpec  # noqa: E402
from bpe.train import Run  # noqa: E402
from bpe.trainer import paused_gc  # noqa: E402

SPECIAL = "<|endoftext|>"


def one_run(counts: dict[bytes, int], algorithm: str, merges: int, rule: str) -> tuple[float, float, list, dict]:
    """(initial count seconds, merge loop seconds, merges, work) of one trainer, processor time."""
    with paused_gc():
        start = time.process_time()
        going = Run(PreTokens(counts, None, 0), merges, TrainSpec(algorithm=algorithm, tie_break=rule))
        built = time.process_time()
        made = []
        going.until(on_merge=lambda e: made.append((e.left, e.right)))
        done = time.process_time()
        work = dict(going.trainer.work)
        del going
    return built - start, done - built, made, work


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT / "benchmarks" / "data" / "corpus48.txt", help="text to count once")
    parser.add_argument("--counts", type=Path, help="a counts file (bpe count) instead of --corpus")
    parser.add_argument("--merges", type=int, nargs="+", default=[9_743, 31_743])
    parser.add_argument("--algorithms", default="heap,heap_c", help="comma-separated names in bpe.ALGORITHMS")
    parser.add_argument("--rule", default="cs336", help="tie-break rule: cs336, huggingface, rustbpe")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.counts:
        from bpe.data.counts_file import load_counts

        counts, _ = load_counts(args.counts)
        source = args.counts.name
    else:
        counts = count_inputs(args.corpus, special_tokens=[SPECIAL]).counts
        source = args.corpus.name
    algorithms = args.algorithms.split(",")
    print(f"# {source}: {len(counts):,} unique pre-tokens; rule {args.rule}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    seen: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for merges in args.merges:
        for round_ in range(args.rounds):
            first = None
            for algorithm in algorithms:
                init, loop, made, work = one_run(counts, algorithm, merges, args.rule)
                first = made if first is None else first
                seen.setdefault((algorithm, merges), []).append((init, loop))
                print(
                    f"round {round_ + 1} {algorithm:>7} {len(made):,} merges: initial count {init:.3f} s, merge loop {loop:.3f} s "
                    f"({loop / max(len(made), 1) * 1e6:,.1f} us a merge); same merges as {algorithms[0]}: {made == first}; "
                    f"load {os.getloadavg()[0]:.1f}; work {work}"
                )
                sys.stdout.flush()
    print("\n# medians, processor seconds: initial count, merge loop")
    for (algorithm, merges), runs in seen.items():
        init, loop = (statistics.median(r[i] for r in runs) for i in (0, 1))
        print(f"{algorithm:>7} {merges:>7,} merges: {init:.3f} s, {loop:.3f} s  [{' / '.join(f'{r[1]:.3f}' for r in runs)}]")


if __name__ == "__main__":
    main()
