"""One pool for every replica on a machine: replicas asking for the same run share it, a dead replica's runs end, nothing leaks.

The pool server runs in this process (a thread) or, where its own shutdown is the
point, as `python -m serve.shared_pool`; the jobs run in real worker processes either way.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client
from pathlib import Path

import pytest
from conftest import until
from pool_jobs import counted, forever, gone, open_gate, stopped

from serve import shared_pool
from serve.shared_pool import PoolServer, RemotePool

ROOT = Path(__file__).resolve().parents[1]


GRACE_S = 1.0  # the pool's grace period, on the test's clock: below shared_pool.STALE_S


class Clock:
    """A clock the test moves by hand: a replica's silence and the pool's grace period are measured on it, so a
    busy machine that starves a heartbeat for a while makes nobody stale (tests/test_pool.py has the same)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def server(tmp_path, monkeypatch):
    """A pool server on a socket in tmp_path, whose replicas go stale only when the test moves its clock."""
    monkeypatch.setattr(shared_pool, "CHECK_S", 0.05)
    key = secrets.token_bytes(16)
    made = PoolServer(str(tmp_path / "pool.sock"), key, workers=1, quick=1, check_s=0.05, grace_s=GRACE_S, clock=Clock())
    threading.Thread(target=made.serve_forever, daemon=True).start()
    made.key = key
    yield made
    made.close()


def replica(server: PoolServer, name: str, alive=lambda who: True) -> RemotePool:
    return RemotePool(server.address, server.key, replica=name, alive=alive)


def test_two_replicas_asking_for_the_same_run_share_one(server, tmp_path):
    runs = tmp_path / "runs.txt"
    r1, r2 = replica(server, "r1"), replica(server, "r2")
    try:
        r1.submit("k", counted, str(runs), who="student-a")
        r2.submit("k", counted, str(runs), who="student-b")
        assert server.pool.status("k").watchers == 2
        open_gate(runs)
        assert r1.wait("k", 30).result == r2.wait("k", 30).result == "done"
        assert runs.read_text() == "run\n"  # one run for the whole hall
        assert [key for key, _ in r2.find(lambda key: key == "k")] == ["k"]
    finally:
        r1.close()
        r2.close()


def test_a_finished_result_is_sent_to_a_replica_once(server, tmp_path):
    r1 = replica(server, "r1")
    try:
        open_gate(tmp_path / "runs.txt")  # the run ends as soon as it has counted itself
        r1.submit("k", counted, str(tmp_path / "runs.txt"), who="a")
        assert r1.wait("k", 30).state == "done"
        server.close()  # nobody answers any more, yet the replica still has what it was sent
        assert r1.status("k").result == "done"
    finally:
        r1.close()


def heard(server: PoolServer, name: str) -> None:
    """Wait until the replica has spoken since the server's clock was last moved."""
    until(lambda: server._live.get(name, (0.0,))[0] == server.clock.now, 30, f"{name}'s next heartbeat")


def test_a_replica_that_dies_lets_go_of_its_runs_and_the_others_keep_theirs(server):
    r1, r2 = replica(server, "r1"), replica(server, "r2")
    r2.submit("shared", forever, who="b")
    r1.submit("shared", forever, who="a")
    r1.submit("mine", forever, who="a")
    until(lambda: server.pool.status("mine").state in ("running", "queued"), 30, "the pool server to take the run")
    r1.close()  # the replica stops saying its sessions are open, as a killed one does
    r1._heartbeat.join(30)
    server.clock.now += shared_pool.STALE_S  # r1 silent this long: it died; r2 speaks again
    heard(server, "r2")
    server.pool.checked(2)  # r1's session seen gone, at this time; r2's open
    server.clock.now += GRACE_S
    until(lambda: server.pool.status("mine").state == "cancelled", 30, "the stopped run to end")
    assert server.pool.status("shared").state == "running"
    assert server.pool.status("shared").watchers == 1  # r2's student is still there
    r2.close()
    r2._heartbeat.join(30)
    server.clock.now += shared_pool.STALE_S
    server.pool.checked(2)
    server.clock.now += GRACE_S
    until(lambda: server.pool.status("shared").state == "cancelled", 30, "the shared run to end")


def test_a_closed_session_of_a_live_replica_lets_go_too(server):
    open_sessions = {"a"}
    r1 = replica(server, "r1", alive=lambda who: who in open_sessions)
    try:
        r1.submit("k", forever, who="a")
        until(lambda: server.pool.status("k").state == "running", 30, "the run to start")
        open_sessions.clear()  # the student closed the tab
        until(lambda: "a" not in server._live["r1"][1], 30, "the replica to say so")
        server.pool.checked(2)  # seen gone, at this time
        assert server.pool.status("k").state == "running"  # within the grace period: a reconnecting browser keeps it
        server.clock.now += GRACE_S
        until(lambda: server.pool.status("k").state == "cancelled", 30, "the run to end")
    finally:
        r1.close()


def test_inline_runs_stay_in_the_replica(server):
    r1 = replica(server, "r1")
    try:
        status = r1.submit("tiny", lambda *, report: 42, who="a", inline=True)
        assert status.result == 42
        assert server.pool.status("tiny") is None
        assert r1.find(lambda key: key == "tiny") == [("tiny", 42)]
    finally:
        r1.close()


def test_a_peer_without_the_secret_is_refused_and_the_server_goes_on(server, tmp_path):
    with pytest.raises(AuthenticationError):
        Client(server.address, "AF_UNIX", authkey=b"not the secret")
    r1 = replica(server, "r1")
    try:
        open_gate(tmp_path / "runs.txt")
        r1.submit("k", counted, str(tmp_path / "runs.txt"), who="a")
        assert r1.wait("k", 30).state == "done"
    finally:
        r1.close()
    assert oct(os.stat(server.address).st_mode & 0o777) == "0o600"


def test_the_pool_server_kills_its_workers_when_stopped(tmp_path):
    key = secrets.token_bytes(16)
    address = str(tmp_path / "pool.sock")
    env = {**os.environ, "BPE_POOL_KEY": key.hex(), "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    server = subprocess.Popen([sys.executable, "-m", "serve.shared_pool", address], cwd=ROOT, env=env)
    until(lambda: os.path.exists(address), 30, "the pool server's socket")
    r1 = RemotePool(address, key, replica="r1")
    try:
        r1.submit("k", forever, who="a")
        until(lambda: (s := r1.status("k")).state == "running" and s.progress, 30, "the run to report")
        workers = [p for p in Path("/proc").iterdir() if p.name.isdigit() and parent(p) == server.pid]
        assert workers, "the job runs in a worker process of the pool server"
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
        until(lambda: all(gone(int(p.name)) for p in workers), 30, "every worker to end")
        assert not os.path.exists(address)
    finally:
        r1.close()
        if server.poll() is None:
            server.kill()


def parent(proc: Path) -> int:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return -1


def test_sessions_that_see_a_run_finish_together_fetch_its_result_once(server, tmp_path):
    r1 = replica(server, "r1")
    asked = []
    ask = r1._ask
    r1._ask = lambda method, *args: asked.append(method) or ask(method, *args)
    try:
        open_gate(tmp_path / "runs.txt")
        r1.submit("k", counted, str(tmp_path / "runs.txt"), who="a")
        until(lambda: server.pool.status("k").state == "done", 30, "the run to finish")
        results = []
        threads = [threading.Thread(target=lambda: results.append(r1.status("k").result)) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == ["done"] * 8
        assert asked.count("result") == 1  # a class polling the same trace: sent to this replica once
        assert list(server._pickled) == ["k"]  # and pickled once on the server, for every replica
    finally:
        r1.close()


# ---------------------------------------------------------------------------
# deadlines: a silent peer, a stalled server


def test_a_connection_that_says_nothing_delays_no_other_replica(server, tmp_path, monkeypatch):
    monkeypatch.setattr(shared_pool, "HANDSHAKE_S", 3600.0)  # a server that took handshakes one at a time would wait an hour
    silent = socket.socket(socket.AF_UNIX)
    silent.connect(server.address)  # connected, and never answers the key challenge
    r1 = replica(server, "r1")
    try:
        open_gate(tmp_path / "runs.txt")  # the run ends as soon as it has counted itself
        done = threading.Event()
        threading.Thread(target=lambda: (r1.submit("k", counted, str(tmp_path / "runs.txt"), who="a"), done.set()), daemon=True).start()
        assert done.wait(60), "the replica waited behind the silent connection's handshake"
        assert r1.wait("k", 30).state == "done"
    finally:
        r1.close()
        silent.close()


def test_a_connection_without_the_key_is_closed_after_the_handshake_deadline(server, monkeypatch):
    monkeypatch.setattr(shared_pool, "HANDSHAKE_S", 0.3)
    with socket.socket(socket.AF_UNIX) as silent:
        silent.connect(server.address)
        silent.settimeout(10)  # socket.timeout if the server never closes it
        start = time.monotonic()
        while silent.recv(1024):  # the server's challenge, and then nothing: it closes the connection
            pass
        assert time.monotonic() - start < 5


def test_a_stalled_pool_server_is_one_sentence_within_the_deadline(tmp_path, monkeypatch):
    """kill -STOP of the pool server: a replica's call raises Unavailable after ASK_S, it does not hang."""
    monkeypatch.setattr(shared_pool, "ASK_S", 1.0)
    key = secrets.token_bytes(16)
    address = str(tmp_path / "pool.sock")
    env = {**os.environ, "BPE_POOL_KEY": key.hex()}
    process = subprocess.Popen([sys.executable, "-m", "serve.shared_pool", address], cwd=ROOT, env=env)
    r1 = RemotePool(address, key, replica="r1")
    sent = []  # the requests the test's own thread sent (the heartbeat's thread goes on asking)
    real_send = shared_pool.send

    def send(conn, value):
        if threading.current_thread() is threading.main_thread():
            sent.append(value[0])
        real_send(conn, value)

    monkeypatch.setattr(shared_pool, "send", send)
    try:
        until(lambda: shared_pool.ping(address, key, 1.0), 30, "the pool server to answer")
        assert r1.status("k") is None  # answered: nothing by that name
        process.send_signal(signal.SIGSTOP)
        until(lambda: stopped(process.pid), 30, "the pool server to stop")
        start = time.monotonic()
        with pytest.raises(shared_pool.Unavailable, match="not answering"):
            r1.status("k")
        assert time.monotonic() - start < shared_pool.ASK_S + 10  # its deadline (or the heartbeat's, just before), not forever
        sent.clear()
        for call in (lambda: r1.find(lambda key: True), lambda: r1.wait("k", 0.5), lambda: r1.submit("k", forever, who="a")):
            with pytest.raises(shared_pool.Unavailable, match="not answering"):
                call()
        assert sent == []  # at once, without asking: a class's sessions do not each wait ASK_S
        assert not shared_pool.ping(address, key, 0.5)
        process.send_signal(signal.SIGCONT)
        until(lambda: shared_pool.ping(address, key, 1.0), 30, "the pool server to answer again")
        until(lambda: not r1._down, 30, "the replica's heartbeat to be answered")
        assert r1.status("k") is None  # back: a fresh connection, no late answer read as this one's
    finally:
        r1.close()
        process.send_signal(signal.SIGCONT)
        process.terminate()
        process.wait(30)


def test_an_unreachable_pool_server_is_one_sentence_at_once(tmp_path):
    r1 = RemotePool(str(tmp_path / "nobody.sock"), b"key", replica="r1")
    try:
        start = time.monotonic()
        with pytest.raises(shared_pool.Unavailable, match="not answering"):
            r1.submit("k", forever, who="a")
        assert time.monotonic() - start < 2
    finally:
        r1.close()


def test_waiting_for_a_run_to_end_fetches_no_result(server, tmp_path):
    """The warm-up waits for what it asked for without each replica unpickling it (ui/warm.py)."""
    r1 = replica(server, "r1")
    asked = []
    ask = r1._ask
    r1._ask = lambda method, *args: asked.append(method) or ask(method, *args)
    try:
        open_gate(tmp_path / "runs.txt")  # the run ends as soon as it has counted itself
        r1.submit("k", counted, str(tmp_path / "runs.txt"), who="a")
        assert r1.ended("k", 30) == "done"
        assert "result" not in asked and r1._cached("k") is None
        assert r1.status("k").result == "done"  # whoever does ask gets it
    finally:
        r1.close()
