"""A batch of documents on threads: Tokenizer.encode_ordinary_batch beside gigatoken's encode_batch_list and tiktoken's
encode_ordinary_batch, each returning one list of ids per document. Figures printed, not asserted.

    python benchmarks/encode_batch.py --rounds 3 --threads 2 --encodings cl100k_base o200k_base
    python benchmarks/encode_batch.py --rounds 3 --threads 8 --lines 100000   # short texts: the first 100,000 lines

The 10 MB of prose of benchmarks/encode.py (made when missing), cut into its documents (make_corpus.py separates them
with a line of <|endoftext|>); a fresh process per tool and round, load time out, one cold batch (the caches
empty) then the best of 3 warm ones, tools alternated, medians; the ids of every document compared (sha256).
Threads: --threads for each tool (gigatoken's pool is sized by RAYON_NUM_THREADS, set to the same).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.encode import PROSE, TIKTOKEN_FILES, load_average, tiktoken_cache  # noqa: E402
from bpe.data.corpora import SEPARATOR  # noqa: E402

TOOLS = ("ours", "gigatoken", "tiktoken")


def documents(path: Path, lines: int = 0) -> list[str]:
    """The corpus's documents (make_corpus.py writes a line of <|endoftext|> between two), or its first `lines` lines."""
    text = path.read_text(encoding="utf-8")
    if lines:
        return [line for line in text.split("\n") if line and line != SEPARATOR.strip()][:lines]
    return [d for d in text.split(SEPARATOR) if d]


def child(tool: str, encoding: str, path: Path, threads: int, lines: int) -> None:
    docs = documents(path, lines)
    if tool == "ours":
        import bpe

        tok = bpe.get_encoding(encoding)
        batch = lambda: tok.encode_ordinary_batch(docs, num_threads=threads)  # noqa: E731
    elif tool == "gigatoken":
        import gigatoken

        tok = gigatoken.Tokenizer.from_tiktoken(str(TIKTOKEN_FILES / f"{encoding}.tiktoken"))
        batch = lambda: tok.encode_batch_list(docs)  # noqa: E731
    else:
        import tiktoken

        tok = tiktoken.get_encoding(encoding)
        batch = lambda: tok.encode_ordinary_batch(docs, num_threads=threads)  # noqa: E731
    start = time.perf_counter()
    ids = batch()
    cold = time.perf_counter() - start
    warm = []
    for _ in range(3):
        start = time.perf_counter()
        batch()
        warm.append(time.perf_counter() - start)
    digest = hashlib.sha256(json.dumps([list(map(int, d)) for d in ids]).encode()).hexdigest()[:12]
    print(json.dumps({"cold": cold, "warm": min(warm), "ids": digest, "documents": len(docs)}))


def main(rounds: int, threads: int, encodings: list[str], path: Path, lines: int) -> None:
    if not path.exists():
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_corpus.py"), "--mb", "10", "--out", str(path)], check=True)
    docs = documents(path, lines)
    mb = sum(len(d.encode()) for d in docs) / 1e6
    print(
        f"## {len(docs):,} {'lines' if lines else 'documents'}, {mb:.1f} MB, {threads} threads each, {rounds} rounds alternated ({load_average()})"
    )
    print(f"{'encoding':<12} {'tool':<10} {'cold s':>7} {'warm s':>7} {'warm MB/s':>9} {'ours/it':>7}  ids")
    env = {**os.environ, "RAYON_NUM_THREADS": str(threads), "TIKTOKEN_CACHE_DIR": str(tiktoken_cache()), "BPE_CACHE": "off"}
    for encoding in encodings:
        runs: dict[str, list[dict]] = {tool: [] for tool in TOOLS}
        for _ in range(rounds):
            for tool in TOOLS:
                command = [sys.executable, __file__, "--child", tool, encoding, str(path), str(threads), str(lines)]
                done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
                runs[tool].append(json.loads(done.stdout.strip().splitlines()[-1]))
        ours = statistics.median(r["warm"] for r in runs["ours"])
        for tool in TOOLS:
            cold = statistics.median(r["cold"] for r in runs[tool])
            warm = statistics.median(r["warm"] for r in runs[tool])
            same = "equal" if {r["ids"] for r in runs[tool]} == {runs["tiktoken"][0]["ids"]} else "DIFFERENT"
            print(f"{encoding:<12} {tool:<10} {cold:7.3f} {warm:7.3f} {mb / warm:9.0f} {ours / warm:6.2f}x  {same}")
    print(f"({load_average()})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--encodings", nargs="+", default=["cl100k_base", "o200k_base"])
    parser.add_argument("--file", type=Path, default=PROSE)
    parser.add_argument("--lines", type=int, default=0, metavar="N", help="the first N lines as the batch, not the documents")
    parser.add_argument("--child", nargs=5, metavar=("TOOL", "ENCODING", "FILE", "THREADS", "LINES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        tool, encoding, file, threads, lines = args.child
        child(tool, encoding, Path(file), int(threads), int(lines))
    else:
        main(args.rounds, args.threads, args.encodings, args.file, args.lines)
