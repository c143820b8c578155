"""What the step page builds once for every session: a class on the same merge waits for one build."""

from __future__ import annotations

import threading
import types

from conftest import until

import ui.step_data
from ui.step_data import Shelf

SESSIONS = 16


class CountingLock:
    """The shelf's lock for one value being built, counting the sessions that have come to wait on it."""

    arrived = 0
    _count = threading.Lock()

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        with CountingLock._count:
            CountingLock.arrived += 1
        self._lock.acquire()

    def __exit__(self, *exc) -> None:
        self._lock.release()


def test_sessions_asking_together_for_a_missing_value_build_it_once(monkeypatch):
    shelf, builds = Shelf(8), []
    monkeypatch.setattr(ui.step_data, "threading", types.SimpleNamespace(Lock=CountingLock))  # the build locks made from now on
    CountingLock.arrived = 0

    def build() -> object:
        builds.append(1)
        # a slow build: it ends only once every other session has asked for the same value and waits for it
        until(lambda: CountingLock.arrived == SESSIONS, 30, "every session to ask for the value being built", every=0.01)
        return object()

    found = []
    threads = [threading.Thread(target=lambda: found.append(shelf.get("merge 1", build))) for _ in range(SESSIONS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1 and len({id(value) for value in found}) == 1


def test_the_shelf_keeps_the_values_used_last():
    shelf = Shelf(2)
    for key in ("a", "b"):
        shelf.get(key, lambda key=key: key.upper())
    shelf.get("a", lambda: "rebuilt")  # used again: kept
    shelf.get("c", lambda: "C")  # pushes out b, the least recently used
    assert shelf.get("a", lambda: "rebuilt") == "A"
    assert shelf.get("b", lambda: "rebuilt") == "rebuilt"
