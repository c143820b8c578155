"""Several machines, as docs/serving.md deploys them, each with its own network address: Linux network namespaces.

Three "hosts" on one bridge, as on a school's network: two machines, each running
`scripts/app.sh --replicas 2 --server.address 0.0.0.0` (port 8501) in its own
namespace, and a proxy host running HAProxy on the configuration
`python -m serve.replicas --front-config 10.x.0.11:8501 10.x.0.12:8501` prints. The students
are this namespace's websockets (benchmarks/students.py) going to the proxy's
address. Then a machine is unplugged (its link goes down: no packet comes back, as
from a machine that lost power) and plugged in again; then killed outright, and started again.

Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN: `ip netns add`), iproute2 and HAProxy;
skips cleanly without them.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_async, until
from test_deploy import a_machine_goes, on_two_machines, steps_and_a_reconnect
from test_replicas import HAPROXY, Served, healthy, next_merge

ROOT = Path(__file__).resolve().parents[1]
IP = shutil.which("ip")


class Network:
    """A bridge in this namespace and one namespace per host on it: host i is 10.x.y.1i (the bridge is .1).

    Names carry this process's id, so two test runs on one machine do not meet.
    """

    def __init__(self, hosts: int) -> None:
        tag = f"{os.getpid() % 0x10000:04x}"
        self.bridge, self.prefix = f"bpe{tag}", f"10.{200 + os.getpid() % 50}.{os.getpid() % 250}"
        self.namespaces = [f"bpe{tag}h{i}" for i in range(hosts)]
        try:
            ip("link", "add", self.bridge, "type", "bridge")
            ip("addr", "add", f"{self.prefix}.1/24", "dev", self.bridge)
            ip("link", "set", self.bridge, "up")
            for i, ns in enumerate(self.namespaces):
                ip("netns", "add", ns)
                ip("link", "add", self.cable(i), "type", "veth", "peer", "name", "eth0", "netns", ns)
                ip("link", "set", self.cable(i), "master", self.bridge, "up")
                ip("-n", ns, "addr", "add", f"{self.address(i)}/24", "dev", "eth0")
                ip("-n", ns, "link", "set", "eth0", "up")
                ip("-n", ns, "link", "set", "lo", "up")
        except BaseException:
            self.remove()
            raise

    def address(self, i: int) -> str:
        return f"{self.prefix}.{10 + i}"

    def cable(self, i: int) -> str:
        """The end of host i's cable on the bridge: down, and nothing reaches the host or comes back from it."""
        return f"{self.bridge}c{i}"

    def remove(self) -> None:
        for ns in self.namespaces:
            subprocess.run([IP, "netns", "del", ns], capture_output=True)  # its end of the cable goes with it
        subprocess.run([IP, "link", "del", self.bridge], capture_output=True)


def ip(*args: str) -> None:
    done = subprocess.run([IP, *args], capture_output=True, text=True)
    assert done.returncode == 0, f"ip {' '.join(args)}: {done.stderr.strip()}"


def _can_make_namespaces() -> str | None:
    """Why the hosts cannot be made here, or None: each step they need, tried once on a namespace and a bridge of its own."""
    if IP is None or HAPROXY is None:
        return "needs iproute2 and HAProxy"
    probe = f"bpeprobe{os.getpid() % 100000}"
    steps = [["netns", "add", probe], ["netns", "exec", probe, "true"], ["link", "add", probe, "type", "bridge"]]
    try:
        for step in steps:
            tried = subprocess.run([IP, *step], capture_output=True, text=True)
            if tried.returncode != 0:
                return f"cannot make network namespaces here (ip {' '.join(step[:2])}: {tried.stderr.strip() or 'failed'})"
        return None
    finally:
        subprocess.run([IP, "link", "del", probe], capture_output=True)
        subprocess.run([IP, "netns", "del", probe], capture_output=True)


WHY_NOT = _can_make_namespaces()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))


class Deployment:
    """Host 0 runs the front proxy; hosts 1 and 2 are the machines, each `scripts/app.sh --replicas 2`."""

    def __init__(self, tmp: Path) -> None:
        self.network, self.machines, self.proxy, self.tmp = Network(3), [], None, tmp
        self.env = {"STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_hex(32)}  # as docs/serving.md says: one secret on every machine
        try:
            self.machines = [self.start(i) for i in (1, 2)]
            for machine in self.machines:
                machine.ready()
            # the proxy's configuration exactly as docs/serving.md says to make it
            hosts = [f"{self.network.address(i)}:8501" for i in (1, 2)]
            rendered = subprocess.run(
                [sys.executable, "-m", "serve.replicas", "--front-config", *hosts], cwd=ROOT, capture_output=True, text=True, check=True
            )
            (tmp / "haproxy.cfg").write_text(rendered.stdout)
            with open(tmp / "front.log", "wb") as log:
                command = [IP, "netns", "exec", self.network.namespaces[0], HAPROXY, "-db", "-f", str(tmp / "haproxy.cfg")]
                self.proxy = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
            self.url = f"http://{self.network.address(0)}:8501"
            until(lambda: healthy(self.url), 30, "the front proxy")
        except BaseException:
            self.stop()
            raise

    def start(self, i: int) -> Served:
        """Host i's `scripts/app.sh --replicas 2` (call ready() on it)."""
        return Served(self.tmp / f"host{i}-{len(self.machines)}", 2, self.network.namespaces[i], wait=False, env=self.env)

    def stop(self) -> None:
        """Everything it started, then the namespaces."""
        if self.proxy is not None:
            self.proxy.terminate()
            self.proxy.wait(10)
        for machine in self.machines:
            if machine.process.poll() is None:
                machine.process.send_signal(signal.SIGTERM)
        for machine in self.machines:
            machine.process.wait(60)
        self.network.remove()


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    made = Deployment(tmp_path_factory.mktemp("hosts"))
    yield made
    made.stop()


def ws(deployment: Deployment) -> str:
    return deployment.url.replace("http", "ws", 1) + "/_stcore/stream"


def test_students_on_two_machines_keep_their_machine_replica_and_merge(deployment):
    async def lesson() -> None:
        a, b = await on_two_machines(ws(deployment))
        await steps_and_a_reconnect(a, b)
        await asyncio.gather(a.close(), b.close())

    run_async(lesson())


def test_a_machine_unplugged_from_the_network_loses_its_students_to_the_other(deployment):
    """Nothing comes back from an unplugged machine (no reset, no close): the proxy must notice by itself."""

    async def lesson() -> None:
        a, b = await on_two_machines(ws(deployment))
        await steps_and_a_reconnect(a, b)
        noticed, back = await a_machine_goes(a, b, lambda: ip("link", "set", deployment.network.cable(1), "down"), within=60)
        print(f"the unplugged machine's student lost its connection after {noticed:.1f} s, saw its page again after {back:.1f} s")

    try:
        run_async(lesson())
    finally:
        ip("link", "set", deployment.network.cable(1), "up")
    until(lambda: healthy(f"http://{deployment.network.address(1)}:8501"), 30, "the machine plugged in again")


def test_a_machine_killed_outright_loses_its_students_to_the_other_and_is_taken_back_when_it_returns(deployment):
    async def lesson() -> None:
        a, b = await on_two_machines(ws(deployment))
        await steps_and_a_reconnect(a, b)
        noticed, back = await a_machine_goes(a, b, deployment.machines[1].process.kill)
        print(f"the killed machine's student lost its connection after {noticed:.1f} s, saw its page again after {back:.1f} s")

    run_async(lesson())
    deployment.machines[1].process.wait(10)
    # the machine is started again: the front proxy takes it back (two health checks) and sends new students to it
    deployment.machines[1] = deployment.start(2)
    deployment.machines[1].ready()

    async def again() -> None:
        a, b = await on_two_machines(ws(deployment))
        await next_merge(a, 2)
        await next_merge(b, 2)
        await asyncio.gather(a.close(), b.close())

    run_async(again())
