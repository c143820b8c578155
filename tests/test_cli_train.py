"""`bpe train` and `bpe count` as a user runs them: phase lines on a pipe, a summary with time and peak memory."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPECIAL = "<|endoftext|>"


def bpe(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bpe", *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})  # fmt: skip


def test_train_on_a_pipe_prints_phase_lines_and_a_summary_per_phase(tmp_path):
    (tmp_path / "a.jsonl").write_text("".join(json.dumps({"body": f"low lower lowest {i}"}) + "\n" for i in range(200)))
    result = bpe("train", "a.jsonl", "--text-field", "body", "--vocab-size", "280", "--out", "tok", "--workers", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert re.search(r"^pre-tokenize: .* MB in 1 file\(s\), .* unique pre-tokens$", result.stderr, re.M), result.stderr
    assert re.search(r"^merges: 24 in ", result.stderr, re.M)
    assert "\r" not in result.stderr  # no bar redrawn on a pipe
    out = result.stdout
    assert out.startswith("Made 24 merges: the vocabulary reached its size, 280 = 256 bytes + 24 merges + 0 special tokens.")
    assert re.search(r"^time: pre-tokenize .*s, initial count .*s, merges .*s, write .*s, total .*s$", out, re.M)
    assert re.search(r"^processor time \(this process\): pre-tokenize ", out, re.M)
    memory = re.search(r"^peak memory \(resident, this process\): (.*)$", out, re.M)
    assert memory, out
    assert re.findall(r"(pre-tokenize|initial count|merges|write) [\d,]+ MB", memory.group(1)) == [
        "pre-tokenize",
        "initial count",
        "merges",
        "write",
    ]


def test_count_then_train_from_counts_on_the_command_line(tmp_path):
    (tmp_path / "a.txt").write_text(("low lower lowest " * 20 + SPECIAL) * 5)
    counted = bpe("count", "a.txt", "--special-token", SPECIAL, "--out", "c.parquet", "--workers", "1", cwd=tmp_path)
    assert counted.returncode == 0, counted.stderr
    assert re.search(r"^\d+ unique pre-tokens, [\d,]+ in all, from 1 input\(s\)", counted.stdout, re.M)
    trained = bpe("train", "--from-counts", "c.parquet", "--vocab-size", "270", "--out", "tok", cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    assert "load counts" in trained.stdout and (tmp_path / "tok" / "merges.txt").exists()
    refused = bpe(
        "train", "--from-counts", "c.parquet", "--vocab-size", "270", "--special-token", "<|other|>", "--out", "tok", cwd=tmp_path
    )
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "special tokens" in refused.stderr
