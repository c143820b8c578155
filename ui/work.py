"""How pages use the worker pool: one pool per server, the session as a watcher, a view that polls.

`pool()` is the server's serve.pool.Pool; a session watches the jobs it asked for
(`ask`), at most one per purpose ("trace", "race", ...): asking for a new one
stops watching the old, so a student who switches from naive to heap frees the
worker. `follow` draws a running job's progress in a fragment that reruns every
POLL_S seconds (or as asked), holding no script thread while it waits, and
reruns the page when the job has ended.

A pool that does not answer (a stalled pool server behind replicas: serve/shared_pool.py
gives every call a deadline) is one sentence on the page, which tries again by
itself every RETRY_S (`unavailable`), never a spinner forever or a traceback.

What it does not do: run anything itself (serve/jobs.py is the work), or decide
what to show (the pages and their views do).
"""

from __future__ import annotations

import atexit
import logging
from collections.abc import Callable, Hashable
from dataclasses import replace
from typing import Any

import streamlit as st

from serve import settings
from serve.pool import Pool, Status
from serve.shared_pool import RemotePool, Unavailable
from ui import compat

POLL_S = 0.5  # how often a page looks at a running job it draws live (a race's chart)
RETRY_S = 2.0  # how often a page whose pool did not answer tries again
WARM_UP = "warm-up"  # the watcher of the jobs the server starts for itself (ui/warm.py)
NOT_ANSWERING = "The worker pool is not answering; retrying every 2 seconds… (the server starts a new one by itself)"
log = logging.getLogger(__name__)


@st.cache_resource(show_spinner=False, on_release=lambda pool: pool.close())
def pool() -> Pool | RemotePool:
    """The server's pool of worker processes (BPE_WORKERS sets how many run long jobs).

    A replica started by serve/replicas.py (BPE_POOL names a socket) shares the machine's pool
    with the other replicas instead: serve/shared_pool.py.
    """
    shared = settings.shared_pool()
    if shared is not None:
        return RemotePool(shared.address, shared.key, replica=shared.replica, alive=session_alive)
    made = Pool(alive=session_alive)
    atexit.register(made.close)  # the workers must not outlive the server
    return made


def session_id() -> str:
    return compat.session_id()


def session_alive(who: str) -> bool:
    """Whether a browser still holds the session open (always, outside a real server: AppTest); the server's own
    warm-up (ui/warm.py) always is."""
    return who == WARM_UP or compat.session_alive(who)


def ask(purpose: str, key: Hashable, fn: Callable[..., Any], *args: Any, lane: str = "long", inline: bool = False) -> Status:
    """Submit (or join) the job for key on behalf of this session; stop watching its previous job for purpose."""
    watching = st.session_state["watching"]
    old = watching.get(purpose)
    if old is not None and old != key:
        pool().stop(old, session_id())
    watching[purpose] = key
    return pool().submit(key, fn, *args, who=session_id(), lane=lane, inline=inline)


def let_go(purpose: str) -> Hashable | None:
    """Stop watching this session's job for purpose (the job ends if nobody else watches); return its key."""
    key = st.session_state["watching"].pop(purpose, None)
    if key is not None:
        pool().stop(key, session_id())
    return key


def watched(purpose: str) -> Hashable | None:
    return st.session_state["watching"].get(purpose)


def settle(purpose: str, state_key: str) -> Status | None:
    """Bring the record st.session_state[state_key] up to date with this session's job for purpose.

    Returns the job's status while it is queued or running. Once it has ended,
    the record becomes its result, or -- stopped by someone, cut short by a
    crash -- the last progress it reported, marked "stopped"; a failure's
    sentence is kept in st.session_state["failed"][purpose] for the page to say.
    """
    key = watched(purpose)
    if key is None:
        return None
    status = pool().status(key)
    if status is not None and not status.ended:
        return status
    let_go(purpose)
    if status is not None and status.state == "done":
        st.session_state[state_key] = status.result
        return None
    if status is not None and status.state == "failed":
        st.session_state["failed"][purpose] = status.error
    _keep_progress(status, state_key)
    return None


def stop(purpose: str, state_key: str) -> None:
    """This session's Stop: stop watching the job (it ends unless others watch it) and keep what it had done."""
    key = watched(purpose)
    if key is None:
        return
    status = pool().status(key)
    let_go(purpose)
    if status is not None and status.state == "done":
        st.session_state[state_key] = status.result
    else:
        _keep_progress(status, state_key)


def _keep_progress(status: Status | None, state_key: str) -> None:
    """Keep a job's last progress report as the session's record, marked stopped (if it had got anywhere)."""
    progress = status.progress if status is not None else None
    if progress is not None and (getattr(progress, "results", None) or getattr(progress, "points", None)):
        st.session_state[state_key] = replace(progress, status="stopped", doing="")


def section(
    purpose: str,
    running: Status | None,
    start_at,
    stop_at,
    label: str,
    start: Callable[[], None],
    *,
    disabled: bool = False,
    stop_help: str | None = None,
) -> tuple[Status | None, Any]:
    """A page section's Start and Stop buttons (keys purpose_start, purpose_stop) and why its last run failed.

    start() asks for the run (see ask); Stop ends this session's watch and keeps
    what the run had done. Returns the run's status while it goes (None when it
    does not) and the session's record of it, st.session_state[purpose]. The page
    then follows the run, or draws the record.
    """
    if start_at.button(label, type="primary", key=f"{purpose}_start", disabled=disabled, width="stretch"):
        start()
        running = settle(purpose, purpose)
    if stop_at.button("Stop", key=f"{purpose}_stop", help=stop_help, disabled=not running, width="stretch"):
        stop(purpose, purpose)
        running = None
    if purpose in st.session_state["failed"]:
        st.error(st.session_state["failed"][purpose])
    return running, st.session_state[purpose]


def follow(key: Hashable, draw: Callable[[Status], None], every: float = POLL_S) -> None:
    """Draw the job's progress with draw(status) every `every` seconds; rerun the page once it has ended."""

    @st.fragment(run_every=every)
    def poll() -> None:
        try:
            status = pool().status(key)
        except Unavailable as e:  # the fragment keeps polling: the page goes on once the pool answers again
            log.warning("%s", e)
            st.warning(NOT_ANSWERING)
            return
        if status is None or status.ended:
            st.rerun()
        draw(status)

    poll()


def unavailable(error: Unavailable) -> None:
    """What a page whose pool did not answer shows: one sentence; the page runs again every RETRY_S until the pool answers.

    app.py calls it for an Unavailable the page raised (ui/runs.py, the race page: any pool call); the
    teacher's terminal gets the detail.
    """
    log.warning("%s", error)
    st.warning(NOT_ANSWERING)

    @st.fragment(run_every=RETRY_S)
    def retry() -> None:
        try:
            pool().busy()
        except Unavailable:
            return
        st.rerun()

    retry()


def waiting(status: Status, what: str) -> str:
    """'Waiting for a worker: 2 runs start before yours.' for a queued job, else ''."""
    if status.state != "queued":
        return ""
    runs = "1 run starts" if status.ahead == 1 else f"{status.ahead} runs start"
    return f"{what} waits for a worker process: {runs} before it."
