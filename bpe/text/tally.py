"""Counting pre-tokens with the fastest engine that is exact: the compiled core's scanners, gigatoken, or Python.

What it does: `Tally` counts documents that arrive in pieces, each piece a document
(special tokens are cut out, no pre-token spans two pieces), and hands each to the
first engine that gives exactly the Python reference's counts (pretokenize.py):

1. the compiled core's scanner for the pre-tokenizer (pretokenize_c.py: the named
   pre-tokenizers, any bytes), where the core is built;
2. else gigatoken's Rust pre-tokenizer (gigatoken.py: GPT-2's, valid UTF-8), where
   it is installed;
3. else, and for what neither takes, the Python reference (`PythonTally`).

`counts()` adds up what each counted. `pretokenize()` is the same for text held in
memory. Which engine counted, and why the Python path counted the rest, are kept
for the CLI's summary:

    t = Tally(GPT2); t.add(["it is", "it<|s|>is"], ["<|s|>"])
    t.counts() -> {b'it': 2, b' is': 1, b'is': 1}; t.library -> 'bpe._core'

What it does not do: read files (data/inputs.py) or count in parallel (data/count.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..renamed import renamed
from . import gigatoken
from . import pretokenize_c as core
from .pretokenize import PreTokens, PythonTally, decode, sequence_bytes
from .pretokenizers import DEFAULT, ENCODING, ERRORS, PreTokenizer, check_special_tokens, pretokenizer_of, split_on_special


def compiled_path(pretokenizer: str | PreTokenizer) -> tuple[str, str | None]:
    """Which compiled engine counts this pre-tokenizer's pre-tokens: (its name, None), or ("", why none can).

    The compiled core's scanner where it is built; else gigatoken's, GPT-2's pre-tokenizer only.
    """
    pretokenizer = pretokenizer_of(pretokenizer)
    why = core.unavailable(pretokenizer)
    if why is None:
        return core.LIBRARY, None
    if gigatoken.unavailable(pretokenizer) is None:
        return gigatoken.LIBRARY, None
    if pretokenizer.gigatoken:
        return "", f"{why}; {gigatoken.unavailable(pretokenizer)}"
    return "", why


class Tally:
    """Pre-token counts of documents that arrive in pieces, by the fastest exact engine; the text is not kept."""

    def __init__(self, pretokenizer: str | PreTokenizer = DEFAULT, split_lines: bool = False, compiled: bool = True) -> None:
        self.pretokenizer = pretokenizer = pretokenizer_of(pretokenizer)
        self.split_lines = split_lines  # each line (newline kept) of a document is a document of its own
        self.python = PythonTally(pretokenizer, split_lines)
        # the engine, and why the Python path counts instead of a compiled one
        self.library, self.unavailable = compiled_path(pretokenizer) if compiled else ("", "the Python path was asked for")
        self.core = core.counter(pretokenizer) if self.library == core.LIBRARY else None
        self.fast: dict[bytes, int] = {}  # what the compiled engine counted
        self.compiled_bytes = 0
        self.python_why: set[str] = set()  # why text went to the Python path

    def add(self, documents: Iterable[str | bytes], special_tokens: Sequence[str] = ()) -> None:
        """Count documents: text, or bytes (UTF-8 or not) as read from a file."""
        if self.core is not None:
            documents = self._add_core(documents, special_tokens)
        elif self.unavailable is None:
            documents = self._add_gigatoken(documents, special_tokens)
        elif documents:
            self.python_why.add(self.unavailable)
        for document in documents:
            if isinstance(document, bytes):
                document = decode(document)
            self.python.add_parts(split_on_special(document, special_tokens) if special_tokens else (document,))

    def _add_core(self, documents: Iterable[str | bytes], special_tokens: Sequence[str]) -> list[str]:
        """Count with the compiled core; return the documents left to the Python path (a str holding a surrogate)."""
        tokens = tuple(token.encode(ENCODING) for token in special_tokens)
        rest = []
        for document in documents:
            if isinstance(document, str):
                try:
                    document = document.encode(ENCODING)
                except UnicodeEncodeError:  # surrogateescape's, from bytes decoded here; bytes are given as they are
                    rest.append(document)
                    self.python_why.add("text holding a surrogate")
                    continue
            self.core.add(document, tokens, self.split_lines)
            self.compiled_bytes += len(document)
        return rest

    def _add_gigatoken(self, documents: Iterable[str | bytes], special_tokens: Sequence[str]) -> list[str | bytes]:
        """Count with gigatoken what it counts exactly; return the documents left to the Python path."""
        encoded, rest = [], []
        for document in documents:
            if isinstance(document, str):
                try:
                    document = document.encode(ENCODING)
                except UnicodeEncodeError:  # a surrogate: bytes that were not UTF-8
                    rest.append(document)
                    self.python_why.add("not valid UTF-8")
                    continue
            encoded.append(document)
        exact = []
        for document, why in zip(encoded, gigatoken.refusals(encoded) if encoded else []):
            if why is None:
                exact.append(document)
            else:
                rest.append(document)
                self.python_why.add(why)
        if not exact:
            return rest
        data = exact[0] if len(exact) == 1 else gigatoken.SEPARATOR.join(exact)
        counted = gigatoken.count_utf8(data, special_tokens, self.split_lines, joined=len(exact) > 1)
        if self.fast:
            total, get = self.fast, self.fast.get
            for token, n in counted:
                total[token] = get(token, 0) + n
        else:
            self.fast = dict(counted)
        self.compiled_bytes += len(data) - len(exact) + 1
        return rest

    def counts(self) -> dict[bytes, int]:
        """Every engine's counts added up, as bytes, as trainers take them."""
        if self.core is not None:  # the core's counts join gigatoken's place (only one of the two counts)
            self.fast, self.core = self.core.counts(), None
        counts = self.python.counts()
        if not counts:
            return self.fast  # not copied: a tally is done with once it is counted
        get = counts.get
        for token, n in self.fast.items():
            counts[token] = get(token, 0) + n
        return counts


def _count_decoded(
    text: str | bytes, pretokenizer: PreTokenizer, special_tokens: Sequence[str], split_lines: bool = False, compiled: bool = True
) -> dict[bytes, int]:
    tally = Tally(pretokenizer, split_lines, compiled)
    tally.add([text], special_tokens)
    return tally.counts()


@renamed(pattern="pretokenizer")
def pretokenize(
    text: str | bytes,
    *,
    pretokenizer: str | PreTokenizer = DEFAULT,
    special_tokens: Sequence[str] = (),
    keep_sequence: bool = False,
    split_lines: bool = False,
    compiled: bool = True,
) -> PreTokens:
    """Pre-tokenize text held in memory (str, or bytes in any encoding state).

    With split_lines each line (newline kept) is a document: no pre-token spans a line end.
    compiled=False counts with the Python reference only, even where a compiled engine is exact.
    pattern=, the old name of pretokenizer=, is still accepted.
    """
    pretokenizer = pretokenizer_of(pretokenizer)
    check_special_tokens(special_tokens)
    if isinstance(text, bytes):
        n_bytes = len(text)
        if not keep_sequence:  # counted from the bytes: the compiled path needs no str
            return PreTokens(_count_decoded(text, pretokenizer, special_tokens, split_lines, compiled), None, n_bytes)
        text = decode(text)
    else:
        try:
            n_bytes = len(text.encode(ENCODING, ERRORS))
        except UnicodeEncodeError as e:
            raise ValueError(
                f"The text holds a lone surrogate (U+{ord(text[e.start]):04X}) at character {e.start}: "
                "it is not a character and stands for no byte, so it cannot be trained on."
            ) from None
    counts = _count_decoded(text, pretokenizer, special_tokens, split_lines, compiled)
    sequence = tuple(sequence_bytes(text, pretokenizer, special_tokens, split_lines)) if keep_sequence else None
    return PreTokens(counts, sequence, n_bytes)
