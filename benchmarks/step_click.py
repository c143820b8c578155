"""Server CPU per Next click on the step-through page, on the 2 MB stdlib corpus (1,000 merges).

    .venv/bin/python benchmarks/step_click.py              # per-click figures
    .venv/bin/python benchmarks/step_click.py --profile    # and where the time went (cProfile, by own time)
    .venv/bin/python benchmarks/step_click.py --source textbook --clicks 10

The page runs under Streamlit's AppTest: the real script runner, in a thread of
this process. Measured is that thread's CPU time for one run after a click,
plus the CPU to serialise the run's messages to bytes, which a real server does
before sending them (AppTest skips that step). Timing the script thread leaves
out AppTest's own polling and parsing, which a server does not do. The script
cache is shared between runs, as a server's is (AppTest recompiles the pages
on every run otherwise).

Two kinds of run:
- "fragment": what a browser's Next click costs. The step page's controls live
  in an st.fragment, so the browser asks for the fragment alone; the harness
  asks for the same rerun (RerunData.fragment_id_queue).
- "whole app": router, sidebar and page, as after any sidebar change; an upper bound.
Each is timed twice: on merges no session has opened yet (their views are built
on this click) and on merges already opened (every later click, by any session).

Not measured: the browser, the websocket, the first visit (building the trace).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from apptest import open_app  # noqa: E402
from streamlit.runtime.scriptrunner.script_runner import ScriptRunner  # noqa: E402

PROFILE: cProfile.Profile | None = None
RUNS: list[float] = []  # CPU seconds of each script run, in the script thread
RUNNERS: list[ScriptRunner] = []  # the runner of each run, to read its messages
FRAGMENT: list[str] = []  # when set, runs are reruns of this fragment only, as a click inside it asks for


def like_a_server() -> None:
    """One script cache for every run, as a server keeps; fragment reruns when FRAGMENT is set."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test, local_script_runner

    shared = ScriptCache()
    app_test.ScriptCache = local_script_runner.ScriptCache = lambda: shared
    rerun_data = local_script_runner.RerunData

    def scoped(**kwargs):
        if FRAGMENT:
            kwargs["fragment_id_queue"] = list(FRAGMENT)
        return rerun_data(**kwargs)

    local_script_runner.RerunData = scoped


def timed_runs() -> None:
    """Wrap ScriptRunner._run_script so each run records its thread's CPU time (and profile)."""
    run_script = ScriptRunner._run_script

    def timed(self, rerun_data):
        RUNNERS.append(self)
        start = time.thread_time()
        if PROFILE:
            PROFILE.enable()
        try:
            return run_script(self, rerun_data)
        finally:
            if PROFILE:
                PROFILE.disable()
            RUNS.append(time.thread_time() - start)

    ScriptRunner._run_script = timed


GC_PAUSES: list[float] = []  # seconds of each garbage collection during the clicks


def time_collections() -> None:
    started = []

    def callback(phase: str, info: dict) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            GC_PAUSES.append(time.perf_counter() - started.pop())

    gc.callbacks.append(callback)


def serialise() -> tuple[float, int, int]:
    """CPU seconds, bytes and count of the last run's messages, serialised as the server does before sending."""
    msgs = RUNNERS[-1].forward_msgs()
    start = time.thread_time()
    size = sum(len(m.SerializeToString()) for m in msgs)
    return time.thread_time() - start, size, len(msgs)


def next_button(at):
    return next(b for b in at.button if b.key == "next" or "Next" in b.label)  # (or the page before keys)


def step_slider(at):
    return next(s for s in at.slider if s.key in ("w_step", "step"))


def clicks(at, n: int) -> tuple[list[float], list[int], list[int]]:
    """Click Next n times: (server CPU seconds, bytes, messages) of each click."""
    cpu, sizes, counts = [], [], []
    for _ in range(n):
        RUNS.clear()
        next_button(at).click().run()
        assert not at.exception, at.exception
        seconds, size, count = serialise()
        cpu.append(sum(RUNS) + seconds)
        sizes.append(size)
        counts.append(count)
    return cpu, sizes, counts


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1e3:5.1f} ms, max {max(values) * 1e3:5.1f} ms"


def main() -> None:
    global PROFILE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default="stdlib", help="a corpus preset (a key of ui.corpus.SOURCES)")
    parser.add_argument("--clicks", type=int, default=30)
    parser.add_argument("--profile", action="store_true", help="print the functions the fragment clicks spent their time in")
    parser.add_argument("--callers", nargs="*", help="with --profile: who called these functions")
    parser.add_argument("--sort", default="cumulative", help="with --profile: cumulative or tottime")
    args = parser.parse_args()

    like_a_server()
    timed_runs()
    start = time.perf_counter()
    at = open_app(source=args.source)
    print(f"first visit ({args.source}): {time.perf_counter() - start:.1f} s wall (corpus, pre-tokenizing, trace)")
    time_collections()
    fragment_ids = list(at._fragment_storage._fragments)
    assert len(fragment_ids) == 1, fragment_ids  # the step page's stepper

    print(f"{args.clicks} Next clicks on '{args.source}', server CPU per click (script thread + serialising its messages):")
    for kind, fragment in (("whole app", []), ("fragment", fragment_ids)):
        FRAGMENT[:] = fragment
        start_k = step_slider(at).value
        new, sizes, counts = clicks(at, args.clicks)
        assert at.session_state["step"] == start_k + args.clicks  # every click moved one merge on
        step_slider(at).set_value(start_k).run()
        if PROFILE is None and args.profile and fragment:
            PROFILE = cProfile.Profile()
        again, _, _ = clicks(at, args.clicks)
        print(f"  {kind:9}, merges opened for the first time: {ms(new)}")
        print(f"  {kind:9}, merges opened before:            {ms(again)}")
        print(f"  {kind:9}: {statistics.median(counts):.0f} messages, {statistics.median(sizes) / 1e3:.1f} KB per click")
        step_slider(at).set_value(start_k + 2 * args.clicks + 1).run()
    print(
        f"  garbage collections during all clicks: {len(GC_PAUSES)}, {sum(GC_PAUSES) * 1e3:.0f} ms in all, longest {max(GC_PAUSES, default=0) * 1e3:.1f} ms"
    )
    if PROFILE:
        out = io.StringIO()
        stats = pstats.Stats(PROFILE, stream=out).sort_stats(args.sort)
        stats.print_stats(30)
        if args.callers:
            stats.print_callers(*args.callers)
        print(out.getvalue())


if __name__ == "__main__":
    main()
