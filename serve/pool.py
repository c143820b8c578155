"""A server-wide pool of worker processes for the app's heavy work: races, sweeps, traces.

What it does: runs a job -- a plain function of serve/jobs.py with small picklable
arguments -- in a process of its own, a few at a time, the rest waiting in a
queue, and keeps what the job reports: progress while it runs, the result when
it ends, a sentence when it fails. Requests with the same key share one run. A
job has watchers (the sessions that asked for it); a watcher that stops (the
page's Stop) or goes away (`alive` says it is gone) leaves, and a job nobody
watches is cancelled: its processes are killed and the processor is free. The
last `keep` finished results stay for the next request with the same key.

Two lanes: "long" runs (races, sweeps: up to minutes) get `workers` processes,
by default one core fewer than the machine has, so the pages keep a core;
"short" ones (a trace, a training: seconds) get `quick` more, so a student
opening the step page never queues behind a class's race.

One session cannot take the pool from the others. Each session (the watcher
that started a job, its owner) has budgets: at most MAX_JOBS of its jobs queued
or running at once, at most BUDGET_S seconds of workers' time in the last
WINDOW_S, each job at most JOB_S[lane] seconds, each worker at most
MEMORY_MB of memory (BPE_WORKER_MEMORY_MB; past it the job fails with a
sentence). A job past a budget is refused in one sentence that says when to
try again. And a freed worker takes the queued job whose owner has used the
least time lately, not the oldest: a session that keeps asking waits behind
one that asks once.

Why processes and not threads: a trainer is pure Python, so a thread holds the
interpreter lock the pages need, and its clock would count their work; a
process has its own interpreter, its own garbage collector to pause, and its
own memory, returned to the system when it exits. A worker is a fresh
`python -m serve.pool` that reads its job from stdin and writes its reports to
stdout, pickled: nothing else talks to it, so what it sends back is ours.

subtle: not multiprocessing. Streamlit runs a page with sys.modules["__main__"]
set to the page's script, and multiprocessing (spawn or forkserver) makes each
child import the parent's __main__ again: every worker would run the app.

What it does not do: import Streamlit (pages reach it through ui/work.py), or
unpickle anything but what our own worker processes send back.

    pool = Pool(workers=1)
    pool.submit(("race", digest), jobs.race, data, who="session-1")  # Status(state="running", ...)
    pool.submit(("race", digest), jobs.race, data, who="session-2")  # the same run, two watchers
    pool.stop(("race", digest), who="session-1")                     # still running for session-2
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serve import settings

log = logging.getLogger(__name__)

LANES = ("long", "short")
ENDED = ("done", "failed", "cancelled")
MAX_JOBS = 3  # a session's jobs queued or running at once, per lane
WINDOW_S = 600.0  # the time budget's window
BUDGET_S = 300.0  # a session's seconds of workers' time within WINDOW_S (a race on the 2 MB preset takes ~30-50 s)
JOB_S = {"long": 900.0, "short": 300.0}  # a job still running after this long is stopped
MEMORY_MB = 4096  # a worker's address space (BPE_WORKER_MEMORY_MB)
ROOT = Path(__file__).resolve().parents[1]  # where `python -m serve.pool` finds the ui and bpe packages


@dataclass(frozen=True)
class Status:
    """What a page can know about a job, at one moment."""

    state: str  # "queued", "running", "done", "failed" or "cancelled"
    progress: Any = None  # the job's last report while running (and after, if it ended early)
    result: Any = None  # what the job returned, when done
    error: str = ""  # a sentence saying what went wrong, when failed
    ahead: int = 0  # queued: runs in its lane that start before it
    watchers: int = 0
    seconds: float = 0.0  # how long it has run (or ran)

    @property
    def ended(self) -> bool:
        return self.state in ENDED


@dataclass(eq=False)
class _Job:
    key: Hashable
    fn: Callable[..., Any]
    args: tuple
    lane: str
    state: str = "queued"
    progress: Any = None
    result: Any = None
    error: str = ""
    watchers: dict[str, float] = field(default_factory=dict)  # who -> when first seen gone (0: alive)
    owner: str = ""  # the session whose submit started it: its budgets count this job
    process: Any = None
    cancelling: bool = False
    over_time: bool = False  # stopped for running past its lane's JOB_S
    started: float = 0.0
    ended_at: float = 0.0
    used: float = 0.0  # last asked for: finished jobs are evicted least recently used first


class Pool:
    """Worker processes shared by every session of one server. Thread-safe."""

    def __init__(
        self,
        workers: int | None = None,
        *,
        quick: int = 1,
        keep: int = 16,
        alive: Callable[[str], bool] = lambda who: True,
        grace_s: float = 5.0,
        check_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.capacity = {"long": workers if workers is not None else settings.long_job_workers(), "short": quick}
        if min(self.capacity.values()) < 1:
            raise ValueError(f"A pool needs at least one worker per lane, not {self.capacity}.")
        self.keep, self.alive, self.grace_s, self.check_s = keep, alive, grace_s, check_s
        self.clock = clock  # what the grace period is measured on (tests pass one they move by hand)
        self.checks = 0  # passes of the reaper so far: tests wait for one instead of sleeping
        self.max_jobs, self.budget_s, self.window_s, self.job_s = MAX_JOBS, BUDGET_S, WINDOW_S, dict(JOB_S)
        self._used: dict[str, list[tuple[float, float]]] = {}  # owner -> (when a job of theirs ended, its seconds)
        self._jobs: dict[Hashable, _Job] = {}
        self._queue: dict[str, list[_Job]] = {lane: [] for lane in LANES}
        self._lock = threading.Condition()
        self._closed = False
        self._reaper = threading.Thread(target=self._reap, name="pool-reaper", daemon=True)
        self._reaper.start()

    # -- what the pages call ----------------------------------------------------
    def submit(self, key: Hashable, fn: Callable[..., Any], *args: Any, who: str, lane: str = "long", inline: bool = False) -> Status:
        """Start fn(*args, report=...) for key, or join the run already going; return its status.

        A finished result for key is returned as it is; a failed or cancelled
        run is started again. With inline=True a new run happens here, in the
        caller's thread (for inputs so small a process would cost more).
        """
        if lane not in LANES:
            raise ValueError(f"Unknown lane {lane!r}; choose one of {', '.join(LANES)}.")
        with self._lock:
            if self._closed:
                raise RuntimeError("The worker pool is closed.")
            job = self._jobs.get(key)
            fresh = job is None or job.state in ("failed", "cancelled")
            if fresh and not inline and (refusal := self._over_budget(who, lane)):
                job = self._jobs[key] = _Job(key, fn, (), lane, owner=who)
                self._end(job, "failed", refusal)
                return self._status(job)
            if fresh:
                job = self._jobs[key] = _Job(key, fn, args, lane, owner=who)
                if inline:
                    job.state, job.started = "running", time.perf_counter()
                else:
                    self._queue[lane].append(job)
                    self._start_next(lane)
            if job.state not in ENDED:
                job.watchers[who] = 0.0
            job.used = time.monotonic()
            computing_here = job.state == "running" and job.process is None  # inline, here or in another session
        if fresh and inline:
            self._run_inline(job)
        elif computing_here:
            self.wait(key, timeout=None)
        return self.status(key)

    def status(self, key: Hashable) -> Status | None:
        """The job's status now, or None when there is no such job (never asked for, or evicted)."""
        with self._lock:
            job = self._jobs.get(key)
            return None if job is None else self._status(job)

    def wait(self, key: Hashable, timeout: float | None) -> Status | None:
        """Wait until the job has ended, or timeout seconds; return its status."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while (job := self._jobs.get(key)) is not None and job.state not in ENDED:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                self._lock.wait(left)
            return None if job is None else self._status(job)

    def ended(self, key: Hashable, timeout: float | None) -> str | None:
        """Wait until the job has ended, or timeout seconds; its state, or None when there is no such job.

        For a caller that needs the job done, not its result (ui/warm.py): RemotePool does not fetch the result.
        """
        status = self.wait(key, timeout)
        return None if status is None else status.state

    def stop(self, key: Hashable, who: str) -> None:
        """who no longer watches the job; a job nobody watches is cancelled."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None:
                job.watchers.pop(who, None)
                if not job.watchers:
                    self._cancel(job)

    def find(self, match: Callable[[Hashable], bool]) -> list[tuple[Hashable, Any]]:
        """(key, result) of every finished job whose key matches: for reusing a longer run's prefix."""
        with self._lock:
            return [(key, job.result) for key, job in self._jobs.items() if job.state == "done" and match(key)]

    def busy(self) -> dict[str, int]:
        """Jobs running and queued, per lane: {"long running": 1, "long queued": 2, ...}."""
        with self._lock:
            counts = {}
            for lane in LANES:
                counts[f"{lane} running"] = sum(1 for j in self._jobs.values() if j.lane == lane and j.state == "running")
                counts[f"{lane} queued"] = len(self._queue[lane])
            return counts

    def close(self) -> None:
        """Cancel everything; the pool takes no more jobs."""
        with self._lock:
            self._closed = True
            for job in list(self._jobs.values()):
                job.watchers.clear()
                self._cancel(job)
            self._lock.notify_all()

    # -- budgets ----------------------------------------------------------------------
    def used(self, who: str) -> float:
        """Seconds of workers' time who's jobs took in the last window_s, the running ones so far included (the lock is held)."""
        now = time.perf_counter()
        self._used[who] = [(end, s) for end, s in self._used.get(who, []) if now - end < self.window_s]
        running = sum(now - j.started for j in self._jobs.values() if j.owner == who and j.state == "running" and j.process is not None)
        return sum(s for _, s in self._used[who]) + running

    def _over_budget(self, who: str, lane: str) -> str:
        """Why who may not start another job in lane now, as a sentence; '' when it may (the lock is held)."""
        mine = sum(1 for j in self._jobs.values() if j.owner == who and j.lane == lane and j.state not in ENDED)
        if mine >= self.max_jobs:
            return f"This page already has {mine} runs going in the worker pool: stop one, or wait for one to finish, and try again."
        used = self.used(who)
        if used >= self.budget_s:
            oldest = min((end for end, _ in self._used.get(who, [])), default=time.perf_counter())
            wait = max(1, round(self.window_s - (time.perf_counter() - oldest)))
            return (
                f"This session has used the worker pool for {used:,.0f} s in the last {self.window_s / 60:.0f} minutes, "
                f"its share on a shared server: try again in {wait:,} s."
            )
        return ""

    # -- running jobs ---------------------------------------------------------------
    def _start_next(self, lane: str) -> None:
        """Start queued jobs while the lane has room, the job of whoever used least lately first (the lock is held)."""
        queue = self._queue[lane]
        while queue and not self._closed and self._running(lane) < self.capacity[lane]:
            job = min(queue, key=lambda j: self.used(j.owner))  # min keeps the first of equals: the oldest
            queue.remove(job)
            job.process = subprocess.Popen(
                [sys.executable, "-m", "serve.pool"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(p or "." for p in sys.path)},  # the jobs' modules, tests' too
                start_new_session=True,  # a process group of its own: cancelling kills what it starts too
            )
            job.state, job.started = "running", time.perf_counter()
            threading.Thread(target=self._listen, args=(job,), name="pool-listener", daemon=True).start()

    def _running(self, lane: str) -> int:
        return sum(1 for j in self._jobs.values() if j.lane == lane and j.state == "running" and j.process is not None)

    def _listen(self, job: _Job) -> None:
        """Send the job, take the worker's reports until it ends; then end the job and start the next one."""
        process, outcome = job.process, None
        try:
            pickle.dump((job.fn, job.args), process.stdin)
            process.stdin.close()
            while outcome is None:
                kind, value = pickle.load(process.stdout)  # our own worker's pickles, nobody else's
                if kind == "progress":
                    with self._lock:
                        job.progress = value
                else:
                    outcome = (kind, value)
        except (EOFError, OSError, pickle.UnpicklingError):
            pass  # the process is gone: killed by Stop, or it crashed
        finally:
            process.stdout.close()
        returncode = process.wait()
        with self._lock:
            if outcome is not None:
                self._end(job, *outcome)
            elif job.over_time:
                self._end(
                    job,
                    "failed",
                    f"The run took longer than {self.job_s[job.lane]:,.0f} s, the most one run may take here; it was stopped.",
                )
            elif job.cancelling:
                self._end(job, "cancelled", None)
            else:
                self._end(job, "failed", crash_message(returncode))
            job.process = None
            self._start_next(job.lane)

    def _run_inline(self, job: _Job) -> None:
        try:
            result = job.fn(*job.args, report=lambda progress: None)
        except Exception as e:  # noqa: BLE001  (the page shows a sentence; the log keeps the traceback)
            log.exception("inline job %r failed", job.key)
            outcome = ("failed", failure_message(e))
        else:
            outcome = ("done", result)
        with self._lock:
            self._end(job, *outcome)

    def _end(self, job: _Job, kind: str, value: Any) -> None:
        """Record how the job ended (the lock is held) and wake anyone waiting."""
        if job.state in ENDED:
            return
        if job.state == "running" and job.process is not None and job.owner:
            self._used.setdefault(job.owner, []).append((time.perf_counter(), time.perf_counter() - job.started))
        job.state, job.ended_at, job.used = kind, time.perf_counter(), time.monotonic()
        job.args = ()  # a corpus is megabytes: a finished job keeps only what it found
        if kind == "done":
            job.result = value
        elif kind == "failed":
            job.error = value
        job.watchers.clear()
        self._evict()
        self._lock.notify_all()

    def _cancel(self, job: _Job) -> None:
        """Take the job out of the queue, or kill its processes (the lock is held)."""
        if job.state == "queued":
            self._queue[job.lane].remove(job)
            self._end(job, "cancelled", None)
        elif job.state == "running" and job.process is not None and not job.cancelling:
            job.cancelling = True
            kill(job.process)  # the listener sees the pipe close and ends the job

    def _evict(self) -> None:
        ended = sorted((j for j in self._jobs.values() if j.state in ENDED), key=lambda j: j.used)
        for job in ended[: max(0, len(ended) - self.keep)]:
            del self._jobs[job.key]

    def _status(self, job: _Job) -> Status:
        ahead = 0
        if job.state == "queued":
            ahead = self._running(job.lane) + self._queue[job.lane].index(job)
        end = job.ended_at if job.state in ENDED else time.perf_counter()
        return Status(
            state=job.state,
            progress=job.progress,
            result=job.result,
            error=job.error,
            ahead=ahead,
            watchers=len(job.watchers),
            seconds=end - job.started if job.started else 0.0,
        )

    # -- sessions that went away ------------------------------------------------------
    def _reap(self) -> None:
        """Every check_s: drop watchers gone for grace_s, and cancel the jobs nobody watches."""
        while True:
            time.sleep(self.check_s)
            with self._lock:
                if self._closed:
                    return
                watched = [(job, who) for job in self._jobs.values() if job.state not in ENDED for who in job.watchers]
            gone = {who for who in {who for _, who in watched} if not self.alive(who)}
            now = self.clock()
            with self._lock:
                for job in self._jobs.values():  # a run past its lane's time is stopped, watched or not
                    late = job.state == "running" and job.process is not None and time.perf_counter() - job.started > self.job_s[job.lane]
                    if late and not job.over_time:
                        log.warning("%r ran past %.0f s: stopped", job.key, self.job_s[job.lane])
                        job.over_time = True
                        kill(job.process)
                for job, who in watched:
                    if who not in job.watchers:
                        continue
                    if who not in gone:
                        job.watchers[who] = 0.0
                    elif not job.watchers[who]:
                        job.watchers[who] = now
                    elif now - job.watchers[who] >= self.grace_s:
                        del job.watchers[who]
                        if not job.watchers:
                            log.info("nobody watches %r any more: cancelled", job.key)
                            self._cancel(job)
                self.checks += 1
                self._lock.notify_all()

    def checked(self, passes: int = 1, timeout: float = 30.0) -> None:
        """Wait until the reaper has made `passes` more full passes over the watchers (for tests: an event, not a sleep)."""
        with self._lock:
            target = self.checks + passes
            if not self._lock.wait_for(lambda: self.checks >= target or self._closed, timeout):
                raise TimeoutError(f"the pool's reaper made no pass in {timeout:.0f} s")


def limit_memory() -> None:
    """In a worker, before it runs its job: its address space at most BPE_WORKER_MEMORY_MB (past it, MemoryError)."""
    import resource

    mb = settings.worker_memory_mb(MEMORY_MB)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (mb << 20, mb << 20))


def kill(process: subprocess.Popen) -> None:
    """Kill a worker and any processes it started (it leads a process group of its own)."""
    with contextlib.suppress(ProcessLookupError):  # it has ended already
        os.killpg(process.pid, signal.SIGKILL)


def crash_message(exitcode: int | None) -> str:
    """What to tell a page whose worker died without a word: -9 -> 'killed (signal 9) ...'."""
    if exitcode is not None and exitcode < 0:
        how = f"killed by signal {-exitcode}" + (", perhaps for lack of memory" if -exitcode == signal.SIGKILL else "")
    else:
        how = f"exit code {exitcode}"
    return f"The worker process stopped before finishing ({how}). Nothing was lost on this page: try again, or with a smaller corpus."


def failure_message(error: Exception) -> str:
    """A job's exception as a sentence: ValueErrors already are one (bad input); anything else names its type."""
    if isinstance(error, ValueError):
        return str(error)
    if isinstance(error, MemoryError):
        mb = settings.worker_memory_mb(MEMORY_MB)
        return f"The run needed more than the {mb:,} MB one worker process may use here; try a smaller corpus or fewer merges."
    return f"The run failed with {type(error).__name__}: {error}. Try again; if it happens again, the server log has the details."


# ---------------------------------------------------------------------------
# the worker process: python -m serve.pool


class Pickler(pickle.Pickler):
    """Pickles frozen dataclasses as a call to their class with their fields.

    subtle: the default pickles a slotted dataclass as state that a Python-level
    __setstate__ restores field by field; a trace is a quarter of a million such
    objects, and the server unpickles it holding the interpreter lock every page
    needs. Calling the class is about twice as fast to load.
    """

    fields: dict[type, tuple[str, ...] | None] = {}

    def reducer_override(self, obj: Any) -> Any:
        cls = type(obj)
        if cls not in self.fields:
            params = getattr(cls, "__dataclass_params__", None)
            simple = params is not None and params.frozen and all(f.init for f in dataclasses.fields(cls))
            self.fields[cls] = tuple(f.name for f in dataclasses.fields(cls)) if simple else None
        names = self.fields[cls]
        if names is None:
            return NotImplemented
        return cls, tuple(getattr(obj, name) for name in names)


def work() -> None:
    """Read (fn, args) from stdin, run fn, and write its reports and then its result (or a sentence) to stdout."""
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr  # a stray print must not corrupt the reports

    def send(kind: str, value: Any) -> None:
        Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump((kind, value))
        out.flush()  # fails when the server is gone, which ends this process

    limit_memory()
    fn, args = pickle.load(sys.stdin.buffer)  # from the server that started this process
    try:
        result = fn(*args, report=lambda progress: send("progress", progress))
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        send("failed", failure_message(e))
    else:
        send("done", result)


if __name__ == "__main__":
    work()
