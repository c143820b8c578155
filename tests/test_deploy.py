"""Beyond one machine: the same HAProxy settings in front of several `scripts/app.sh --replicas N`, and the files that deploy them.

The image and compose file are checked here for what they must say (test_image.py
builds and runs them where a Docker daemon answers); the proxy in front of two
"machines" runs for real, on loopback: two `scripts/app.sh --replicas 1` on their
own ports, one HAProxy rendered by `python -m serve.replicas --front-config` before them.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from conftest import run_async, until
from test_replicas import HAPROXY, Served, healthy, next_merge, reconnect

from benchmarks import students
from serve.replicas import front_config

ROOT = Path(__file__).resolve().parents[1]
needs_haproxy = pytest.mark.skipif(HAPROXY is None, reason="HAProxy is not installed (scripts/test.sh installs it)")


def test_the_compose_proxy_uses_the_rendered_front_configuration():
    assert (ROOT / "deploy" / "haproxy.cfg").read_text() == front_config(), (
        "run: python -m serve.replicas --front-config > deploy/haproxy.cfg"
    )
    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
    proxy, app = compose["services"]["proxy"], compose["services"]["app"]
    workdir = next(line.split()[1] for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith("WORKDIR"))
    assert proxy["command"][-1] == f"{workdir}/deploy/haproxy.cfg"
    assert "app:8501" in front_config()  # the service's name, resolved to every container
    assert app["environment"]["STREAMLIT_SERVER_COOKIE_SECRET"].startswith("${COOKIE_SECRET:?")  # one secret everywhere
    assert all(volume.endswith(":ro") for volume in app["volumes"]), "machines share nothing writable"


def test_the_image_installs_haproxy_and_runs_the_replicas():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "apt-get install -y --no-install-recommends haproxy" in dockerfile
    assert "pip install --no-cache-dir -r requirements.txt" in dockerfile
    assert "scripts/app.sh --replicas" in dockerfile.splitlines()[-1]


@needs_haproxy
@pytest.mark.parametrize("hosts", [(), ("10.0.0.11:8501", "10.0.0.12:8501")], ids=["compose", "static hosts"])
def test_the_front_configuration_is_valid_haproxy(hosts, tmp_path):
    config = tmp_path / "front.cfg"
    config.write_text(front_config(hosts))
    checked = subprocess.run([HAPROXY, "-c", "-f", str(config)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@needs_haproxy
def test_two_machines_behind_the_front_proxy_keep_each_student_on_one_machine_and_replica():
    with tempfile.TemporaryDirectory() as folder:
        machines = [Served(Path(folder) / f"m{i}", replicas=1) for i in (1, 2)]
        front_port = free_port()
        config = Path(folder) / "front.cfg"
        config.write_text(front_config([f"127.0.0.1:{m.port}" for m in machines], front_port, "127.0.0.1"))
        front = subprocess.Popen([HAPROXY, "-db", "-f", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            until(lambda: healthy(front_port), 30, "the front proxy")
            url = f"ws://127.0.0.1:{front_port}/_stcore/stream"

            async def lesson() -> None:
                a, b = await on_two_machines(url)
                assert "BPE_REPLICA=r1" in a.cookie and "BPE_REPLICA=r1" in b.cookie  # each machine's own proxy set its cookie too
                await steps_and_a_reconnect(a, b)
                await asyncio.gather(a.close(), b.close())

            run_async(lesson())
        finally:
            front.terminate()
            front.wait(10)
            # one machine's script is killed outright (no Ctrl-C, nothing to stop its children in order):
            # the kernel tells each child (PR_SET_PDEATHSIG), and nothing is left running
            children = students.descendants(machines[1].process.pid)
            machines[1].process.kill()
            machines[0].process.send_signal(signal.SIGTERM)
            assert machines[0].process.wait(60) == 0
            machines[1].process.wait(10)
            until(lambda: all(students.rss_mb(pid) == 0.0 for pid in children), 30, "the killed script's children to end")
            assert len(children) >= 3  # its pool server, its replica, its proxy


def host(student) -> str:
    return dict(c.split("=", 1) for c in student.cookie.split("; "))["BPE_HOST"]


# ---------------------------------------------------------------------------
# a lesson across machines (also test_image.py's containers and test_hosts.py's network namespaces)


async def on_two_machines(url: str):
    """Two students, a and b, the front proxy sent to different machines (it balances new browsers by open connections)."""
    a = students.Student(url, "a", sticky=True)
    await a.open(timeout=120)
    b = students.Student(url, "b", sticky=True)
    for _ in range(40):  # a machine that has just come back is taken in after two health checks
        b.cookie = await asyncio.to_thread(students.page_cookie, url, 30)
        if host(b) != host(a):
            break
        await asyncio.sleep(0.25)
    assert host(a) != host(b), "the front proxy sent every new browser to the same machine"
    assert "BPE_REPLICA=" in a.cookie and "BPE_REPLICA=" in b.cookie  # and each machine's own proxy, to one of its replicas
    await b.open(timeout=120)
    assert a.merge_shown() == b.merge_shown() == 1
    return a, b


async def steps_and_a_reconnect(a, b) -> None:
    """a steps to merge 4 and b to 2, in turn; a's connection drops and comes back to the same session on the same machine."""
    for k in (2, 3, 4):
        await next_merge(a, k)
    await next_merge(b, 2)
    session = a.session_id
    await a.close()
    await a.open(timeout=60, resume=True)
    assert a.session_id == session and a.merge_shown() == 4, "the reconnect reached another machine or replica, or a new session"
    assert b.merge_shown() == 2


async def a_machine_goes(a, b, take_away, within: float = 30) -> tuple[float, float]:
    """take_away() takes one machine away: its student's websocket closes (no silent hang), the browser reconnects
    (retrying as it does) to the other machine at the merge in its URL; the other student never notices.
    Seconds from the machine going to its student's websocket closing, and to its page showing again."""
    merges = {a.name: a.merge_shown(), b.name: b.merge_shown()}
    # the XSRF cookie each browser was given by its machine (with the health check it asks for first)
    xsrf = {s.name: await asyncio.to_thread(xsrf_cookie, s) for s in (a, b)}
    await asyncio.to_thread(take_away)
    start = time.monotonic()
    done, _ = await asyncio.wait([a.reader, b.reader], timeout=within, return_when=asyncio.FIRST_COMPLETED)
    noticed = time.monotonic() - start
    assert len(done) == 1, f"{len(done)} of the two students lost their connection within {within:.0f} s (one expected)"
    lost, kept = (a, b) if a.reader.done() else (b, a)
    await lost.close()
    tries = await reconnect(lost, tries=60)
    back = time.monotonic() - start
    assert lost.merge_shown() == merges[lost.name], f"{lost.name} reconnected after {tries} tries at merge {lost.merge_shown()}"
    await next_merge(lost, merges[lost.name] + 1)
    await next_merge(kept, merges[kept.name] + 1)
    # the moved student can still upload a file: the other machine takes the XSRF cookie the first one gave
    # (a double-submit token, not signed with anything per machine); a wrong token is refused, so the check is on
    assert await asyncio.to_thread(upload, lost, xsrf[lost.name], xsrf[lost.name]) == 204
    assert await asyncio.to_thread(upload, lost, xsrf[lost.name], xsrf[kept.name]) == 403
    await asyncio.gather(a.close(), b.close())
    return noticed, back


def xsrf_cookie(student) -> str:
    """What Streamlit's page does first: GET /_stcore/health, which sets the XSRF cookie; its value."""
    request = urllib.request.Request(http(student) + "/_stcore/health", headers={"Cookie": student.cookie})
    with urllib.request.urlopen(request, timeout=30) as answer:
        cookies = dict(c.split(";", 1)[0].split("=", 1) for c in answer.headers.get_all("Set-Cookie") or [])
    return cookies["_streamlit_xsrf"]


def upload(student, cookie: str, token: str) -> int:
    """PUT a small file into the student's session, as st.file_uploader does: the status the server answers."""
    boundary = "bpe-test-boundary"
    body = f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="corpus.txt"\r\nContent-Type: text/plain\r\n\r\n'
    body = (body + f"low lower lowest\r\n--{boundary}--\r\n").encode()
    headers = {"Cookie": f"{student.cookie}; _streamlit_xsrf={cookie}", "X-Xsrftoken": token}
    headers["Content-Type"] = f"multipart/form-data; boundary={boundary}"
    url = f"{http(student)}/_stcore/upload_file/{student.session_id}/test-file"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, body, headers, method="PUT"), timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as refused:
        return refused.code


def http(student) -> str:
    return student.url.replace("ws", "http", 1).removesuffix("/_stcore/stream")
