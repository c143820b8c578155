"""Scale benchmark: a corpus of 1 GB or more to vocab 10,000 and 32,000, against HuggingFace, rustbpe, gigatoken, gigabpe and ffbpe.

    python benchmarks/scale.py                                   # builds benchmarks/data/corpus1000.txt if missing
    python benchmarks/scale.py --mb 2000 --vocab 10000 --tools ours
    python benchmarks/scale.py --corpus FILE --tools ours,ours-python,hf,rustbpe,gigatoken,ffbpe --workers 2
    python benchmarks/scale.py --corpus FILE --pretokenize-only --tools-python /tmp/tools/bin/python
    python benchmarks/scale.py --corpus benchmarks/data/corpus48.txt --pretokenizer cl100k --tools ours,rustbpe \
        --vocab 10000 --no-counts --rounds 3      # GPT-4's pattern: ours and rustbpe only (the others split with GPT-2's)
    python benchmarks/scale.py --corpus benchmarks/data/corpus48.txt --vocab 10000 32000 --no-counts \
        --tools ours,ours-heap,gigatoken,rustbpe,ffbpe,hf --rounds 3      # alternated, medians at the end

`ours` is `bpe train` as it stands (the compiled heap trainer where the core is built: `bpe core`),
`ours-heap` the same with `--algorithm heap` (the Python heap trainer: the figures before the
compiled one), `ours-python` with the Python pre-tokenizer only (`--no-compiled`), `baseline` the `bpe` of another checkout
(`--baseline DIR`: `git archive REV | tar -x -C DIR`, then `python setup.py build_ext --inplace` there), for
before/after figures in one sitting.
`--rounds N` runs every tool N times, one after the other in turn (A, B, C, A, B, C, ...), so that
a shared machine's load falls on all of them alike, and prints each one's median at the end. gigatoken and ffbpe run in
`--tools-python` (default this interpreter): install them there, not as the project's dependencies.
`--pretokenize-only` times file -> pre-token counts alone, in one process, for ours (both
paths), gigatoken and ffbpe, each timed inside its process (start-up and imports left out).

Every run is its own process, so its peak resident memory (RSS) is its own:
the parent reads it with os.wait4 (the largest of the process and the children
it waited for; threads share their process's). For ours the run is the CLI
(`bpe train`, and `bpe count` + `bpe train --from-counts`), whose summary
gives time and peak memory per phase; its worker processes report their own
peak. Figures are printed, not asserted; they go in BENCHMARKS.md with the
`uptime` load printed next to them.

What it does not do: check that the tools agree (they break ties differently),
or pre-tokenize identically: HuggingFace's ByteLevel splits with the GPT-2
regex but does not cut at <|endoftext|>; rustbpe gets the text cut at
<|endoftext|> and the GPT-2 regex.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPECIAL = "<|endoftext|>"
GPT2 = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
PRETOKENIZER = ["gpt2"]  # --pretokenizer: the pattern ours and rustbpe split with (a name of bpe.text.pretokenizers.PRETOKENIZERS)


def run(command: list[str], env: dict | None = None, cwd: Path = ROOT) -> tuple[float, float, int, str]:
    """Run a command; (wall seconds, processor seconds, peak RSS in bytes of the largest process, its stdout).

    Processor time and peak are the process's and its waited-for children's: all
    threads of HuggingFace and rustbpe, but not our forkserver's workers (the CLI
    reports theirs).
    """
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, cwd=cwd, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        out.seek(0)
        text = out.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed ({status}): {' '.join(command)}\n{text}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, text


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def peak_of(measured: list, text: str) -> list:
    """(wall, processor, peak) with the peak our CLI prints when it is higher than the kernel's.

    subtle: the CLI resets the kernel's high-water mark at each phase (/proc/self/clear_refs, to report a peak
    per phase), and the ru_maxrss wait4 gives is the mark since the last reset: the write phase's, after the
    trainer is freed (39 MB, where pre-tokenizing the 48 MB corpus peaked at 124 MB)."""
    printed = [float(n.replace(",", "")) * 1e6 for line in text.splitlines() if line.startswith("peak memory")
               for n in re.findall(r"([\d,.]+) MB", line)]  # fmt: skip
    return [*measured[:2], max([measured[2], *printed])]


def ours(
    corpus: Path,
    vocab_sizes: list[int],
    workers: int,
    from_counts: bool = True,
    compiled: bool = True,
    algorithm: str = "",
    at: Path = ROOT,
) -> None:
    bpe = [sys.executable, "-m", "bpe"]  # run in `at` (python -m puts the working folder first on the path)
    chosen = ["--algorithm", algorithm] if algorithm else []
    path = ([] if compiled else ["--no-compiled"]) + chosen + ["--pretokenizer", PRETOKENIZER[0]]
    what = ("" if compiled else ", Python path (--no-compiled)") + (f", --algorithm {algorithm}" if algorithm else "")
    what += "" if at == ROOT else f", baseline {at}"
    with tempfile.TemporaryDirectory() as tmp:
        for vocab in vocab_sizes:
            *measured, text = run([*bpe, "train", str(corpus), "--vocab-size", str(vocab), "--special-token", SPECIAL,
                                       "--workers", str(workers), "--out", f"{tmp}/e2e{vocab}", *path], cwd=at)  # fmt: skip
            report(f"ours end to end{what}, vocab {vocab:,}", *peak_of(measured, text), text)
        if not from_counts:
            return
        counts = f"{tmp}/counts.parquet"
        reading = ([] if compiled else ["--no-compiled"]) + ["--pretokenizer", PRETOKENIZER[0]]
        *measured, text = run(
            [*bpe, "count", str(corpus), "--special-token", SPECIAL, "--workers", str(workers), "--out", counts, *reading], cwd=at
        )
        report("ours: bpe count (once)", *peak_of(measured, text), text)
        print(f"counts file: {Path(counts).stat().st_size / 1e6:,.1f} MB")
        for vocab in vocab_sizes:
            *measured, text = run(
                [*bpe, "train", "--from-counts", counts, "--vocab-size", str(vocab), "--out", f"{tmp}/fc{vocab}", *chosen], cwd=at
            )
            report(f"ours: train --from-counts{what}, vocab {vocab:,}", *peak_of(measured, text), text)


def hf(corpus: Path, vocab_sizes: list[int]) -> None:
    for vocab in vocab_sizes:
        code = f"""
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
trainer = trainers.BpeTrainer(vocab_size={vocab}, special_tokens=[{SPECIAL!r}],
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
tok.train([{str(corpus)!r}], trainer)
print(tok.get_vocab_size())
"""
        *measured, text = run([sys.executable, "-c", code])
        report(f"HuggingFace tokenizers, vocab {vocab:,}", *measured, f"vocab {text.strip()}")


def rustbpe(corpus: Path, vocab_sizes: list[int]) -> None:
    for vocab in vocab_sizes:
        code = f"""
import rustbpe
def documents(path, block=8 << 20):
    carry = ""
    with open(path, encoding="utf-8", errors="replace") as f:
        while block_text := f.read(block):
            *whole, carry = (carry + block_text).split({SPECIAL!r})
            yield from whole
    yield carry
tok = rustbpe.Tokenizer()
tok.train_from_iterator(documents({str(corpus)!r}), {vocab}, pretokenizer={pattern_regex()!r})
print(len(tok.get_mergeable_ranks()))
"""
        *measured, text = run([sys.executable, "-c", code])
        report(f"rustbpe ({PRETOKENIZER[0]}), vocab {vocab:,}", *measured, f"ranks {text.strip()}")


def pattern_regex() -> str:
    sys.path.insert(0, str(ROOT))
    from bpe.text.pretokenizers import PRETOKENIZERS

    return PRETOKENIZERS[PRETOKENIZER[0]] if PRETOKENIZER[0] != "gpt2" else GPT2


def gigatoken(corpus: Path, vocab_sizes: list[int], python: str) -> None:
    for vocab in vocab_sizes:
        code = f"""
import gigatoken.gigatoken_rs as rs
vocab, merges = rs.train_bpe({str(corpus)!r}, {vocab}, [{SPECIAL!r}])
print(len(merges))
"""
        *measured, text = run([python, "-c", code])
        report(f"gigatoken 0.10.0 train_bpe (its threads: all cores), vocab {vocab:,}", *measured, f"merges {text.strip()}")


def gigabpe(corpus: Path, vocab_sizes: list[int], python: str) -> None:
    for vocab in vocab_sizes:
        code = f"""
import gigabpe
vocab, merges = gigabpe.train_bpe([{str(corpus)!r}], {vocab}, special_tokens=[{SPECIAL!r}])
print(len(merges))
"""
        *measured, text = run([python, "-c", code])
        report(f"gigabpe 0.1.0 train_bpe (HuggingFace-exact; its threads: all cores), vocab {vocab:,}", *measured, f"merges {text.strip()}")


def ffbpe(corpus: Path, vocab_sizes: list[int], python: str) -> None:
    for vocab in vocab_sizes:
        code = f"""
import ffbpe
words = ffbpe.PreTokenizer([{SPECIAL!r}]).get_words_from_file({str(corpus)!r})
trainer = ffbpe.BpeTrainer([{SPECIAL!r}])
trainer.add_words(words)
trainer.train({vocab})
print(trainer.vocab_size)
"""
        *measured, text = run([python, "-c", code])
        report(f"ffbpe 0.1.10 PreTokenizer + BpeTrainer, vocab {vocab:,}", *measured, f"vocab {text.strip()}")


PRETOKENIZERS = {
    "ours, compiled path, 1 process": (
        "from bpe.data.count import count_inputs",
        "c = count_inputs(PATH, special_tokens=[SPECIAL], workers=1); n = len(c.counts); how = c.counted_by()",
    ),
    "ours, Python path, 1 process": (
        "from bpe.data.count import count_inputs",
        "c = count_inputs(PATH, special_tokens=[SPECIAL], workers=1, compiled=False); n = len(c.counts); how = c.counted_by()",
    ),
    "gigatoken 0.10.0 pretokenized_counts, 1 thread": (
        "import os; os.environ['RAYON_NUM_THREADS'] = '1'; import gigatoken.gigatoken_rs as rs",
        "n = len(rs.pretokenized_counts(open(PATH, 'rb').read(), SPECIAL.encode())); how = ''",
    ),
    "ffbpe 0.1.10 get_words_from_file": (
        "import ffbpe",
        "n = len(ffbpe.PreTokenizer([SPECIAL]).get_words_from_file(PATH)); how = ''",
    ),
}


def pretokenize_only(corpus: Path, python: str) -> None:
    """File -> counts, timed inside each process: wall and processor seconds, MB/s of wall."""
    size = corpus.stat().st_size
    for label, (setup, work) in PRETOKENIZERS.items():
        ours = label.startswith("ours")
        code = f"""
import time, sys
sys.path.insert(0, {str(ROOT)!r})
PATH, SPECIAL = {str(corpus)!r}, {SPECIAL!r}
{setup}
start, cpu = time.perf_counter(), time.process_time()
{work}
print(f"{{time.perf_counter() - start:.3f}} {{time.process_time() - cpu:.3f}} {{n}} {{how}}")
"""
        seconds, _, peak, text = run([sys.executable if ours else python, "-c", code])
        wall, cpu, unique, *how = text.split()
        print(f"\n## pre-tokenize {label}: {float(wall):.2f} s wall, {float(cpu):.2f} s processor, {size / 1e6 / float(wall):,.0f} MB/s; "
              f"{int(unique):,} unique; peak RSS {peak / 1e6:,.0f} MB; load {load()}" + (f"\n   {' '.join(how)}" if how else ""))  # fmt: skip
        sys.stdout.flush()


RESULTS: dict[str, list[tuple[float, float, int, float]]] = {}  # label -> (wall, processor, peak, load) of each run


def report(label: str, seconds: float, cpu: float, peak: int, text: str) -> None:
    RESULTS.setdefault(label, []).append((seconds, cpu, peak, os.getloadavg()[0]))
    print(f"\n## {label}: {seconds:,.2f} s wall, {cpu:,.2f} s processor, peak RSS {peak / 1e6:,.0f} MB (largest process); load {load()}")
    for line in text.strip().splitlines():
        if not line.startswith("wrote"):
            print("   " + line)
    sys.stdout.flush()


def medians() -> None:
    """Each label's median wall and processor time over the rounds, with every run's wall time and the loads seen."""
    print("\n# medians (wall, processor, peak RSS), every run's wall time in brackets, load range")
    for label, runs in RESULTS.items():
        walls, cpus = sorted(r[0] for r in runs), sorted(r[1] for r in runs)
        print(f"{label}: {walls[len(walls) // 2]:,.2f} s wall, {cpus[len(cpus) // 2]:,.2f} s processor, "
              f"{max(r[2] for r in runs) / 1e6:,.0f} MB [{' / '.join(f'{r[0]:.2f}' for r in runs)}] "
              f"load {min(r[3] for r in runs):.1f}-{max(r[3] for r in runs):.1f}")  # fmt: skip


def ensure_corpus(path: Path, mb: int) -> Path:
    if not path.exists():
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_corpus.py"), "--mb", str(mb), "--out", str(path)], check=True)
    return path


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=1000, help="corpus size when --corpus is not given (default 1000)")
    parser.add_argument("--corpus", type=Path, help="default benchmarks/data/corpus<MB>.txt, built by make_corpus.py")
    parser.add_argument("--vocab", type=int, nargs="+", default=[10_000, 32_000])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--tools",
        default="ours,hf,rustbpe",
        help="comma-separated: ours, ours-heap, ours-python, baseline, hf, rustbpe, gigatoken, gigabpe, ffbpe",
    )
    parser.add_argument("--rounds", type=int, default=1, help="run every tool this many times, taking turns; medians at the end")
    parser.add_argument("--no-counts", action="store_true", help="ours: end to end only, not bpe count + train --from-counts")
    parser.add_argument("--tools-python", default=sys.executable, help="the interpreter with gigatoken and ffbpe installed")
    parser.add_argument("--pretokenize-only", action="store_true", help="time file -> counts alone, one process each")
    parser.add_argument("--pretokenizer", default="gpt2", help="ours and rustbpe: gpt2 (default), cl100k or o200k")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="the tool 'baseline': ours from another checkout (git archive REV | tar -x -C DIR; build its core there)",
    )
    args = parser.parse_args()
    PRETOKENIZER[0] = args.pretokenizer
    corpus = ensure_corpus(args.corpus or ROOT / "benchmarks" / "data" / f"corpus{args.mb}.txt", args.mb).resolve()
    print(f"# {corpus.name}: {corpus.stat().st_size / 1e6:,.1f} MB; python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    tools = args.tools.split(",")
    if args.pretokenize_only:
        pretokenize_only(corpus, args.tools_python)
        tools = []
    runs = {
        "ours": lambda: ours(corpus, args.vocab, args.workers, from_counts=not args.no_counts),
        "ours-heap": lambda: ours(corpus, args.vocab, args.workers, from_counts=not args.no_counts, algorithm="heap"),
        "ours-python": lambda: ours(corpus, args.vocab, args.workers, from_counts=not args.no_counts, compiled=False),
        "baseline": lambda: ours(corpus, args.vocab, args.workers, from_counts=not args.no_counts, at=args.baseline.resolve()),
        "hf": lambda: hf(corpus, args.vocab),
        "rustbpe": lambda: rustbpe(corpus, args.vocab),
        "gigatoken": lambda: gigatoken(corpus, args.vocab, args.tools_python),
        "gigabpe": lambda: gigabpe(corpus, args.vocab, args.tools_python),
        "ffbpe": lambda: ffbpe(corpus, args.vocab, args.tools_python),
    }
    unknown = [t for t in tools if t not in runs]
    if unknown:
        raise SystemExit(f"unknown tool(s) {', '.join(unknown)}; choose from {', '.join(runs)}")
    for _ in range(args.rounds):
        for tool in tools:
            runs[tool]()
    if args.rounds > 1:
        medians()
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
