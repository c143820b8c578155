"""Keyword arguments that were renamed, still accepted under their old names.

One word per idea: a pre-tokenizer is given as `pattern` (a name in PATTERNS or a
regex), never `pretokenizer`; a number of special tokens is `n_special`, never
`specials` or `special_tokens` (which is always the tokens themselves). Code
written against the old names keeps working:

    @renamed(pretokenizer="pattern")
    def train_bpe(..., pattern="gpt2"): ...
    train_bpe(path, 300, [], pretokenizer="whitespace")  # the same as pattern="whitespace"

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
