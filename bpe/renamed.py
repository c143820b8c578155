"""Keyword arguments that were renamed, still accepted under their old names.

One word per idea: a pre-tokenizer is given as `pretokenizer` (a registered name, a
regex, or a PreTokenizer), never `pattern` (its name until the pre-tokenizer became an
object: a SentencePiece normalizer is no pattern); a number of special tokens is
`n_special`, never `specials` or `special_tokens` (which is always the tokens
themselves). Code written against the old names keeps working:

    @renamed(pattern="pretokenizer")
    def count_inputs(..., pretokenizer="gpt2"): ...
    count_inputs(paths, pattern="whitespace")  # the same as pretokenizer="whitespace"

What it does not do: warn. The old names are documented where they are accepted.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)


def renamed(**old_to_new: str) -> Callable[[F], F]:
    """A decorator that passes each old keyword argument on under its new name; giving both is a TypeError.

    On a class (a dataclass, say) it renames the arguments of its __init__ and returns the class itself.
    """

    def decorate(function: F) -> F:
        if isinstance(function, type):
            function.__init__ = decorate(function.__init__)  # type: ignore[misc]
            return function

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            for old, new in old_to_new.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{function.__qualname__}() got both {new}= and its old name {old}=; give {new}= only.")
                    kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        wrapper.renamed = dict(old_to_new)  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate
