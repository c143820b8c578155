"""The pre-tokenizers by name, and where special tokens cut a text: the registry every layer reads.

What it does: name the pre-tokenizers (PATTERNS: gpt2, cl100k alias gpt4, o200k,
whitespace, none) and their regexes, check a pattern (a name or any regex string)
and special tokens, each refusal one sentence, and find special tokens in a text
or its bytes, longest first:

    regex_of("gpt4") == PATTERNS["cl100k"]; regex_of("none") -> None
    split_on_special("a<|e|>b", ["<|e|>"]) -> ['a', 'b']

What it does not do: split or count anything with the regexes (pretokenize.py is
the Python path, compiled.py the compiled one; both build on this file, which
imports neither, so neither imports the other to learn a name).

Text and bytes meet here too: ENCODING and ERRORS say how a text's bytes are read
(invalid UTF-8 is kept, each byte as a lone surrogate, and comes back unchanged).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import regex

DEFAULT_PATTERN = "gpt2"  # the pre-tokenizer a setting means when it names none: the one default, used everywhere

# The named pre-tokenizers. Any other string is taken as a regex (tiktoken's `pat_str`): the pre-tokens
# are its matches, in order, and the text between matches, each stretch a pre-token of its own (HuggingFace's
# Split with behavior 'isolated'), so that no byte is lost; tiktoken would drop it. gpt2, cl100k and o200k
# match every character, so nothing is left between their matches; whitespace drops it by design.
PATTERNS: dict[str, str | None] = {
    # GPT-2's (r50k_base, p50k_base); tiktoken's r50k_pat_str is an equivalent, faster spelling
    "gpt2": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    # GPT-4's (cl100k_base): digits in threes, newlines apart. subtle: tiktoken now spells it with possessive
    # quantifiers and '\s++$'; under Python's regex that spelling makes '\n  ' at the end of a text one
    # pre-token, where tiktoken's own encoder makes two. This older spelling encodes as tiktoken does.
    "cl100k": r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    # GPT-4o's (o200k_base), tiktoken's pat_str exactly: a word is cut before a capital ("camelCase"),
    # contractions stay on their word, and a '/' after punctuation joins it.
    "o200k": "|".join(
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
    # subtle: whitespace is dropped, as in the textbook examples; this one is not lossless.
    "whitespace": r"""\S+""",
    # each document (the text between special tokens) is one sequence
    "none": None,
}
ALIASES = {"gpt4": "cl100k"}  # older names that keep working
# The names whose regex, given as a regex, splits as the name does: it matches every character. Not whitespace:
# `\S+` as a regex keeps the whitespace between matches, as pre-tokens of their own.
COMPLETE = ("gpt2", "cl100k", "o200k")
# What the app and the CLI say about each choice.
PATTERN_HELP = {
    "gpt2": "GPT-2's regex: words with their leading space, numbers and punctuation apart.",
    "cl100k": "GPT-4's (cl100k_base) regex: numbers in threes, newlines kept apart (also called gpt4).",
    "o200k": "GPT-4o's (o200k_base) regex: words also cut before a capital, contractions kept on the word.",
    "whitespace": "Split at whitespace and drop it (the textbook version; not lossless).",
    "none": "No pre-tokenization: a whole document is one sequence.",
}
_NAME = regex.compile(r"[A-Za-z0-9_-]+")  # a string like this is a (mistyped) name, not a regex


ENCODING = "utf-8"  # how text and bytes are read and written
ERRORS = "surrogateescape"  # invalid bytes become lone surrogates and come back unchanged


def check_pattern(pattern: str) -> None:
    """A pre-tokenizer is a name (PATTERNS, ALIASES) or a regex; raise ValueError with one sentence otherwise."""
    regex_of(pattern)


def regex_of(pattern: str) -> str | None:
    """The regex of a pre-tokenizer: 'gpt4' -> GPT-4's regex, 'none' -> None, any other regex -> itself.

    A plain word that is not a name ('gtp2') is refused rather than taken as a regex
    matching that word; so is a regex that does not compile or matches the empty string.
    """
    if not isinstance(pattern, str):
        raise ValueError(f"A pre-tokenizer is a name or a regex string, not {type(pattern).__name__}.")
    name = ALIASES.get(pattern, pattern)
    if name in PATTERNS:
        return PATTERNS[name]
    choices = ", ".join([*PATTERNS, *ALIASES])
    if _NAME.fullmatch(pattern) or not pattern:
        raise ValueError(f"Unknown pre-tokenizer {pattern!r}; choose one of {choices}, or give a regex.")
    if ALIASES.get(pattern.strip(), pattern.strip()) in PATTERNS:  # 'gpt2 ' is a regex matching only that: a typo
        raise ValueError(f"Unknown pre-tokenizer {pattern!r}: the name {pattern.strip()!r} has spaces around it.")
    try:
        compiled = regex.compile(pattern)
    except (regex.error, OverflowError, RecursionError) as e:
        raise ValueError(f"The pre-tokenizer regex {pattern[:60]!r} does not compile: {e}.") from None
    if compiled.search("") is not None:
        raise ValueError(f"The pre-tokenizer regex {pattern[:60]!r} matches the empty string, so it would make empty pre-tokens.")
    return pattern


def pattern_name(pattern: str) -> str:
    """The name a pre-tokenizer is shown by: 'gpt4' -> 'cl100k', a named one -> itself, a regex -> 'regex'."""
    name = ALIASES.get(pattern, pattern)
    return name if name in PATTERNS else "regex"


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
