"""The named pre-tokenizers, compiled: the same pre-tokens as pretokenize.py's regexes, from C.

What it does: GPT-2's, GPT-4's (cl100k), GPT-4o's (o200k) regexes, `whitespace` and `none`
are written out in C (bpe/c/pretokenize.c), one scanner each that backtracks exactly as the
`regex` module does, over character classes taken from `regex` itself (bpe/text/unicode_classes.py
writes them into bpe/c/unicode_classes.h). It splits bytes, not str: a byte that is not valid
UTF-8 is a character of no class, as the lone surrogate the Python path decodes it to
(surrogateescape), so any bytes at all give the Python path's pre-tokens.
tests/test_core_pretokenize.py holds the two to identical pre-tokens and counts on text over all
of Unicode, on invalid UTF-8 and on real corpora.

When it is not used (`unavailable` says why): the compiled core is absent (bpe/core/ says
why: not built, BPE_CORE=0...); BPE_COMPILED=0 asks for the Python pre-tokenizers; the installed
`regex` is not the version the tables were made from (another version may class new characters
differently); a pre-tokenizer without a scanner (a regex of the user's: Python runs it). Then
pretokenize.py counts, or gigatoken (gigatoken.py) for GPT-2's (tally.py chooses).

Not here: merging (encode_c.py), reading files (inputs.py).

    pretokens(b"Hello world<|e|>!", O200K, [b"<|e|>"])  # -> [b'Hello', b' world', b'<|e|>', b'!']
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import regex

from .pretokenizers import PreTokenizer, pretokenizer_of

LIBRARY = "bpe._core"  # how the CLI's summary names it: 'counted by bpe._core (compiled)'
# the key of each hash table the core builds, one per process: text made to collide in one run does not in the next
SEED = int.from_bytes(os.urandom(8), "little")


def loaded():
    """(the compiled core module or None, why it is absent), read when called: a test may switch it off (bpe.core.core)."""
    from ..core import core, missing

    return core, missing


def kind(pretokenizer: str | PreTokenizer) -> int | None:
    """The core's number for the pre-tokenizer's scanner; None where it has none or the core is absent."""
    core, _ = loaded()
    scanner = pretokenizer_of(pretokenizer).scanner
    return None if core is None or scanner is None else core.KINDS.get(scanner)


def unavailable(pretokenizer: str | PreTokenizer) -> str | None:
    """Why the compiled scanner cannot split for this pre-tokenizer, in a few words; None when it can."""
    core, missing = loaded()
    if core is None:
        return f"the compiled core is absent ({missing})"
    if os.environ.get("BPE_COMPILED", "1") == "0":
        return "BPE_COMPILED=0 is set"
    if regex.__version__ != core.REGEX_VERSION:
        return (
            f"regex {regex.__version__} is installed, and the compiled pre-tokenizer's Unicode tables were made from "
            f"regex {core.REGEX_VERSION} (python -m bpe.text.unicode_classes remakes them)"
        )
    if kind(pretokenizer) is None:
        name = pretokenizer_of(pretokenizer).name
        return "a regex of your own runs in Python" if name == "regex" else f"the {name} pre-tokenizer has no compiled scanner"
    return None


def counter(pretokenizer: str | PreTokenizer):
    """A PreTokenCounter for the pre-tokenizer: .add(data, special_tokens, split_lines), .counts(); the caller checked unavailable()."""
    return loaded()[0].PreTokenCounter(kind(pretokenizer), SEED)


def pretokens(data: bytes, pretokenizer: str | PreTokenizer, special_tokens: Sequence[bytes] = ()) -> list[bytes]:
    """The pre-tokens of bytes in order, special tokens kept whole: Tokenizer.pre_tokens; the caller checked unavailable()."""
    return loaded()[0].pretokens(data, kind(pretokenizer), tuple(special_tokens))
