"""Encoding speed with GPT-2's 50,000 merges, next to tiktoken on the same text. Figures printed, not asserted.

    python benchmarks/encode.py                   # everything
    python benchmarks/encode.py --only speed      # one section: speed, stream

speed:  MB/s of Tokenizer.encode on English prose (the standard library's docstrings, 2 MB,
        and the CS336 corpus.en) -- cold (a fresh tokenizer, nothing cached) and warm (the same
        text again) -- and of tiktoken's gpt2 encoding (Rust, one thread) on the same text.
stream: encode_iterable over a 50 MB file, line by line: MB/s and the peak memory of the process.

Needs ../shared/gpt2 (GPT-2's encoder.json and vocab.bpe); tiktoken is given the same files offline.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import best_of  # noqa: E402  (benchmarks/ is on the path when this runs as a script)

from bpe import Tokenizer  # noqa: E402
from bpe.corpora import stdlib_prose  # noqa: E402

SHARED = ROOT.parent / "shared"
GPT2 = SHARED / "gpt2"
EOT = "<|endoftext|>"
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/"


def gpt2() -> Tokenizer:
    return Tokenizer.from_files(GPT2 / "encoder.json", GPT2 / "vocab.bpe", [EOT])


def tiktoken_gpt2():
    """tiktoken's gpt2 encoding from GPT-2's files, offline; None when tiktoken is not installed."""
    try:
        import tiktoken
    except ImportError:
        return None
    cache = Path(tempfile.mkdtemp(prefix="tiktoken-"))
    for name in ("vocab.bpe", "encoder.json"):
        shutil.copy(GPT2 / name, cache / hashlib.sha1((TIKTOKEN_URL + name).encode()).hexdigest())
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    return tiktoken.get_encoding("gpt2")


def cold_run(text: str) -> float:
    """Seconds to encode text with a freshly loaded tokenizer: every unique word is merged for the first time."""
    tok = gpt2()
    t = time.perf_counter()
    tok.encode(text)
    return time.perf_counter() - t


def speed() -> None:
    texts = {"stdlib prose 2 MB": stdlib_prose(2_000_000)}
    if (SHARED / "cs336" / "corpus.en").exists():
        texts["corpus.en"] = (SHARED / "cs336" / "corpus.en").read_text(encoding="utf-8")
    t = time.perf_counter()
    gpt2()
    print(f"## loading GPT-2's files: {time.perf_counter() - t:.2f} s")
    enc = tiktoken_gpt2()
    print("## encode MB/s, GPT-2's 50k merges (best of 3)")
    print(f"{'text':<20} {'MB':>5} {'ours cold':>10} {'ours warm':>10} {'tiktoken':>9}  same ids")
    for name, text in texts.items():
        mb = len(text.encode()) / 1e6
        cold = min(cold_run(text) for _ in range(3))
        tok = gpt2()
        ids = tok.encode(text)
        warm = best_of(3, lambda tok=tok, text=text: tok.encode(text))
        theirs = best_of(3, lambda text=text: enc.encode(text, allowed_special="all")) if enc else float("nan")
        same = ids == enc.encode(text, allowed_special="all") if enc else "no tiktoken"
        print(f"{name:<20} {mb:5.2f} {mb / cold:10.2f} {mb / warm:10.2f} {mb / theirs:9.2f}  {same}")


def peak_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024


def stream(mb: int = 50) -> None:
    tok = gpt2()
    block = (stdlib_prose(2_000_000) + "\n").encode()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.txt"
        path.write_bytes(block * (mb * 1_000_000 // len(block) + 1))
        size = path.stat().st_size / 1e6
        before = peak_mb()
        t = time.perf_counter()
        with open(path, encoding="utf-8") as f:
            n = sum(1 for _ in tok.encode_iterable(f))
        seconds = time.perf_counter() - t
        print(f"## encode_iterable over {size:.0f} MB, line by line: {seconds:.1f} s ({size / seconds:.1f} MB/s), {n:,} ids")
        print(
            f"peak memory: {before:.0f} MB before, {peak_mb():.0f} MB after (the ids of the whole file, kept, would be ~{n * 36 / 1e6:.0f} MB)"
        )


SECTIONS = {"speed": speed, "stream": stream}

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=list(SECTIONS), action="append")
    args = parser.parse_args()
    if not (GPT2 / "encoder.json").exists():
        sys.exit("../shared/gpt2 not found: this benchmark needs GPT-2's encoder.json and vocab.bpe")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    for name in args.only or list(SECTIONS):
        SECTIONS[name]()
