"""encoder.py compiled: the same ids as the readable Encoder, from C.

What it does: build the core's Encoder (bpe/c/encode.c) for a tokenizer, which does in one call
what encoder.py's Encoder does in Python -- cut out the special tokens, pre-tokenize with the
compiled scanner (pretokenize_c.py), merge each pre-token by rank in exactly the Python path's
rounds, and cache each unique pre-token's ids. tests/test_core_encoder.py holds it to the
Python path's ids for every tokenizer the project loads (GPT-2, OpenAI's rank files, HuggingFace,
ours), with and without special tokens, with the first k merges, on text over all of Unicode and
invalid UTF-8.

Where the Python path encodes instead (tokenizer.py decides, text by text): the compiled core is
absent (bpe/core/ says why); a pre-tokenizer without a scanner (a regex of the user's), or a
`regex` other than the one the compiled tables were made from (Python pre-tokenizes, and the core
still merges each pre-token); a str holding a lone surrogate that stands for no byte; a byte the
vocabulary lacks (the Python path raises its sentence).

Not here: encode_steps (steps.py replays the Python encoder's rounds), checking a vocabulary (tokenizer.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..text import pretokenize_c
from ..text.pretokenizers import PreTokenizer


def index_vocab(vocab: object, merges: object) -> tuple[dict, list, dict] | None:
    """(vocab, merges, ids) as the Tokenizer constructor checks and builds them, by the core; None without it, or
    where the Python checks must run (anything but a dict of ints to bytes and a list of pairs of bytes; a bad one)."""
    core, _ = pretokenize_c.loaded()
    return None if core is None else core.index_vocab(vocab, merges)


def encoder(ids: Mapping[bytes, int], merges: Sequence[tuple[bytes, bytes]], pretokenizer: PreTokenizer):
    """The core's Encoder for a tokenizer (ids: bytes -> id, merges in rank order), or None without the core.

    Its `kind` is -1 when its encode() cannot pre-tokenize for this pre-tokenizer (then merge() serves each pre-token).
    """
    core, _ = pretokenize_c.loaded()
    if core is None:
        return None
    kind = -1 if pretokenize_c.unavailable(pretokenizer) else pretokenize_c.kind(pretokenizer)
    return core.Encoder(ids, merges if isinstance(merges, list) else list(merges), kind, pretokenize_c.SEED)
