"""The SentencePiece step page's trace: each merge with detail on the 2 MB preset, kept counts against a recount of every word.

    .venv/bin/python benchmarks/sentencepiece_trace.py --merges 60 --rounds 3

The step page trains with detail (bpe/sentencepiece/trainer.py: each merge's best candidates and the frequent pairs it
may not make, and why). The refused pairs' frequencies are kept from merge to merge (DetailCounts: only the words a
merge rewrote are counted again); before, every word was recounted at every merge. This times the first --merges
merges of the stdlib preset (vocab 1,000, spm_train's defaults) both ways, alternated, in one process, on the
processor's clock, checks that both give the same detail, and prints the medians and the machine's load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bpe.sentencepiece import SentencePieceSpec  # noqa: E402
from bpe.sentencepiece import trainer as T  # noqa: E402
from bpe.sentencepiece.trainer_c import prepare_compiled  # noqa: E402
from ui.corpus import stdlib_bytes  # noqa: E402


def recount(trainer: T.Trainer, floor: int) -> tuple:
    """The refused pairs as the trainer found them before: every word counted again (its old _detail's loop)."""
    counts: Counter[tuple[str, str]] = Counter()
    for sid, row in enumerate(trainer.symbols):
        kept = [s for s in row if s is not None]
        for a, b in zip(kept, kept[1:]):
            counts[(a.piece, b.piece)] += trainer.weights[sid]
    refused = []
    for (a, b), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if n < floor:
            break
        why = T.UNKNOWN_CHAR if T.UNK_CHAR in (a, b) else T.why_invalid(a + b, trainer.spec)
        if why is not None:
            refused.append((a, b, n, why))
            if len(refused) == T.DETAIL_CAP:
                break
    return tuple(refused)


def timed(corpus, spec: SentencePieceSpec, merges: int, full: bool) -> tuple[float, list]:
    trainer = T.Trainer(corpus, spec)
    if full:  # every merge's detail from a recount of every word, as before
        trainer._shown = type("Recount", (), {"refused": lambda self, floor: recount(trainer, floor)})()
    start = time.process_time()
    events = []
    for event in trainer.merges(detail=True):
        events.append(event.detail)
        if len(events) == merges:
            break
    return time.process_time() - start, events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--merges", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    spec = SentencePieceSpec(vocab_size=1000)
    corpus = prepare_compiled(T.select(stdlib_bytes(spinner=False).split(b"\n"), spec), spec)
    print(f"# {os.cpu_count()} cores; load {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {time.strftime('%Y-%m-%d %H:%M')}")
    seconds: dict[str, list[float]] = {"recount": [], "kept": []}
    for r in range(args.rounds):
        for name in ("recount", "kept") if r % 2 == 0 else ("kept", "recount"):
            spent, details = timed(corpus, spec, args.merges, full=name == "recount")
            seconds[name].append(spent)
            if name == "kept":
                kept = details
            else:
                full = details
            print(f"round {r + 1}: {name} {spent:.2f} s for {args.merges} merges ({spent / args.merges * 1e3:.0f} ms a merge)")
    assert kept == full, "the kept counts gave other detail than a recount"
    a, b = statistics.median(seconds["kept"]), statistics.median(seconds["recount"])
    print(f"median: kept {a / args.merges * 1e3:.0f} ms a merge, recount {b / args.merges * 1e3:.0f} ms a merge: {b / a:.1f}x less")
    print(f"# load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
