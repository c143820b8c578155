"""The pre-tokenizers: how text is cut into pre-tokens before any merge, each one a registered, frozen value.

What it does: name the pre-tokenizers (gpt2, cl100k alias gpt4, o200k, whitespace,
none) as `PreTokenizer` values that say everything the rest of the code must know
about one -- its regex (or none), whether the text between matches is kept, whether
streaming may cut text at a space, its compiled scanner, its HuggingFace form, the
sentence the app and the CLI show -- and resolve what a user gives (a name, an
alias or any regex) to one, once, each refusal one sentence:

    pretokenizer_of("gpt4").name == "cl100k"; pretokenizer_of("none").regex is None
    pretokenizer_of(r"\\w+|\\W")  # a regex of the user's: name 'regex', the text between matches kept
    pretokenizer_of("cl100k").split("Hello  world") -> ['Hello', ' ', ' world']

A new pre-tokenizer is one `register(PreTokenizer(...))` call: training, encoding,
counting, saving and loading all go through the value. Special tokens are found
here too (`split_on_special`, `find_specials`), since they cut text before any
pre-tokenizer sees it.

What it does not do: count pre-tokens (pretokenize.py is the Python reference,
pretokenize_c.py the compiled scanners; both build on this file) or merge anything.

Text and bytes meet here too: ENCODING and ERRORS say how a text's bytes are read
(invalid UTF-8 is kept, each byte as a lone surrogate, and comes back unchanged).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import regex

ENCODING = "utf-8"  # how text and bytes are read and written
ERRORS = "surrogateescape"  # invalid bytes become lone surrogates and come back unchanged


@dataclass(frozen=True)
class PreTokenizer:
    """One way of cutting text into pre-tokens, and what the rest of the code must know about it.

    Frozen and hashable (a TrainSpec holds one), and pickled by value for worker processes.
    """

    name: str  # how it is named everywhere (the CLI, URLs, files); 'regex' for a regex of the user's
    regex: str | None  # its matches are the pre-tokens, in order; None: a document (text between special tokens) is one
    help: str = ""  # what the app and the CLI say about it
    # the text between two matches is a pre-token of its own (HuggingFace's Split 'isolated'), so no byte is lost;
    # False drops it (the textbook whitespace split: not lossless)
    keeps_gaps: bool = True
    # the regex matches every character, so nothing is ever between matches (GPT-2's, GPT-4's, GPT-4o's)
    complete: bool = False
    # no pre-token spans a letter or digit followed by whitespace, and none looks across it: a stream may be cut there
    cut_at_space: bool = False
    aliases: tuple[str, ...] = ()  # older names that keep working ('gpt4')
    scanner: str | None = None  # the compiled core's scanner that splits exactly as the regex (bpe/c/pretokenize.c)
    # no pre-token crosses a GPT-2 unit (a word with the whitespace before it: pretokenize._UNITS), so the Python path
    # counts units and splits each unique one once (GPT-2's regex only: pretokenize.py says why)
    units: bool = False
    gigatoken: bool = False  # gigatoken's Rust pre-tokenizer splits exactly as this one (GPT-2's regex)
    byte_level: bool = False  # HuggingFace's ByteLevel pre-tokenizer, with its own regex, splits as this one (GPT-2's)

    @property
    def spelled(self) -> str:
        """How it is written in files, links and options: its name, or for a regex of the user's the regex itself."""
        return self.regex if self.name == "regex" else self.name

    @property
    def lossless(self) -> bool:
        """Every byte of the text is in some pre-token: decode(encode(text)) == text."""
        return self.regex is None or self.keeps_gaps or self.complete

    def split(self, text: str) -> list[str]:
        """The pre-tokens of a piece of text without special tokens, in order: 'a b' -> ['a', ' b'] with gpt2."""
        if self.regex is None:
            return [text] if text else []
        return _finder(self.regex, self.keeps_gaps and not self.complete)(text)

    def hf(self) -> dict:
        """HuggingFace's pre_tokenizer JSON for it (tokenizer.json), which loads back to this pre-tokenizer.

        GPT-2's: ByteLevel with its own regex. No regex: ByteLevel alone. Any other: a Split by the regex,
        then ByteLevel without its regex -- the Split keeps only the matches where nothing is between them or
        the text between them is dropped ('Removed', inverted), and keeps that text as pieces of its own
        otherwise ('Isolated'). Limits: HuggingFace runs the regex with Oniguruma, not Python's `regex`; on the
        text we test they agree, but Unicode tables of different versions can disagree on new characters.
        """
        byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": self.byte_level}
        if self.byte_level or self.regex is None:
            return byte_level
        if self.keeps_gaps and not self.complete:
            split = {"type": "Split", "pattern": {"Regex": self.regex}, "behavior": "Isolated", "invert": False}
        else:
            split = {"type": "Split", "pattern": {"Regex": self.regex}, "behavior": "Removed", "invert": True}
        return {"type": "Sequence", "pretokenizers": [split, byte_level]}

    def tiktoken_regex(self) -> str:
        """tiktoken's pat_str for it: tiktoken drops the text its regex does not match, so that text is matched too.

        No regex: the whole text between special tokens. A regex R that leaves gaps: 'R, or else a stretch of
        text where R does not start' (HuggingFace's isolated split).
        """
        if self.regex is None:
            return r"(?s:.+)"
        if self.complete or not self.keeps_gaps:
            return self.regex
        return f"(?:{self.regex})|(?s:(?:(?!(?:{self.regex})).)+)"


@lru_cache(maxsize=64)  # the named ones, and a few regexes typed by users
def _finder(pattern: str, with_gaps: bool) -> Callable[[str], list[str]]:
    """A function giving a regex's whole matches (even when it has groups), and with_gaps the text between them."""
    compiled = regex.compile(pattern)
    matches = compiled.findall if compiled.groups == 0 else lambda text: [m.group() for m in compiled.finditer(text)]
    return _with_gaps(compiled, matches) if with_gaps else matches


def _with_gaps(compiled: regex.Pattern, matches: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """A finder that keeps the text a regex leaves between its matches, each stretch a pre-token of its own.

    With r'\\w+': 'the cat.' -> ['the', ' ', 'cat', '.'], where findall gives ['the', 'cat'].
    This is HuggingFace's Split(pattern, behavior='isolated'); tiktoken drops that text,
    and so would we, silently: no byte of the input may be lost. Empty matches (a regex
    like 'a*(?=b)' can make them) are dropped: they hold no byte.
    """

    def finder(text: str) -> list[str]:
        tokens = matches(text)
        if sum(map(len, tokens)) == len(text) and "" not in tokens:
            return tokens  # the matches cover the text: at findall's speed
        out, pos = [], 0
        for m in compiled.finditer(text):
            start, end = m.span()
            if start > pos:
                out.append(text[pos:start])
            if end > start:
                out.append(m.group())
            pos = end
        if pos < len(text):
            out.append(text[pos:])
        return out

    return finder


# ---------------------------------------------------------------------------
# the registry

_REGISTERED: dict[str, PreTokenizer] = {}
_ALIASES: dict[str, str] = {}


def register(pretokenizer: PreTokenizer) -> PreTokenizer:
    """Make a pre-tokenizer known by its name (and aliases) to every layer: the CLI, the app, training, files."""
    if not _NAME.fullmatch(pretokenizer.name) or pretokenizer.name == "regex":
        raise ValueError(f"A pre-tokenizer's name is a plain word other than 'regex', not {pretokenizer.name!r}.")
    if pretokenizer.regex is not None:
        _compiles(pretokenizer.regex)
    for name in (pretokenizer.name, *pretokenizer.aliases):
        known = _REGISTERED.get(_ALIASES.get(name, name))
        if known is not None and known != pretokenizer:
            raise ValueError(f"A pre-tokenizer {name!r} is registered already ({known.help or known.regex}); choose another name.")
    _REGISTERED[pretokenizer.name] = pretokenizer
    for alias in pretokenizer.aliases:
        _ALIASES[alias] = pretokenizer.name
    return pretokenizer


def unregister(name: str) -> None:
    """Forget a pre-tokenizer registered by register() (a test's toy one, say), with its aliases."""
    pretokenizer = _REGISTERED.pop(name)
    for alias in pretokenizer.aliases:
        _ALIASES.pop(alias, None)


class _View(Mapping[str, PreTokenizer]):
    """The registered pre-tokenizers by name, in the order registered (read-only; register() adds one)."""

    def __getitem__(self, name: str) -> PreTokenizer:
        return _REGISTERED[_ALIASES.get(name, name)]

    def __iter__(self) -> Iterator[str]:
        return iter(list(_REGISTERED))

    def __len__(self) -> int:
        return len(_REGISTERED)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and _ALIASES.get(name, name) in _REGISTERED

    def __repr__(self) -> str:
        return f"PRETOKENIZERS({', '.join(_REGISTERED)})"


PRETOKENIZERS: Mapping[str, PreTokenizer] = _View()
_NAME = regex.compile(r"[A-Za-z0-9_-]+")  # a string like this is a (mistyped) name, not a regex


def pretokenizer_of(given: str | PreTokenizer) -> PreTokenizer:
    """The pre-tokenizer a user means: a PreTokenizer as it is; a name or alias; else a regex of their own.

    'gpt4' -> cl100k's. A regex spelled exactly as a registered one that keeps the text
    between matches (GPT-2's, GPT-4's, GPT-4o's: nothing is between them) is that one,
    with its compiled scanner; r'\\S+' is not the whitespace pre-tokenizer, which drops
    the whitespace a regex of the user's keeps. A plain word that is not a name ('gtp2')
    is refused rather than taken as a regex matching that word; so is a regex that does
    not compile or matches the empty string. ValueError with one sentence.
    """
    if isinstance(given, PreTokenizer):
        return given
    if not isinstance(given, str):
        raise ValueError(f"A pre-tokenizer is a name or a regex string, not {type(given).__name__}.")
    if given in PRETOKENIZERS:
        return PRETOKENIZERS[given]
    choices = ", ".join([*_REGISTERED, *_ALIASES])
    if _NAME.fullmatch(given) or not given:
        raise ValueError(f"Unknown pre-tokenizer {given!r}; choose one of {choices}, or give a regex.")
    if given.strip() in PRETOKENIZERS:  # 'gpt2 ' is a regex matching only that: a typo
        raise ValueError(f"Unknown pre-tokenizer {given!r}: the name {given.strip()!r} has spaces around it.")
    same = next((p for p in _REGISTERED.values() if p.regex == given and (p.keeps_gaps or p.complete)), None)
    if same is not None:
        return same
    _compiles(given)
    return PreTokenizer("regex", given, "A regex of your own: its matches, and the text between them, are the pre-tokens.")


def _compiles(pattern: str) -> None:
    try:
        compiled = regex.compile(pattern)
    except (regex.error, OverflowError, RecursionError) as e:
        raise ValueError(f"The pre-tokenizer regex {pattern[:60]!r} does not compile: {e}.") from None
    if compiled.search("") is not None:
        raise ValueError(f"The pre-tokenizer regex {pattern[:60]!r} matches the empty string, so it would make empty pre-tokens.")


# ---------------------------------------------------------------------------
# the named pre-tokenizers

GPT2 = register(
    PreTokenizer(
        "gpt2",
        # GPT-2's (r50k_base, p50k_base); tiktoken's r50k_pat_str is an equivalent, faster spelling
        r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
        "GPT-2's regex: words with their leading space, numbers and punctuation apart.",
        complete=True,
        cut_at_space=True,
        scanner="gpt2",
        units=True,
        gigatoken=True,
        byte_level=True,
    )
)
CL100K = register(
    PreTokenizer(
        "cl100k",
        # GPT-4's (cl100k_base): digits in threes, newlines apart. subtle: tiktoken now spells it with possessive
        # quantifiers and '\s++$'; under Python's regex that spelling makes '\n  ' at the end of a text one
        # pre-token, where tiktoken's own encoder makes two. This older spelling encodes as tiktoken does.
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
        "GPT-4's (cl100k_base) regex: numbers in threes, newlines kept apart (also called gpt4).",
        complete=True,
        cut_at_space=True,
        aliases=("gpt4",),
        scanner="cl100k",
    )
)
O200K = register(
    PreTokenizer(
        "o200k",
        # GPT-4o's (o200k_base), tiktoken's pat_str exactly: a word is cut before a capital ("camelCase"),
        # contractions stay on their word, and a '/' after punctuation joins it.
        "|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        "GPT-4o's (o200k_base) regex: words also cut before a capital, contractions kept on the word.",
        complete=True,
        cut_at_space=True,
        scanner="o200k",
    )
)
WHITESPACE = register(
    PreTokenizer(
        "whitespace",
        r"""\S+""",
        "Split at whitespace and drop it (the textbook version; not lossless).",
        keeps_gaps=False,  # subtle: whitespace is dropped, as in the textbook examples
        cut_at_space=True,
        scanner="whitespace",
    )
)
NONE = register(PreTokenizer("none", None, "No pre-tokenization: a whole document is one sequence.", scanner="none"))
DEFAULT = GPT2  # the pre-tokenizer a setting means when it names none: the one default, used everywhere


# ---------------------------------------------------------------------------
# special tokens: they cut text before any pre-tokenizer sees it


def check_special_tokens(special_tokens: Sequence[str]) -> None:
    if isinstance(special_tokens, (str, bytes)):
        raise ValueError("special_tokens must be a list of strings, not a single string.")
    if not isinstance(special_tokens, (list, tuple)):
        raise ValueError(f"special_tokens must be a list of strings, not {type(special_tokens).__name__}.")
    for token in special_tokens:
        if not isinstance(token, str) or token == "":
            raise ValueError("A special token must be a non-empty string.")
        try:
            token.encode(ENCODING)
        except UnicodeEncodeError as e:
            raise ValueError(
                f"Special token {token[:40]!r} holds a lone surrogate (U+{ord(token[e.start]):04X}), which is not a character."
            ) from None
    seen = set()
    for token in special_tokens:
        if token in seen:
            raise ValueError(f"Special token {token!r} is listed twice.")
        seen.add(token)


def split_on_special(text: str, special_tokens: Sequence[str]) -> list[str]:
    """Cut text at special tokens and drop them: 'a<|e|>b' -> ['a', 'b'].

    subtle: longest first, so '<|e|><|e|>' as one token wins over '<|e|>'.
    """
    if not special_tokens:
        return [text]
    parts, pos = [], 0
    for start, token in find_specials(text, special_tokens):
        parts.append(text[pos:start])
        pos = start + len(token)
    parts.append(text[pos:])
    return parts


def find_specials(text: str, special_tokens: Sequence[str], start: int = 0, stop: int | None = None) -> Iterator[tuple[int, str]]:
    """(where, which) of each special token in text[start:stop], left to right, not overlapping.

    What `regex` finds with the alternation of the tokens, longest first (so the
    longer of two that start at one place wins): 'x<|e|><|e|>' with ['<|e|>',
    '<|e|><|e|>'] -> [(1, '<|e|><|e|>')]. subtle: str.find, not the regex engine,
    which retries a long repetitive token ('a' * 5000) at every position of text
    like it: O(n * m) and worse, where str.find is linear.
    """
    stop = len(text) if stop is None else stop
    ordered = sorted(set(special_tokens), key=len, reverse=True)
    found = {token: text.find(token, start, stop) for token in ordered}  # each token's next occurrence (-1: none left)
    pos = start
    while True:
        best, which = -1, ""
        for token in ordered:
            i = found[token]
            if 0 <= i < pos:  # passed over: look again from here
                i = found[token] = text.find(token, pos, stop)
            if i >= 0 and (best < 0 or i < best):  # a tie keeps the earlier, longer token
                best, which = i, token
        if best < 0:
            return
        yield best, which
        pos = best + len(which)
