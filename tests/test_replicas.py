"""`bash scripts/app.sh --replicas 2`: two app processes behind HAProxy, on loopback, as a class reaches them.

Students are benchmarks/students.py's: websockets speaking Streamlit's protocol,
each loading the page over HTTP first, as a browser does, to get the proxy's
cookie. The step page's card says which merge a student is on, so a session
that moved to another replica would show it (a new session starts at merge 1).
One server for the module: the tests run in order, and the last one stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import websockets
from conftest import run_async, until
from pool_jobs import stopped

from benchmarks import students
from serve.replicas import haproxy_config

ROOT = Path(__file__).resolve().parents[1]
HAPROXY = shutil.which("haproxy") or ("/usr/sbin/haproxy" if os.path.exists("/usr/sbin/haproxy") else None)
pytestmark = pytest.mark.skipif(HAPROXY is None, reason="HAProxy is not installed (scripts/test.sh installs it)")


class Served:
    """The script's process, its port, and what it printed.

    netns: run it in that network namespace (another "machine", tests/test_hosts.py), listening on every
    address at port 8501 as a real machine would. wait=False: return at once (call ready() later). env: set for it too.
    """

    def __init__(self, tmp: Path, replicas: int = 2, netns: str = "", wait: bool = True, env: dict[str, str] | None = None) -> None:
        tmp.mkdir(parents=True, exist_ok=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = 8501 if netns else s.getsockname()[1]
        self.log = tmp / "app.log"
        command = ["ip", "netns", "exec", netns] if netns else []
        command += ["bash", "scripts/app.sh", "--replicas", str(replicas), "--server.port", str(self.port)]
        command += ["--server.address", "0.0.0.0" if netns else "127.0.0.1", "--server.fileWatcherType", "none"]
        with open(self.log, "wb") as out:
            # its temporary folder (the pool's socket, HAProxy's config) in tmp: a script killed outright leaves it there
            env = {**os.environ, **(env or {}), "TMPDIR": str(tmp)}
            self.process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env)
        self.url = f"ws://127.0.0.1:{self.port}/_stcore/stream"
        if wait:
            self.ready()

    def ready(self) -> None:
        until(lambda: "ready:" in self.text() or self.process.poll() is not None, 150, "the replicas and the proxy to start")
        assert "ready:" in self.text(), f"the script ended with code {self.process.returncode}:\n{self.text()[-2000:]}"

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def replicas(self) -> dict[str, tuple[int, int]]:
        """Replica name -> (pid, port), as last started."""
        return {
            name: (int(pid), int(port)) for name, pid, port in re.findall(r"^(r\d): pid (\d+) on 127\.0\.0\.1:(\d+)$", self.text(), re.M)
        }

    def student(self, name: str):
        return students.Student(self.url, name, sticky=True)


def healthy(where: int | str) -> bool:
    """Whether a server answers its health check: a port on loopback, or a URL ('http://10.2.0.11:8501')."""
    url = f"http://127.0.0.1:{where}" if isinstance(where, int) else where
    try:
        return urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok"
    except OSError:
        return False


def replica_of(student) -> str:
    return dict(c.split("=", 1) for c in student.cookie.split("; "))["BPE_REPLICA"]


async def on_other_replicas(server: Served):
    """Two students the proxy sent to different replicas (it balances new browsers by open connections)."""
    a = server.student("a")
    await a.open(timeout=120)
    b = server.student("b")
    for _ in range(10):
        b.cookie = await asyncio.to_thread(students.page_cookie, server.url, 30)
        if replica_of(b) != replica_of(a):
            break
    assert replica_of(b) != replica_of(a), "the proxy sent every new browser to the same replica"
    await b.open(timeout=120)
    assert a.merge_shown() == b.merge_shown() == 1
    return a, b


async def next_merge(student, expected: int) -> None:
    await student.click("Next", timeout=60)
    assert student.merge_shown() == expected, f"{student.name} expected merge {expected}, saw {student.merge_shown()}"


async def reconnect(student, tries: int = 20) -> int:
    """Reconnect as Streamlit's page does after losing its server: again every half second until it is let in; how many tries."""
    for attempt in range(1, tries + 1):
        try:
            await student.open(timeout=60, resume=True)
            return attempt
        except (OSError, websockets.InvalidStatus, websockets.ConnectionClosed):
            await asyncio.sleep(0.5)
    raise AssertionError(f"{student.name} could not reconnect in {tries} tries")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    served = Served(tmp_path_factory.mktemp("replicas"))
    yield served
    if served.process.poll() is None:
        served.process.send_signal(signal.SIGINT)
        try:
            served.process.wait(30)
        except subprocess.TimeoutExpired:
            served.process.kill()


def test_two_students_keep_their_own_merge_on_their_own_replica_across_reruns_and_reconnects(server):
    async def lesson() -> None:
        a, b = await on_other_replicas(server)
        for expected_a, expected_b in ((2, 2), (3, 3), (4, None), (5, None)):  # they step in turn, a further than b
            await next_merge(a, expected_a)
            if expected_b:
                await next_merge(b, expected_b)
        # a's connection drops (a laptop's wifi): the browser reconnects with its cookie and asks for its session back
        session = a.session_id
        await a.close()
        await a.open(timeout=60, resume=True)
        assert a.session_id == session and a.merge_shown() == 5, "the reconnect reached another replica, or a new session"
        await next_merge(b, 4)
        await next_merge(a, 6)
        await asyncio.gather(a.close(), b.close())

    run_async(lesson())


def test_a_replica_that_dies_is_restarted_and_its_students_carry_on_at_their_merge(server):
    async def lesson() -> None:
        a, b = await on_other_replicas(server)
        for k in (2, 3, 4):
            await next_merge(a, k)
        await next_merge(b, 2)
        assert a.query == "corpus=textbook&merge=4"  # the URL a browser shows, and sends when it reconnects
        dead = replica_of(a)
        pid, port = server.replicas()[dead]
        os.kill(pid, signal.SIGKILL)
        # no silent hang: a's websocket is closed at once, which is what makes a browser reconnect
        await asyncio.wait_for(asyncio.shield(a.reader), 10)
        # reconnecting with the same cookie: the proxy sends a to a replica that is up; a new session
        # there opens at the merge in a's URL
        await a.close()
        tries = await reconnect(a)
        assert a.merge_shown() == 4, f"reconnected after {tries} tries"
        await next_merge(a, 5)
        await next_merge(b, 3)  # b, on the other replica, never noticed
        await asyncio.gather(a.close(), b.close())
        until(lambda: server.replicas()[dead][0] != pid and healthy(port), 90, f"{dead} to be started again")
        assert f"{dead} exited with code -9: starting it again" in server.text()

    run_async(lesson())


def test_a_stalled_pool_server_is_said_on_the_page_and_replaced(server):
    """kill -STOP of the pool server: a page that needs the pool says so within 10 s, and a new pool serves within 30 s."""

    async def lesson() -> None:
        a = server.student("a")
        await a.open(timeout=120)
        [pid] = [int(p) for p in re.findall(r"^pool: pid (\d+)$", server.text(), re.M)][-1:]
        os.kill(pid, signal.SIGSTOP)
        stalled = time.monotonic()
        until(lambda: stopped(pid), 30, "the pool server to stop")
        try:
            await a.choose("Corpus", "aaaa abab", timeout=30)  # a new run: the page asks the pool for it
            said = time.monotonic() - stalled
            assert a.shows("The worker pool is not answering"), a.seen[0][-3:]
            assert said < 10, f"the page said so after {said:.1f} s"
            # the supervisor kills the stalled server and starts another; the page tries again by itself until then
            await a.until(lambda: "Merge <b>1</b> of 8" in " ".join(a.seen[0]), timeout=40)
            back = time.monotonic() - stalled
            assert back < 30, f"a new pool served after {back:.1f} s"
            assert "the pool server has not answered" in server.text() and students.rss_mb(pid) == 0.0
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        await a.close()

    run_async(lesson())


def test_stopping_the_script_stops_the_proxy_the_replicas_and_the_pool(server):
    children = students.descendants(server.process.pid)
    names = {Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].rsplit(b"/", 1)[-1] for pid in children}
    assert len(children) >= 4 and b"haproxy" in names, names  # pool server, two replicas, the proxy
    server.process.send_signal(signal.SIGINT)  # Ctrl-C
    assert server.process.wait(60) == 0
    until(lambda: all(students.rss_mb(pid) == 0.0 for pid in children), 10, "every child to end")
    assert not healthy(server.port)
    assert "stopped: the proxy, the replicas and the worker pool" in server.text()


def test_the_proxy_configuration_is_valid_haproxy(tmp_path):
    config = tmp_path / "haproxy.cfg"
    config.write_text(haproxy_config("127.0.0.1:8501", ["server r1 127.0.0.1:9001 cookie r1 check"]))
    checked = subprocess.run([HAPROXY, "-c", "-f", str(config)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
