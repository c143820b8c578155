"""Where gigatoken's Unicode tables and the `regex` module's class characters differently (bpe.compiled.DISAGREE).

Classes every code point (but the surrogates) as GPT-2's regex sees it, letter, number, whitespace or
other, once through `regex` and once through gigatoken's pre-tokenizer, and prints the ranges where
they differ, as the line to paste into bpe/compiled.py after upgrading either library:

    python benchmarks/unicode_tables.py        # DISAGREE = ((173790, 173791), ...)  (~1 minute)

(It was `python -m bpe.compiled`, which made runpy warn: the package imports bpe.compiled first.)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bpe import compiled  # noqa: E402


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    if compiled.unavailable("gpt2") is not None:
        sys.exit(f"gigatoken cannot be compared: {compiled.unavailable('gpt2')}")
    print(f"DISAGREE = {compiled.disagreements()!r}")


if __name__ == "__main__":
    main()
