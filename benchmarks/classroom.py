"""A classroom on one server: N simulated students speak Streamlit's own websocket protocol to `streamlit run app.py`.

    .venv/bin/python benchmarks/classroom.py                       # every scenario: 30 students, 5 of them racing
    .venv/bin/python benchmarks/classroom.py --scenario stepping --sessions 10 --seconds 30
    .venv/bin/python benchmarks/classroom.py --app /work/main/app.py   # another checkout (run read-only: no .pyc written)
    .venv/bin/python benchmarks/classroom.py --replicas 2 --sessions 300 --scenario stepping   # through HAProxy (serve/replicas.py)
    .venv/bin/python benchmarks/classroom.py --scenario pages --rounds 5   # each page's warm click, server and Chromium

Results go in BENCHMARKS.md. No browsers (but for the pages scenario's second half): a student is one websocket to
/_stcore/stream sending what Chromium sends (captured once with Playwright's
websocket events): a `rerun_script` BackMsg with the page, every widget's value
(as drawn, or as the student set it) and, for a click, the button's trigger and
its fragment id; the
server answers with ForwardMsgs, and a click counts as done at its
`script_finished`, when the browser would show the updated page. Fragments that
rerun by themselves (`auto_rerun`, a page polling its worker) are rerun on their
interval, as the browser does.

With --replicas N the server is `python -m serve.replicas --replicas N` (what
`scripts/app.sh --replicas N` runs): N app processes behind HAProxy, sticky on
a cookie. A student then first loads the page over HTTP, as a browser does,
and keeps the proxy's cookie for its websocket; each replica's processor and
memory are sampled apart (and the shared worker pool's, and the proxy's).

Scenarios, each on a fresh server (the server is visited once first: start-up):

- cold: N students open the app at the same moment (the step page, the textbook
  preset); how long until each sees it.
- stepping: N students open the app and pick the 2 MB "Python's own docs" preset
  (1,000 merges) together, then each clicks Next every ~INTERVAL s (uniform
  +-25 %) for SECONDS; latency per click, clicks per second the server answered.
- racing: one student races alone on a server of its own (the race's figures and
  its wall time from Start to the verdict); then, on another server, N students
  pick the 2 MB preset, and N - K step while K press Start the race together;
  stepping latency, each race's wall time and trainer times against the race
  alone, and whether any trainer was cut off for lack of processor.

- upload: N students step on the 2 MB preset, alone, then while one more
  uploads slow-to-read .tiktoken files on Tokenize & export (tokens built to
  collide in the core's hash); stepping latency both times, each upload's wait.
- pages: one student clicks from page to page in the sidebar on a warm server: each page's first visit and its warm
  click, as the server answers it and as Chromium draws it (issue 36.6: Tokenize & export took 2-4 s a click).

- compare: one student opens the Real tokenizers page on a fresh server (GPT-2,
  GPT-4 and GPT-4o load in the background from start-up), then N students open
  it together; how long until each sees the comparison.

Server memory (RSS of the server process, and of its worker processes together)
is sampled every second and printed as a timeline; the racing scenario compares
the server's RSS with everyone on the step page just before the races and 15 s
after the races end.

Targets (issue 8; figures on a 2-core machine, not tests): stepping p95 <= 0.5 s;
with 5 racing, stepping p95 <= 1 s and every race uncut within 1.5x its time
alone; cold start p95 <= 5 s; RSS after the races within 100 MB of idle.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import math
import os
import random
import re
import signal
import socket
import statistics
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
    """`streamlit run web.py` (APP behind serve/assets.py; APP itself where there is no web.py beside it) on a free port, from
    APP's folder (or, with replicas, `python -m serve.replicas --replicas N`); stopped with stop()."""

    def __init__(self, app: Path, replicas: int = 0, env: dict[str, str] | None = None) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.replicas = replicas
        handle, self.log = tempfile.mkstemp(prefix="classroom-server-", suffix=".log")  # the server's output, for when it fails
        where = ["--server.port", str(self.port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"]
        if replicas:
            command = [sys.executable, "-m", "serve.replicas", "--replicas", str(replicas), *where]
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
            if not replicas and healthy(self.port) or replicas and "ready:" in Path(self.log).read_text():
                break
            time.sleep(0.3)
        else:
            raise RuntimeError(f"the server did not start; see {self.log}")
        self.memory = Memory(self.process.pid, replicas)

    def student(self, name: str) -> Student:
        return Student(self.url, name, sticky=bool(self.replicas))

    def stop(self) -> None:
        self.memory.stop()
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


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

    One server: "server" and its "workers". Replicas: each replica ("r1", ...),
    "pool" (the supervisor, the pool server and its workers) and "proxy".
    """

    def __init__(self, pid: int, replicas: int = 0) -> None:
        self.pid, self.replicas, self.samples, self.marks = pid, replicas, [], []  # samples: (seconds, {group: (MB, %)})
        self.groups = [f"r{i}" for i in range(1, replicas + 1)] + ["pool", "proxy"] if replicas else ["server", "workers"]
        self.start = time.perf_counter()
        self._stop = threading.Event()
        threading.Thread(target=self._sample, daemon=True).start()

    def _group(self, pid: int, roles: dict[int, str]) -> str:
        if not self.replicas:
            return "server" if pid == self.pid else "workers"
        if pid not in roles:
            roles[pid] = role(pid)
        return roles[pid]

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
        pids = [self.pid, *descendants(self.pid)]
        if not self.replicas:
            return rss_mb(self.pid)
        return sum(rss_mb(p) for p in pids if role(p).startswith("r"))

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


# ---------------------------------------------------------------------------
# figures


def summary(seconds: list[float], what: str = "clicks") -> str:
    """'median 0.21 s, p95 0.40 s, max 0.52 s (412 clicks)'"""
    if not seconds:
        return f"no {what}"
    ordered = sorted(seconds)
    return f"median {statistics.median(ordered):.2f} s, p95 {p95(ordered):.2f} s, max {ordered[-1]:.2f} s ({len(ordered)} {what})"


def p95(seconds: list[float]) -> float:
    """The nearest-rank 95th percentile."""
    ordered = sorted(seconds)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)] if ordered else float("nan")


def profile(server: Server, path: Path, seconds: float) -> subprocess.Popen:
    """py-spy sampling the server (with replicas: r1) for the stepping's duration, as collapsed stacks in path.

    --gil: only the thread holding the interpreter lock, so the samples are the processor time the pages
    compete for (a thread waiting for the lock, or in a hash that released it, is not counted).
    """
    pid = server.process.pid
    if server.replicas:
        pid = next(p for p in descendants(pid) if role(p) == "r1")
    spy = str(Path(sys.executable).parent / "py-spy")
    command = [spy, "record", "--pid", str(pid), "--duration", str(int(seconds)), "--rate", "200", "--format", "raw", "--gil"]
    return subprocess.Popen([*command, "--output", str(path), "--nonblocking"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def hot_spots(path: Path, clicks: int, top: int = 30) -> str:
    """Where the server's samples went: per function, the share of samples in it or below it (inclusive), busiest first."""
    inclusive: dict[str, int] = {}
    total = 0
    for line in Path(path).read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():  # a stack read while it changed (--nonblocking): garbage, skipped
            continue
        total += int(count)
        names = set()
        for frame in stack.split(";"):
            function, _, where = frame.partition(" (")
            names.add(f"{function} ({where.split(':')[0].rsplit('/', 1)[-1]})")
        for name in names:
            inclusive[name] = inclusive.get(name, 0) + int(count)
    lines = [f"py-spy: {total} samples at 200/s while {clicks} clicks were answered; the functions holding most of them:"]
    for name, count in sorted(inclusive.items(), key=lambda x: -x[1])[:top]:
        lines.append(f"  {count / max(total, 1) * 100:5.1f} %  {name}")
    return "\n".join(lines)


def spread(students: list[Student]) -> str:
    """How many students each replica holds, from their cookies: 'r1 150, r2 150'."""
    counts: dict[str, int] = {}
    for s in students:
        replica = next((c.split("=", 1)[1] for c in s.cookie.split("; ") if c.startswith("BPE_REPLICA=")), "?")
        counts[replica] = counts.get(replica, 0) + 1
    return ", ".join(f"{r} {c}" for r, c in sorted(counts.items()))


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


@dataclass
class Race:
    wall_s: float
    totals: dict[str, float]  # algorithm -> trainer total (s)
    status: dict[str, str]  # algorithm -> status ("finished", "cut off", "cut off: server busy", ...)


def race_of(student: Student, wall_s: float) -> Race:
    table = student.table("algorithm")
    names = table.get("algorithm", [])
    totals = [seconds_of(t) for t in table.get("trainer total", [])]
    return Race(wall_s, dict(zip(names, totals)), dict(zip(names, table.get("status", []))))


def seconds_of(value) -> float:
    """A table's time as a number: 1.5, or the text the race page's st.table shows ("1.50 s", "1,234.5 s")."""
    if isinstance(value, int | float):
        return float(value)
    found = re.search(r"[\d,]+(?:\.\d+)?", str(value))
    return float(found.group(0).replace(",", "")) if found else float("nan")


def race_text(race: Race) -> str:
    # a reference (Rust) tool's row has no trainer total of ours: its status says how it was timed
    parts = [f"{a} {t:.2f} s ({race.status.get(a, '?')})" if t == t else f"{a} ({race.status.get(a, '?')})" for a, t in race.totals.items()]
    return f"{race.wall_s:.1f} s from Start to the verdict; " + ", ".join(parts)


# ---------------------------------------------------------------------------
# scenarios


async def open_all(server: Server, n: int) -> tuple[list[Student], list[float]]:
    students = [server.student(f"student {i + 1}") for i in range(n)]
    seconds = await asyncio.gather(*(s.open() for s in students))
    return students, list(seconds)


def stepping_stdlib(student: Student) -> bool:
    """The step page on the 2 MB preset: the sidebar says 1,000 merges and the run drew a Next button."""
    return student.shows("1,000 merges") and student.drew("Next")


async def pick_stdlib(students: list[Student]) -> list[float]:
    """Everyone picks the 2 MB preset at once; seconds until each one's step page shows a merge of it."""

    async def one(s: Student) -> float:
        start = time.perf_counter()
        await s.choose("Corpus", STDLIB)
        await s.until(lambda: stepping_stdlib(s))
        return time.perf_counter() - start

    return list(await asyncio.gather(*(one(s) for s in students)))


WRONG: list[str] = []  # clicks after which a student's page showed another merge than the one after theirs


async def step(students: list[Student], seconds: float, interval: float, rng: random.Random) -> tuple[list[float], float]:
    """Each student clicks Next every ~interval s (uniform +-25 %) for seconds: the latency of every click, and the
    clicks answered per second once every student has started (starts are spread over the first interval).

    After each click the page must show the merge after the one it showed (sessions never cross);
    a click that does not is noted in WRONG.
    """
    latencies: list[float] = []
    start = time.perf_counter()
    stop = start + seconds
    steady = 0  # clicks sent after every student's first, while the whole class is clicking

    async def one(s: Student) -> None:
        nonlocal steady
        await asyncio.sleep(rng.uniform(0, interval))
        while time.perf_counter() < stop:
            before, sent = s.merge_shown(), time.perf_counter()
            took = await s.click("Next")
            latencies.append(took)
            steady += sent >= start + interval
            if before is not None and s.merge_shown() not in (before + 1, before):  # before: at the last merge already
                WRONG.append(f"{s.name}: merge {before} then {s.merge_shown()}")
            await asyncio.sleep(max(0.0, interval * rng.uniform(0.75, 1.25) - took))

    await asyncio.gather(*(one(s) for s in students))
    return latencies, steady / (seconds - interval)


async def race(student: Student) -> Race:
    """Open the race page, press Start, wait for the verdict; what the page shows then."""
    await student.go("Algorithm race")
    start = time.perf_counter()
    await student.click("Start the race", timeout=1800)  # the whole race, where it runs in the page's script
    await student.until(lambda: student.shows("Agreement") or student.shows("Disagreement") or student.shows("stopped"), timeout=1800)
    return race_of(student, time.perf_counter() - start)


@contextlib.asynccontextmanager
async def serving(app: Path, replicas: int = 0, query: str = ""):
    """A fresh server for app, visited once per replica (start-up imports the app's modules; query: the page's
    query string, whose work is then built); its memory timeline printed at the end."""
    server = Server(app, replicas)
    try:
        for i in range(max(1, replicas)):
            first = server.student("first visit")
            first.cookie = f"BPE_REPLICA=r{i + 1}" if replicas else ""
            first.query = query
            await first.open()
            await first.close()
        server.memory.mark("one visit")
        settled = await server.memory.settle()
        server.memory.mark(f"start-up work done ({settled:.0f} s after the visit)")
        yield server
        print("\nserver memory:\n" + server.memory.timeline())
    finally:
        server.stop()


async def cold(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    n = args.sessions
    print(f"\n## cold start: {n} students open the app at once ({load()})")
    async with serving(app, args.replicas) as server:
        began = time.perf_counter() - server.memory.start
        students, seconds = await open_all(server, n)
        server.memory.mark(f"{n} opened")
        print(f"step page shown: {summary(seconds, 'students')}; {load()}")
        await asyncio.sleep(2.5)  # the samples of the last second
        used = server.memory.cpu_seconds(began, time.perf_counter() - server.memory.start)
        print("processor per student opening: " + ", ".join(f"{g} {s / n * 1000:.1f} ms" for g, s in used.items()))
        await asyncio.gather(*(s.close() for s in students))


async def stepping(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    n, interval = args.sessions, args.interval
    print(f"\n## stepping: {n} students click Next every ~{interval:g} s on the 2 MB preset ({load()})")
    async with serving(app, args.replicas) as server:
        students, opened = await open_all(server, n)
        print(f"app opened: {summary(opened, 'students')}")
        picked = await pick_stdlib(students)
        server.memory.mark(f"{n} on the 2 MB preset")
        print(f"2 MB preset picked together, until its step page shows: {summary(picked, 'students')}")
        spy = profile(server, args.profile, args.seconds) if args.profile else None
        start, client_cpu = time.perf_counter(), time.process_time()
        began = start - server.memory.start
        latencies, rate = await step(students, args.seconds, interval, rng)
        elapsed = time.perf_counter() - start
        client_cpu = (time.process_time() - client_cpu) / elapsed * 100
        server.memory.mark("stepping ends")
        print(f"Next, until the page is updated: {summary(latencies)}")
        print(f"clicks after which the page showed a merge other than the next one: {len(WRONG)} {WRONG[:3]}")
        print(
            f"clicks answered: {rate:.1f}/s once every student had started (the class asks for {n / interval:.1f}/s), "
            f"{len(latencies):,} in all; {load()}"
        )
        print(f"processor while stepping (100 % = a core): {server.memory.cpu_summary(began + 2, began + elapsed)}")
        used = server.memory.cpu_seconds(began + 2, began + elapsed)
        answered = len(latencies) * (elapsed - 2) / elapsed
        per_click = ", ".join(f"{g} {s / answered * 1000:.1f} ms" for g, s in used.items())
        print(
            f"processor per click answered (each group's processor over all the class's clicks): {per_click}; "
            f"in all {sum(used.values()) / answered * 1000:.1f} ms"
        )
        print(f"the load generator itself (this process, its {n} websockets): {client_cpu:.0f} %")
        if spy is not None:
            spy.wait()
            print(hot_spots(args.profile, len(latencies)))
        if args.replicas:
            print(f"students per replica: {spread(students)}")
        await asyncio.gather(*(s.close() for s in students))


async def racing(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    n, k = args.sessions, args.racers
    print(f"\n## racing: one race alone, then {n - k} stepping while {k} race, on the 2 MB preset ({load()})")
    async with serving(app, args.replicas) as server:  # a server of its own, so that the race alone leaves nothing behind
        [alone], _ = await open_all(server, 1)
        await pick_stdlib([alone])
        solo = await race(alone)
        print(f"race alone: {race_text(solo)}")
        await alone.close()

    async with serving(app, args.replicas) as server:
        students, _ = await open_all(server, n)
        await pick_stdlib(students)
        idle = server.memory.mark("all on the 2 MB step page")
        racers, steppers = students[:k], students[k:]
        if args.replicas:
            print(f"racers per replica: {spread(racers)}; stepping: {spread(steppers)}")
        server.memory.mark(f"{len(steppers)} stepping; {k} press Start together")
        stepping_task = asyncio.create_task(step(steppers, args.seconds, args.interval, rng))
        races = await asyncio.gather(*(race(r) for r in racers))
        server.memory.mark("the races end")
        latencies, _ = await stepping_task
        print(f"stepping while racing, Next until the page is updated: {summary(latencies)}")
        for i, r in enumerate(races, 1):
            print(f"race {i}: {race_text(r)}; {r.wall_s / solo.wall_s:.2f}x the race alone")
        busy = sum(1 for r in races if any("busy" in s for s in r.status.values()))
        print(
            f"races with a trainer cut off for lack of processor ('busy'): {busy} of {k} (alone: {int(any('busy' in s for s in solo.status.values()))})"
        )
        print(f"Start to verdict: {summary([r.wall_s for r in races], 'races')}; alone {solo.wall_s:.1f} s")
        await asyncio.gather(*(s.close() for s in students))
        await asyncio.sleep(15)
        after = server.memory.mark("15 s after the races")
        print(
            f"server RSS: {idle:.0f} MB with everyone on the step page before the races, {after:.0f} MB 15 s after them ({after - idle:+.0f} MB)"
        )


async def compare(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    """The Real tokenizers page (GPT-2, GPT-4, GPT-4o and the run side by side): first one student on a fresh server
    (the tokenizers may still be loading), then the whole class opening it together."""
    n = args.sessions
    print(f"\n## compare: {n} students open the Real tokenizers page together ({load()})")

    def compared(s: Student) -> bool:
        return s.shows("<table class='compare'>") and s.shows("<td>GPT-4o</td>")

    async def one(s: Student) -> float:
        start = time.perf_counter()
        await s.go("Real tokenizers")
        await s.until(lambda: compared(s))
        return time.perf_counter() - start

    async with serving(app, args.replicas) as server:
        [first], _ = await open_all(server, 1)
        print(f"first student, on a server started {time.perf_counter() - server.memory.start:.1f} s ago: {await one(first):.2f} s")
        await first.close()
        students, _ = await open_all(server, n)
        seconds = list(await asyncio.gather(*(one(s) for s in students)))
        server.memory.mark(f"{n} on the compare page")
        print(f"the class together, until the comparison is shown: {summary(seconds, 'students')}; {load()}")
        await asyncio.gather(*(s.close() for s in students))


async def open_storm(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    """N students open the same link at the same moment (the start of a lecture), on a server that has served it once
    (--fresh: that has served only the default page, so the link's work is built while they wait)."""
    n, query = args.sessions, args.link
    warm = "" if args.fresh else query
    how = "on a server whose first visit opened the default page" if args.fresh else "on a server that has served it once"
    print(f"\n## open-storm: {n} students open /?{query} at the same moment, {how} ({load()})")
    async with serving(app, args.replicas, warm) as server:
        began = time.perf_counter() - server.memory.start
        students = [server.student(f"student {i + 1}") for i in range(n)]
        assets = await asyncio.to_thread(browser_fetches, server.url, query) if not args.no_assets else ()
        if assets:
            print(f"each student first fetches what Chromium fetched opening the page: {len(assets)} requests")
        for s in students:
            s.query, s.assets = query, assets
        spy = profile(server, args.profile, 30) if args.profile else None

        async def one(s: Student) -> float:
            await s.open()
            await s.until(lambda: s.merge_shown() is not None)  # a page still building its trace polls until it is ready
            return time.perf_counter() - s.opened

        seconds = list(await asyncio.gather(*(one(s) for s in students)))
        server.memory.mark(f"{n} opened")
        painted = [s.painted for s in students if s.painted is not None]
        print(f"first paint (the merge card arrives): {summary(painted, 'students')}; {load()}")
        print(f"page complete (the run finished): {summary(seconds, 'students')}")
        merges = sorted({s.merge_shown() for s in students}, key=str)
        print(f"merge shown: {merges}; students without a merge card: {n - len(painted)}")
        await asyncio.sleep(2.5)  # the samples of the last second
        used = server.memory.cpu_seconds(began, time.perf_counter() - server.memory.start)
        print("processor per student opening: " + ", ".join(f"{g} {s / n * 1000:.1f} ms" for g, s in used.items()))
        if spy is not None:
            spy.wait()
            print(hot_spots(args.profile, n))
        await asyncio.gather(*(s.close() for s in students))


def colliding_tiktoken(count: int, size: int = 128, seed: int = 0) -> bytes:
    """A .tiktoken of the 256 bytes and `count` tokens of `size` bytes with one bpe_hash for every seed (issue 37.1).

    bpe_hash (bpe/c/encode.h) takes each 8-byte block as h = (h ^ w) * K; h ^= h >> 29: flipping bit 63 of a
    block changes the state by bits 63 and 34 whatever came before, and flipping those in the next block
    cancels it. So each of the size / 8 - 1 places to do so doubles the tokens with one hash: the core's
    tables hold them in one chain, and reading the file is quadratic in count (27,981 tokens, 5 MB: 4-10 s).
    Its tokens cannot be made of two lower-ranked ones, so the file is refused, after that time.
    """
    import base64
    import struct

    base = random.Random(seed).randbytes(size)
    tokens = [bytes([b]) for b in range(256)]
    for variant in range(count):
        token = bytearray(base)
        for i in range(size // 8 - 1):
            if variant >> i & 1:
                for block, mask in ((i, 1 << 63), (i + 1, 1 << 63 | 1 << 34)):
                    struct.pack_into("<Q", token, 8 * block, struct.unpack_from("<Q", token, 8 * block)[0] ^ mask)
        tokens.append(bytes(token))
    return "".join(f"{base64.b64encode(t).decode()} {rank}\n" for rank, t in enumerate(tokens)).encode()


# where a hostile student pastes: (page, its text box's label, the corpus to pick first, or None)
BOXES = (
    ("Tokenize & export", "Text to tokenize", None),
    ("Step through", "Your own sentence", None),
    ("Real tokenizers", "Text to compare", None),
    ("Encode, step by step", "A word or a sentence", None),
    ("Step through", "Text", "Paste your own text"),  # the sidebar's paste box
)


async def honest_reruns(student: Student, stop: asyncio.Event, every: float = 0.5) -> list[float]:
    """The honest student reruns the default page every `every` s until stop is set: each run's seconds."""
    seconds = []
    while not stop.is_set():
        seconds.append(await student.rerun(timeout=120))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)
    return seconds


async def paste_everywhere(student: Student, size: int) -> list[tuple[str, float, str]]:
    """One hostile student pastes `size` characters into each text box in turn: (box, seconds until that run ended,
    what became of it: "refused", "taken", or "connection closed" when the server hung up, after which the student
    opens a new session)."""
    junk = ("lorem ipsum dolor sit amet " * (size // 27 + 1))[:size]
    done = []
    for page, label, corpus in BOXES:
        await student.go(page, timeout=120)
        if corpus is not None:
            await student.choose("Corpus", corpus, timeout=120)
        start = time.perf_counter()
        try:
            await student.type(label, junk, timeout=900)
            what = "refused" if student.shows("so it was not taken") else "taken"
        except ConnectionError:
            what = "connection closed"
            with contextlib.suppress(Exception):
                await student.close()
            student.values.clear()
            await student.open(timeout=900)
        done.append((f"{page}: {label}", time.perf_counter() - start, what))
        if corpus is not None and what != "connection closed":
            await student.choose("Corpus", "low / lower", timeout=120)
    return done


async def hostile(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    """One student reruns the default page while another pastes 15 MB into every text box; then four paste at once.

    Targets (issue 27): the honest student's slowest run <= 1.0 s, the server's growth <= 300 MB, each paste refused
    (or done) within 30 s; with four hostile students at once, the honest student's slowest run <= 2 s.
    """
    size = int(args.paste_mb * 1_000_000)
    print(f"\n## hostile: one student reruns the default page while others paste {args.paste_mb:g} MB into every text box ({load()})")
    async with serving(app, args.replicas) as server:
        [honest], _ = await open_all(server, 1)
        alone = [await honest.rerun() for _ in range(10)]
        print(f"the honest student alone, rerunning the default page: {summary(alone, 'runs')}")
        for n in (1, 4):
            hostiles, _ = await open_all(server, n)
            before = server.memory.mark(f"{n} hostile student{'s' * (n > 1)} start pasting")
            began = time.perf_counter() - server.memory.start
            stop = asyncio.Event()
            honest_task = asyncio.create_task(honest_reruns(honest, stop))
            pasted = await asyncio.gather(*(paste_everywhere(h, size) for h in hostiles))
            stop.set()
            runs = await honest_task
            apps = [g for g in server.memory.groups if g == "server" or g.startswith("r")]
            peak = max((sum(g.get(a, (0, 0))[0] for a in apps) for t, g in server.memory.samples if t >= began), default=0.0)
            after = server.memory.mark(f"{n} hostile done")
            print(f"{n} hostile: the honest student's reruns meanwhile: {summary(runs, 'runs')}; {load()}")
            for box, took, what in pasted[0]:
                print(f"  {box}: {took:.2f} s until that run ended: {what}")
            slowest = max(took for p in pasted for _, took, _ in p)
            print(f"  slowest paste of the {n}: {slowest:.2f} s; server RSS {before:.0f} MB before, peak {peak:.0f}, {after:.0f} after")
            await asyncio.gather(*(h.close() for h in hostiles))
        await honest.close()


async def upload(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    """N students step on the 2 MB preset, first alone, then while one more uploads on Tokenize & export, again and again,
    a .tiktoken that is slow to read (colliding_tiktoken: the reviewer's 27,981 tokens built to collide in the core's hash,
    5 MB; a new file each time, so no read is shared), each until the page says what became of it.

    Targets (issue 37.1): while the uploads go on, the stepping students' p95 <= 0.5 s and slowest <= 1 s.
    """
    n = args.sessions
    count = max(2, min(12, math.ceil(args.seconds / 4)))
    print(
        f"\n## upload: {n} students step, alone and then while one uploads {args.upload_tokens:,}-token colliding .tiktoken files ({load()})"
    )
    files = [colliding_tiktoken(args.upload_tokens, seed=i) for i in range(count)]  # made before: this process's time is the clicks'
    print(f"the files: {count} of {len(files[0]) / 1e6:.1f} MB, each {args.upload_tokens:,} tokens of 128 bytes with one bpe_hash")
    async with serving(app, args.replicas) as server:
        students, _ = await open_all(server, n)
        await pick_stdlib(students)
        [uploader], _ = await open_all(server, 1)
        await uploader.go("Tokenize & export")
        await uploader.choose("Real tokenizer", "Upload")
        server.memory.mark(f"{n} on the 2 MB preset")
        alone, _ = await step(students, args.seconds, args.interval, rng)
        print(f"stepping alone, Next until the page is updated: {summary(alone)}; {load()}")
        server.memory.mark("uploads start")
        began = time.perf_counter() - server.memory.start
        stop, took, said = asyncio.Event(), [], []

        async def uploads() -> None:
            for i, data in enumerate(files):
                if stop.is_set():
                    return
                name, start = f"hostile-{i}.tiktoken", time.perf_counter()
                await uploader.upload("A tokenizer's files", name, data, timeout=300)
                await uploader.until(lambda name=name: uploader.shows(f"{name}:") or uploader.shows(f"Tokens ({name})"), timeout=300)
                took.append(time.perf_counter() - start)
                said.append(next((t for t in uploader.seen[0] if f"{name}:" in t), "(loaded)")[:120])

        uploading = asyncio.create_task(uploads())
        during, _ = await step(students, args.seconds, args.interval, rng)
        stop.set()
        await uploading
        server.memory.mark("uploads end")
        print(f"stepping while one student uploads, Next until the page is updated: {summary(during)}; {load()}")
        print(f"each upload, until the page said what became of it: {summary(took, 'uploads')}")
        print(f"  the page said: {said[0] if said else '(nothing)'}")
        print(f"processor while uploading (100 % = a core): {server.memory.cpu_summary(began, time.perf_counter() - server.memory.start)}")
        await asyncio.gather(uploader.close(), *(s.close() for s in students))


def pool_server(server: Server) -> int:
    """The pid of the replicas' pool server (python -m serve.shared_pool), as now running."""
    for pid in descendants(server.process.pid):
        with contextlib.suppress(OSError):
            if b"serve.shared_pool" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return pid
    raise LookupError("no pool server: the stall scenario needs --replicas")


async def stall(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    """kill -STOP of the replicas' pool server while N students pick a corpus (a run the pool must find or build).

    Targets (issue 27): every page says the pool is not answering within 10 s, and shows its run from a new pool within 30 s.
    """
    replicas = args.replicas or 2
    n = min(args.sessions, 30)
    print(f"\n## stall: kill -STOP of the pool server under --replicas {replicas}, {n} students pick a corpus ({load()})")
    async with serving(app, replicas) as server:
        students, _ = await open_all(server, n)
        stopped = pool_server(server)
        os.kill(stopped, signal.SIGSTOP)
        start = time.perf_counter()
        try:

            async def one(s: Student) -> tuple[float, float]:
                """(seconds until the page said the pool is not answering, until it showed its run); nan: not within args.wait."""
                try:
                    await s.choose("Corpus", "aaaa abab", timeout=args.wait)
                    said = time.perf_counter() - start if s.shows("not answering") else float("nan")
                    await s.until(lambda: "Merge <b>1</b> of 8" in " ".join(s.seen[0]), timeout=args.wait)
                except TimeoutError:
                    return float("nan"), float("nan")
                return said, time.perf_counter() - start

            times = await asyncio.gather(*(one(s) for s in students))
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(stopped, signal.SIGKILL)
        said = [t for t, _ in times if t == t]
        print(f"the page says the pool is not answering: {summary(said, 'students')} after the stop ({n - len(said)} never said it)")
        served = [t for _, t in times if t == t]
        print(
            f"the page shows its run from a new pool: {summary(served, 'students')} after the stop ({n - len(served)} not within {args.wait:.0f} s); {load()}"
        )
        log = Path(server.log).read_text(errors="replace")
        print("supervisor: " + "; ".join(line for line in log.splitlines() if "pool server" in line or line.startswith("pool: pid")))
        await asyncio.gather(*(s.close() for s in students))


async def first_visits(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    """What the first visitors of a fresh server wait for: the first page, the first /?corpus=stdlib&merge=37, the first
    GPT-4o vocabulary; on a first start (an empty disk cache, BPE_CACHE) and on a restart (the cache kept)."""
    print(f"\n## first visits: a fresh server's first page, first stdlib merge 37, first GPT-4o vocabulary ({load()})")
    with tempfile.TemporaryDirectory(prefix="bpe-cache-") as cache:
        os.chmod(cache, 0o700)
        for start in ("first start (empty disk cache)", "restart (disk cache kept)"):
            server = Server(app, args.replicas, env={"BPE_CACHE": cache})
            try:
                first = server.student("first")
                page = await first.open()
                second = server.student("second")
                second.query = "corpus=stdlib&merge=37"
                began = time.perf_counter()
                await second.open()
                await second.until(lambda s=second: s.merge_shown() == 37, timeout=600)
                merge = time.perf_counter() - began
                began = time.perf_counter()
                await second.go("Vocabulary")
                await second.choose("Vocabulary of", "GPT-4o")
                await second.until(lambda s=second: s.shows("tokens of GPT-4o's tokenizer"), timeout=600)
                vocabulary = time.perf_counter() - began
                print(
                    f"{start}: first page {page:.1f} s, first stdlib merge 37 {merge:.1f} s, first GPT-4o vocabulary {vocabulary:.1f} s; {load()}"
                )
                await asyncio.gather(first.close(), second.close())
            finally:
                server.stop()


async def pages(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    """One student on a warm server clicks from page to page in the sidebar, every page in turn, --rounds times: each
    page's first visit and its warm click (the median of the later rounds), as the server answers it (until its script
    has finished) and what it sent; then the same clicks in Chromium, until the page is drawn (every run asked has
    ended and no element is still a grey placeholder), which counts the browser's own work on what was sent."""
    print(f"\n## pages: one student clicks through the pages of the sidebar, {args.rounds} rounds after each first visit ({load()})")
    async with serving(app, args.replicas) as server:
        student = server.student("pages")
        await student.open()
        titles = list(student.pages)  # as the server lists them: the sidebar's order
        seconds: dict[str, list[float]] = {title: [] for title in titles}
        sent: dict[str, list[int]] = {title: [] for title in titles}
        for _ in range(args.rounds + 1):
            for title in titles:
                before = student.received
                seconds[title].append(await student.go(title))
                sent[title].append(student.received - before)
        await student.close()
        browser = await asyncio.to_thread(browser_clicks, server.port, titles, args.rounds) if args.browser else {}
    print(
        "| page | server: first visit | server: warm click (median) | sent (warm) | Chromium: first visit | Chromium: warm click (median) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for title in titles:
        shown = browser.get(title)
        in_browser = f"{shown[0]:.2f} s | {statistics.median(shown[1:]):.2f} s" if shown else "– | –"
        warm = statistics.median(seconds[title][1:])
        print(
            f"| {title} | {seconds[title][0]:.2f} s | {warm * 1000:.0f} ms | {statistics.median(sent[title][1:]) / 1000:.0f} KB | {in_browser} |"
        )
    print(load())


def browser_clicks(port: int, titles: list[str], rounds: int) -> dict[str, list[float]]:
    """Chromium on the server at port clicks each sidebar link in turn, rounds + 1 times: seconds until each page is drawn."""
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "tests"))
    from e2e.conftest import ARGS, CHROMIUM, NO_SKELETON_JS, RUNS_JS, open_from_sidebar, wait_idle

    seconds: dict[str, list[float]] = {title: [] for title in titles}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        context.add_init_script(RUNS_JS)  # counts the runs asked and answered: the wait the browser tests use
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        wait_idle(page, 180_000)
        for _ in range(rounds + 1):
            for title in titles:
                start = time.perf_counter()
                open_from_sidebar(page, title, None, 180_000)
                page.wait_for_function(NO_SKELETON_JS, timeout=180_000)
                seconds[title].append(time.perf_counter() - start)
        browser.close()
    return seconds


SCENARIOS = {
    "cold": cold,
    "stepping": stepping,
    "racing": racing,
    "compare": compare,
    "open-storm": open_storm,
    "hostile": hostile,
    "upload": upload,
    "stall": stall,
    "first-visits": first_visits,
    "pages": pages,
}


# ---------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", type=Path, default=ROOT / "app.py", help="the app to serve (default: this checkout's)")
    parser.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    parser.add_argument("--sessions", type=int, default=30, help="students (default 30)")
    parser.add_argument("--racers", type=int, default=5, help="of them racing in the racing scenario (default 5)")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long students step (default 60)")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between one student's clicks (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--no-assets",
        action="store_true",
        help="open-storm: students open only the websocket (by default each first fetches the files Chromium fetched opening the page)",
    )
    parser.add_argument("--wait", type=float, default=120.0, help="stall: how long a student waits for its page (default 120 s)")
    parser.add_argument("--paste-mb", type=float, default=15.0, help="hostile: how much each hostile student pastes (default 15 MB)")
    parser.add_argument(
        "--upload-tokens", type=int, default=27_981, help="upload: tokens of each colliding .tiktoken (default 27,981: 5 MB)"
    )
    parser.add_argument("--fresh", action="store_true", help="open-storm: the link is opened first by the storm, not by a visit before it")
    parser.add_argument(
        "--link", default="corpus=stdlib&merge=37", help="open-storm: the query string every student opens (default corpus=stdlib&merge=37)"
    )
    parser.add_argument(
        "--profile", type=Path, help="stepping, open-storm: py-spy the server (r1) into this file and print where its time went"
    )
    parser.add_argument(
        "--rounds", type=int, default=5, help="pages: how many times each page is clicked after its first visit (default 5)"
    )
    parser.add_argument(
        "--browser", action=argparse.BooleanOptionalAction, default=True, help="pages: the same clicks in Chromium too (default: yes)"
    )
    parser.add_argument(
        "--replicas", type=int, default=0, help="serve through HAProxy with N app processes (serve/replicas.py); 0: one streamlit run"
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    app = args.app.resolve()
    served = f"{args.replicas} replicas behind HAProxy" if args.replicas else "one streamlit run"
    print(f"# {app}, {served}, on {os.cpu_count()} cores; {load()}; {time.strftime('%Y-%m-%d %H:%M')}")
    for name in list(SCENARIOS) if args.scenario == "all" else [args.scenario]:
        asyncio.run(SCENARIOS[name](app, args, rng))
    print(f"\n# done; {load()}")


if __name__ == "__main__":
    main()
