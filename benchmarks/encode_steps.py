"""Encoding step by step with OpenAI's cl100k_base and o200k_base, and loading them. Figures printed, not asserted.

    python benchmarks/encode_steps.py

load:  seconds for Tokenizer.load of each rank file (parse, recover the merges from the ranks, index),
       the cost the app pays once per server.
steps: Tokenizer.encode_steps on 30-byte pre-tokens with o200k_base (target <= 5 ms), next to
       Tokenizer.bpe on the same piece with nothing cached (the encoder without the steps).
       Best of 20 runs each; the first call of encode_steps also builds made_by (measured apart).

Needs ../shared/tiktoken (the rank files).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import best_of  # noqa: E402  (benchmarks/ is on the path when this runs as a script)

from bpe import Tokenizer  # noqa: E402

FILES = ROOT.parent / "shared" / "tiktoken"
# 30-byte pre-tokens of o200k: a long English word, a German compound, Japanese, a run of spaces, digits' worst
PIECES = [
    " antidisestablishmentarianisms",
    " Donaudampfschifffahrtsgesells",
    "東京特許許可局長今日",
    " " * 30,
    "supercalifragilisticexpialidoc",
]


def main() -> None:
    if not (FILES / "o200k_base.tiktoken").is_file():
        sys.exit(f"{FILES} is missing: the benchmark needs OpenAI's rank files")
    tokenizers = {}
    print("load (Tokenizer.load, once per server):")
    for name in ("cl100k_base", "o200k_base"):
        t = time.perf_counter()
        tokenizers[name] = Tokenizer.load(FILES / f"{name}.tiktoken")
        print(
            f"  {name}: {time.perf_counter() - t:.2f} s, {len(tokenizers[name].merges):,} merges, pattern {tokenizers[name].pretokenizer}"
        )
    tok = tokenizers["o200k_base"]
    t = time.perf_counter()
    tok.made_by  # noqa: B018  (built on first use: the ancestry and the steps share it)
    print(f"  o200k_base made_by index, first use: {(time.perf_counter() - t) * 1e3:.0f} ms")
    print("steps (o200k_base, best of 20):")
    for piece in PIECES:
        data = piece.encode()
        assert len(data) == 30, (piece, len(data))
        steps = best_of(20, lambda data=data: tok.encode_steps(data))
        plain = best_of(20, lambda data=data: tok._python.merge(tok._python.start(data), len(tok.merges)))
        n = len(tok.encode_steps(data)) - 1
        print(f"  {piece!r:34} {n:2d} steps  encode_steps {steps * 1e3:6.3f} ms   bpe (uncached) {plain * 1e3:6.3f} ms")


if __name__ == "__main__":
    main()
