"""Saving a trained tokenizer in the formats other tools load.

GPT-2 format: vocab.json maps each token, written through the byte-to-unicode
table, to its id; merges.txt lists the merges in order, one 'left right' per line.
Special tokens are stored as their own text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from .gpt2_bytes import to_unicode

Vocab = dict[int, bytes]
Merges = list[tuple[bytes, bytes]]


def gpt2_vocab_json(vocab: Vocab, special_tokens: Sequence[str] = ()) -> str:
    specials = {t.encode("utf-8") for t in special_tokens}
    table = {}
    for i, token in sorted(vocab.items()):
        # subtle: two merges can make the same bytes; JSON keeps the first id
        key = token.decode("utf-8") if token in specials else to_unicode(token)
        table.setdefault(key, i)
    return json.dumps(table, ensure_ascii=False, indent=1)


def gpt2_merges_txt(merges: Merges) -> str:
    lines = ["#version: 0.2"] + [f"{to_unicode(a)} {to_unicode(b)}" for a, b in merges]
    return "\n".join(lines) + "\n"


def save_gpt2(directory: str | Path, vocab: Vocab, merges: Merges, special_tokens: Sequence[str] = ()) -> list[Path]:
    """Write directory/vocab.json and directory/merges.txt; return their paths."""
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} exists and is not a directory.")
    out.mkdir(parents=True, exist_ok=True)
    vocab_path, merges_path = out / "vocab.json", out / "merges.txt"
    vocab_path.write_text(gpt2_vocab_json(vocab, special_tokens), encoding="utf-8")
    merges_path.write_text(gpt2_merges_txt(merges), encoding="utf-8")
    return [vocab_path, merges_path]
