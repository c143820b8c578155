"""Peak resident memory (RSS) of this process, per phase where Linux allows it.

What it does: `reset_peak()` starts a new phase (Linux: writing 5 to
/proc/self/clear_refs resets the high-water mark VmHWM), and `peak_rss()`
reads the peak since then (VmHWM), or since the process started where the
reset is not allowed (getrusage's ru_maxrss). Worker processes report their
own `peak_rss()` with their results (see count.py).

What it does not do: sample memory over time, or count child processes that
are still running (getrusage only knows children that have been waited for).
"""

from __future__ import annotations

import resource
from pathlib import Path

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def reset_peak() -> bool:
    """Start measuring a new peak; False when the system does not allow it (the peak is then since start)."""
    try:
        _CLEAR_REFS.write_text("5")
        return True
    except OSError:
        return False


def peak_rss() -> int:
    """The peak resident memory in bytes, since the last reset_peak() where it worked."""
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024  # reported in kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports kB


def megabytes(n: int) -> str:
    """1_234_567_890 -> '1,235 MB'."""
    return f"{n / 1e6:,.0f} MB"
