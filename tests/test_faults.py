"""Faults that must lose no file and leave no process (issue 27.7-27.10).

A full disk (a 64 KB tmpfs where the test may mount one), SIGTERM, SIGINT and SIGKILL to `bpe count`
while its workers count and while it writes: the output path holds the old file (never a mix),
the caller's pipe closes within 5 s, and no process of the run is left. Every wait has a deadline.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import interruptible

from bpe.data.counts_file import CountsInfo, load_counts, save_counts

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
PIPE_CLOSES = 5  # seconds: the target of issue 27


def descendants(pid: int) -> dict[int, str]:
    """Every live process below pid (pid -> command line), from /proc: workers, the forkserver, the resource tracker."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":  # a zombie has ended
                children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = {}, [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            try:
                found[child] = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            todo.append(child)
    return found


def alive(pids) -> list[int]:
    """Those of pids still running (not zombies)."""
    left = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            left.append(pid)
    return left


def wait_for(condition, seconds: float, what: str):
    """condition()'s first true value, polled every 50 ms; fails after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what} did not happen within {seconds} s")


def at_least(n: int, tree: dict[int, str]) -> dict[int, str] | None:
    return tree if len(tree) >= n else None


def old_counts(path: Path) -> bytes:
    save_counts(path, {b"old": 7}, CountsInfo("gpt2", ()))
    return path.read_bytes()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    """~40 MB of lines: counted in a pool of 2 workers by the Python path, several seconds of work on this machine."""
    line = "the lowest lower newest widest naïve café 日本 hello world 12345\n"
    path = tmp_path_factory.mktemp("big") / "big.txt"
    path.write_text(line * 600_000)
    return path


def start(command: str, big: Path, out: Path) -> subprocess.Popen:
    train = ["--vocab-size", "300"] if command == "train" else []
    # o200k's regex in Python: ~10 MB/s a worker, seconds of work (gpt2's counts 40 MB of repeated lines in 1 s)
    args = [
        sys.executable,
        "-m",
        "bpe",
        command,
        str(big),
        *train,
        "--workers",
        "2",
        "--no-compiled",
        "--pattern",
        "o200k",
        "--out",
        str(out),
    ]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, preexec_fn=interruptible)


@pytest.mark.parametrize(
    ("command", "sig", "code"),
    [
        ("count", signal.SIGTERM, 128 + signal.SIGTERM),
        ("count", signal.SIGINT, 130),
        ("count", signal.SIGKILL, -signal.SIGKILL),
        ("train", signal.SIGTERM, 128 + signal.SIGTERM),
    ],
)
def test_a_signal_while_workers_count_ends_every_process_and_keeps_the_old_file(big, tmp_path, command, sig, code):
    out = tmp_path / "c.parquet"
    before = old_counts(out)
    proc, tree = start(command, big, out if command == "count" else tmp_path / "tok"), {}
    try:
        # the forkserver, the resource tracker and two workers
        tree = wait_for(lambda: at_least(4, descendants(proc.pid)), 60, "starting two workers")
        assert sum("forkserver" in command for command in tree.values()) >= 3, tree
        os.kill(proc.pid, sig)
        try:
            _, err = proc.communicate(timeout=PIPE_CLOSES)  # returns once every holder of the pipes has closed them
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the caller's pipe was still open {PIPE_CLOSES} s after {sig.name}: {descendants(proc.pid)}") from None
        assert proc.returncode == code, err
        if sig != signal.SIGKILL:
            assert err.decode().endswith(("terminated; nothing written.\n", "interrupted; nothing written.\n")), err
        wait_for(lambda: not alive(tree), PIPE_CLOSES, f"the end of {tree}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in alive(tree):  # a failed test leaves nothing behind either
            os.kill(pid, signal.SIGKILL)
    assert out.read_bytes() == before and not (tmp_path / "tok").exists()
    assert leftovers(tmp_path) == []


# A `bpe count` whose write of the counts file stops after the temporary file is whole, before the rename.
SLOW_WRITE = """
import sys, time
import pyarrow.parquet as pq
write = pq.write_table
def slow(table, where, **options):
    write(table, where, **options)
    print("written", flush=True)
    time.sleep(60)
pq.write_table = slow
from bpe.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_signal_mid_write_leaves_the_old_file(tmp_path, sig):
    (tmp_path / "a.txt").write_text("the lowest lower newest widest " * 100)
    out = tmp_path / "c.parquet"
    before = old_counts(out)
    command = [sys.executable, "-c", SLOW_WRITE, "count", str(tmp_path / "a.txt"), "--out", str(out), "--workers", "1"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    try:
        wait_for(lambda: leftovers(tmp_path), 30, "the temporary file")
        assert proc.stdout.readline() == b"written\n"  # the temporary file is whole; the rename is next
        os.kill(proc.pid, sig)
        _, err = proc.communicate(timeout=PIPE_CLOSES)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert out.read_bytes() == before
    if sig == signal.SIGTERM:
        assert proc.returncode == 143 and err.endswith(b"terminated; nothing written.\n"), err
        assert leftovers(tmp_path) == []  # removed on the way out
    else:  # nothing can remove it after SIGKILL: it is named so (.c.parquet.XXXX.tmp), and the old file is whole
        assert [name.startswith(".c.parquet.") for name in leftovers(tmp_path)] == [True]
    assert load_counts(out)[0] == {b"old": 7}


def test_a_full_disk_names_the_counts_file_and_keeps_the_old_one(tmp_path, small_disk):
    words = " ".join(f"w{i:05d}x" for i in range(40_000))  # 40,000 unique pre-tokens: more than 64 KB of counts
    (tmp_path / "a.txt").write_text(words)
    out = small_disk / "c.parquet"
    before = old_counts(out)
    done = subprocess.run(
        [sys.executable, "-m", "bpe", "count", str(tmp_path / "a.txt"), "--out", str(out), "--workers", "1"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == f"error: Cannot write {out}: the disk is full."
    assert out.read_bytes() == before
    assert sorted(p.name for p in small_disk.iterdir()) == ["c.parquet"]
