"""The worker pool: runs in worker processes match in-process ones, are shared, stop, and survive crashes.

The jobs run in real worker processes (forkserver), so they live in tests/pool_jobs.py, a module a
worker can import by name without this one's imports.
"""

from __future__ import annotations

import gc
import random
import signal
import threading
import time

import pytest
from conftest import until
from pool_jobs import counted, crash, forever, gc_state, gone, hog, lasting, open_gate, refuse, with_child

from bpe import ALGORITHMS
from bpe.spec import TrainSpec
from serve import jobs
from serve.jobs import RunKey
from serve.pool import Pool, crash_message


def random_words(n_words: int, seed: int = 0) -> bytes:
    rng = random.Random(seed)
    return " ".join("".join(rng.choice("abcdefghij") for _ in range(rng.randint(3, 12))) for _ in range(n_words)).encode()


TEXT = random_words(1500)  # about 12 KB: every trainer makes 60 merges in well under a second


# -- helpers ------------------------------------------------------------------------------


@pytest.fixture
def pool():
    p = Pool(workers=1, quick=1, check_s=0.05, grace_s=0.2)
    yield p
    p.close()


RACE_ARGS = (RunKey("race", "key", TrainSpec()), "random words", TEXT, TrainSpec(), 60, 30.0, False)


# -- the same figures as in-process -----------------------------------------------------------


def test_a_race_in_a_worker_makes_the_same_merges_and_counters_as_in_process(pool):
    status = pool.submit("race", jobs.race, *RACE_ARGS, who="a")
    assert status.state == "running"  # an idle pool starts it at once
    done = pool.wait("race", timeout=120)
    assert done.state == "done", done.error
    here = jobs.race(*RACE_ARGS, report=lambda progress: None)
    there = done.result
    assert [r.algorithm for r in there.results] == list(ALGORITHMS)
    for mine, theirs in zip(here.results, there.results):
        assert theirs.merges == mine.merges and theirs.counts == mine.counts
        assert theirs.work == mine.work and theirs.stop_reason == mine.stop_reason == "vocab_size"
    assert there.status == "finished" and there.prep_seconds.keys() == here.prep_seconds.keys()


def test_a_race_reports_progress_while_it_runs(pool):
    seen = []
    pool.submit("race", jobs.race, *RACE_ARGS, who="a")

    def ended() -> bool:
        status = pool.status("race")
        if status.progress is not None:
            seen.append(status.progress)
        return status.state not in ("queued", "running")

    until(ended, 120, "the race to end", every=0.01)
    assert pool.status("race").state == "done", pool.status("race").error
    assert seen and all(isinstance(p, jobs.RaceRecord) and p.status == "running" for p in seen)


def test_the_server_never_switches_the_garbage_collector_off(pool):
    """A worker pauses it (its main thread trains); the server's script threads train with it on."""
    pool.submit("gc", gc_state, who="a")
    assert pool.wait("gc", timeout=60).result is False  # paused in the worker
    on = []
    thread = threading.Thread(target=lambda: on.append(gc_state(report=None)))
    thread.start()
    thread.join()
    assert on == [True] and gc.isenabled()


# -- shared runs ----------------------------------------------------------------------------


def test_two_sessions_asking_for_the_same_run_share_it(pool, tmp_path):
    log = tmp_path / "runs"
    first = pool.submit("same", counted, str(log), who="alice")
    second = pool.submit("same", counted, str(log), who="bob")
    assert second.watchers == 2
    open_gate(log)
    assert pool.wait("same", timeout=60).result == "done"
    assert log.read_text() == "run\n"  # one run for both
    assert pool.submit("same", counted, str(log), who="carol").state == "done"  # the result is kept
    assert log.read_text() == "run\n"
    assert first.state == "running" and first.watchers == 1  # an idle pool started it for the first asker


def test_queued_runs_know_how_many_start_before_them(pool):
    pool.submit("one", forever, who="a")
    assert pool.submit("two", forever, who="b").ahead == 1
    assert pool.submit("three", forever, who="c").ahead == 2
    pool.stop("one", who="a")
    until(lambda: pool.status("two").state == "running", 30, "the next queued run to start")
    assert pool.status("three").ahead == 1


def test_short_runs_do_not_wait_behind_long_ones(pool, tmp_path):
    pool.submit("race", forever, who="a")
    assert pool.submit("trace", counted, str(tmp_path / "runs"), who="b", lane="short").state == "running"


# -- stopping ----------------------------------------------------------------------------------


def test_stop_kills_the_run_and_the_next_one_starts(pool):
    pool.submit("long", forever, who="a")
    pool.submit("next", forever, who="b")
    until(lambda: (pool.status("long").progress or 0) > 2, 30, "the run to report three times")
    pool.stop("long", who="a")
    until(lambda: pool.status("long").state == "cancelled", 30, "the stopped run to end")
    assert pool.status("long").progress > 2  # what it had reported is kept
    until(lambda: pool.status("next").state == "running", 30, "the next run to start")
    assert pool.busy()["long running"] == 1


def test_a_shared_run_goes_on_when_one_watcher_stops(pool):
    pool.submit("shared", forever, who="a")
    pool.submit("shared", forever, who="b")
    pool.stop("shared", who="a")
    reported = pool.status("shared").progress or 0
    pool.checked(2)  # the reaper has looked at the watchers since (a whole pass began after the stop)
    # and the run still reports: it was not killed
    until(lambda: (pool.status("shared").progress or 0) > reported, 30, "the shared run to report again")
    status = pool.status("shared")
    assert status.state == "running" and status.watchers == 1


class Clock:
    """A clock the test moves by hand: the pool's grace period is measured on it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_session_that_goes_away_frees_its_run():
    sessions, clock = {"a": True}, Clock()
    pool = Pool(workers=1, alive=lambda who: sessions.get(who, False), check_s=0.02, grace_s=5.0, clock=clock)
    try:
        pool.submit("long", forever, who="a")
        until(lambda: pool.status("long").state == "running", 30, "the run to start")
        clock.now += 60
        pool.checked(2)
        assert pool.status("long").state == "running"  # alive: a minute on, it goes on
        sessions["a"] = False
        pool.checked(2)  # seen gone, at this time
        assert pool.status("long").state == "running"  # within the grace period
        clock.now += 5.0
        until(lambda: pool.status("long").state == "cancelled", 30, "the run of a session gone for its grace period to end")
    finally:
        pool.close()


def test_a_session_that_is_briefly_disconnected_keeps_its_run():
    alive, clock = {"a": True}, Clock()
    pool = Pool(workers=1, alive=lambda who: alive["a"], check_s=0.02, grace_s=1.0, clock=clock)
    try:
        pool.submit("long", forever, who="a")
        alive["a"] = False
        pool.checked(2)  # seen gone
        clock.now += 0.9  # under the grace period: a reconnecting browser
        pool.checked(2)
        alive["a"] = True
        pool.checked(2)  # seen back: the grace period starts afresh next time
        clock.now += 10
        pool.checked(2)
        assert pool.status("long").state == "running" and pool.status("long").watchers == 1
    finally:
        pool.close()


def test_stopping_a_run_kills_the_processes_it_started(pool, tmp_path):
    path = tmp_path / "pid"
    pool.submit("child", with_child, str(path), who="a")
    until(lambda: pool.status("child").progress is not None, 30, "the run to start its child process")
    child = int(path.read_text())
    assert not gone(child)
    pool.stop("child", who="a")
    until(lambda: gone(child), 10, "the stopped run's child process to end")


def test_a_queued_run_that_nobody_watches_never_starts(pool, tmp_path):
    log = tmp_path / "runs"
    pool.submit("busy", forever, who="a")
    pool.submit("waiting", counted, str(log), who="b")
    pool.stop("waiting", who="b")
    assert pool.status("waiting").state == "cancelled"
    pool.stop("busy", who="a")
    until(lambda: pool.status("busy").state == "cancelled", 30, "the stopped run to end")
    # subtle: the lane starts its next job under the same lock that ends "busy", so by now any start has happened
    assert pool.busy() == {"long running": 0, "long queued": 0, "short running": 0, "short queued": 0}
    assert pool.status("waiting").state == "cancelled" and not log.exists()


# -- failures -----------------------------------------------------------------------------------


def test_a_crashing_worker_gives_a_clear_message_and_the_next_run_works(pool, tmp_path):
    pool.submit("crash", crash, who="a")
    status = pool.wait("crash", timeout=60)
    assert status.state == "failed"
    assert status.error == crash_message(-signal.SIGKILL)
    assert "stopped before finishing (killed by signal 9, perhaps for lack of memory)" in status.error
    assert pool.submit("after", counted, str(tmp_path / "runs"), who="a").state == "running"
    open_gate(tmp_path / "runs")
    assert pool.wait("after", timeout=60).result == "done"
    (tmp_path / "runs.go").unlink()  # the next run waits again
    again = pool.submit("crash", counted, str(tmp_path / "runs"), who="a")  # a failed run is started again when asked
    assert again.state == "running"


def test_a_job_that_refuses_its_input_says_why_in_a_sentence(pool):
    pool.submit("bad", refuse, who="a")
    status = pool.wait("bad", timeout=60)
    assert (status.state, status.error) == ("failed", "The corpus is empty: paste some text.")


# -- in-process runs, for tiny inputs -------------------------------------------------------------


def test_an_inline_run_happens_once_for_sessions_asking_together(pool, tmp_path):
    log = tmp_path / "runs"
    results = []

    def ask(who: str) -> None:
        results.append(pool.submit("tiny", counted, str(log), who=who, inline=True).result)

    threads = [threading.Thread(target=ask, args=(f"s{i}",)) for i in range(5)]
    for t in threads:
        t.start()
    until(lambda: (s := pool.status("tiny")) is not None and s.watchers == 5, 30, "all five sessions to ask for the run")
    open_gate(log)
    for t in threads:
        t.join()
    assert results == ["done"] * 5 and log.read_text() == "run\n"


def test_finished_results_are_kept_up_to_a_limit():
    pool = Pool(workers=1, keep=2)
    try:
        for key in ("a", "b", "c"):
            pool.submit(key, refuse, who="x", inline=True)
            pool.submit(key + "!", gc_state, who="x", inline=True)
        kept = [key for key in ("a", "a!", "b", "b!", "c", "c!") if pool.status(key) is not None]
        assert kept == ["c", "c!"]
    finally:
        pool.close()


def test_results_cross_the_pipe_unchanged_frozen_dataclasses_included():
    """The worker pickles frozen dataclasses as calls to their class (faster to load); they come back equal."""
    import io
    import pickle

    from bpe import pretokenize
    from serve.pool import Pickler

    trace = jobs.trace_of(pretokenize(TEXT, pretokenizer="gpt2"), 30, TrainSpec(), 60.0, lambda progress: None, time.perf_counter())
    buffer = io.BytesIO()
    Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(trace)
    back = pickle.loads(buffer.getvalue())
    assert back == trace
    assert [e.detail for e in back.events] == [e.detail for e in trace.events]  # detail is left out of MergeEvent's ==


# -- one session cannot take the pool from the others ----------------------------------------


def test_a_session_with_its_limit_of_runs_going_is_refused_another_in_one_sentence(pool):
    for i in range(pool.max_jobs):
        assert pool.submit(("a", i), forever, who="a").state in ("running", "queued")
    refused = pool.submit(("a", "more"), forever, who="a")
    assert refused.state == "failed" and refused.error.startswith(f"This page already has {pool.max_jobs} runs going")
    assert pool.submit(("b", 0), forever, who="b").state == "queued"  # another session is not held to a's count
    pool.stop(("a", 0), who="a")
    until(lambda: pool.status(("a", 0)).state == "cancelled", 30, "the stopped run to end")
    assert pool.submit(("a", "more"), forever, who="a").state in ("running", "queued")  # one ended: room again


def test_a_session_past_its_time_budget_is_told_when_to_try_again(pool, tmp_path):
    pool.budget_s, pool.window_s = 0.3, 60.0
    assert pool.submit("first", lasting, str(tmp_path / "runs.txt"), 0.5, who="a").state in ("running", "queued")
    until(lambda: pool.status("first").state == "done", 30, "the first run (0.5 s, past the 0.3 s budget) to end")
    refused = pool.submit("second", counted, str(tmp_path / "runs.txt"), who="a")
    assert refused.state == "failed" and "try again in" in refused.error and "used the worker pool for" in refused.error
    assert pool.submit("theirs", counted, str(tmp_path / "runs.txt"), who="b").state in ("running", "queued")
    pool.window_s = 0.01
    until(lambda: pool.used("a") == 0, 30, "the budget's window to pass")
    assert pool.submit("second", counted, str(tmp_path / "runs.txt"), who="a").state in ("running", "queued")


def test_a_freed_worker_takes_the_job_of_the_session_that_used_least(pool, tmp_path):
    first, runs = str(tmp_path / "first.txt"), str(tmp_path / "runs.txt")  # two gates: only the first run is let end
    pool.submit("a1", counted, first, who="a")
    until(lambda: pool.status("a1").state == "running", 30, "the first run to start")
    pool.submit("a2", counted, runs, who="a")  # queued first
    pool.submit("b1", counted, runs, who="b")  # queued second, by a session that has used nothing
    open_gate(first)
    until(lambda: pool.status("a1").state == "done", 30, "the first run to end")
    until(lambda: "running" in (pool.status("a2").state, pool.status("b1").state), 30, "a queued run to take the freed worker")
    assert pool.status("b1").state == "running" and pool.status("a2").state == "queued"


def test_a_run_past_its_lanes_time_is_stopped_with_a_sentence(pool):
    pool.job_s["long"] = 1.0
    pool.submit("k", forever, who="a")
    until(lambda: pool.status("k").ended, 30, "the run past its lane's time to be stopped")
    assert pool.status("k").state == "failed" and pool.status("k").error.startswith("The run took longer than 1 s")


def test_a_run_past_its_memory_is_one_sentence(pool, monkeypatch):
    monkeypatch.setenv("BPE_WORKER_MEMORY_MB", "400")
    pool.submit("k", hog, who="a")
    status = pool.wait("k", 60)
    assert status.state == "failed" and "more than the 400 MB" in status.error
