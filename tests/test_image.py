"""The image and the compose deployment, built and run for real: `scripts/image.sh`, then `docker run`, then two
machines' worth of containers behind the front proxy (`deploy/compose.yaml`), with students going through it.

Heavy, so asked for: `BPE_IMAGE_TEST=1 bash scripts/test.sh tests/test_image.py`. Needs a Docker daemon and
docker-compose (or the compose plugin); skips without them (CI has neither). The image starts from the base
scripts/image.sh builds from Debian's mirror (`--local-base`: no Docker Hub needed, but root or sudo for
debootstrap) unless BASE names another. A cold build takes ~3 minutes and ~1 GB; with Docker's cache, seconds.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from conftest import run_async, until
from test_deploy import a_machine_goes, free_port, on_two_machines, steps_and_a_reconnect
from test_replicas import healthy, next_merge, replica_of

from benchmarks import students

ROOT = Path(__file__).resolve().parents[1]
DOCKER = shutil.which("docker")
IMAGE = "bpe-workbench"


def _daemon_answers() -> bool:
    if DOCKER is None:
        return False
    try:
        return subprocess.run([DOCKER, "info"], capture_output=True, timeout=20).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def _compose() -> list[str] | None:
    if DOCKER and subprocess.run([DOCKER, "compose", "version"], capture_output=True).returncode == 0:
        return [DOCKER, "compose"]
    return [shutil.which("docker-compose")] if shutil.which("docker-compose") else None


if os.environ.get("BPE_IMAGE_TEST") != "1":
    WHY_NOT = "builds an 830 MB image: BPE_IMAGE_TEST=1 runs it"
else:
    WHY_NOT = None if _daemon_answers() else "no Docker daemon answers here"
pytestmark = [pytest.mark.docker, pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))]


def docker(*args: str, timeout: float = 120) -> str:
    done = subprocess.run([DOCKER, *args], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"docker {' '.join(args)}: {done.stderr[-2000:]}"
    return done.stdout.strip()


def address(container: str) -> str:
    return docker("inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", container)


@pytest.fixture(scope="module")
def image() -> str:
    local = [] if os.environ.get("BASE") else ["--local-base"]
    built = subprocess.run(["bash", "scripts/image.sh", *local, "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return IMAGE


def test_the_image_serves_replicas_behind_its_proxy_and_stops_them_in_order(image):
    container = docker("run", "-d", "-e", "REPLICAS=2", image)
    try:
        url = f"http://{address(container)}:8501"
        until(lambda: "ready: 2 replicas" in docker("logs", container), 150, "the container's replicas and proxy")
        assert docker("exec", container, "id", "-un") == "bpe"  # not root
        ws = url.replace("http", "ws", 1) + "/_stcore/stream"

        async def lesson() -> None:
            a = students.Student(ws, "a", sticky=True)
            await a.open(timeout=120)
            b = students.Student(ws, "b", sticky=True)
            for _ in range(10):
                b.cookie = await asyncio.to_thread(students.page_cookie, ws, 30)
                if replica_of(b) != replica_of(a):
                    break
            assert replica_of(a) != replica_of(b), "the container's proxy sent every new browser to the same replica"
            await b.open(timeout=120)
            for k in (2, 3):
                await next_merge(a, k)
            await next_merge(b, 2)
            await asyncio.gather(a.close(), b.close())

        run_async(lesson())
        docker("stop", "-t", "30", container, timeout=60)  # SIGTERM to the script: proxy, replicas, pool, in that order
        assert "stopped: the proxy, the replicas and the worker pool" in docker("logs", container)
        assert docker("inspect", "-f", "{{.State.ExitCode}}", container) == "0"
    finally:
        subprocess.run([DOCKER, "rm", "-f", container], capture_output=True)


@pytest.mark.skipif(_compose() is None, reason="neither docker-compose nor the compose plugin is installed")
def test_two_machines_of_containers_behind_the_front_proxy(image):
    port, project = free_port(), f"bpe{secrets.token_hex(4)}"
    env = {**os.environ, "PORT": str(port), "COOKIE_SECRET": secrets.token_hex(32)}
    compose = [*_compose(), "-p", project, "-f", str(ROOT / "deploy" / "compose.yaml")]

    def run(*args: str) -> str:
        done = subprocess.run([*compose, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        return done.stdout.strip()

    run("up", "-d", "--no-build")
    try:
        machines = run("ps", "-q", "app").split()
        assert len(machines) == 2, "compose.yaml asks for two machines"
        until(lambda: all("ready: 2 replicas" in docker("logs", m) for m in machines), 150, "both machines' replicas")
        until(lambda: healthy(f"http://127.0.0.1:{port}"), 60, "the front proxy")
        if (ROOT.parent / "shared" / "gpt2" / "encoder.json").is_file():  # the one thing machines share: read-only files
            found = "from ui import real; print([real.locate(e)[1] for e in real.ENCODINGS.values()])"
            assert docker("exec", machines[0], ".venv/bin/python", "-c", found).count("../shared/") == 3  # GPT-2, GPT-4, GPT-4o
            written = subprocess.run([DOCKER, "exec", machines[0], "touch", "/srv/shared/x"], capture_output=True, text=True)
            assert written.returncode != 0 and "Read-only file system" in written.stderr
        url = f"ws://127.0.0.1:{port}/_stcore/stream"

        def crash() -> None:  # process 1 of a machine dies (SIGKILL from outside: everything in the container ends)
            os.kill(int(docker("inspect", "-f", "{{.State.Pid}}", machines[0])), signal.SIGKILL)

        async def lesson() -> None:
            a, b = await on_two_machines(url)
            await steps_and_a_reconnect(a, b)
            await a_machine_goes(a, b, crash)  # the one student on it reconnects to the other machine

        run_async(lesson())
        # the crashed machine comes back (restart: unless-stopped), and the front proxy sends new students to it again
        until(lambda: docker("inspect", "-f", "{{.RestartCount}}", machines[0]) != "0", 30, "the crashed machine to be restarted")
        until(lambda: docker("logs", machines[0]).count("ready: 2 replicas") == 2, 150, "the crashed machine's replicas")  # its log goes on

        async def again() -> None:
            a, b = await on_two_machines(url)
            await next_merge(a, 2)
            await next_merge(b, 2)
            await asyncio.gather(a.close(), b.close())

        run_async(again())
    finally:
        run("down", "-v", "-t", "10")
