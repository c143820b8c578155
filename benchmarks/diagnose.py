"""How long bpe.lab.diagnose takes to say where and why a student's merges part from the reference.

For each known mistake (bpe.lab.diagnose.MISTAKES, and two at once) a student's list is made by a trainer with that
mistake (make_mistake), then diagnosed; the table gives where it parts, the cause named, how many of the list
that mistake makes, and the time (processor time of this process, and wall-clock: the median of --rounds). Also the
reference's own merges (`same`), and two lists no mistake makes, which are walked under the true counts: the
reference with two merges swapped (not_the_maximum) and with one merge left out (count:other).

    .venv/bin/python benchmarks/diagnose.py                  # corpus.en (243 merges) and the 2 MB stdlib prose (1,000)
    .venv/bin/python benchmarks/diagnose.py --only stdlib --merges 2000
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from bpe import TrainSpec, train_bpe_text
from bpe.data.corpora import stdlib_prose
from bpe.lab.diagnose import MISTAKES, diagnose, make_mistake
from bpe.text.pretokenize import pretokenize
from bpe.train import trainer_for

SHARED = Path(__file__).resolve().parents[2] / "shared" / "cs336"
SPECIAL = "<|endoftext|>"


def corpora(only: str | None, merges: int | None) -> list[tuple[str, bytes, int]]:
    found = []
    if only in (None, "cs336") and (SHARED / "corpus.en").is_file():
        found.append(("corpus.en", (SHARED / "corpus.en").read_bytes(), merges or 243))
    if only in (None, "stdlib"):
        found.append(("stdlib 2 MB", stdlib_prose(2_000_000).encode("utf-8"), merges or 1000))
    return found


def timed(theirs, data: bytes, spec: TrainSpec, rounds: int):
    """The diagnosis, and the median processor and wall-clock seconds of rounds runs."""
    cpus, walls = [], []
    for _ in range(rounds):
        cpu, wall = time.process_time(), time.perf_counter()
        found = diagnose(theirs, data, spec)
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return found, statistics.median(cpus), statistics.median(walls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=["cs336", "stdlib"], help="one corpus only")
    parser.add_argument("--merges", type=int, default=None, help="merges in each student's list (default 243 / 1000)")
    parser.add_argument("--rounds", type=int, default=3, help="diagnoses of each list; the median is given (default 3)")
    args = parser.parse_args()
    spec = TrainSpec(special_tokens=(SPECIAL,))
    print(f"load average {os.getloadavg()[0]:.1f} at start")
    for name, data, n in corpora(args.only, args.merges):
        print(f"\n{name}, {n:,} merges")
        print(
            "| student's mistake | first difference | kind | cause named | makes | processor s | wall s |\n|---|---:|---|---|---:|---:|---:|"
        )
        _, reference = train_bpe_text(data, 256 + n + 1, [SPECIAL])
        events = list(trainer_for("heap")(pretokenize(data, special_tokens=(SPECIAL,)).counts, tie_break="cs336").merges(n))
        k = next(i for i in range(n // 3, n - 1) if events[i].count > events[i + 1].count)  # a swap that takes the less frequent first
        lists = [("none (the reference)", reference)] + [
            (m.cause, make_mistake(m.cause, data, spec, n)) for m in MISTAKES if m.applies(spec)
        ]
        lists += [
            ("special_tokens_not_split+characters_not_bytes", make_mistake("special_tokens_not_split+characters_not_bytes", data, spec, n)),
            (f"merges {k + 1} and {k + 2} swapped", reference[:k] + [reference[k + 1], reference[k]] + reference[k + 2 :]),
            (f"merge {k + 1} left out", reference[:k] + reference[k + 1 :]),
        ]
        for mistake, theirs in lists:
            found, cpu, wall = timed(theirs, data, spec, args.rounds)
            where = "—" if found.first_difference is None else f"{found.first_difference + 1:,}"
            print(
                f"| {mistake} | {where} | {found.kind} | {found.cause or '—'} | {found.reproduced_through:,} of {len(theirs):,} "
                f"| {cpu:.2f} | {wall:.2f} |"
            )
    print(f"\nload average {os.getloadavg()[0]:.1f} at end")


if __name__ == "__main__":
    main()
