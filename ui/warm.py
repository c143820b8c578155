"""What every class needs, built when the server starts; and the line telling the teacher what is not ready yet.

A fresh server built the 2 MB preset's trace when the first student opened
/?corpus=stdlib&merge=37 (20 s), and GPT-4o's vocabulary when the first student
asked for it (14 s), while they waited. The first run of a server starts a thread
(`start`, called by app.py on every run; only the first does anything) that asks
the worker pool, one job after the other, for what a lecture opens first: the 2 MB
preset's trace and training at its own settings, then GPT-2's, GPT-4's and GPT-4o's
vocabularies counted on held-out text -- each read from the disk when an earlier
start kept it (serve/disk.py), so a restart is ready in seconds. A class asking for
the same run meanwhile joins it. The real tokenizers load in real.warm(), as before.

`notice` draws in the sidebar, while any of it is still being built, one line saying
what (the page that needs it waits, says so, and goes on by itself once it is ready).

What it does not do: build anything itself (ui/runs.py and ui/views/vocabulary.py say
what the jobs are), or warm up corpora a class picks (a paste, an upload).
"""

from __future__ import annotations

import logging
import sys
import threading

import streamlit as st

log = logging.getLogger(__name__)
WATCHER = "warm-up"  # who asks the pool for the start-up work: a watcher that never goes away (ui.work.WARM_UP)
WAIT_S = 600.0  # the longest one job of the warm-up is waited for
TRACE, VOCABULARIES = "the 2 MB preset's trace", "the vocabularies of GPT-2, GPT-4 and GPT-4o"
_pending: list[str] = []  # what is still being built, as the teacher is told it
_started = False
_lock = threading.Lock()


def start() -> None:
    """Start the warm-up thread, once per server process (never under AppTest: each test builds what it uses)."""
    global _started
    with _lock:
        if _started or "streamlit.testing.v1.app_test" in sys.modules:
            return
        _started = True
        _pending.extend([TRACE, VOCABULARIES])
    threading.Thread(target=_warm, name="warm-up", daemon=True).start()


def pending() -> list[str]:
    """What is still being built: the warm-up's jobs, and the real tokenizers still loading (ui/real.py)."""
    from ui import real

    loading = real.loading()
    with _lock:
        return [*_pending, *([f"loading {', '.join(loading)}"] if loading else [])]


def notice() -> None:
    """One line in the sidebar while anything of the warm-up is not ready: nothing at all once it is."""
    waiting = pending()
    if waiting:
        st.sidebar.caption(f"Warming up for the class (once per server start): {'; '.join(waiting)}…")  # e.g. '…: loading GPT-4o…'


def _done(label: str) -> None:
    with _lock:
        if label in _pending:
            _pending.remove(label)


def _warm() -> None:
    """Ask the pool for each job in turn and wait for it (a job that fails is logged; the pages ask again themselves)."""
    try:
        for label, jobs in _jobs():
            for key, fn, args in jobs:
                _ask(key, fn, args)
            _done(label)
    except Exception:  # noqa: BLE001  (the warm-up is a courtesy: a failure must not stop the server)
        log.exception("the warm-up stopped")
    with _lock:
        _pending.clear()


def _ask(key, fn, args) -> None:
    from serve import jobs
    from ui import work

    pool = work.pool()
    status = pool.submit(key, fn, *args, who=WATCHER, lane="short", inline=fn is jobs.known)  # what the disk had: no worker
    # subtle: ended(), not wait(): a replica would fetch and unpickle every result (three vocabularies of up to
    # 200,000 rows) that no student of it may ask for; the pool server keeps them for whoever does
    state = status.state if status.ended else pool.ended(key, WAIT_S)
    if state == "failed":
        log.warning("warm-up: %r failed: %s", key, pool.status(key).error)


def _jobs():
    """(what the teacher is told, [(pool key, job, arguments)]) in the order they are built."""
    from bpe.spec import TrainSpec
    from serve import disk, jobs
    from ui import corpus, real, runs, state
    from ui.views import vocabulary

    preset = corpus.SOURCES["stdlib"]
    data = corpus.stdlib_bytes(spinner=False)  # no page to show a spinner on: this thread runs none
    spec = TrainSpec(  # the run the sidebar sets up when a class picks the preset (or opens a link to it)
        pretokenizer=preset.pretokenizer,
        special_tokens=preset.special_tokens,
        tie_break=state.DEFAULTS["tie_break"],
        algorithm=state.DEFAULTS["algorithm"],
    )
    built = []
    for job, fn in ((runs.trace_job, jobs.trace), (runs.training_job, jobs.training)):
        key, args, kept = job(corpus.digest(data), data, spec, preset.merges)
        found = disk.load(*kept)
        built.append((key, jobs.known, (found,)) if found is not None else (key, fn, args))
    yield TRACE, built

    held_out, rows = corpus.stdlib_held_out(spinner=False), []
    for key in real.ENCODINGS:
        files = vocabulary.real_files(real.Real(real.ENCODINGS[key], None))
        if files is not None:
            found = disk.load("vocabulary", jobs.vocabulary_kept(files, held_out))
            job = (jobs.known, (found,)) if found is not None else (jobs.vocabulary_rows, (files, held_out))
            rows.append((vocabulary.real_job(key, files), *job))
    yield VOCABULARIES, rows
