"""How long `bpe count` takes to let go of its caller after a signal: the caller's pipe closed, every process gone.

Starts `bpe count` on ~40 MB of text with two workers (the Python path, so the workers run for
seconds), waits until both workers are running, sends the signal to the main process only (as
`kill PID`, systemd and Slurm do), and times until the caller's stdout/stderr reach end of file
(every process holding them has ended), then checks that no process of the run is left. Repeated,
with the load printed beside the figures (issue 27.9: within 5 s; before the fix the forkserver,
both workers and the resource tracker outlived the run by minutes).

    .venv/bin/python benchmarks/signals.py                     # SIGTERM, SIGINT and SIGKILL, 5 runs each
    .venv/bin/python benchmarks/signals.py --runs 10 --signal SIGTERM
    .venv/bin/python benchmarks/signals.py --bpe /tmp/old      # another version's package (git archive REV bpe)
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from conftest import interruptible  # noqa: E402  (SIGINT taken as from a terminal, even in a background job)
from test_faults import alive, descendants  # noqa: E402  (the same /proc walk the tests use)

LINE = "the lowest lower newest widest naïve café 日本 hello world 12345\n"


def one_run(sig: signal.Signals, corpus: Path, out: Path, package: Path, limit: float) -> tuple[float | None, int]:
    """Seconds from the signal to the pipes' end of file (None: still open after limit), and processes left."""
    env = {**os.environ, "PYTHONPATH": str(package)}
    command = [sys.executable, "-m", "bpe", "count", str(corpus), "--workers", "2", "--no-compiled", "--out", str(out)]
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=corpus.parent, preexec_fn=interruptible
    )  # not this checkout's bpe
    deadline = time.monotonic() + 60
    tree = descendants(proc.pid)
    while len(tree) < 4 and time.monotonic() < deadline:  # the forkserver, the resource tracker, two workers
        time.sleep(0.05)
        tree = descendants(proc.pid)
    os.kill(proc.pid, sig)
    start = time.perf_counter()
    try:
        proc.communicate(timeout=limit)
        seconds = time.perf_counter() - start
    except subprocess.TimeoutExpired:
        seconds = None
    time.sleep(0.5)
    left = alive(tree)
    for pid in left:  # this run's processes only, by pid: they hold the pipes
        os.kill(pid, signal.SIGKILL)
    if proc.poll() is None:
        proc.kill()
    proc.communicate()
    return seconds, len(left)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--signal", action="append", choices=["SIGTERM", "SIGINT", "SIGKILL"], help="default: all three")
    parser.add_argument("--bpe", type=Path, default=ROOT, help="the folder holding the bpe package to measure")
    parser.add_argument("--limit", type=float, default=30.0, help="seconds to wait for the pipe before calling it open")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        corpus = Path(folder) / "big.txt"
        corpus.write_text(LINE * 600_000)
        for name in args.signal or ["SIGTERM", "SIGINT", "SIGKILL"]:
            times, left = [], 0
            for _ in range(args.runs):
                seconds, n = one_run(signal.Signals[name], corpus, Path(folder) / "c.parquet", args.bpe, args.limit)
                times.append(seconds)
                left += n
            closed = [t for t in times if t is not None]
            figures = f"median {statistics.median(closed):.2f} s, max {max(closed):.2f} s" if closed else "never"
            print(
                f"{name}: pipe closed in {len(closed)}/{args.runs} runs within {args.limit:.0f} s ({figures}); "
                f"processes left: {left}; load {os.getloadavg()[0]:.1f}"
            )


if __name__ == "__main__":
    main()
