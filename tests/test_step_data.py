"""What the step page builds once for every session: a class on the same merge waits for one build."""

from __future__ import annotations

import threading
import time

from ui.step_data import Shelf


def test_sessions_asking_together_for_a_missing_value_build_it_once():
    shelf, builds, started = Shelf(8), [], threading.Barrier(16)

    def build() -> object:
        builds.append(1)
        time.sleep(0.2)  # a slow build: the window in which the others ask for the same value
        return object()

    found = []

    def session() -> None:
        started.wait()
        found.append(shelf.get("merge 1", build))

    threads = [threading.Thread(target=session) for _ in range(16)]
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
