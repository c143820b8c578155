"""Encoding a dataset into an array of ids: `bpe encode ... --out ids.npy` against a tiktoken script and gigatoken, and `bpe decode`.

    python benchmarks/encode_files.py --corpus benchmarks/data/corpus48.txt            # encode (A/B, 3 rounds) and decode
    python benchmarks/encode_files.py --corpus benchmarks/data/corpus1000.txt --only flat --rounds 1

encode: GPT-2's tokenizer (../shared/gpt2), 2 workers, the corpus (documents separated by <|endoftext|>,
        as make_corpus.py writes them) -> ids.npy, next to the script a tiktoken user writes (below: split
        at <|endoftext|>, encode_ordinary_batch with 2 threads, each document followed by eot, np.save as
        uint16), and gigatoken's Tokenizer.encode_files (its output made one array), run alternately (A/B/C,
        medians); the arrays must be identical. Prints wall time, MB/s,
        and each process's peak resident memory (ours: the main process and the largest worker).
decode: `bpe decode --file ids.npy --out text.txt`: MB/s of text and peak memory; the text must be the corpus.
flat:   the same encode and decode, for a second size of input (--corpus2, e.g. the corpus twice): the
        peaks must not grow with the input.

Each run is a fresh process (`python -m bpe ...`, `python -c SCRIPT`); `uptime`'s load is printed with
every figure: on a shared machine take the medians and say the load.
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
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/"

TIKTOKEN_SCRIPT = """
import sys, numpy as np, tiktoken
enc = tiktoken.get_encoding("gpt2")
text = open(sys.argv[1], encoding="utf-8").read()
documents = text.split("<|endoftext|>")
ids = []
for doc in enc.encode_ordinary_batch(documents, num_threads=2):
    ids += doc
    ids.append(enc.eot_token)
np.save(sys.argv[2], np.array(ids, dtype=np.uint16))
"""


# gigatoken's own file encoding (Tokenizer.encode_files, its threads), its output made one array as ours is; GPT-2's
# ranks are r50k_base's, which gigatoken knows by the file's name. It reads the file as one document, special tokens
# as special, so its ids are ours without the eot we put after the document's end.
GIGATOKEN_SCRIPT = """
import base64, sys, tempfile
from pathlib import Path
import awkward as ak, gigatoken, numpy as np, tiktoken
ranks = tiktoken.get_encoding("gpt2")._mergeable_ranks
path = Path(tempfile.mkdtemp()) / "r50k_base.tiktoken"
path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\\n" for t, r in ranks.items()))
tok = gigatoken.Tokenizer.from_tiktoken(str(path))
np.save(sys.argv[2], ak.to_numpy(ak.flatten(tok.encode_files(sys.argv[1]))).astype(np.uint16))
"""


def load() -> str:
    return os.getloadavg().__repr__()


# Each command runs under this wrapper, which writes the process's own peak (VmHWM) to a file as it exits.
# subtle: not wait4's ru_maxrss, which on Linux also holds the parent's size at the fork before exec (this
# benchmark holds the arrays it compares: every child would seem as big).
WRAP = """
import atexit, runpy, sys
out, target, *args = sys.argv[1:]
def peak():
    with open(out, "w") as f:
        f.write(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM")))
atexit.register(peak)
sys.argv = [target, *args]
runpy.run_module(target, run_name="__main__") if not target.endswith(".py") else runpy.run_path(target, run_name="__main__")
"""


def peak_of(argv: list[str], env: dict | None = None) -> tuple[float, int, str]:
    """Run `python -m MODULE ARGS` (argv[0] the module) or a script: wall seconds, the process's own peak (VmHWM, bytes), stdout."""
    with tempfile.NamedTemporaryFile(suffix=".peak") as mark:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", WRAP, mark.name, *argv], cwd=ROOT, capture_output=True, env=env)
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-2000:]}")
        return seconds, int(Path(mark.name).read_text() or 0) * 1024, done.stdout.decode()


def digest(path: Path, tail: bytes = b"") -> str:
    """sha256 of a file's bytes (and tail after them), read a block at a time."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 24):
            h.update(block)
    h.update(tail)
    return h.hexdigest()


def tiktoken_env(folder: Path) -> dict:
    import hashlib
    import shutil

    cache = folder / "tiktoken-cache"
    cache.mkdir(exist_ok=True)
    for name in ("vocab.bpe", "encoder.json"):
        shutil.copy(GPT2 / name, cache / hashlib.sha1((TIKTOKEN_URL + name).encode()).hexdigest())
    return os.environ | {"TIKTOKEN_CACHE_DIR": str(cache)}


def ours(corpus: Path, out: Path, workers: int) -> tuple[float, int, int, str]:
    """bpe encode: wall seconds, the main process's peak, the largest worker's peak (from its summary), the summary."""
    argv = ["bpe", "encode", str(GPT2), str(corpus), "--out", str(out), "--workers", str(workers)]
    seconds, peak, summary = peak_of(argv, os.environ | {"PYTHONPATH": str(ROOT)})
    found = re.search(r"(\d+) workers each at most ([\d,.]+) MB", summary)
    worker = int(float(found.group(2).replace(",", "")) * 1e6) if found else 0
    return seconds, peak, worker, summary


def theirs(corpus: Path, out: Path, env: dict) -> tuple[float, int]:
    script = out.parent / "tiktoken_script.py"
    script.write_text(TIKTOKEN_SCRIPT)
    seconds, peak, _ = peak_of([str(script), str(corpus), str(out)], env)
    return seconds, peak


def gigatoken(corpus: Path, out: Path, env: dict) -> tuple[float, int]:
    script = out.parent / "gigatoken_script.py"
    script.write_text(GIGATOKEN_SCRIPT)
    seconds, peak, _ = peak_of([str(script), str(corpus), str(out)], env)
    return seconds, peak


def encode_section(corpus: Path, folder: Path, rounds: int, workers: int) -> Path:
    import numpy as np

    env = tiktoken_env(folder)
    size = corpus.stat().st_size / 1e6
    a, b, c = [], [], []
    for n in range(rounds):  # A/B/C alternated, so a busy moment hits all
        s, main, worker, summary = ours(corpus, folder / "ours.npy", workers)
        a.append(s)
        print(
            f"round {n + 1}: bpe encode {s:.2f} s ({size / s:.1f} MB/s), main {main / 1e6:.0f} MB, worker {worker / 1e6:.0f} MB; load {load()}"
        )
        t, peak = theirs(corpus, folder / "theirs.npy", env)
        b.append(t)
        print(f"round {n + 1}: tiktoken script {t:.2f} s ({size / t:.1f} MB/s), {peak / 1e6:.0f} MB; load {load()}")
        g, peak = gigatoken(corpus, folder / "giga.npy", env)
        c.append(g)
        print(f"round {n + 1}: gigatoken encode_files {g:.2f} s ({size / g:.1f} MB/s), {peak / 1e6:.0f} MB; load {load()}")
    print(summary.strip())
    same = np.array_equal(np.load(folder / "ours.npy"), np.load(folder / "theirs.npy"))
    giga = np.load(folder / "giga.npy")
    same_giga = np.array_equal(np.load(folder / "ours.npy"), np.append(giga, np.uint16(50256)))  # ours ends the document with eot
    ours_s, tiktoken_s, giga_s = (statistics.median(x) for x in (a, b, c))
    print(
        f"median: ours {ours_s:.2f} s, tiktoken {tiktoken_s:.2f} s, gigatoken {giga_s:.2f} s: "
        f"ours/tiktoken {ours_s / tiktoken_s:.2f}x, ours/gigatoken {ours_s / giga_s:.2f}x"
    )
    print(
        f"ids identical: tiktoken's {same}, gigatoken's (and the eot) {same_giga} ({len(np.load(folder / 'ours.npy', mmap_mode='r')):,} ids)"
    )
    return folder / "ours.npy"


def decode_section(corpus: Path, ids: Path, folder: Path) -> None:
    argv = ["bpe", "decode", str(GPT2), "--file", str(ids), "--out", str(folder / "text.txt")]
    seconds, peak, _ = peak_of(argv, os.environ | {"PYTHONPATH": str(ROOT)})
    size = (folder / "text.txt").stat().st_size / 1e6
    # the decoded text is the corpus with an <|endoftext|> after it (the document's end)
    same = digest(folder / "text.txt") == digest(corpus, b"<|endoftext|>")
    print(
        f"bpe decode: {size:.1f} MB of text in {seconds:.2f} s ({size / seconds:.0f} MB/s, process start included), peak {peak / 1e6:.0f} MB; the corpus back: {same}; load {load()}"
    )
    # the stream alone (read a block of ids, decode it, write it), after the tokenizer is loaded: what grows with the input
    sys.path.insert(0, str(ROOT))
    from bpe import Tokenizer
    from bpe.files.ids import Decoder, read_ids

    decoder = Decoder(Tokenizer.load(GPT2).vocab)
    start, cpu = time.perf_counter(), time.process_time()
    with open(folder / "stream.txt", "wb") as out:
        for block in read_ids(ids):
            out.write(decoder.decode(block))
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(
        f"  the stream alone: {size / seconds:.0f} MB/s ({seconds:.2f} s; {cpu:.2f} s of processor: {size / cpu:.0f} MB/s); load {load()}"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--corpus", type=Path, required=True, help="a text file of documents separated by <|endoftext|> (make_corpus.py)")
    p.add_argument("--corpus2", type=Path, default=None, help="for --only flat: a second, bigger input")
    p.add_argument("--only", choices=["encode", "decode", "flat"], default=None)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    if not (GPT2 / "encoder.json").is_file():
        raise SystemExit(f"needs GPT-2's files in {GPT2}")
    with tempfile.TemporaryDirectory(prefix="encode-files-") as tmp:
        folder = Path(tmp)
        print(f"{args.corpus} ({args.corpus.stat().st_size / 1e6:.1f} MB), {args.workers} workers; load {load()}")
        if args.only in (None, "encode", "decode"):
            ids = encode_section(args.corpus, folder, args.rounds if args.only != "decode" else 1, args.workers)
            if args.only in (None, "decode"):
                decode_section(args.corpus, ids, folder)
        if args.only == "flat":
            for corpus in filter(None, (args.corpus, args.corpus2)):
                s, main, worker, _ = ours(corpus, folder / "flat.npy", args.workers)
                print(
                    f"{corpus.name} ({corpus.stat().st_size / 1e6:,.0f} MB): bpe encode {s:.1f} s, main {main / 1e6:.0f} MB, worker {worker / 1e6:.0f} MB; load {load()}"
                )
                decode_section(corpus, folder / "flat.npy", folder)


if __name__ == "__main__":
    main()
