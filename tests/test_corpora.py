"""Tests for bpe.data.corpora (standard-library prose) and benchmarks/make_corpus.py."""

from __future__ import annotations

import ast
import importlib.util
import random
import re
import sys
import sysconfig
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from bpe.data.corpora import (
    END_OF_TEXT,
    SEPARATOR,
    drop_doctests,
    extract_prose,
    find_python_files,
    join_documents,
    read_python,
    stdlib_prose,
)

STDLIB = Path(sysconfig.get_paths()["stdlib"])
CODE_LINE = re.compile(r"\s*(?:def |class \w+[(:]|import \w|from \S+ import |return |elif |lambda )")


@pytest.fixture(scope="module")
def megabyte() -> str:
    return stdlib_prose(1_000_000)


def test_same_text_every_call(megabyte: str) -> None:
    assert megabyte
    assert stdlib_prose(1_000_000) == megabyte


def test_size_cap_is_honoured_at_document_boundaries(megabyte: str) -> None:
    for cap in (0, 1, 1_000, 100_000, 1_000_000):
        text = stdlib_prose(cap) if cap < 1_000_000 else megabyte
        assert len(text.encode("utf-8")) <= cap
        assert megabyte.startswith(text)  # a smaller cap is a prefix: it cuts between documents
        assert not text.endswith(END_OF_TEXT) and not text.startswith(END_OF_TEXT)
    assert stdlib_prose(0) == ""
    assert len(megabyte.encode("utf-8")) > 900_000  # documents are small, so the cap is nearly filled


def test_documents_are_separated_by_end_of_text_lines(megabyte: str) -> None:
    documents = megabyte.split(SEPARATOR)
    assert len(documents) > 100
    assert megabyte.count(END_OF_TEXT) == len(documents) - 1  # every marker is a whole line
    assert all(document.strip() == document and document for document in documents)


def test_text_is_prose_not_code(megabyte: str) -> None:
    assert megabyte.count(" the ") > 3_000
    words = Counter(re.findall(r"\w+", megabyte.lower()))
    assert words.most_common(1)[0][0] == "the"
    for keyword in ("def", "import", "lambda", "elif", "yield", "pass"):
        assert words[keyword] < words["the"] / 50, keyword
    lines = megabyte.split("\n")
    assert sum(bool(CODE_LINE.match(line)) for line in lines) < len(lines) / 100
    assert "LATIN CAPITAL LETTER" not in megabyte  # codec tables are not prose


def test_a_large_request_returns_all_the_prose_there_is() -> None:
    # the standard library holds about 2.8 MB of prose; asking for more returns all of it
    text = stdlib_prose(4_000_000)
    assert 1_000_000 < len(text.encode("utf-8")) <= 4_000_000


def test_extract_prose_keeps_docstrings_and_comments_only() -> None:
    source = '''#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""Module docstring explains the module."""
import os  # noqa: F401

# A comment that explains
# the next function.
def spin(wheel: str = "# not a comment") -> str:
    """Spin the wheel.

    >>> spin("x")
    'x'

    Then stop.
    """
    value = """a string value, not a docstring"""
    return wheel  # pragma: no cover

class Wheel:
    r\'\'\'Raw docstring with a \\backslash.\'\'\'
    x = 1  # one
'''
    prose = extract_prose(source)
    assert prose == (
        "Module docstring explains the module.\n\n"
        "A comment that explains\nthe next function.\n\n"
        "Spin the wheel.\n\nThen stop.\n\n"
        "Raw docstring with a \\backslash."
    )


@pytest.mark.parametrize("module", ["textwrap.py", "json/decoder.py", "collections/__init__.py"])
def test_every_ast_docstring_is_found(module: str) -> None:
    source = read_python(STDLIB / module)
    prose = extract_prose(source)
    nodes = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    docstrings = [ast.get_docstring(node) for node in ast.walk(ast.parse(source)) if isinstance(node, nodes)]
    assert docstrings
    for docstring in filter(None, docstrings):
        assert drop_doctests(docstring) in prose


def test_test_directories_and_site_packages_are_skipped() -> None:
    parts = {part for path in find_python_files(STDLIB) for part in path.relative_to(STDLIB).parts}
    assert "test" not in parts and "site-packages" not in parts
    assert "textwrap.py" in parts


def test_join_documents() -> None:
    separator = len(SEPARATOR.encode())
    assert join_documents(["ab", "", "cd", "ef"], 4 + separator) == f"ab{SEPARATOR}cd"
    assert join_documents(["ab", "cd"], 3 + separator) == "ab"
    assert join_documents(["\ud800x"], 10) == "?x"  # lone surrogates cannot be UTF-8
    with pytest.raises(ValueError):
        join_documents(["ab"], -1)


# ---------------------------------------------------------------- benchmarks/make_corpus.py


@pytest.fixture(scope="module")
def make_corpus() -> Iterator[ModuleType]:
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "make_corpus.py"
    spec = importlib.util.spec_from_file_location("make_corpus", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_strip_roff_keeps_words_only(make_corpus: ModuleType) -> None:
    page = "\n".join(
        [
            '.\\" a comment',
            ".TH LS 1",
            '.SH "SEE ALSO"',
            ".BR dir (1),",
            "\\fBls\\fR lists \\- files \\(em quickly\\&.",
            ".de XX",
            "macro body",
            "..",
            ".PP",
            "The end.",
        ]
    )
    assert make_corpus.tidy(make_corpus.strip_roff(page)) == ("SEE ALSO\ndir(1),\nls lists - files \u2014 quickly.\n\nThe end.")


def test_write_corpus_repeats_in_shuffled_rounds(make_corpus: ModuleType, tmp_path: Path) -> None:
    documents = [b"one\nuno", b"two", b"three"]
    out = tmp_path / "corpus.txt"
    written, unique = make_corpus.write_corpus(out, documents, 200, random.Random(0))
    data = out.read_bytes()
    assert written == len(data) and 200 - 20 < written <= 200
    assert unique == len(b"one\nuno\n<|endoftext|>\ntwo\n<|endoftext|>\nthree")
    parts = data.split(SEPARATOR.encode())
    assert parts[:3] == documents
    assert all(part in documents or b"one\nuno".startswith(part) for part in parts)
    make_corpus.write_corpus(tmp_path / "again.txt", documents, 200, random.Random(0))
    assert (tmp_path / "again.txt").read_bytes() == data


def test_make_corpus_is_deterministic(make_corpus: ModuleType, tmp_path: Path) -> None:
    outputs = []
    for name in ("a.txt", "b.txt"):
        assert make_corpus.main(["--mb", "0.3", "--out", str(tmp_path / name)]) == 0
        outputs.append((tmp_path / name).read_bytes())
    assert outputs[0] == outputs[1]
    assert 250_000 < len(outputs[0]) <= 300_000
    text = outputs[0].decode("utf-8")
    assert text.count(END_OF_TEXT) == text.count(SEPARATOR) > 0
