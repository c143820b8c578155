"""How long bpe.lab.diagnose takes to say where and why a student's merges part from the reference.

For each known mistake (bpe.lab.diagnose.MISTAKES) a student's list is made by a trainer with that mistake
(make_mistake), then diagnosed; the table gives where it parts, the cause named, how many of the list
that mistake makes, and the time (processor time of this process, and wall-clock). Also the reference's
own merges (`same`).

    .venv/bin/python benchmarks/diagnose.py                  # corpus.en (243 merges) and the 2 MB stdlib prose (1,000)
    .venv/bin/python benchmarks/diagnose.py --only stdlib --merges 2000
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from bpe import TrainSpec, train_bpe_text
from bpe.data.corpora import stdlib_prose
from bpe.lab.diagnose import MISTAKES, diagnose, make_mistake

SHARED = Path(__file__).resolve().parents[2] / "shared" / "cs336"
SPECIAL = "<|endoftext|>"


def corpora(only: str | None, merges: int | None) -> list[tuple[str, bytes, int]]:
    found = []
    if only in (None, "cs336") and (SHARED / "corpus.en").is_file():
        found.append(("corpus.en", (SHARED / "corpus.en").read_bytes(), merges or 243))
    if only in (None, "stdlib"):
        found.append(("stdlib 2 MB", stdlib_prose(2_000_000).encode("utf-8"), merges or 1000))
    return found


def timed(theirs, data: bytes, spec: TrainSpec):
    cpu, wall = time.process_time(), time.perf_counter()
    found = diagnose(theirs, data, spec)
    return found, time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=["cs336", "stdlib"], help="one corpus only")
    parser.add_argument("--merges", type=int, default=None, help="merges in each student's list (default 243 / 1000)")
    args = parser.parse_args()
    spec = TrainSpec(special_tokens=(SPECIAL,))
    print(f"load average {os.getloadavg()[0]:.1f} at start")
    for name, data, n in corpora(args.only, args.merges):
        print(f"\n{name}, {n:,} merges")
        print(
            "| student's mistake | first difference | kind | cause named | makes | processor s | wall s |\n|---|---:|---|---|---:|---:|---:|"
        )
        _, reference = train_bpe_text(data, 256 + n + 1, [SPECIAL])
        lists = [("none (the reference)", reference)] + [
            (m.cause, make_mistake(m.cause, data, spec, n)) for m in MISTAKES if m.applies(spec)
        ]
        for mistake, theirs in lists:
            found, cpu, wall = timed(theirs, data, spec)
            where = "—" if found.first_difference is None else f"{found.first_difference + 1:,}"
            print(
                f"| {mistake} | {where} | {found.kind} | {found.cause or '—'} | {found.reproduced_through:,} of {len(theirs):,} "
                f"| {cpu:.2f} | {wall:.2f} |"
            )
    print(f"\nload average {os.getloadavg()[0]:.1f} at end")


if __name__ == "__main__":
    main()
