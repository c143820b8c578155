"""Jobs the worker pool's tests run in real worker processes (tests/test_pool.py, tests/test_shared_pool.py).

A worker imports a job by its module's name, so they live here, importing nothing heavy: not conftest,
whose AppTest helpers import Streamlit.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import subprocess
import time
from pathlib import Path


def counted(path: str, *, report) -> str:
    """Append a line to path (one per run), then wait until the test opens the gate (open_gate): how tests count runs.

    A run ends when the test says so, never after a pause that a busy machine could outlast.
    """
    with open(path, "a") as f:
        f.write("run\n")
    deadline = time.monotonic() + 60
    while not os.path.exists(path + ".go"):
        if time.monotonic() > deadline:
            raise TimeoutError(f"nobody opened the gate {path}.go in 60 s")
        time.sleep(0.01)
    return "done"


def open_gate(path: str | os.PathLike) -> None:
    """Let every run of `counted` on path end (and later ones end at once)."""
    Path(f"{path}.go").touch()


def lasting(path: str, seconds: float, *, report) -> str:
    """Append a line to path, then run for `seconds`: a run of a known length, which is what a time budget counts."""
    with open(path, "a") as f:
        f.write("run\n")
    time.sleep(seconds)
    return "done"


def forever(*, report) -> None:
    """Report a growing number until killed."""
    n = 0
    while True:
        n += 1
        report(n)
        time.sleep(0.05)


def with_child(path: str, *, report) -> None:
    """Start a process of its own (as the parallel pre-tokenization timing does), write its pid, then wait."""
    child = subprocess.Popen(["sleep", "60"])
    Path(path).write_text(str(child.pid))
    report(child.pid)
    child.wait()


def crash(*, report) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def refuse(*, report) -> None:
    raise ValueError("The corpus is empty: paste some text.")


def hog(*, report) -> int:
    """Ask for a gigabyte."""
    return len(bytearray(1 << 30))


def gc_state(*, report) -> bool:
    """Whether the collector is on in the worker while a trainer runs there (it is paused)."""
    from bpe.trainer import paused_gc

    with paused_gc():
        return gc.isenabled()


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie (dead, not yet reaped) counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except FileNotFoundError:
        return True


def stopped(pid: int) -> bool:
    """Whether every thread of the process is stopped (state T).

    subtle: kill() returns before the process stops: one of its threads must run to take
    SIGSTOP and stop the others, and on a busy machine a request sent meanwhile was answered.
    """
    states = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):
            states.append((task / "stat").read_text().rsplit(")", 1)[1].split()[0])
    return bool(states) and all(state in "Tt" for state in states)


def stalled_read(files, pretokenizer, *, report) -> None:
    """serve/jobs.read_upload's signature, never ending (a read that outlasts any deadline) until killed."""
    while True:
        report("reading")
        time.sleep(0.05)


def gated_read(files, pretokenizer, *, report) -> None:
    """serve/jobs.read_upload's signature: counts itself in $BPE_TEST_GATE, waits for the test's gate (open_gate), then
    refuses the files in one sentence: a read that fails after the page has begun to follow it."""
    path = os.environ["BPE_TEST_GATE"]
    counted(path, report=report)
    raise ValueError(f"{files[0][0]}: refused after the gate opened.")
