"""What hostile inputs cost the loaders and the encoder: time and peak memory of each reproducer (issues 15 and 37).

Each case writes its files in one process, then loads them in a fresh one (so the peak resident
memory is the load's own) with a time limit, so a hang is reported as such rather than waited
for. `--bpe DIR` measures the `bpe` package in DIR instead of this checkout's (the figures
before the fixes were measured so, from `git archive 36c7dcf bpe`).

    .venv/bin/python benchmarks/hostile.py                      # every case, 60 s each at most
    .venv/bin/python benchmarks/hostile.py --bpe /tmp/old       # the same cases, another version
    .venv/bin/python benchmarks/hostile.py --only encode        # the cases whose name holds 'encode'
    .venv/bin/python benchmarks/hostile.py --only colliding     # the cases whose name holds 'colliding'
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# keys of `blocks` 8-byte blocks with one value under the core's hash before it was keyed in every block (issue 37,
# tests/test_core_hash.py): block j's top bit flipped leaves a state difference that block j + 1 cancels
COLLIDING = """
import base64, random
def colliding(count, blocks):
    rng, delta = random.Random(37), 1 << 63 | 1 << 34
    base = [rng.getrandbits(64) for _ in range(blocks)]
    keys = []
    for variant in range(count):
        words, carried = [], 0
        for j in range(blocks - 1):
            words.append(base[j] ^ carried ^ ((variant >> j & 1) << 63))
            carried = delta if variant >> j & 1 else 0
        keys.append(b"".join(w.to_bytes(8, "little") for w in words + [base[-1] ^ carried]))
    return keys
"""

GPT2 = ROOT.parent / "shared" / "gpt2"
JS = "var a=function(b){return b+1};"  # minified code: no whitespace, so one GPT-2 unit of 240,000 characters

# each case: (setup that writes files into d, the load measured: a statement that raises ValueError or returns[, environment]);
# lines before the statement's last line are run first, untimed (loading the tokenizer that then encodes)
CASES = {
    "encode 240,000 characters of minified JS, Python path (BPE_CORE=0)": (
        "",
        f"tok = bpe.Tokenizer.load({str(GPT2)!r})\ntok.encode(({JS!r} * 8000)[:240_000])",
        {"BPE_CORE": "0"},
    ),
    "encode a str of 150,000 characters holding invalid bytes (surrogateescape), Python path (BPE_CORE=0)": (
        "",
        f"tok = bpe.Tokenizer.load({str(GPT2)!r})\ntok.encode(('x' * 75_000) + chr(0xDCFF) + ('y' * 74_999))",
        {"BPE_CORE": "0"},
    ),
    "encode a str of 120,000 characters holding one invalid byte, with the core": (
        "",
        f"tok = bpe.Tokenizer.load({str(GPT2)!r})\ntok.encode(({JS!r} * 4000)[:60_000] + chr(0xDCFF) + ({JS!r} * 4000)[:59_999])",
    ),
    "encode 1.1 MB of '<|endoftext' (a special token cut short, again and again)": (
        "",
        f"tok = bpe.Tokenizer.load({str(GPT2)!r})\ntok.encode('<|endoftext' * 100_000)",
    ),
    "tiktoken file with one 30,000-byte token": (
        """
        import base64
        ranks = {bytes([b]): b for b in range(256)} | {b"aa": 256, b"a" * 30000: 257}
        (d / "r.tiktoken").write_text("".join(f"{base64.b64encode(t).decode()} {r}\\n" for t, r in ranks.items()))
        """,
        "bpe.Tokenizer.load(d / 'r.tiktoken')",
    ),
    "encode text ending in a 5,000-char special token": (
        "",
        "bpe.Tokenizer({i: bytes([i]) for i in range(256)}, [], ['a' * 5000]).encode('x' + 'a' * 4999 + 'a' * 5000)",
    ),
    "counts file of 20 M rows of one token (RLE)": (
        """
        import json, pyarrow as pa, pyarrow.parquet as pq
        rows = 20_000_000
        meta = {"pretokenizer": "gpt2", "special_tokens": [], "inputs": [], "text_bytes": 0, "pre_tokens": rows, "unique": rows}
        table = pa.table({"token": pa.array([b"a"] * rows, pa.binary()), "count": pa.array([1] * rows, pa.int64())})
        pq.write_table(table.replace_schema_metadata({b"bpe.counts": json.dumps(meta).encode()}), d / "c.parquet")
        """,
        "__import__('bpe.data.counts_file').data.counts_file.load_counts(d / 'c.parquet')",
    ),
    # issue 37: keys that had one hash under every seed before the core's hash was keyed in every block
    "tiktoken file of 27,981 colliding 128-byte tokens (4.99 MB)": (
        COLLIDING
        + textwrap.dedent(
            """
        ranks = [bytes([b]) for b in range(256)] + colliding(27981, 16)
        (d / "r.tiktoken").write_text("".join(f"{base64.b64encode(t).decode()} {r}\\n" for r, t in enumerate(ranks)))
        """
        ),
        "bpe.Tokenizer.load(d / 'r.tiktoken')",
    ),
    "counts file of 100,000 colliding 144-byte tokens (~204 KB)": (
        COLLIDING
        + textwrap.dedent(
            """
        import json, pyarrow as pa, pyarrow.parquet as pq
        tokens = colliding(100_000, 18)
        meta = {"pretokenizer": "gpt2", "special_tokens": [], "inputs": [], "text_bytes": 0, "pre_tokens": len(tokens), "unique": len(tokens)}
        table = pa.table({"token": pa.array(tokens, pa.binary()), "count": pa.array([1] * len(tokens), pa.int64())})
        pq.write_table(table.replace_schema_metadata({b"bpe.counts": json.dumps(meta).encode()}), d / "c.parquet")
        """
        ),
        "__import__('bpe.data.counts_file').counts_file.read_counts(d / 'c.parquet')",
    ),
    "truncated .zst (half the stream)": (
        """
        import zstandard
        data = zstandard.ZstdCompressor().compress(b"hello world " * 100000)
        (d / "t.txt.zst").write_bytes(data[: len(data) // 2])
        """,
        "bpe.count_inputs(d / 't.txt.zst', workers=1)",
    ),
}

MEASURE = """
import json, resource, sys, time
from pathlib import Path
import bpe
d = Path(sys.argv[1])
{prepare}
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
try:
    {call}
    outcome = "accepted"
except ValueError as e:
    outcome = "ValueError: " + str(e).replace(str(d), "DIR")[:100]
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"seconds": seconds, "grew_mb": (peak - before) / 1024, "outcome": outcome}}))
"""


def run(setup: str, call: str, package: Path, limit: float, extra: dict | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(package), **(extra or {})}
    with tempfile.TemporaryDirectory() as d:
        code = "import sys\nfrom pathlib import Path\nd = Path(sys.argv[1])\n" + textwrap.dedent(setup)
        subprocess.run([sys.executable, "-c", code, d], check=True, env=env, cwd=d)
        try:
            done = subprocess.run(
                [sys.executable, "-c", MEASURE.format(prepare="\n".join(call.splitlines()[:-1]), call=call.splitlines()[-1]), d],
                capture_output=True,
                text=True,
                timeout=limit,
                env=env,
                cwd=d,
            )
        except subprocess.TimeoutExpired:
            return {"outcome": f"still running after {limit:.0f} s (killed)"}
        if done.returncode != 0:
            return {"outcome": "crashed: " + (done.stderr.strip().splitlines() or ["?"])[-1][:120]}
        return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=60.0, help="seconds before a case counts as a hang")
    parser.add_argument("--bpe", type=Path, default=ROOT, help="the folder that holds the bpe package to measure")
    parser.add_argument("--only", default="", help="the cases whose name holds this")
    args = parser.parse_args()
    print(f"bpe from {args.bpe.resolve()}; load average {os.getloadavg()[0]:.1f}")
    for name, (setup, call, *extra) in CASES.items():
        if args.only not in name:
            continue
        r = run(setup, call, args.bpe.resolve(), args.limit, *extra)
        figures = f"{r['seconds']:.2f} s, memory +{r['grew_mb']:,.0f} MB" if "seconds" in r else ""
        print(f"{name}: {figures} -> {r['outcome']}")


if __name__ == "__main__":
    main()
