"""`bash scripts/app.sh`: one app process behind HAProxy, which answers Streamlit's browser files from its cache.

The script runs for real, on loopback, as a teacher starts it (serve/replicas.py without --replicas). What the
cache may keep is the app's own answer, byte for byte (serve/assets.py says what is a file: tests/test_assets.py);
what it must not keep is anything else. The proxy is supervised like the app: killed, stalled, or its supervisor
gone, a class is never left with a dead port or an orphan. One server for the module: the tests run in order,
and the last one stops it. benchmarks/classroom.py --scenario open-storm measures what it is for.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from conftest import run_async, until

from benchmarks import students
from serve.assets import static_folder
from serve.replicas import CHECKED, haproxy_config

ROOT = Path(__file__).resolve().parents[1]
FOLDER = static_folder()
HAPROXY = shutil.which("haproxy") or ("/usr/sbin/haproxy" if os.path.exists("/usr/sbin/haproxy") else None)
pytestmark = pytest.mark.skipif(HAPROXY is None, reason="HAProxy is not installed (scripts/test.sh installs it)")
GZIP = {"Accept-Encoding": "gzip, deflate, br, zstd"}  # what Chromium sends
HEALTH = "/_stcore/health"  # the app's, through the proxy


class Served:
    """`bash scripts/app.sh` on a free port: its process, and what it printed."""

    def __init__(self, tmp: Path) -> None:
        tmp.mkdir(parents=True, exist_ok=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log = tmp / "app.log"
        command = ["bash", "scripts/app.sh", "--server.port", str(self.port), "--server.headless", "true"]
        command += ["--server.fileWatcherType", "none"]
        with open(self.log, "wb") as out:
            env = {**os.environ, "BPE_PRELOAD": "0", "TMPDIR": str(tmp)}  # its HAProxy config in tmp
            self.process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env)
        self.url = f"ws://127.0.0.1:{self.port}/_stcore/stream"
        until(lambda: "ready:" in self.text() or self.process.poll() is not None, 150, "the app and the proxy to start")
        assert "ready:" in self.text(), f"the script ended with code {self.process.returncode}:\n{self.text()[-2000:]}"

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def pid(self, name: str) -> int:
        """The pid of the child named name ("app", "haproxy") as last started."""
        return int(re.findall(rf"^{name}: pid (\d+)", self.text(), re.M)[-1])

    def answers(self) -> bool:
        """Whether the app answers its health check through the proxy."""
        try:
            return self.get(HEALTH)[2] == b"ok"
        except OSError:
            return False

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        """GET path exactly as written (no '..' resolved on the way, as a hostile client sends it)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request("GET", path, headers=headers or {})
            answer = connection.getresponse()
            return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
        finally:
            connection.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    served = Served(tmp_path_factory.mktemp("proxy"))
    yield served
    if served.process.poll() is None:
        served.process.kill()


def some_files() -> list[str]:
    """A few of every kind: scripts, styles, fonts, images (the small ones too, sent as they are)."""
    found = []
    for sub in ("js", "css", "media"):
        files = sorted(p for p in (FOLDER / "static" / sub).iterdir() if p.is_file())
        found += [f"/static/{sub}/{p.name}" for p in files[:: max(1, len(files) // 5)]]
    return found


def test_the_proxy_keeps_the_apps_answer_for_each_file_and_sends_it_byte_for_byte(server):
    for path in some_files():
        first = server.get(path, GZIP)  # the app's answer (serve/assets.py), which the proxy keeps
        again = server.get(path, GZIP)
        assert "age" not in first[1] and "age" in again[1], f"{path}: the second answer did not come from the cache"
        same = {k: v for k, v in again[1].items() if k not in ("age", "date")}
        assert first[0] == again[0] == 200 and same == {k: v for k, v in first[1].items() if k != "date"} and first[2] == again[2]
        body = gzip.decompress(again[2]) if again[1].get("content-encoding") == "gzip" else again[2]
        assert body == (FOLDER / path.lstrip("/")).read_bytes(), path
        assert again[1]["cache-control"] == "public, immutable, max-age=31536000"
        plain = server.get(path)  # a client that takes no gzip: the file as it is, from the app (not the gzipped copy)
        assert plain[2] == (FOLDER / path.lstrip("/")).read_bytes() and "content-encoding" not in plain[1] and "age" not in plain[1]
    script = next(p for p in some_files() if p.endswith(".js"))
    assert server.get(script, GZIP)[1]["content-type"] == "application/javascript"  # as Streamlit types it


@pytest.mark.parametrize(
    "path",
    [
        "/static/js/../../config.py",
        "/static/js/%2e%2e/%2e%2e/config.py",
        "/static/../index.html",
        "/static/js/..%2f..%2fconfig.py",
        "/static/media/../../../../../../etc/passwd",
        "/static/js/no-such-file.js",  # Streamlit answers its page (200, no-cache): never kept under a file's name
        "/static/js/.hidden",
    ],
)
def test_nothing_but_the_apps_files_is_kept_or_reached_through_the_proxy(server, path):
    page = server.get("/")[2]
    for _ in range(2):
        status, headers, body = server.get(path)
        assert "age" not in headers, f"{path} was answered from the cache"
        assert status != 200 or headers.get("cache-control") == "no-cache" and body == page, f"{path}: {status} {body[:100]!r}"
        assert "age" not in server.get(path, GZIP)[1]


def test_a_killed_proxy_is_started_again_and_a_student_gets_their_session_back(server):
    async def lesson() -> None:
        student = students.Student(server.url, "a")
        await student.open(timeout=120)
        await student.click("Next", timeout=60)
        assert student.merge_shown() == 2
        session, pid = student.session_id, server.pid("haproxy")
        os.kill(pid, signal.SIGKILL)
        await asyncio.wait_for(asyncio.shield(student.reader), 10)  # the websocket closes at once
        await student.close()
        until(lambda: server.pid("haproxy") != pid and server.answers(), 30, "a new proxy")
        assert "haproxy exited with code -9: starting it again" in server.text()
        await student.open(timeout=60, resume=True)  # the browser reconnects by itself, asking for its session
        assert student.session_id == session and student.merge_shown() == 2  # the same app: the same session
        await student.close()

    run_async(lesson())


def test_a_stalled_proxy_is_said_and_replaced(server):
    pid = server.pid("haproxy")
    os.kill(pid, signal.SIGSTOP)
    stalled = time.monotonic()
    try:
        until(lambda: "HAProxy has not answered" in server.text(), 20, "the supervisor to say the proxy is stalled")
        said = time.monotonic() - stalled
        until(lambda: server.pid("haproxy") != pid and server.answers(), 30, "a new proxy")
        back = time.monotonic() - stalled
        assert said < 12 and back < 20, f"said after {said:.1f} s, a new proxy answered after {back:.1f} s"
        assert students.rss_mb(pid) == 0.0  # the stalled one was killed, not left behind
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_stopping_the_script_stops_the_proxy_and_the_app(server):
    children = students.descendants(server.process.pid)
    names = {Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].rsplit(b"/", 1)[-1] for pid in children}
    assert b"haproxy" in names and len(children) >= 2, names
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(30) == 0
    until(lambda: all(students.rss_mb(pid) == 0.0 for pid in children), 10, "every child to end")
    assert "stopped: the proxy and the app" in server.text()
    with pytest.raises(OSError):
        server.get(HEALTH)


def test_a_killed_supervisor_leaves_no_proxy_or_app_behind(tmp_path):
    served = Served(tmp_path)
    assert b"serve.replicas" in Path(f"/proc/{served.process.pid}/cmdline").read_bytes()  # scripts/app.sh execs it
    children = students.descendants(served.process.pid)
    assert {served.pid("app"), served.pid("haproxy")} <= set(children)
    os.kill(served.process.pid, signal.SIGKILL)
    served.process.wait(30)
    until(lambda: all(students.rss_mb(pid) == 0.0 for pid in children), 15, "the proxy and the app to end with their supervisor")


def test_the_one_app_configuration_is_valid_haproxy(tmp_path):
    config = tmp_path / "haproxy.cfg"
    config.write_text(haproxy_config("127.0.0.1:8501", ["server app 127.0.0.1:9001 check"], cookie="", check_port=9002))
    checked = subprocess.run([HAPROXY, "-c", "-f", str(config)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "cookie" not in config.read_text().split("backend app")[1].split("cache static")[0].replace("set-cookie", "")
    assert f"path {CHECKED}" in config.read_text()
