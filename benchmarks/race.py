"""Race benchmarks: the four trainers on growing prefixes of the stdlib prose. Results go in BENCHMARKS.md.

    python benchmarks/race.py                          # 1,000 merges, six sizes up to 2 MB (about 10 minutes)
    python benchmarks/race.py --merges 300 --budget 5  # what the app's sweep does by default
    python benchmarks/race.py --in-worker              # the same, run as the app runs it: in a worker process of its pool

It calls bpe.lab.race, the code the app's race page runs: each size is pre-tokenized
once and the same PreTokens go to every trainer; trainers run with detail off on
a processor-time clock with the garbage collector paused; a trainer over its
budget is cut off at that size and not run at larger ones. The sizes are the
page's (`sweep_sizes`), so the page's sweep with the same merges and budget
shows the same figures, up to the noise of the machine.

Printed: a markdown scaling table (seconds of initial count + merge loop), the
speed-up of heap over naive at the size nearest 1 MB, the work counters per
merge there, the cumulative time of every trainer at 10, 100 and all merges,
and (as the page's last section does) the wall-clock time of pre-tokenizing the
prose repeated to SPEEDUP_BYTES (25 MB) with 1..cpu_count worker processes.

With --in-worker the sweep and the timing run through the app's worker pool
(serve/pool.py running serve/jobs.py), exactly as the race page runs them: the figures
should match a run without it, up to the noise of the machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bpe import ALGORITHMS  # noqa: E402
from bpe.data.corpora import END_OF_TEXT, stdlib_prose  # noqa: E402
from bpe.lab import race as R  # noqa: E402
from bpe.lab import sweep as sweeps  # noqa: E402
from bpe.spec import TrainSpec  # noqa: E402
from serve import jobs  # noqa: E402
from serve.pool import Pool  # noqa: E402

WORK = ["pairs_counted", "pairs_scanned", "words_checked", "words_touched", "positions_touched", "heap_pushes", "heap_pops", "stale_pops"]


def cell(result: R.RaceResult | None) -> str:
    if result is None:
        return "not run"
    if result.cut_off:
        return f"> {result.total:.2f} (cut off at {len(result.merges):,})"
    return f"{result.total:.3f}"


def scaling_table(points: list[sweeps.ScalingPoint], sizes: list[int]) -> tuple[str, dict[int, dict[str, R.RaceResult]]]:
    by_size: dict[int, dict[str, R.RaceResult]] = {}
    pretokenize: dict[int, float] = {}
    for p in points:
        by_size.setdefault(p.n_bytes, {})[p.result.algorithm] = p.result
        pretokenize[p.n_bytes] = p.pretokenize_s
    lines = [
        "| size (MB) | pre-tokenize (s) | " + " | ".join(ALGORITHMS) + " |",
        "|---:|---:|" + "---:|" * len(ALGORITHMS),
    ]
    for n_bytes, results in by_size.items():
        lines.append(f"| {n_bytes / 1e6:.3f} | {pretokenize[n_bytes]:.3f} | " + " | ".join(cell(results.get(a)) for a in ALGORITHMS) + " |")
    return "\n".join(lines), by_size


def work_table(results: dict[str, R.RaceResult]) -> str:
    lines = ["| work per merge | " + " | ".join(ALGORITHMS) + " |", "|---|" + "---:|" * len(ALGORITHMS)]
    for key in WORK:
        row = []
        for a in ALGORITHMS:
            r = results.get(a)
            row.append(f"{r.work[key] / max(len(r.merges), 1):,.1f}" if r and key in r.work else "")
        if any(row):
            lines.append(f"| {key} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--merges", type=int, default=1000)
    parser.add_argument("--budget", type=float, default=600.0, help="seconds per trainer and size (default 600)")
    parser.add_argument("--max-bytes", type=int, default=2_000_000, help="largest prefix of the stdlib prose")
    parser.add_argument("--in-worker", action="store_true", help="run in a worker process of the app's pool, as the race page does")
    args = parser.parse_args()

    data = stdlib_prose(args.max_bytes).encode("utf-8")
    sizes = sweeps.sweep_sizes(len(data))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    where = "in a worker process of the app's pool" if args.in_worker else "in this process"
    print(
        f"# stdlib prose of Python {platform.python_version()}, {len(data):,} bytes; {args.merges:,} merges; "
        f"budget {args.budget:g} s; {os.cpu_count()} cores; load average {load:.1f} at the start; {where}"
    )

    def progress(n_bytes: int, result: R.RaceResult) -> None:
        print(
            f"  {n_bytes / 1e6:.2f} MB {result.algorithm}: {len(result.merges):,} merges, {result.total:.1f} s", end="\r", file=sys.stderr
        )

    if args.in_worker:
        points = list(
            in_worker("sweep", jobs.sweep, "stdlib", data, TrainSpec(special_tokens=(END_OF_TEXT,)), args.merges, args.budget).points
        )
    else:
        points = []
        for point in sweeps.scaling_sweep(data, sizes, args.merges, args.budget, special_tokens=[END_OF_TEXT], on_progress=progress):
            points.append(point)
            print(f"  {point.n_bytes / 1e6:.2f} MB {point.result.algorithm}: {cell(point.result)} s" + " " * 20, file=sys.stderr)

    table, by_size = scaling_table(points, sizes)
    print(f"\nSeconds of processor time, initial count + merge loop, for {args.merges:,} merges:\n")
    print(table)

    near_1mb = min(by_size, key=lambda n: abs(n - 1_000_000))
    results = by_size[near_1mb]
    print(f"\nAt {near_1mb / 1e6:.3f} MB:")
    heap, naive = results.get("heap"), results.get("naive")
    if heap and naive and not naive.cut_off and not heap.cut_off:
        print(f"heap is {naive.total / heap.total:.0f}x faster than naive ({naive.total:.2f} s vs {heap.total:.3f} s)")
        agreed = R.first_difference(list(results.values())) is None
        print(f"merge lists of all trainers identical: {agreed}")
    else:
        print("naive or heap was cut off: raise --budget to measure the speed-up")
    print()
    print(work_table(results))
    print("\nCumulative seconds after 10, 100 and all merges:\n")
    for a, r in results.items():
        marks = [r.times[k - 1] for k in (10, 100, len(r.times)) if 0 < k <= len(r.times)]
        print(f"  {a:>10}: " + ", ".join(f"{t:.3f}" for t in marks))

    if args.in_worker:
        timing = in_worker("speedup", jobs.speedup, data, sweeps.SPEEDUP_BYTES)
        n_bytes, points = timing.n_bytes, list(timing.points)
    else:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "corpus.txt"
            n_bytes = sweeps.write_repeated(path, data, sweeps.SPEEDUP_BYTES)
            points = list(sweeps.pretokenize_speedup(path, range(1, (os.cpu_count() or 1) + 1), special_tokens=[END_OF_TEXT]))
    print(f"\nPre-tokenizing {n_bytes / 1e6:.1f} MB, wall-clock seconds (pool start-up included):\n")
    for p in points:
        print(f"  {p.workers} worker(s): {p.seconds:.2f} s, {points[0].seconds / p.seconds:.2f}x, {p.unique:,} unique pre-tokens")


def in_worker(key: str, fn, *args):
    """Run a job of serve/jobs.py in a worker process of the app's pool; print its progress; return its result."""
    pool = Pool(workers=1)
    try:
        pool.submit(key, fn, *args, who="benchmark")
        while not (status := pool.wait(key, timeout=1.0)).ended:
            doing = getattr(status.progress, "doing", "")
            print(f"  {doing}" + " " * 20, end="\r", file=sys.stderr)
        if status.state != "done":
            raise SystemExit(status.error or f"the worker's run was {status.state}")
        return status.result
    finally:
        pool.close()


if __name__ == "__main__":
    main()
