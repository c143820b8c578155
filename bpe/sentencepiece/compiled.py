"""The SentencePiece family's compiled twins (bpe/c/spm.c): whether they are here, and what they are given.

Each hot path of this package has a C twin in the core, built by setup.py, held to the Python code by property
tests (tests/test_core_sentencepiece.py, also under ASan/UBSan): the normalizer, the trainer's preparation of
the corpus and its merge loop (trainer_c.py), sentencepiece's encoder and HuggingFace's BPE. The Python code is
the readable reference and the fallback: where the core is absent (`bpe core` says why), everything runs in
Python, only slower.

What the C is given that Python computes once: a per-process random SEED for its hash tables (text made to
collide in one run does not in the next), and the script table as one byte per code point (`script_bytes`).
"""

from __future__ import annotations

import functools
import os

from .script_table import NAMES, RANGES

SEED = int.from_bytes(os.urandom(8), "little")
INHERITED = 255  # spm.c: a combining mark takes the script before it


def core():
    """The compiled core module, or None (read when called: a test may switch it off through bpe.core.core)."""
    from .. import core as package

    return package.core


@functools.cache
def script_bytes() -> bytes:
    """sentencepiece's script of every code point as one byte each (0x110000): Hiragana, Katakana and U+30FC as Han,
    Inherited as 255, every unlisted code point Common."""
    ids = {name: i for i, name in enumerate(NAMES)}
    common = len(NAMES)  # Common is not listed among the runs
    table = bytearray([common]) * 0x110000
    for first, last, name in RANGES:
        script = NAMES[name]
        value = ids["Han"] if script in ("Hiragana", "Katakana") else INHERITED if script == "Inherited" else name
        table[first : last + 1] = bytes([value]) * (last - first + 1)
    table[0x30FC] = ids["Han"]
    return bytes(table)
