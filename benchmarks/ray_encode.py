"""`bpe encode --ray` on a local cluster against `bpe encode` here: the same ids, and what Ray costs over it.

    python benchmarks/ray_encode.py --corpus benchmarks/data/corpus48.txt --rounds 3

Starts one local Ray cluster of --cpus CPUs (this process is its first driver; it ends with it), then
runs, alternately in each round, each in a fresh process as a user would:
  local   bpe encode GPT2 CORPUS --out local.npy --workers CPUS
  folder  bpe encode GPT2 CORPUS --ray ADDRESS --out ids/          (shards + manifest.json)
  joined  bpe encode GPT2 CORPUS --ray ADDRESS --out joined.npy    (the shards joined into one .npy)
and prints each one's wall time, the phases the --ray summary gives, the medians and the overhead
(median of --ray / median of local). Every array must equal the local one. Each --ray run is a new Ray
job, so it pays what a user's command pays: the package shipped to the cluster, new worker processes,
the tokenizer built in each. The cluster's own start is timed once, apart.
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
GPT2 = ROOT.parent / "shared" / "gpt2"


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def run(argv: list[str]) -> tuple[float, str]:
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
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--cpus", type=int, default=2)
    args = p.parse_args()
    sys.path.insert(0, str(ROOT))
    import numpy as np
    import ray

    from bpe.files.ids import load_ids

    size = args.corpus.stat().st_size / 1e6
    start = time.perf_counter()
    ray.init(address="local", num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    address = ray.get_runtime_context().gcs_address
    print(
        f"{args.corpus} ({size:.1f} MB); a local Ray cluster of {args.cpus} CPUs at {address} started in {time.perf_counter() - start:.1f} s"
    )
    times: dict[str, list[float]] = {"local": [], "folder": [], "joined": []}
    with tempfile.TemporaryDirectory(prefix="ray-encode-", dir=ROOT / "benchmarks" / "data") as tmp:
        folder = Path(tmp)
        commands = {
            "local": ["encode", str(GPT2), str(args.corpus), "--out", str(folder / "local.npy"), "--workers", str(args.cpus)],
            "folder": ["encode", str(GPT2), str(args.corpus), "--ray", address, "--out", str(folder / "ids")],
            "joined": ["encode", str(GPT2), str(args.corpus), "--ray", address, "--out", str(folder / "joined.npy")],
        }
        for n in range(args.rounds):
            for name, argv in commands.items():  # alternated: a busy moment hits each
                seconds, summary = run(argv)
                times[name].append(seconds)
                phases = re.search(r"^time: (.*)$", summary, re.M)
                tasks = re.search(r"^Ray: (.*)$", summary, re.M)
                extra = f"; {phases.group(1)}; {tasks.group(1)}" if phases else ""
                print(f"round {n + 1} {name}: {seconds:.2f} s ({size / seconds:.1f} MB/s){extra}; load {load()}", flush=True)
        local = np.load(folder / "local.npy")
        same = np.array_equal(local, load_ids(folder / "ids")) and np.array_equal(local, np.load(folder / "joined.npy"))
        print(f"ids identical (folder, joined, local): {same} ({len(local):,} ids, {local.dtype})")
    medians = {name: statistics.median(t) for name, t in times.items()}
    print(
        f"median of {args.rounds}: local {medians['local']:.2f} s, --ray folder {medians['folder']:.2f} s "
        f"({medians['folder'] / medians['local']:.2f}x, +{medians['folder'] - medians['local']:.2f} s), --ray joined {medians['joined']:.2f} s "
        f"({medians['joined'] / medians['local']:.2f}x, +{medians['joined'] - medians['local']:.2f} s); load {load()}"
    )
    ray.shutdown()


if __name__ == "__main__":
    main()
