"""Where gigatoken's Unicode tables and the `regex` module's class characters differently (bpe.text.gigatoken.DISAGREE).

Classes every code point (but the surrogates) as GPT-2's regex sees it, letter, number, whitespace or
other, once through `regex` and once through gigatoken's pre-tokenizer, and prints the ranges where
they differ, as the line to paste into bpe/text/gigatoken.py after upgrading either library:

    python benchmarks/unicode_tables.py        # DISAGREE = ((173790, 173791), ...)  (~1 minute)

(It was `python -m bpe.text.gigatoken`, which made runpy warn: the package imports bpe.text.gigatoken first.)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bpe.text import gigatoken  # noqa: E402


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    if gigatoken.unavailable("gpt2") is not None:
        sys.exit(f"gigatoken cannot be compared: {gigatoken.unavailable('gpt2')}")
    print(f"DISAGREE = {gigatoken.disagreements()!r}")


if __name__ == "__main__":
    main()
