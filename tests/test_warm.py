"""A fresh server builds what a lecture opens first, keeps it on disk, and a restart finds it (ui/warm.py, serve/disk.py).

Students are benchmarks/students.py's (Streamlit's websocket protocol) on the app as scripts/app.sh serves it
(behind HAProxy where it is installed), with a disk cache of the test's own (BPE_CACHE).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from pathlib import Path

import pytest
from conftest import GPT2, run_async

from benchmarks import students

ROOT = Path(__file__).resolve().parents[1]
WARMING = "Warming up for the class"


async def warmed(student, timeout: float = 400) -> None:
    """Rerun the page, as a teacher reloading it would, until the sidebar no longer says it is warming up."""
    deadline = time.monotonic() + timeout
    while student.shows(WARMING) or not student.seen[0]:
        assert time.monotonic() < deadline, "the warm-up did not end"
        await asyncio.sleep(1.0)
        await student.rerun(timeout=120)


@pytest.mark.skipif(not (GPT2 / "encoder.json").is_file(), reason="../shared/gpt2 not present")
def test_a_fresh_server_builds_the_lecture_and_a_restart_reads_it_from_disk(tmp_path):
    cache = tmp_path / "cache"

    async def lesson() -> None:
        server = students.Server(ROOT / "app.py", env={"BPE_CACHE": str(cache)})
        try:
            teacher = server.student("teacher")
            await teacher.open()
            await teacher.rerun()
            assert teacher.shows(WARMING)  # the sidebar says what is not ready yet
            await warmed(teacher)
            kinds = {p.name.split("-")[0] for p in cache.iterdir()}
            assert {"stdlib", "trace", "training", "vocabulary", "tokenizer"} <= kinds, kinds
            student = server.student("student")
            student.query = "corpus=stdlib&merge=37"
            await student.open()
            assert student.merge_shown() == 37  # at the first run: the trace was built before anyone asked
            await asyncio.gather(teacher.close(), student.close())
        finally:
            server.stop()
        assert "missing ScriptRunContext" not in Path(server.log).read_text()  # the warm-up thread draws nothing
        kept = {p.name: p.stat().st_mtime_ns for p in cache.iterdir() if not p.name.startswith("vocabulary")}
        server = students.Server(ROOT / "app.py", env={"BPE_CACHE": str(cache)})
        try:
            student = server.student("after the restart")
            student.query = "corpus=stdlib&merge=37"
            await student.open()
            await student.until(lambda: student.merge_shown() == 37, timeout=120)
            await warmed(student)
            await student.go("Vocabulary")
            await student.choose("Vocabulary of", "GPT-4o")
            assert student.shows("tokens of GPT-4o's tokenizer")  # at the first run: read from the disk, not counted again
            assert {p.name for p in cache.iterdir() if p.name in kept} == set(kept)  # the same entries, read again
            await student.close()
        finally:
            server.stop()

    run_async(lesson())


def test_the_warm_up_thread_touches_nothing_that_needs_a_page():
    # Streamlit logs "Thread 'warm-up': missing ScriptRunContext!" when a thread that runs no page draws (a cache's
    # spinner did, twice on a first visit): every step of the warm-up but the pool's, in a thread of that name
    from streamlit.runtime.scriptrunner_utils import script_run_context

    from ui import warm

    said = []
    handler = logging.Handler()
    handler.emit = lambda record: said.append(record.getMessage())
    logger = logging.getLogger(script_run_context.__name__)  # Streamlit's loggers do not propagate
    logger.addHandler(handler)
    jobs = []
    try:
        thread = threading.Thread(target=lambda: jobs.extend(warm._jobs()), name=warm.WATCHER)
        thread.start()
        thread.join(timeout=300)
    finally:
        logger.removeHandler(handler)
    assert [label for label, _ in jobs] == [warm.TRACE, warm.VOCABULARIES]
    assert not [message for message in said if "ScriptRunContext" in message], said
