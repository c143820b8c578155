"""Every snippet in README.md and docs/*.md runs as written (issue 26.8).

Each ```python and ```bash block of a page is run in order, in a folder that holds the files the
snippets name (corpus.txt, shards/*.jsonl.zst, GPT-2's vocab.json + merges.txt, ...): Python blocks
share one namespace, as a reader's session would; bash blocks run with `bpe` on the PATH, as
`pip install .` makes it. A block that cannot run here (it starts the app, installs packages, needs
a Ray cluster) says so on the line before its fence, with the reason: `<!-- not run: why -->`.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import zstandard

from bpe.data.counts_file import CountsInfo, save_counts

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN = ("python", "bash")
SKIP = re.compile(r"<!-- not run: (.+?) -->")
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    language: str
    code: str
    line: int  # where the fence opens, for messages
    not_run: str | None  # why it is not run, or None


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = SKIP.fullmatch(before.strip())
        found.append(Block(match.group(1), match.group(2), text.count("\n", 0, match.start()) + 1, skip.group(1) if skip else None))
    return [block for block in found if block.language in RUN]


def test_the_pages_have_snippets_and_each_not_run_says_why():
    readme = blocks(ROOT / "README.md")
    assert sum(b.not_run is None for b in readme) >= 5
    for page in PAGES:
        for block in blocks(page):
            assert block.not_run is None or len(block.not_run) > 10, f"{page.name}:{block.line}: say why it is not run"


# ---------------------------------------------------------------------------
# the reader's folder


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """The files the snippets name, small: a real corpus, JSON Lines shards, GPT-2's and Llama 2's files, counts files."""
    if not (SHARED / "gpt2").is_dir() or not (SHARED / "cs336").is_dir():
        pytest.skip("../shared (GPT-2's files and the CS336 corpus) not present")
    here = tmp_path_factory.mktemp("reader")
    text = (SHARED / "cs336" / "corpus.en").read_text(encoding="utf-8")
    paragraphs = [p for p in text.split("\n\n") if p.strip()][:150]  # about a third: the snippets train on it several times
    (here / "corpus.txt").write_text("<|endoftext|>".join(paragraphs), encoding="utf-8")
    (here / "book.txt").write_text(text[:20_000], encoding="utf-8")
    shutil.copy(SHARED / "cs336" / "corpus.en", here / "corpus.en")
    shutil.copy(SHARED / "cs336" / "train-bpe-reference-merges.txt", here / "my_merges.txt")  # a student's merges, as bpe diff takes them
    for name in ("shards", "owt"):
        (here / name).mkdir()
        for i in range(2):
            lines = "".join(json.dumps({"text": p}) + "\n" for p in paragraphs[i::2])
            (here / name / f"part-{i}.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(lines.encode()))
    (here / "gpt2").mkdir()
    for name in ("encoder.json", "vocab.bpe"):
        shutil.copy(SHARED / "gpt2" / name, here / "gpt2" / name)
    shutil.copy(SHARED / "gpt2" / "encoder.json", here / "vocab.json")  # GPT-2's own files under the usual names
    shutil.copy(SHARED / "gpt2" / "vocab.bpe", here / "merges.txt")
    (here / "llama2").mkdir()  # Llama 2's tokenizer.json: the SentencePiece family
    shutil.copy(SHARED / "llama2" / "tokenizer.json", here / "llama2" / "tokenizer.json")
    for i in (1, 2):
        save_counts(here / f"part{i}.parquet", {b" the": 10 * i, b"cat": i}, CountsInfo("gpt2", ()))
    bin_dir = here / ".bin"
    bin_dir.mkdir()
    (bin_dir / "bpe").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m bpe "$@"\n')
    (bin_dir / "bpe").chmod(0o755)
    return here


# Runs a page's blocks in order in the current folder: python blocks in one namespace, bash blocks in bash.
DRIVER = """
import json, os, subprocess, sys, traceback
namespace = {"__name__": "__main__"}
for language, code, where in json.load(sys.stdin):
    if language == "python":
        try:
            exec(compile(code, where, "exec"), namespace)
        except BaseException:
            sys.exit(f"{where} (python) failed:\\n{traceback.format_exc()}")
    else:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"{where} (bash) exited {done.returncode}:\\n{done.stdout[-2000:]}\\n{done.stderr[-2000:]}")
"""


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_snippet_runs_as_written(folder, page, tmp_path):
    runnable = [(b.language, b.code, f"{page.relative_to(ROOT)}:{b.line}") for b in blocks(page) if b.not_run is None]
    if not runnable:
        pytest.skip(f"{page.name} has no snippet to run")
    here = shutil.copytree(folder, tmp_path / "reader")  # each page starts from the same files: none relies on another's outputs
    env = {"PATH": f"{here / '.bin'}:/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(here), "BPE_WORKERS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", DRIVER], input=json.dumps(runnable), capture_output=True, text=True, cwd=here, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-4000:]


def test_the_unicode_tables_command_the_docs_name_runs_without_a_warning():
    """It was `python -m bpe.text.gigatoken`, which printed runpy's RuntimeWarning first: the package imports bpe.text.gigatoken.

    The command is named where counting at compiled speed is described: docs/inputs.md (the README links it).
    """
    assert "python benchmarks/unicode_tables.py" in (ROOT / "docs" / "inputs.md").read_text(encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-W", "error", str(ROOT / "benchmarks" / "unicode_tables.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == "" and "DISAGREE" in done.stdout
