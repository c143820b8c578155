"""Serve the app behind HAProxy: one process (`bash scripts/app.sh`), or N sharing one worker pool (`--replicas N`).

HAProxy answers Streamlit's browser files from its cache. A browser opening the
app fetches ~135 of them before its websocket; the app's process answered them
all (serve/assets.py, from memory), and when a class opens a link together that
was over a third of its processor, queued in front of the pages everyone waits
for. The proxy keeps the app's first answer for each file (its name
carries a hash of its content: it never changes) and answers the rest itself,
in C, on the machine's other core (`haproxy_config`: only GETs of /static/ that
take gzip, only 200s the app marked immutable; the app still decides what is a
file, so nothing else on the disk can be reached through the cache).

`bash scripts/app.sh` starts one app process (`streamlit run web.py` on a free
loopback port, with its own worker pool, serve/pool.py) and HAProxy on the
teacher's port in front of it. A machine without HAProxy gets the app alone
(scripts/app.sh says so). With `--replicas N` -- one Streamlit server answers
~130 clicks a second on one core and then queues; the other cores sit idle --
this starts, on one machine:

- the worker pool server (serve/shared_pool.py): one pool for all replicas, so a
  race a hall starts together runs once, and the workers use the cores the
  replicas leave;
- N replicas, `streamlit run app.py` on free loopback ports, all signing
  cookies with one secret (Streamlit signs its login cookie with it, should the
  app ever use st.login; the XSRF cookie uploads check is a token any replica
  takes, tests/test_deploy.py's upload after a move);
- HAProxy on the usual port (`--server.port`, default 8501; `--server.address`),
  which sends each new browser to the replica with the fewest connections and
  sets a cookie (BPE_REPLICA) that keeps it there: the page, its websocket and
  every reconnect. A cookie, not the client's address: a class behind one school
  NAT is one address. Streamlit keeps a session in the process that made it, so
  this is what keeps a student's merge theirs.

When a replica (or the one app) dies, or stops answering its health check for
HANG_S, it is started again on its port; so is the pool server when it dies or
stops answering its own (a ping over its socket, POOL_HANG_S), its workers
killed with it, and HAProxy when it dies or stops answering its own check (a
loopback port of its own, PROXY_HANG_S). Its students' websockets close with it; their
browsers reconnect by themselves, and HAProxy sends them to a live replica (the
cookie is overridden when its replica refuses connections) as a new session that
opens at the merge in the page's URL (the step page keeps the URL in step); after
a new proxy, to the same session in the same app.
Ctrl-C or SIGTERM stops the proxy, the app's processes and the pool server, in that
order, and the pool's workers with it; if this process is killed outright, the
kernel stops its children too (PR_SET_PDEATHSIG), so nothing is left behind.

What it does not do: install HAProxy (scripts/app.sh does), or serve more than
one machine (deploy/ does that with the same HAProxy settings: `haproxy_config`).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import functools
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import webbrowser
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from serve import settings, shared_pool
from serve.assets import KEEP

ROOT = Path(__file__).resolve().parents[1]
COOKIE = "BPE_REPLICA"  # the proxy's cookie: which replica a browser stays on
HANG_S = 30.0  # a replica whose health check has not answered for this long is restarted
POOL_HANG_S = 12.0  # the pool server, likewise: its replicas' pages say so after ASK_S (5 s) and retry until it is back
PROXY_HANG_S = 6.0  # HAProxy, likewise: it answers its own check in microseconds, however busy the app is
STOP_S = 10.0  # how long a child has to stop after SIGTERM before it is killed
CHECKED = "/proxy-health"  # what the supervisor asks HAProxy on its loopback check port


# ---------------------------------------------------------------------------
# the proxy's configuration, shared with deploy/ (several machines)


def haproxy_config(
    bind: str,
    servers: Sequence[str],
    cookie: str = f"{COOKIE} insert indirect nocache httponly",
    sections: str = "",
    check_port: int = 0,
) -> str:
    """HAProxy's configuration: sticky on a cookie, websockets kept open, dead servers taken out at once, Streamlit's
    browser files answered from its cache.

    servers are HAProxy `server` (or `server-template`) lines; each needs `check`
    for the health check and, with a static cookie, `cookie NAME` (cookie="": one
    server, no cookie). sections are whole sections added at the end (a
    `resolvers` section for DNS names). check_port: a loopback port where HAProxy
    itself answers CHECKED, for the supervisor (0: none).
    """
    lines = "\n".join(f"    {line}" for line in servers)
    sticky = (
        f"    # sticky on a cookie, not on the client's address: a class behind one NAT is one address\n    cookie {cookie}\n"
        if cookie
        else ""
    )
    checked = (
        f"\nfrontend supervisor\n    # serve/replicas.py asks HAProxy itself here (not the app behind it) whether it answers\n"
        f"    bind 127.0.0.1:{check_port}\n    http-request return status 200 content-type text/plain string ok if {{ path {CHECKED} }}\n"
        if check_port
        else ""
    )
    return f"""# rendered by serve/replicas.py (haproxy_config): what a classroom needs from the proxy
global
    maxconn 4096

defaults
    mode http
    option forwardfor
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    # a student's websocket stays open for the whole lesson
    timeout tunnel 4h
    timeout client-fin 5s
    timeout http-request 10s
    # a request for a server that is down goes to another one (its cookie is then replaced)
    option redispatch
    retries 2
    # a machine that vanishes (power, cable) sends no reset, and an idle websocket sends nothing: without these
    # its students' tunnels stay open for hours. TCP keepalives on the connections to the servers find it
    # (5 s idle, then 3 probes 2 s apart), and data it does not acknowledge for 10 s ends the connection;
    # the student's browser then reconnects to a live server. A busy server's kernel still answers: no false alarm.
    option srvtcpka
    srvtcpka-idle 5s
    srvtcpka-intvl 2s
    srvtcpka-cnt 3

frontend classroom
    bind {bind}
    default_backend app

backend app
    # a new browser goes to the replica with the fewest open connections (websockets: students)
    balance leastconn
{sticky}    option httpchk GET /_stcore/health
    http-check expect string ok
    timeout check 5s
    # a server that refuses connections (dead) is out after 3 checks; one slow to answer under a full
    # class is not: its students' websockets stay open (a dead server's close by themselves, and
    # serve/replicas.py restarts one that hangs)
    default-server inter 2s fall 3 rise 2 tcp-ut 10s
    # Streamlit's browser files (~135 a first visit) from the cache below once the app has answered each
    # (serve/assets.py): the app's own processor goes to the pages. Only GETs of /static/ that take gzip
    # (every browser; the others get the plain file from the app), and only the app's 200s marked immutable
    # (their names carry a hash of their content) that set no cookie: what is a file stays the app's call
    http-request cache-use static if {{ path_beg /static/ }} {{ req.hdr(accept-encoding) -m sub gzip }}
    http-response cache-store static if {{ status 200 }} {{ res.fhdr(cache-control) -m str "{KEEP}" }} !{{ res.hdr(set-cookie) -m found }}
{lines}

cache static
    # a first visit's files are ~1 MB gzipped, all of Streamlit's ~9 MB
    total-max-size 64
    max-object-size 8388608
    # they never change under their name (a new Streamlit is a new start of the proxy)
    max-age 31536000
    # one answer kept per Accept-Encoding (the gzipped one for the browsers that take it)
    process-vary on
{checked}{sections}"""


def front_config(hosts: Sequence[str] = (), port: int = 8501, address: str = "") -> str:
    """The proxy in front of several machines, each serving `scripts/app.sh --replicas N` on its port.

    Sticky on a second cookie, BPE_HOST (the machine; BPE_REPLICA then picks the
    replica inside it). hosts are "address:port" -> one server each; none -> the
    machines are found by DNS as the compose service "app" (deploy/compose.yaml),
    up to 16, with a cookie made from each one's address (`dynamic`).

    front_config(["10.0.0.11:8501", "10.0.0.12:8501"]) -> servers host1 and host2
    """
    cookie = "BPE_HOST insert indirect nocache httponly"
    if hosts:
        return haproxy_config(f"{address}:{port}", [f"server host{i} {h} cookie host{i} check" for i, h in enumerate(hosts, 1)], cookie)
    servers = ["dynamic-cookie-key bpe-workbench", "server-template host 1-16 app:8501 check resolvers compose init-addr none"]
    resolvers = "\nresolvers compose\n    # Docker's DNS: the service name has one address per container\n    nameserver dns 127.0.0.11:53\n    hold valid 5s\n"
    return haproxy_config(f"{address}:{port}", servers, cookie + " dynamic", resolvers)


# ---------------------------------------------------------------------------
# the processes


def _die_with_parent(signum: int) -> None:
    """In a child, before exec: get signum when the supervisor dies, however it dies (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signum))  # PR_SET_PDEATHSIG


@dataclass
class Child:
    """One process the supervisor keeps running: its name, command, environment; restarted when it ends."""

    name: str
    command: list[str]
    env: dict[str, str]
    port: int = 0  # a replica's port (0: not a replica)
    # what the kernel sends it if the supervisor is killed outright. subtle: not SIGTERM for a replica: its output
    # goes to the dead supervisor's pipe, and Streamlit hung in its shutdown on the broken pipe (seen in the test).
    # The pool server takes SIGTERM (it must kill its workers first) and writes nothing on the way out.
    death: int = signal.SIGKILL
    process: subprocess.Popen | None = None
    started: float = 0.0
    healthy: float = 0.0  # when its health check last answered ok
    restarts: list[float] = field(default_factory=list)

    def start(self) -> None:
        self.process = subprocess.Popen(
            self.command,
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches the supervisor only, which stops everything in order
            preexec_fn=functools.partial(_die_with_parent, self.death),
        )
        self.started = self.healthy = time.monotonic()
        threading.Thread(target=self._relay, args=(self.process,), daemon=True).start()
        where = f" on 127.0.0.1:{self.port}" if self.port else ""
        say(f"{self.name}: pid {self.process.pid}{where}")

    def _relay(self, process: subprocess.Popen) -> None:
        """Its output, each line marked with its name."""
        for line in process.stdout:
            text = line.decode("utf-8", "replace").rstrip()
            if text and "You can now view" not in text and "URL:" not in text:  # the replica's own address is not the app's
                say(f"[{self.name}] {text}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()

    def wait(self, deadline: float) -> None:
        if self.process is None:
            return
        try:
            self.process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def say(text: str) -> None:
    print(text, flush=True)


def url(host: str, port: int) -> str:
    """Where this machine reaches a server listening on host:port: url("0.0.0.0", 8501) -> "http://127.0.0.1:8501"."""
    host = "127.0.0.1" if host in ("0.0.0.0", "", "::") else f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(port: int, timeout: float = 5.0, host: str = "127.0.0.1") -> bool:
    """Whether the app (or the proxy in front of it) answers Streamlit's health check on host:port."""
    return answers(port, "/_stcore/health", timeout, host)


def answers(port: int, path: str, timeout: float = 5.0, host: str = "127.0.0.1") -> bool:
    """Whether url(host, port) + path answers "ok" within timeout."""
    try:
        with urllib.request.urlopen(url(host, port) + path, timeout=timeout) as answer:
            return answer.read() == b"ok"
    except OSError:
        return False


# ---------------------------------------------------------------------------
# the supervisor


def split_options(argv: Sequence[str]) -> tuple[int | None, str, int, list[str]]:
    """--replicas N, --server.address A and --server.port P out of the command line; the rest goes to every app process.
    No --replicas: None (one app process with its own pool). The address and port default to Streamlit's variables.

    ["--replicas", "2", "--server.port=8600", "--theme.base", "dark"] -> (2, "127.0.0.1", 8600, ["--theme.base", "dark"])
    """
    parser = argparse.ArgumentParser(prog="scripts/app.sh", description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument(
        "--replicas", type=int, help="app processes behind the proxy sharing one pool (at least 1; default: one with its own)"
    )
    parser.add_argument(
        "--server.address",
        dest="address",
        default=os.environ.get("STREAMLIT_SERVER_ADDRESS") or "127.0.0.1",
        help="where the proxy listens (default 127.0.0.1: this machine only; 0.0.0.0: every address)",
    )
    port = os.environ.get("STREAMLIT_SERVER_PORT", "").strip()
    parser.add_argument(
        "--server.port", dest="port", type=int, default=int(port) if port.isdigit() else 8501, help="the proxy's port (default 8501)"
    )
    known, rest = parser.parse_known_args(argv)
    if known.replicas is not None and known.replicas < 1:
        parser.error(f"--replicas must be at least 1, not {known.replicas}.")
    return known.replicas, known.address, known.port, rest


def opens_browser(options: Sequence[str]) -> bool:
    """Whether Streamlit would open a browser at start (its server.headless, from the command line, its variable, or its
    default: not on Linux without a display). The app behind the proxy is always headless (its own address is not the
    class's): the supervisor opens the proxy's instead."""
    for i, option in enumerate(options):
        if option.startswith("--server.headless"):
            value = option.partition("=")[2] or (options[i + 1] if i + 1 < len(options) else "true")
            return value.lower() != "true"
    if os.environ.get("STREAMLIT_SERVER_HEADLESS"):
        return os.environ["STREAMLIT_SERVER_HEADLESS"].lower() != "true"
    return not (sys.platform.startswith(("linux", "freebsd")) and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"))


class Supervisor:
    """replicas=None: one app process with its own worker pool (scripts/app.sh); N: N replicas and the pool server."""

    def __init__(self, replicas: int | None, address: str, port: int, options: Sequence[str], folder: Path) -> None:
        self.folder = folder
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.pool = None
        if replicas is not None:
            # one secret for every replica (and, when set, for every machine): a student moved to another stays signed in (st.login's cookie)
            pool_key, cookie_secret = secrets.token_bytes(16), settings.cookie_secret() or secrets.token_hex(32)
            socket_path = self.socket_path = str(folder / "pool.sock")
            self.pool_key = pool_key
            # Streamlit takes the cookie secret from the environment, not the command line
            env.update(settings.replica_env(socket_path, pool_key, cookie_secret))
            self.pool = Child("pool", [sys.executable, "-m", "serve.shared_pool", socket_path], env, death=signal.SIGTERM)
        self.replicas = []
        for i in range(1, (replicas or 1) + 1):
            replica_port = free_port()
            command = [sys.executable, "-m", "streamlit", "run", "web.py", *options]  # app.py, Streamlit's files from memory
            command += ["--server.headless", "true", "--browser.gatherUsageStats", "false"]
            if replicas is not None and not any(o.startswith("--server.fileWatcherType") for o in options):
                command += ["--server.fileWatcherType", "none"]  # a hall's server is not edited live: no replica polls the files
            command += ["--server.address", "127.0.0.1", "--server.port", str(replica_port)]
            if replicas is None:
                self.replicas.append(Child("app", command, env, port=replica_port))
            else:
                self.replicas.append(Child(f"r{i}", command, {**env, settings.REPLICA: f"r{i}"}, port=replica_port))
        bind = f"{address}:{port}"
        self.check_port = free_port()
        if replicas is None:
            config_text = haproxy_config(
                bind, [f"server app 127.0.0.1:{self.replicas[0].port} check"], cookie="", check_port=self.check_port
            )
        else:
            servers = [f"server {r.name} 127.0.0.1:{r.port} cookie {r.name} check" for r in self.replicas]
            config_text = haproxy_config(bind, servers, check_port=self.check_port)
        config = folder / "haproxy.cfg"
        config.write_text(config_text)
        self.proxy = Child("haproxy", [haproxy(), "-db", "-f", str(config)], dict(os.environ))
        self.address, self.port = address, port
        self.browser = replicas is None and opens_browser(options)
        self.stopping = threading.Event()

    @property
    def children(self) -> list[Child]:
        return [*([self.pool] if self.pool else []), *self.replicas, self.proxy]

    def run(self) -> None:
        for child in self.children[:-1]:
            child.start()
        deadline = time.monotonic() + 120  # the proxy starts once the replicas answer: no "no server available" on the way
        while not all(healthy(r.port) for r in self.replicas) and time.monotonic() < deadline and not self.stopping.wait(0.25):
            pass
        self.proxy.start()
        threading.Thread(target=self._check_health, daemon=True).start()
        threading.Thread(target=self._announce, daemon=True).start()
        while not self.stopping.wait(0.25):
            for child in self.children:
                if child.process.poll() is not None and not self.stopping.is_set():
                    self._restart(child, f"exited with code {child.process.returncode}")
        self.stop()

    def _restart(self, child: Child, why: str) -> None:
        now = time.monotonic()
        child.restarts = [t for t in child.restarts if now - t < 60] + [now]
        say(f"{child.name} {why}: starting it again ({len(child.restarts)} in the last minute)")
        if len(child.restarts) > 5:
            self.stopping.wait(5.0)  # crashing at start-up: do not spin
            if self.stopping.is_set():
                return
        child.start()

    def _check_health(self) -> None:
        """Every second: a replica that has not answered its health check for HANG_S is killed, and so is a pool server
        that has not answered its ping for POOL_HANG_S (with its workers), and HAProxy unanswering for PROXY_HANG_S;
        the loop starts them again."""
        while not self.stopping.wait(1.0):
            self._check_pool()
            self._check_proxy()
            for replica in self.replicas:
                process = replica.process
                if process is None or process.poll() is not None:
                    continue
                if healthy(replica.port):
                    replica.healthy = time.monotonic()
                elif time.monotonic() - replica.healthy > HANG_S:
                    say(f"{replica.name} has not answered for {HANG_S:.0f} s: killing it")
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGKILL)

    def _check_pool(self) -> None:
        if self.pool is None:
            return
        pool, process = self.pool, self.pool.process
        if process is None or process.poll() is not None:
            return
        if shared_pool.ping(self.socket_path, self.pool_key, timeout=shared_pool.ASK_S):
            pool.healthy = time.monotonic()
        elif time.monotonic() - pool.healthy > POOL_HANG_S:
            say(f"the pool server has not answered for {POOL_HANG_S:.0f} s: killing it and its workers")
            kill_tree(process.pid)

    def _check_proxy(self) -> None:
        proxy, process = self.proxy, self.proxy.process
        if process is None or process.poll() is not None:
            return
        if answers(self.check_port, CHECKED, timeout=PROXY_HANG_S / 2):
            proxy.healthy = time.monotonic()
        elif time.monotonic() - proxy.healthy > PROXY_HANG_S:
            say(f"HAProxy has not answered for {PROXY_HANG_S:.0f} s: killing it (its students' pages reconnect to the new one)")
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)

    def _announce(self) -> None:
        while not self.stopping.wait(0.5):
            if all(healthy(r.port) for r in self.replicas) and healthy(self.port, host=self.address):
                url = f"http://{self.address}:{self.port}"
                if self.pool is None:
                    say(f"ready: the app behind HAProxy at {url} (Streamlit's browser files from HAProxy's cache)")
                else:
                    say(f"ready: {len(self.replicas)} replicas behind HAProxy at {url}")
                if self.browser:
                    webbrowser.open(url(self.address, self.port))
                return

    def stop(self) -> None:
        """The proxy first (no new clicks reach a stopping replica), then the replicas, then the pool and its workers."""
        self.stopping.set()
        for group in ([self.proxy], self.replicas, [self.pool] if self.pool else []):
            for child in group:
                child.stop()
            deadline = time.monotonic() + STOP_S
            for child in group:
                child.wait(deadline)
        say("stopped: the proxy, the replicas and the worker pool" if self.pool else "stopped: the proxy and the app")


def kill_tree(pid: int) -> None:
    """SIGKILL a process and every process below it, the process groups they lead too (a stopped process cannot
    catch SIGTERM to kill its workers itself; its workers lead process groups of their own: serve/pool.py)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                children.setdefault(int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
    below, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            below.append(child)
            todo.append(child)
    for victim in [*below, pid]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if os.getpgid(victim) == victim:
                os.killpg(victim, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.kill(victim, signal.SIGKILL)


def haproxy() -> str:
    found = shutil.which("haproxy") or next((p for p in ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy") if os.path.exists(p)), None)
    if found is None:
        raise SystemExit("HAProxy is not installed: scripts/app.sh installs it (apt-get install haproxy).")
    return found


def main(argv: Sequence[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--front-config"]:  # python -m serve.replicas --front-config [HOST:PORT ...] > haproxy.cfg
        print(front_config(argv[1:]), end="")
        return
    replicas, address, port, options = split_options(argv)
    with tempfile.TemporaryDirectory(prefix="bpe-serve-") as folder:
        os.chmod(folder, 0o700)  # the pool's socket
        supervisor = Supervisor(replicas, address, port, options, Path(folder))
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, lambda *_: supervisor.stopping.set())
        supervisor.run()


if __name__ == "__main__":
    main()
