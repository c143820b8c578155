"""A ladder of vocabulary sizes from one run: a tokenizer for each size, and how well each compresses held-out text.

Which vocabulary size? People train several times to answer it. One run answers it: training to the
largest size makes every smaller tokenizer on the way -- the tokenizer of size s is the largest's first
merges (s - 256 - special tokens of them), so each is a prefix of the next, exactly what training to s
alone would make. What is left to measure is compression: the bytes per token of text the training
never saw, at each size.

Held out, by default (`hold_out`): about 1 % of the inputs, spread through them -- the inputs are cut
into about PIECES pieces where counting may cut them (between JSON Lines records, at Parquet row
groups, at a safe place in text; a compressed file is one piece), and every HOLD_OUT_EVERY-th piece is
held out (every 10th, when there are fewer than 100 pieces; none when there are fewer than 10) and
never counted for training. Or text the caller names (`--held-out`). At most MAX_MEASURED bytes of it
are encoded to measure.

    sizes = ladder([8000, 16000, 32000], merges, n_special=1)        # [(8000, 7743), (16000, 15743), (32000, 31743)]
    bytes_per_token(tok, documents, [k for _, k in sizes])           # one figure per size

Not here: training (train.py) or writing the folders (the CLI: files/formats.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..data.inputs import Reading, Shard, read_shard, resolve_inputs, shards
from ..tokenizer.tokenizer import Tokenizer
from ..train import Merges

PIECES = 1000  # pieces the inputs are cut into, to hold some out
MIN_PIECE = 64 << 10  # bytes
HOLD_OUT_EVERY = 100  # one piece in this many is held out ...
HOLD_OUT_EVERY_SMALL = 10  # ... or in this many, when there are fewer than HOLD_OUT_EVERY pieces
MAX_MEASURED = 16 << 20  # bytes of held-out text encoded at each size, at most


@dataclass(frozen=True)
class HeldOut:
    """The inputs split in two: the pieces to train on, and those held out (and how, in words)."""

    kept: list[Shard]
    held: list[Shard]
    how: str  # 'every 100th of 1,003 pieces of the inputs'


def parse_sizes(text: str) -> list[int]:
    """'8000,16000,32000' -> [8000, 16000, 32000] (sorted, each once); ValueError in one sentence for anything else."""
    try:
        sizes = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise ValueError(f"--vocab-size takes a whole number or several joined by commas (8000,16000,32000), not {text!r}.") from None
    if not sizes:
        raise ValueError("--vocab-size takes a whole number or several joined by commas (8000,16000,32000).")
    return sizes


def hold_out(paths, reading: Reading) -> HeldOut:
    """Cut the inputs into about PIECES pieces and hold out one in HOLD_OUT_EVERY (see the module's docstring)."""
    inputs = resolve_inputs(paths)
    total = sum(source.size for source in inputs)
    options = replace(reading, chunk_bytes=max(MIN_PIECE, total // PIECES + 1))
    pieces = [piece for source in inputs for piece in shards(source, options)]
    every = HOLD_OUT_EVERY if len(pieces) >= HOLD_OUT_EVERY else HOLD_OUT_EVERY_SMALL
    if len(pieces) < HOLD_OUT_EVERY_SMALL:
        return HeldOut(pieces, [], f"nothing: the inputs make {len(pieces)} piece(s), fewer than {HOLD_OUT_EVERY_SMALL}")
    held = [piece for i, piece in enumerate(pieces) if i % every == every // 2]
    kept = [piece for i, piece in enumerate(pieces) if i % every != every // 2]
    return HeldOut(
        kept, held, f"every {every}th of {len(pieces):,} pieces of the inputs ({len(held):,} pieces), never counted for training"
    )


def held_out_documents(pieces: Sequence[Shard], reading: Reading, limit: int = MAX_MEASURED) -> tuple[list[str], int]:
    """The held-out pieces' documents (text), up to about limit bytes, and their bytes."""
    documents, size = [], 0
    for piece in pieces:
        for batch in read_shard(piece, reading):
            documents += batch.documents
            size += batch.text_bytes
        if size >= limit:
            break
    return documents, size


def ladder(sizes: Sequence[int], merges: Merges, n_special: int, *, distinct: bool = False) -> list[tuple[int, int]]:
    """(size, merges of the run it takes) for each size: the run's first merges that make size tokens with the special ones.

    distinct: a merge whose bytes are a token already makes none (the huggingface rule). A size past the run's end
    (it stopped early) takes every merge.
    """
    made, tokens, known = [], 256 + n_special, set() if distinct else None
    for merge in merges:  # the vocabulary's size after each merge
        if known is not None:
            if merge[0] + merge[1] in known:
                made.append(tokens)
                continue
            known.add(merge[0] + merge[1])
        tokens += 1
        made.append(tokens)
    out = []
    for size in sizes:
        k = next((i + 1 for i, n in enumerate(made) if n >= size), len(merges)) if size > 256 + n_special else 0
        out.append((size, k))
    return out


def bytes_per_token(tok: Tokenizer, documents: Sequence[str], ks: Sequence[int]) -> list[tuple[int, float]]:
    """(tokens, bytes per token) of the documents encoded with the first k merges, for each k; special tokens are special."""
    size = sum(len(d.encode("utf-8", "surrogateescape")) for d in documents)
    out = []
    for k in ks:
        tokens = sum(len(tok.encode(d, k, allowed_special="all", disallowed_special=())) for d in documents)
        out.append((tokens, size / tokens if tokens else 0.0))
    return out
