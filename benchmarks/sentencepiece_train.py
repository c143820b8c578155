"""Training a SentencePiece BPE model: this tool against sentencepiece 0.2.3, whole processes, alternated.

    python benchmarks/make_mixed_corpus.py --mb 12 --out benchmarks/data/mixed12.txt
    python benchmarks/sentencepiece_train.py benchmarks/data/mixed12.txt --vocab-size 8000 --rounds 5

Each round starts a fresh Python process for sentencepiece (SentencePieceTrainer.train, num_threads=2, writing
its .model) and one for this tool (bpe.sentencepiece.train with the compiled trainer, writing tokenizer.model),
in alternation (sentencepiece first in odd rounds, second in even ones), and times each from start to exit, so
the interpreter's start and the imports count as they do for a user. It prints each round, the medians and the
ratio (and the same for processor time, user + system of all the process's threads: the steadier figure on a
busy machine), checks that both wrote the same pieces, and says the machine's load (os.getloadavg) before and
after, since the machine may be shared. Use `taskset -c 0,1` to hold both to two cores.

Options: --byte-fallback is on by default (--no-byte-fallback turns it off); --threads is sentencepiece's
num_threads (ours: the compiled trainer runs on one core).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SPM = """
import sys, sentencepiece as spm
spm.SentencePieceTrainer.train(input=sys.argv[1], model_prefix=sys.argv[2], vocab_size=int(sys.argv[3]), model_type="bpe",
    byte_fallback=sys.argv[4] == "1", num_threads=int(sys.argv[5]), minloglevel=2)
"""
OURS = """
import sys
sys.path.insert(0, sys.argv[6])
from bpe.sentencepiece import SentencePieceSpec, train, write_model
model = train([sys.argv[1]], SentencePieceSpec(vocab_size=int(sys.argv[3]), byte_fallback=sys.argv[4] == "1", num_threads=int(sys.argv[5])), compiled=True)
write_model(model, sys.argv[2] + ".model")
"""


def run(code: str, args: list[str]) -> tuple[float, float]:
    """(wall-clock seconds, processor seconds: user + system of the process and its threads)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *args], check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-byte-fallback", action="store_true")
    args = parser.parse_args()
    fallback = "0" if args.no_byte_fallback else "1"
    load_before = os.getloadavg()
    times: dict[str, list[float]] = {"sentencepiece": [], "ours": []}
    cpu: dict[str, list[float]] = {"sentencepiece": [], "ours": []}
    with tempfile.TemporaryDirectory() as tmp:
        common = [str(args.corpus), "", str(args.vocab_size), fallback, str(args.threads), str(ROOT)]
        for r in range(args.rounds):
            order = ["sentencepiece", "ours"] if r % 2 == 0 else ["ours", "sentencepiece"]
            for name in order:
                prefix = str(Path(tmp) / name)
                code = SPM if name == "sentencepiece" else OURS
                wall, processor = run(code, [common[0], prefix, *common[2:]])
                times[name].append(wall)
                cpu[name].append(processor)
            print(
                f"round {r + 1}: sentencepiece {times['sentencepiece'][-1]:.2f} s ({cpu['sentencepiece'][-1]:.2f} s processor), "
                f"ours {times['ours'][-1]:.2f} s ({cpu['ours'][-1]:.2f} s processor)",
                flush=True,
            )
        sys.path.insert(0, str(ROOT))
        from bpe.sentencepiece import read_model

        same = read_model(Path(tmp) / "ours.model").pieces == read_model(Path(tmp) / "sentencepiece.model").pieces
    spm_median, ours_median = statistics.median(times["sentencepiece"]), statistics.median(times["ours"])
    spm_cpu, ours_cpu = statistics.median(cpu["sentencepiece"]), statistics.median(cpu["ours"])
    size = args.corpus.stat().st_size / 1e6
    print(
        f"{args.corpus.name} ({size:.1f} MB) -> vocab {args.vocab_size:,}, byte_fallback={fallback == '1'}: "
        f"sentencepiece {spm_median:.2f} s, ours {ours_median:.2f} s (median of {args.rounds}): {ours_median / spm_median:.2f}x; "
        f"processor sentencepiece {spm_cpu:.2f} s, ours {ours_cpu:.2f} s: {ours_cpu / spm_cpu:.2f}x; "
        f"same pieces: {same}; load {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after"
    )


if __name__ == "__main__":
    main()
