"""One worker pool for every replica on a machine: a pool server, and the client each replica uses instead of its own Pool.

With `scripts/app.sh --replicas N` there are N app processes on one machine.
Each with a pool of its own would run a race N times when a hall presses Start
together, and N x the cores' worth of workers would fight for the same cores.
So the replicas share one: `python -m serve.shared_pool SOCKET` holds a serve.pool.Pool
and answers the replicas over a Unix socket; `RemotePool` is that pool as a
replica sees it, with the same methods as Pool (ui/work.py picks it when
BPE_POOL names the socket).

    server:   BPE_POOL_KEY=<hex> python -m serve.shared_pool /tmp/x/pool.sock
    replica:  RemotePool("/tmp/x/pool.sock", bytes.fromhex(key), replica="r1", alive=session_alive)

What travels: a request is (method, arguments) -- a job's function travels by
name (module and qualified name), its arguments are a corpus's bytes and
settings; an answer is a Status. Both ends are ours: the socket lives in a
private folder and the connection is authenticated with a shared secret
(multiprocessing.connection's HMAC challenge) before anything is unpickled.

Every wait has a deadline. A replica's request that the server has not
answered in ASK_S (a finished result: RESULT_S) raises Unavailable, which a
page turns into one sentence and a retry (ui/work.py), instead of a spinner
forever; after that the replica's requests fail at once, without waiting,
until its heartbeat (every CHECK_S) is answered again; the machine's supervisor pings the server the same way and restarts
one that has stopped answering (serve/replicas.py). On the server, each
connection proves it holds the key in a thread of its own within HANDSHAKE_S,
so a connection that says nothing delays nobody else.

Who watches a job: a session of a replica, "r1/<session id>". The server
cannot see a replica's sessions, so each replica says every CHECK_S which of
its watchers are still open (`alive`); a replica that stops saying so (it died)
has left its jobs after the pool's grace period, and a job nobody watches is
cancelled, as on one server.

A finished result is sent to a replica once and kept there (results are
immutable), so a page asking again costs no round trip; runs so small that the
session computes them itself (inline) stay in the replica: starting anything
would cost more than the run.

What it does not do: start replicas (serve/replicas.py does), or run jobs itself (serve/pool.py).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import pickle
import signal
import socket
import struct
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import replace
from multiprocessing import AuthenticationError
from multiprocessing.connection import answer_challenge, deliver_challenge
from typing import Any

from serve import settings
from serve.pool import Pickler, Pool, Status

log = logging.getLogger(__name__)

KEEP_PICKLED = 8  # finished results kept pickled on the server, for the replicas that have not fetched them yet
CHECK_S = 1.0  # how often a replica says which of its watchers are still open
STALE_S = 4.0  # a replica silent this long has no open sessions (it died)
ASK_S = 5.0  # a request the server has not answered in this long: it is stalled (a wait: its own timeout more)
RESULT_S = 60.0  # a finished result is pickled for the replicas on request: a trace takes seconds on a busy machine
HANDSHAKE_S = 5.0  # a connection that has not proved it holds the key by then is closed
UNAVAILABLE = "The worker pool is not answering"  # how Unavailable's sentence starts


class Unavailable(RuntimeError):
    """The pool server did not answer in time, or cannot be reached (it is being restarted)."""


class Channel:
    """One connection: multiprocessing.connection's framing and key handshake, on a socket whose every wait has a deadline.

    subtle: not multiprocessing's Connection, whose reads block with no timeout: a stalled server held a
    replica's page forever, and a silent peer held the server's only accepting thread in the handshake.
    """

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def deadline(self, seconds: float | None) -> None:
        """Each later send or receive raises TimeoutError after `seconds` (None: waits as long as it takes)."""
        self.sock.settimeout(seconds)

    def send_bytes(self, data) -> None:
        n = len(data)
        header = struct.pack("!i", n) if n <= 0x7FFFFFFF else struct.pack("!iQ", -1, n)
        if n <= 16384:
            self.sock.sendall(header + bytes(data))  # one write for a small message
        else:
            self.sock.sendall(header)
            self.sock.sendall(data)

    def recv_bytes(self, maxlength: int | None = None) -> bytes:
        (size,) = struct.unpack("!i", self._exactly(4))
        if size == -1:
            (size,) = struct.unpack("!Q", self._exactly(8))
        if maxlength is not None and size > maxlength:
            raise OSError(f"a message of {size} bytes where at most {maxlength} were expected")
        return self._exactly(size)

    def _exactly(self, n: int) -> bytes:
        data = bytearray(n)
        view, got = memoryview(data), 0
        while got < n:
            read = self.sock.recv_into(view[got:])
            if not read:
                raise EOFError("the other end closed the connection")
            got += read
        return bytes(data)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Channel:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def connect(address: str, authkey: bytes, timeout: float) -> Channel:
    """A connection to the pool server that has passed the key handshake both ways, all within timeout seconds."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    channel = Channel(sock)
    try:
        channel.deadline(timeout)
        sock.connect(address)
        answer_challenge(channel, authkey)
        deliver_challenge(channel, authkey)
    except BaseException:
        channel.close()
        raise
    return channel


def deadline(method: str, args: tuple) -> float | None:
    """How long a replica waits for the answer to a request: ("status", ...) -> ASK_S; ("wait", key, 2.0) -> ASK_S + 2."""
    if method == "result":
        return RESULT_S
    if method == "wait":
        return None if args[1] is None else ASK_S + args[1]
    return ASK_S


def send(conn: Channel, value: Any) -> None:
    """Pickle with serve.pool.Pickler: a trace (frozen dataclasses) loads twice as fast on the other side."""
    buffer = io.BytesIO()
    Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    conn.send_bytes(buffer.getbuffer())


def light(status: Status | None) -> Status | None:
    """A status as the server sends it: without a finished job's result, which a replica fetches once ("result")."""
    return replace(status, result=None) if status is not None and status.state == "done" else status


def receive(conn: Channel) -> Any:
    return pickle.loads(conn.recv_bytes())  # from an authenticated peer: our own server or replica


# ---------------------------------------------------------------------------
# the server: one per machine


class PoolServer:
    """A Pool that answers replicas over a Unix socket, one thread per connection."""

    def __init__(self, address: str, authkey: bytes, *, clock: Callable[[], float] = time.monotonic, **pool_options: Any) -> None:
        self.clock = clock  # what a replica's silence (STALE_S) and the pool's grace period are measured on (tests move one by hand)
        self.pool = Pool(alive=self.alive, clock=clock, **pool_options)
        self.address, self.authkey = address, authkey
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(address)
        os.chmod(address, 0o600)
        self.listener.listen(128)
        self._live: dict[str, tuple[float, frozenset[str]]] = {}  # replica -> (when it last spoke, its open sessions)
        self._lock = threading.Lock()
        self._closed = False
        self._pickled: dict[Hashable, bytes] = {}  # finished results, pickled for replicas (oldest first)
        self._pickling = threading.Lock()

    def serve_forever(self) -> None:
        """Accept connections, each answered in a thread of its own (its key handshake too: a silent peer holds only its thread)."""
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:  # closed by close()
                if self._closed:
                    return
                continue
            threading.Thread(target=self._answer, args=(Channel(sock),), name="pool-connection", daemon=True).start()

    def close(self) -> None:
        self._closed = True
        self.pool.close()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() waiting in serve_forever
        with contextlib.suppress(OSError):
            self.listener.close()
        with contextlib.suppress(OSError):
            os.unlink(self.address)

    # -- what a replica may ask ------------------------------------------------------
    def alive(self, who: str) -> bool:
        replica, _, session = who.partition("/")
        with self._lock:
            spoke, sessions = self._live.get(replica, (0.0, frozenset()))
        return self.clock() - spoke < STALE_S and session in sessions

    def _seen(self, replica: str, sessions: frozenset[str], add: bool = False) -> None:
        with self._lock:
            if add:
                sessions = self._live.get(replica, (0.0, frozenset()))[1] | sessions
            self._live[replica] = (self.clock(), sessions)

    def _call(self, method: str, args: tuple) -> Any:
        if method == "submit":
            key, fn, job_args, who, lane = args
            replica, _, session = who.partition("/")
            self._seen(replica, frozenset([session]), add=True)  # alive from the start, before its replica's next word
            return light(self.pool.submit(key, fn, *job_args, who=who, lane=lane))
        if method == "status":
            return light(self.pool.status(*args))
        if method == "wait":
            return light(self.pool.wait(*args))
        if method == "result":
            return self._result(*args)
        if method == "stop":
            return self.pool.stop(*args)
        if method == "done":
            return [key for key, _ in self.pool.find(lambda key: True)]
        if method == "busy":
            return self.pool.busy()
        if method == "alive":
            replica, sessions = args
            return self._seen(replica, frozenset(sessions))
        if method == "ping":  # the supervisor's health check (serve/replicas.py)
            return "pong"
        raise ValueError(f"The pool server has no method {method!r}.")

    def _result(self, key: Hashable) -> bytes | None:
        """A finished job's result, pickled once for every replica that asks (None: no such finished job).

        subtle: one at a time. A trace is a quarter of a million objects; replicas asking
        together each made the server pickle it again, holding the interpreter lock.
        """
        with self._pickling:
            if key in self._pickled:
                return self._pickled[key]
            status = self.pool.status(key)
            if status is None or status.state != "done":
                return None
            buffer = io.BytesIO()
            Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(status.result)
            self._pickled[key] = buffer.getvalue()
            while len(self._pickled) > KEEP_PICKLED:
                del self._pickled[next(iter(self._pickled))]
            return self._pickled[key]

    def _answer(self, conn: Channel) -> None:
        with conn:
            conn.deadline(HANDSHAKE_S)
            try:
                deliver_challenge(conn, self.authkey)
                answer_challenge(conn, self.authkey)
            except (OSError, EOFError, AuthenticationError, struct.error):  # silent, too slow, or without the key
                return
            conn.deadline(None)  # a replica keeps an idle connection open between its requests
            while True:
                try:
                    method, args = receive(conn)
                except (EOFError, OSError):
                    return  # the replica closed the connection (or died)
                try:
                    answer = ("ok", self._call(method, args))
                except Exception as e:  # noqa: BLE001  (the replica raises it again, with its sentence)
                    log.exception("pool server: %s failed", method)
                    answer = ("error", f"{type(e).__name__}: {e}")
                try:
                    send(conn, answer)
                except (OSError, ValueError):
                    return


# ---------------------------------------------------------------------------
# the client: one per replica


class RemotePool:
    """The machine's pool as one replica sees it: Pool's methods, answered by the pool server. Thread-safe."""

    def __init__(self, address: str, authkey: bytes, *, replica: str, alive: Callable[[str], bool] = lambda who: True, keep: int = 16):
        self.address, self.authkey, self.replica, self.alive, self.keep = address, authkey, replica, alive, keep
        self.local = Pool(workers=1, quick=1, alive=alive)  # inline runs only: it never starts a process
        self._idle: list[Channel] = []
        self._done: OrderedDict[Hashable, Status] = OrderedDict()  # finished jobs, kept here once fetched
        self._watchers: dict[str, float] = {}  # session -> when it last was open
        self._lock = threading.Lock()
        self._fetching = threading.Lock()
        self._closed = threading.Event()
        self._down = False  # the server did not answer: requests fail at once until the heartbeat is answered
        self._heartbeat = threading.Thread(target=self._say_alive, name="pool-heartbeat", daemon=True)
        self._heartbeat.start()

    # -- Pool's methods -----------------------------------------------------------
    def submit(self, key: Hashable, fn: Callable[..., Any], *args: Any, who: str, lane: str = "long", inline: bool = False) -> Status:
        if inline or self.local.status(key) is not None:
            return self.local.submit(key, fn, *args, who=who, lane=lane, inline=inline)
        if (done := self._cached(key)) is not None:
            return done
        with self._lock:
            self._watchers[who] = time.monotonic()
        return self._keep(key, self._ask("submit", key, fn, args, f"{self.replica}/{who}", lane))

    def status(self, key: Hashable) -> Status | None:
        if (here := self.local.status(key)) is not None:
            return here
        if (done := self._cached(key)) is not None:
            return done
        return self._keep(key, self._ask("status", key))

    def wait(self, key: Hashable, timeout: float | None) -> Status | None:
        if self.local.status(key) is not None:
            return self.local.wait(key, timeout)
        if (done := self._cached(key)) is not None:
            return done
        return self._keep(key, self._ask("wait", key, timeout))

    def ended(self, key: Hashable, timeout: float | None) -> str | None:
        """Pool.ended: the state once ended, without fetching the result (a trace is megabytes nobody here may want)."""
        if self.local.status(key) is not None:
            return self.local.ended(key, timeout)
        if (done := self._cached(key)) is not None:
            return done.state
        status = self._ask("wait", key, timeout)
        return None if status is None else status.state

    def stop(self, key: Hashable, who: str) -> None:
        if self.local.status(key) is not None:
            return self.local.stop(key, who)
        if self._cached(key) is None:
            self._ask("stop", key, f"{self.replica}/{who}")

    def find(self, match: Callable[[Hashable], bool]) -> list[tuple[Hashable, Any]]:
        found = self.local.find(match)
        for key in self._ask("done"):
            if match(key) and (status := self.status(key)) is not None and status.state == "done":
                found.append((key, status.result))
        return found

    def busy(self) -> dict[str, int]:
        return self._ask("busy")

    def close(self) -> None:
        self._closed.set()
        self.local.close()
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    # -- talking to the server -------------------------------------------------------
    def _ask(self, method: str, *args: Any) -> Any:
        """One request and its answer within its deadline, on an idle connection (a new one if none).

        An idle connection the server closed (it was restarted) is tried again once on a fresh one;
        a server that does not answer in time, or cannot be reached, raises Unavailable.
        """
        if self._down and method != "alive":  # "alive" is the heartbeat: it finds out when the server is back
            raise Unavailable(f"{UNAVAILABLE}: it did not answer the last request in time.")
        seconds = deadline(method, args)
        for attempt in (1, 2):
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            fresh = conn is None
            try:
                conn = conn or connect(self.address, self.authkey, ASK_S)
                conn.deadline(seconds)
                send(conn, (method, args))
                kind, value = receive(conn)
            except (OSError, EOFError, AuthenticationError, struct.error) as e:
                if conn is not None:
                    conn.close()  # never reused: a late answer would be read as the next request's
                if isinstance(e, TimeoutError) or fresh or attempt == 2:
                    self._down = True
                    raise Unavailable(f"{UNAVAILABLE}: {type(e).__name__} on {method!r} ({e}).") from e
                continue
            self._down = False
            with self._lock:
                self._idle.append(conn)
            if kind == "error":
                raise RuntimeError(f"The machine's worker pool failed: {value}")
            return value

    def _cached(self, key: Hashable) -> Status | None:
        with self._lock:
            done = self._done.get(key)
            if done is not None:
                self._done.move_to_end(key)
            return done

    def _keep(self, key: Hashable, status: Status | None) -> Status | None:
        """A finished job's status with its result, fetched once and kept here: it never changes, and it is megabytes.

        The server answers status requests without the result; sessions that see a job
        finish together wait here for the one fetch (a class polls the same trace).
        """
        if status is None or status.state != "done":
            return status
        with self._fetching:
            if (done := self._cached(key)) is not None:
                return done
            data = self._ask("result", key)
            if data is None:  # evicted on the server in the meantime: as if never run
                return None
            done = replace(status, result=pickle.loads(data))  # from our authenticated pool server
            with self._lock:
                self._done[key] = done
                while len(self._done) > self.keep:
                    self._done.popitem(last=False)
            return done

    def _say_alive(self) -> None:
        """Every CHECK_S, tell the server which sessions that watch jobs are still open."""
        while not self._closed.wait(CHECK_S):
            now = time.monotonic()
            with self._lock:
                watchers = list(self._watchers)
            open_now = [who for who in watchers if self.alive(who)]
            with self._lock:
                for who in open_now:
                    self._watchers[who] = now
                for who, seen in list(self._watchers.items()):
                    if now - seen > 60:  # gone for a minute: its jobs were let go long ago
                        del self._watchers[who]
            with contextlib.suppress(RuntimeError):  # the server is restarting: say it next time
                self._ask("alive", self.replica, open_now)


def ping(address: str, authkey: bytes, timeout: float) -> bool:
    """Whether the pool server at address answers within timeout seconds (the supervisor's health check)."""
    try:
        with connect(address, authkey, timeout) as conn:
            send(conn, ("ping", ()))
            return receive(conn) == ("ok", "pong")
    except (OSError, EOFError, AuthenticationError, struct.error, pickle.UnpicklingError):
        return False


# ---------------------------------------------------------------------------
# python -m serve.shared_pool SOCKET  (the secret in BPE_POOL_KEY, as hex)


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="pool server: %(message)s")
    address = sys.argv[1]
    with contextlib.suppress(FileNotFoundError):
        os.unlink(address)  # left by a pool server that was killed: this one takes its place
    server = PoolServer(address, settings.pool_key())

    def stop(signum, frame) -> None:  # the workers must not outlive the server
        server.close()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log.info("serving %s (%s long-run workers)", address, server.pool.capacity["long"])
    server.serve_forever()


if __name__ == "__main__":
    main()
