"""Simulated students: websockets that speak Streamlit's own protocol to the app, and the server they talk to.

A `Student` is one websocket to /_stcore/stream sending what Chromium sends (captured once with Playwright's websocket
events): a `rerun_script` BackMsg with the page, every widget's value (as drawn, or as the student set it) and, for a
click, the button's trigger and its fragment id; the server answers with ForwardMsgs, and a click counts as done at
its `script_finished`, when the browser would show the updated page. `Server` starts `streamlit run` (or the replicas)
and measures its processes. benchmarks/classroom.py's scenarios and the serving tests (tests/test_replicas.py,
test_hostile_session.py, ...) both use them:

    from benchmarks.students import Server, Student
"""

from __future__ import annotations

import asyncio
import io
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

ROOT = Path(__file__).resolve().parents[1]
STDLIB = "Python's own docs"  # the 2 MB preset: how its option in the Corpus box starts
DONE = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
MERGE_CARD = re.compile(r"Merge <b>(\d+)</b> of")


# ---------------------------------------------------------------------------
# one student: a websocket speaking BackMsg / ForwardMsg


@dataclass
class Widget:
    kind: str  # "button", "selectbox", ...
    id: str
    fragment: str  # the fragment it was drawn in ("" for the whole page)
    proto: object


@dataclass
class Student:
    """A browser tab, as far as the server can tell: it sends reruns, and keeps what it needs of the page."""

    url: str
    name: str
    cookie: str = ""  # the proxy's cookie (BPE_REPLICA=r1): which replica this tab stays on
    sticky: bool = False  # load the page over HTTP first, as a browser does, to get that cookie
    query: str = ""  # the page's query string (the step page keeps ?corpus=…&merge=… in it), sent with every rerun
    session_id: str = ""  # the server's id of this tab's session: a reconnect asks for it back
    widgets: dict[str, Widget] = field(default_factory=dict)  # label -> the widget drawn with it
    texts: list[str] = field(default_factory=list)  # html, markdown and alert bodies drawn since the last full run began
    drawn: set[str] = field(default_factory=set)  # labels of the widgets drawn since then
    seen: tuple[list[str], set[str]] = ([], set())  # texts and drawn as they were when the last run waited for finished
    tables: list[bytes] = field(default_factory=list)  # the Arrow data of the tables drawn since the last full run began
    pages: dict[str, str] = field(default_factory=dict)  # page name -> script hash
    page: str = ""  # the script hash of the page shown
    values: dict[str, WidgetState] = field(default_factory=dict)  # widget id -> its value in this tab, sent with every rerun
    polls: dict[str, asyncio.Task] = field(default_factory=dict)  # fragment id -> its auto-rerun loop
    assets: tuple[str, ...] = ()  # paths a browser fetches before its websocket (index, scripts, fonts): fetched by open() first
    opened: float = 0.0  # when open() began (perf_counter)
    painted: float | None = None  # seconds from open() until the first merge card arrived: the step page's first paint
    asked_urls: dict[str, asyncio.Future] = field(default_factory=dict)  # an upload's request id -> the URLs the server gives
    received: int = 0  # bytes of every message the server sent this tab

    async def open(self, timeout: float = 600, resume: bool = False) -> float:
        """Connect and run the page, as a browser opening the URL does; seconds until it is shown.

        resume=True reconnects as a browser does after losing its connection: the
        same cookie, asking for the same session back (the server keeps it a while).
        """
        start = self.opened = time.perf_counter()
        self.painted = None
        if self.sticky and not self.cookie:
            self.cookie = await asyncio.wait_for(load_page(self.url, self.query), timeout)
        if self.assets:
            await asyncio.wait_for(fetch_assets(self.url, self.assets, self.cookie), timeout)
        protocols = ["streamlit", "PLACEHOLDER_AUTH_TOKEN", self.session_id] if resume and self.session_id else None
        headers = {"Cookie": self.cookie} if self.cookie else None
        self.ws = await websockets.connect(
            self.url, max_size=None, open_timeout=timeout, ping_interval=None, additional_headers=headers, subprotocols=protocols
        )
        self.finished: asyncio.Queue[tuple[int, list[str], set[str]]] = asyncio.Queue()
        self.reader = asyncio.create_task(self._read())
        await self._send(self._rerun())
        while await self.wait_finished(timeout) not in DONE:  # a run that ended early for a rerun is not the page yet
            pass
        return time.perf_counter() - start

    async def close(self) -> None:
        for task in self.polls.values():
            task.cancel()
        self.reader.cancel()
        await self.ws.close()

    # -- what a student does --------------------------------------------------------
    async def click(self, label: str, timeout: float = 600) -> float:
        """Press the button labelled label (starts-with); seconds until the run it starts has finished."""
        widget = self.find(label, "button")
        trigger = WidgetState(id=widget.id, trigger_value=True)
        return await self._timed(self._rerun(fragment=widget.fragment, extra=[trigger]), timeout)

    async def choose(self, label: str, option: str, timeout: float = 600) -> float:
        """Pick the option starting with option in the selectbox labelled label; seconds until that run has finished."""
        widget = next((w for name, w in self.widgets.items() if w.kind in ("selectbox", "radio") and name.startswith(label)), None)
        if widget is None:
            raise LookupError(f"{self.name}: no selectbox or radio labelled {label!r} on the page (have {sorted(self.widgets)})")
        shown = next((o for o in widget.proto.options if o.startswith(option)), None)
        if shown is None:
            raise LookupError(f"{self.name}: {label!r} has no option starting with {option!r} (has {list(widget.proto.options)})")
        self.values[widget.id] = WidgetState(id=widget.id, string_value=shown)
        return await self._timed(self._rerun(fragment=widget.fragment), timeout)

    async def type(self, label: str, text: str, timeout: float = 600) -> float:
        """Put text into the text box (or area) labelled label (or 'label (…)', where a box says its limit), and send it;
        seconds until that run has finished."""
        widget = next(
            (
                w
                for name, w in self.widgets.items()
                if w.kind in ("text_input", "text_area") and (name == label or name.startswith(label + " (")) and name in self.drawn
            ),
            None,
        )
        if widget is None:
            raise LookupError(f"{self.name}: no text box labelled {label!r} on the page (have {sorted(self.widgets)})")
        self.values[widget.id] = WidgetState(id=widget.id, string_value=text)
        return await self._timed(self._rerun(fragment=widget.fragment), timeout)

    async def upload(self, label: str, name: str, data: bytes, timeout: float = 600) -> float:
        """Put a file into the file uploader labelled label (starts-with), as a browser does: ask the server where to
        send it (a FileURLsRequest), PUT it there with the XSRF cookie the health check sets, then rerun with the
        widget's new value; seconds from the first request until that run has finished."""
        widget = self.find(label, "file_uploader")
        start = time.perf_counter()
        msg = BackMsg()
        request_id = f"{self.name}-{len(self.asked_urls)}-{random.random()}"
        msg.file_urls_request.request_id = request_id
        msg.file_urls_request.file_names.append(name)
        msg.file_urls_request.session_id = self.session_id
        self.asked_urls[request_id] = asyncio.get_running_loop().create_future()
        await self._send(msg)
        urls = await asyncio.wait_for(self.asked_urls[request_id], timeout)
        await asyncio.wait_for(put_file(self.url, urls.upload_url, name, data, self.cookie), timeout)
        state = WidgetState(id=widget.id)
        info = state.file_uploader_state_value.uploaded_file_info.add()
        info.name, info.size, info.file_id = name, len(data), urls.file_id
        info.file_urls.CopyFrom(urls)
        self.values[widget.id] = state
        return await self._timed(self._rerun(fragment=widget.fragment), timeout) + (time.perf_counter() - start)

    async def rerun(self, timeout: float = 600) -> float:
        """Run the whole page again, as a browser does when a widget outside any fragment changes; seconds until it has finished."""
        return await self._timed(self._rerun(), timeout)

    async def go(self, page: str, timeout: float = 600) -> float:
        """Open another page from the sidebar; seconds until it is shown."""
        self.page = self.pages[page]
        return await self._timed(self._rerun(), timeout)

    def find(self, label: str, kind: str) -> Widget:
        for name, widget in self.widgets.items():
            if widget.kind == kind and name.startswith(label):
                return widget
        raise LookupError(f"{self.name}: no {kind} labelled {label!r} on the page (have {sorted(self.widgets)})")

    def table(self, first_column: str) -> dict[str, list]:
        """The last table drawn whose first column is first_column, as columns; {} if none."""
        for data in reversed(self.tables):
            try:
                frame = pa.ipc.open_stream(io.BytesIO(data)).read_all()
            except pa.ArrowInvalid:
                continue
            if frame.column_names and frame.column_names[0] == first_column:
                return frame.to_pydict()
        return {}

    def shows(self, text: str) -> bool:
        """Whether the page, as the last finished run left it, shows text."""
        return any(text in t for t in self.seen[0])

    def drew(self, label: str) -> bool:
        """Whether the page, as the last finished run left it, has a widget whose label starts with label."""
        return any(name.startswith(label) for name in self.seen[1])

    async def until(self, condition, timeout: float = 600) -> float:
        """Wait for runs (auto-reruns included) until condition() holds after one; seconds waited."""
        start = time.perf_counter()
        while not condition():
            left = timeout - (time.perf_counter() - start)
            if left <= 0:
                raise TimeoutError(f"{self.name}: still waiting after {timeout:.0f} s")
            await self.wait_finished(left)
        return time.perf_counter() - start

    async def wait_finished(self, timeout: float) -> int:
        """Wait for the next run to finish; what it left on the page becomes `seen`. ConnectionError if the server hung up."""
        status, texts, drawn = await asyncio.wait_for(self.finished.get(), timeout)
        if status is None:
            self.finished.put_nowait((None, [], set()))  # every later wait hears it too
            raise ConnectionError(f"{self.name}: the server closed the connection")
        self.seen = (texts, drawn)
        return status

    def merge_shown(self) -> int | None:
        """The merge the step page's card shows ("Merge <b>k</b> of n"), as the last finished run left it."""
        for text in reversed(self.seen[0]):
            if (found := MERGE_CARD.search(text)) is not None:
                return int(found.group(1))
        return None

    # -- the protocol --------------------------------------------------------------------
    def _rerun(self, fragment: str = "", extra: list[WidgetState] = (), auto: bool = False) -> BackMsg:
        msg = BackMsg()
        state = msg.rerun_script
        state.page_script_hash = self.page
        state.query_string = self.query
        state.fragment_id = fragment
        state.is_auto_rerun = auto
        for widget in list(self.values.values()) + list(extra):
            state.widget_states.widgets.append(widget)
        info = state.context_info
        info.timezone, info.locale, info.url, info.color_scheme = "UTC", "en-US", self.url.replace("ws", "http", 1), "light"
        return msg

    async def _send(self, msg: BackMsg) -> None:
        await self.ws.send(msg.SerializeToString())

    async def _timed(self, msg: BackMsg, timeout: float) -> float:
        while not self.finished.empty():  # a poll that ended before this click is not its answer
            self.finished.get_nowait()
        if self.reader.done():
            raise ConnectionError(f"{self.name}: the server closed the connection")
        start = time.perf_counter()
        await self._send(msg)
        while await self.wait_finished(timeout) not in DONE:
            pass
        return time.perf_counter() - start

    async def _read(self) -> None:
        try:
            await self._take_messages()
        except websockets.ConnectionClosed:
            pass
        finally:
            self.finished.put_nowait((None, [], set()))  # the connection is gone: whoever waits hears it at once

    async def _take_messages(self) -> None:
        async for raw in self.ws:
            self.received += len(raw)
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "new_session" and msg.new_session.initialize.session_id:
                self.session_id = msg.new_session.initialize.session_id
            if kind == "page_info_changed":
                self.query = msg.page_info_changed.query_string
            if kind == "file_urls_response" and msg.file_urls_response.response_id in self.asked_urls:
                asked = self.asked_urls[msg.file_urls_response.response_id]
                if msg.file_urls_response.error_msg:
                    asked.set_exception(ConnectionError(f"{self.name}: no upload URL ({msg.file_urls_response.error_msg})"))
                else:
                    asked.set_result(msg.file_urls_response.file_urls[0])
            if kind == "new_session" and not msg.metadata.run.fragment_ids:
                # a full run starts: what it draws replaces the page, and (as the browser does)
                # the fragments that rerun by themselves stop until the run draws them again
                self.texts, self.drawn, self.tables = [], set(), []
                for task in self.polls.values():
                    task.cancel()
                self.polls.clear()
            elif kind == "navigation":
                self.pages = {p.page_name: p.page_script_hash for p in msg.navigation.app_pages}
                self.page = msg.navigation.page_script_hash or self.page
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                self._keep(msg.delta.new_element, msg.delta.fragment_id)
            elif kind == "auto_rerun":
                self._poll(msg.auto_rerun.fragment_id, msg.auto_rerun.interval)
            elif kind == "stop_auto_rerun":
                for fragment in msg.stop_auto_rerun.fragment_ids:
                    task = self.polls.pop(fragment, None)
                    if task:
                        task.cancel()
            elif kind == "script_finished":
                self.finished.put_nowait((msg.script_finished, list(self.texts), set(self.drawn)))

    def _keep(self, element, fragment: str) -> None:
        kind = element.WhichOneof("type")
        body = getattr(element, kind, None)
        if kind in ("html", "markdown", "alert"):
            self.texts.append(body.body)
            if self.painted is None and MERGE_CARD.search(body.body):
                self.painted = time.perf_counter() - self.opened
        elif kind in ("dataframe", "table"):
            self.tables.append(body.arrow_data.data)  # read only when asked for: table()
        elif body is not None and hasattr(body, "id") and hasattr(body, "label"):
            self.widgets[body.label] = Widget(kind, body.id, fragment, body)
            self.drawn.add(body.label)
            if body.id not in self.values or getattr(body, "set_value", False):
                value = browser_value(kind, body)
                if value is not None:
                    self.values[body.id] = value

    def _poll(self, fragment: str, interval: float) -> None:
        if fragment in self.polls:
            return

        async def loop() -> None:
            while True:
                await asyncio.sleep(interval)
                await self._send(self._rerun(fragment=fragment, auto=True))

        self.polls[fragment] = asyncio.create_task(loop())


async def load_page(ws_url: str, query: str = "") -> str:
    """page_cookie without a thread: 300 students load the page at once, as 300 browsers would."""
    host, port = ws_url.split("//", 1)[1].split("/", 1)[0].split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    path = f"/?{query}" if query else "/"
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
    answer = await reader.read()  # to the end: the whole page, as a browser reads it
    writer.close()
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    if not head[0].startswith("HTTP/1.1 200"):
        raise ConnectionError(f"the page answered {head[0]!r}")
    cookies = [line.split(":", 1)[1].strip().split(";", 1)[0] for line in head[1:] if line.lower().startswith("set-cookie:")]
    return "; ".join(cookies)


async def put_file(ws_url: str, path: str, name: str, data: bytes, cookie: str = "") -> None:
    """PUT a file to Streamlit's upload URL as its frontend does: multipart form data, with the XSRF token (the cookie
    /_stcore/health sets, echoed in X-Xsrftoken) that the server checks."""
    host, port = ws_url.split("//", 1)[1].split("/", 1)[0].split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"GET /_stcore/health HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    await reader.readexactly(int(re.search(r"(?i)content-length: *(\d+)", head).group(1)))
    xsrf = re.search(r"(?i)set-cookie: *_streamlit_xsrf=([^;\r\n]+)", head)
    boundary = f"----classroom{random.getrandbits(64):x}"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    cookies = "; ".join(c for c in (cookie, f"_streamlit_xsrf={xsrf.group(1)}" if xsrf else "") if c)
    token = f"X-Xsrftoken: {xsrf.group(1)}\r\n" if xsrf else ""
    writer.write(
        f"PUT {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: multipart/form-data; boundary={boundary}\r\n"
        f"Content-Length: {len(body)}\r\nCookie: {cookies}\r\n{token}Connection: close\r\n\r\n".encode()
        + body
    )
    answer = await reader.read()
    writer.close()
    status = answer.split(b"\r\n", 1)[0].decode("latin-1")
    if " 20" not in status:
        raise ConnectionError(f"the upload of {name} was answered {status!r}: {answer[-200:]!r}")


async def fetch_assets(ws_url: str, paths: tuple[str, ...], cookie: str = "", connections: int = 6) -> int:
    """GET every path as a browser does (HTTP/1.1 keep-alive, `connections` at a time); the bytes received."""
    host, port = ws_url.split("//", 1)[1].split("/", 1)[0].split(":")
    todo = list(paths)
    received = 0

    async def one_connection() -> None:
        nonlocal received
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            while todo:
                path = todo.pop(0)
                extra = f"Cookie: {cookie}\r\n" if cookie else ""
                writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept-Encoding: gzip, deflate, br\r\n{extra}\r\n".encode())
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").lower()
                length = re.search(r"content-length: *(\d+)", head)
                if length:
                    received += len(await reader.readexactly(int(length.group(1))))
                elif "chunked" in head:
                    while size := int((await reader.readuntil(b"\r\n")).strip(), 16):
                        received += len(await reader.readexactly(size + 2)) - 2
                    await reader.readuntil(b"\r\n")
        finally:
            writer.close()

    await asyncio.gather(*(one_connection() for _ in range(connections)))
    return received


def browser_fetches(ws_url: str, query: str = "") -> tuple[str, ...]:
    """The paths Chromium fetches over HTTP opening the page (its index, scripts, styles, fonts), captured once with Playwright."""
    from playwright.sync_api import sync_playwright

    base = ws_url.replace("ws", "http", 1).removesuffix("/_stcore/stream")
    paths: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.on("request", lambda r: paths.append(r.url.removeprefix(base)) if r.url.startswith(base) else None)
        page.goto(f"{base}/?{query}" if query else base, wait_until="networkidle")
        page.get_by_text("Merge 37" if "merge=37" in query else "Merge 1 of").first.wait_for(timeout=120_000)
        page.wait_for_load_state("networkidle")
        browser.close()
    return tuple(p for p in dict.fromkeys(paths) if p and "_stcore/stream" not in p)


def page_cookie(ws_url: str, timeout: float) -> str:
    """Load the app's page over HTTP, as a browser does before its websocket; the cookies it was given ("name=value; ...")."""
    url = ws_url.replace("ws", "http", 1).removesuffix("/_stcore/stream") + "/"
    with urllib.request.urlopen(url, timeout=timeout) as answer:
        answer.read()
        return "; ".join(c.split(";", 1)[0] for c in answer.headers.get_all("Set-Cookie") or [])


def browser_value(kind: str, proto) -> WidgetState | None:
    """The value a browser holds for a widget it has just been sent, as it sends it back with every rerun.

    Its default, or the value the server set; None for widgets without one (buttons, uploads).
    """
    state = WidgetState(id=proto.id)
    if kind in ("selectbox", "radio"):
        if proto.set_value and proto.HasField("raw_value"):
            state.string_value = proto.raw_value
        elif proto.HasField("default") and proto.options:
            state.string_value = proto.options[proto.default]
        else:
            return None
    elif kind == "number_input":
        value = proto.value if proto.set_value and proto.HasField("value") else proto.default if proto.HasField("default") else None
        if value is None:
            return None
        if proto.data_type == proto.INT:
            state.int_value = int(value)
        else:
            state.double_value = value
    elif kind in ("text_input", "text_area"):
        state.string_value = proto.value if proto.set_value and proto.HasField("value") else proto.default
    elif kind == "checkbox":
        state.bool_value = proto.value if proto.set_value else proto.default
    elif kind == "slider" and proto.type == proto.SELECT_SLIDER:
        state.string_array_value.data.extend(list(proto.raw_value) if proto.set_value else [proto.options[int(i)] for i in proto.default])
    elif kind == "slider":
        state.double_array_value.data.extend(proto.value if proto.set_value else proto.default)
    else:
        return None
    return state


# ---------------------------------------------------------------------------
# the server, and its memory


class Server:
    """What `bash scripts/app.sh` runs, from APP's folder, on a free port: one app process (`streamlit run web.py`: APP
    behind serve/assets.py) behind HAProxy (`python -m serve.replicas`); with replicas, `python -m serve.replicas
    --replicas N`; direct=True: `streamlit run web.py` alone (APP itself where there is no web.py beside it), as a machine
    without HAProxy, and this project before issue 37, served it (another checkout of that age needs it). Stopped with stop()."""

    def __init__(self, app: Path, replicas: int = 0, env: dict[str, str] | None = None, direct: bool = False) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.replicas = replicas
        self.proxied = bool(replicas) or not direct and have_haproxy()
        handle, self.log = tempfile.mkstemp(prefix="classroom-server-", suffix=".log")  # the server's output, for when it fails
        where = ["--server.port", str(self.port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"]
        if self.proxied:
            command = [sys.executable, "-m", "serve.replicas", *(["--replicas", str(replicas)] if replicas else []), *where]
            command += ["--server.headless", "true"]
        else:
            served = app.parent / "web.py" if (app.parent / "web.py").is_file() else app  # what scripts/app.sh runs, where there is one
            command = [sys.executable, "-m", "streamlit", "run", str(served), "--server.headless", "true", *where]
            command += ["--browser.gatherUsageStats", "false"]
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}  # read-only on another checkout
        self.process = subprocess.Popen(command, cwd=app.parent, stdout=handle, stderr=subprocess.STDOUT, env=env)
        os.close(handle)
        self.url = f"ws://127.0.0.1:{self.port}/_stcore/stream"
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server stopped at start-up; see {self.log}")
            if not self.proxied and healthy(self.port) or self.proxied and "ready:" in Path(self.log).read_text():
                break
            time.sleep(0.3)
        else:
            raise RuntimeError(f"the server did not start; see {self.log}")
        self.memory = Memory(self.process.pid, replicas, self.proxied)

    def app_pid(self) -> int:
        """The app's process (with replicas, r1's): the one answering the pages."""
        if not self.proxied:
            return self.process.pid
        return next(p for p in descendants(self.process.pid) if role(p) in ("r1", "replica"))

    def student(self, name: str) -> Student:
        return Student(self.url, name, sticky=bool(self.replicas))

    def stop(self) -> None:
        self.memory.stop()
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


def have_haproxy() -> bool:
    """Whether HAProxy is installed: scripts/app.sh serves the app alone where it is not."""
    return any(os.access(os.path.join(d, "haproxy"), os.X_OK) for d in [*os.environ.get("PATH", "").split(os.pathsep), "/usr/sbin"])


def healthy(port: int) -> bool:
    try:
        return urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read() == b"ok"
    except OSError:
        return False


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0.0


def cpu_seconds(pid: int, tick: int) -> float:
    """Processor seconds (user + system) the process has used; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
        return 0.0


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def role(pid: int) -> str:
    """What a process of a replicated server is: its replica ("r1"), "pool" (the pool server and its workers) or "proxy"."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if b"streamlit" in command:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            return next((e[len(b"BPE_REPLICA=") :].decode() for e in environ if e.startswith(b"BPE_REPLICA=")), "replica")
        if any(part.endswith(b"haproxy") for part in command):
            return "proxy"
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return "pool"


class Memory:
    """Samples RSS and processor use every second, per group of processes.

    One server: "server" and its "workers" (behind the proxy: the supervisor too), and "proxy" when it has one.
    Replicas: each replica ("r1", ...), "pool" (the supervisor, the pool server and its workers) and "proxy".
    """

    def __init__(self, pid: int, replicas: int = 0, proxied: bool = False) -> None:
        self.pid, self.replicas, self.proxied, self.samples, self.marks = (
            pid,
            replicas,
            proxied,
            [],
            [],
        )  # samples: (seconds, {group: (MB, %)})
        if replicas:
            self.groups = [f"r{i}" for i in range(1, replicas + 1)] + ["pool", "proxy"]
        else:
            self.groups = ["server", "workers"] + ["proxy"] * proxied
        self.start = time.perf_counter()
        self._stop = threading.Event()
        threading.Thread(target=self._sample, daemon=True).start()

    def _group(self, pid: int, roles: dict[int, str]) -> str:
        if not self.proxied:
            return "server" if pid == self.pid else "workers"
        if pid not in roles:
            roles[pid] = role(pid)
        if self.replicas:
            return roles[pid]
        return {"replica": "server", "proxy": "proxy"}.get(roles[pid], "workers")

    def _sample(self) -> None:
        tick = os.sysconf("SC_CLK_TCK")
        seen: dict[int, float] = {}  # pid -> processor seconds at the last sample
        roles: dict[int, str] = {}
        last = time.perf_counter()
        while not self._stop.wait(1.0):
            now, pids = time.perf_counter(), [self.pid, *descendants(self.pid)]
            used = {pid: cpu_seconds(pid, tick) for pid in pids}
            groups = {g: [0.0, 0.0] for g in self.groups}
            for pid in pids:
                share = (used[pid] - seen.get(pid, used[pid] if pid == self.pid else 0.0)) / (now - last) * 100
                group = groups.setdefault(self._group(pid, roles), [0.0, 0.0])
                group[0] += rss_mb(pid)
                group[1] += share
            seen, last = used, now
            self.samples.append((now - self.start, {g: tuple(v) for g, v in groups.items()}))

    def app_rss(self) -> float:
        """The app's RSS now: the server's, or every replica's together."""
        if not self.proxied:
            return rss_mb(self.pid)
        return sum(rss_mb(p) for p in descendants(self.pid) if role(p).startswith("r"))

    def mark(self, label: str) -> float:
        """Note what happens now; returns the app's RSS at this moment (the server's, or the replicas' together)."""
        now = self.app_rss()
        self.marks.append((time.perf_counter() - self.start, label, now))
        return now

    def stop(self) -> None:
        self._stop.set()

    def timeline(self, every: float = 5.0) -> str:
        """Every `every` seconds and at each mark: RSS and processor use of each group, averaged since the line before (100 % = a core)."""
        header = " | ".join(f"{g} MB, CPU" for g in self.groups)
        lines = [f"  t (s) | {header} | what happened"]
        marks, last, pending = list(self.marks), -every, []
        for t, groups in self.samples:
            pending.append(groups)
            due = [m for m in marks if m[0] <= t]
            if t - last >= every or due:
                what = "; ".join(label for _, label, _ in due)
                marks = [m for m in marks if m[0] > t]
                cells = []
                for g in self.groups:
                    mb = groups.get(g, (0.0, 0.0))[0]
                    cpu = sum(p.get(g, (0.0, 0.0))[1] for p in pending) / len(pending)
                    cells.append(f"{mb:6.0f} {cpu:4.0f}%")
                lines.append(f"  {t:5.0f} | {' | '.join(cells)} | {what}")
                last, pending = t, []
        for t, label, rss in marks:  # after the last sample
            lines.append(f"  {t:5.0f} | app RSS {rss:.0f} MB | {label}")
        return "\n".join(lines)

    async def settle(self, quiet: float = 10.0, seconds: int = 3, timeout: float = 300.0) -> float:
        """Wait until the app's processes (its workers too) use under `quiet` % of a core for `seconds` samples in a
        row (the app loads the real tokenizers and builds a lecture's runs in the background at start); seconds waited."""
        start, calm = time.perf_counter(), 0
        while time.perf_counter() - start < timeout and calm < seconds:
            await asyncio.sleep(1.0)
            last = self.samples[-1][1] if self.samples else {}
            busy = sum(cpu for _, (_, cpu) in last.items())  # the pool's too: a server warming up builds there
            calm = calm + 1 if busy < quiet else 0
        return time.perf_counter() - start

    def cpu_seconds(self, since: float, until: float) -> dict[str, float]:
        """Processor seconds each group used between two moments (seconds since the start), from the 1 s samples."""
        window = [(t, groups) for t, groups in self.samples if since <= t <= until]
        used = {g: 0.0 for g in self.groups}
        for (t0, _), (t1, groups) in zip(window, window[1:]):
            for g in self.groups:
                used[g] += groups.get(g, (0.0, 0.0))[1] / 100 * (t1 - t0)
        return used

    def cpu_summary(self, since: float, until: float) -> str:
        """Average processor use of each group between two moments (seconds since the start): 'r1 48 %, r2 51 %, ...'."""
        window = [groups for t, groups in self.samples if since <= t <= until]
        if not window:
            return "no samples"
        parts = [f"{g} {sum(w.get(g, (0, 0))[1] for w in window) / len(window):.0f} %" for g in self.groups]
        return ", ".join(parts)
