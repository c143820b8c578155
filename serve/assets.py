"""Streamlit's own browser files (its JavaScript, styles and fonts) served from memory, each gzipped once.

A browser opening the app for the first time fetches ~135 files, 3.1 MB, before it
shows anything; Streamlit serves each through its whole middleware stack, reading
the file in 64 KB chunks on a thread and sending it uncompressed. When a class
opens a link together, that was most of the server's processor: ~175 ms of it per
student (100 students: the last one saw the page after 21 s; benchmarks/classroom.py
--scenario open-storm). This ASGI middleware answers those requests before
Streamlit's stack does, from a dictionary: the file's bytes, read once per
process, and their gzip, made once, for the browsers that accept it (all do). The
headers are Streamlit's own for these files: their names carry a hash of their
content, so a browser may keep them for a year.

What it serves: GET and HEAD of /static/js|css|media/<name> that exist in
Streamlit's static folder, and nothing else (no other path can reach the disk: the
name is matched against one pattern, without dots that lead anywhere, and looked up
in that one folder). And the page itself and its icon (REPLAYED: each new student's
first requests, which Streamlit answers from the disk on a thread, ~2 ms of the
server's processor per student): Streamlit's own answer to the first such request
is kept and sent again, byte for byte, to later ones alike (the same method, gzip or
not), never one that sets a cookie or answers a conditional request. Everything else
-- the websocket, the health check, uploads -- goes to Streamlit as before.

Behind HAProxy (scripts/app.sh, serve/replicas.py) each file's answer is asked for
once: the proxy keeps it and sends it to the rest of the class from its own cache,
on the machine's other core. This stays what decides what is a file.

What it does not do: import Streamlit (the folder is found from its package
metadata), or change a byte of what the browser receives (tests/test_assets.py).
"""

from __future__ import annotations

import gzip
import importlib.util
import mimetypes
import re
import threading
from pathlib import Path

NAME = re.compile(r"/static/(?:js|css|media)/[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)+")  # a hashed file name; no '..'
KEEP = "public, immutable, max-age=31536000"  # Streamlit's Cache-Control for its hashed files
ALREADY_PACKED = ("font/woff2", "image/png", "image/jpeg", "image/gif", "image/webp")  # gzip would not make them smaller
MIN_PACK = 1000  # smaller files are sent as they are: gzip's header is most of the saving
REPLAYED = ("/", "/favicon.png")  # Streamlit's answers kept and sent again (the page's query string changes nothing in them)
CONDITIONAL = (b"if-none-match", b"if-modified-since", b"if-range", b"range")  # requests whose answer depends on more


def static_folder() -> Path:
    """Streamlit's folder of browser files (its index.html and static/), without importing Streamlit."""
    spec = importlib.util.find_spec("streamlit")
    if spec is None or spec.origin is None:
        raise RuntimeError("Streamlit is not installed.")
    return Path(spec.origin).parent / "static"


class File:
    """One file as sent: its type, bytes, and gzip of them (None when not worth it)."""

    __slots__ = ("kind", "body", "packed")

    def __init__(self, path: Path) -> None:
        body = path.read_bytes()
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if kind.startswith("text/"):
            kind += "; charset=utf-8"  # as Starlette says it for Streamlit's own answer
        self.kind, self.body = kind.encode(), body
        worth = len(body) >= MIN_PACK and not kind.startswith(ALREADY_PACKED)
        self.packed = gzip.compress(body, 6, mtime=0) if worth else None


class Assets:
    """ASGI middleware: Streamlit's browser files from memory; every other request goes to `app`."""

    def __init__(self, app, folder: Path | None = None) -> None:
        self.app = app
        self.folder = (folder or static_folder()).resolve()
        self._files: dict[str, File | None] = {}  # request path -> the file (None: no such file)
        self._replies: dict[tuple[str, str, bool], tuple[dict, ...]] = {}  # (path, method, gzip) -> Streamlit's messages
        self._lock = threading.Lock()

    def file(self, path: str) -> File | None:
        """The file for a request path, read and packed on first use (one reader at a time)."""
        if path in self._files:
            return self._files[path]
        with self._lock:
            if path not in self._files:
                found = self.folder / path.lstrip("/")
                self._files[path] = File(found) if found.is_file() and found.parent.parent.parent == self.folder else None
        return self._files[path]

    async def __call__(self, scope, receive, send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and scope.get("method") in ("GET", "HEAD"):
            if NAME.fullmatch(path):
                file = self.file(path)
                if file is not None:
                    await self._send(scope, send, file)
                    return
            elif path in REPLAYED and not any(name in CONDITIONAL for name, _ in scope.get("headers", ())):
                await self._replay(scope, receive, send, (path, scope["method"], _takes_gzip(scope)))
                return
        await self.app(scope, receive, send)

    async def _replay(self, scope, receive, send, key: tuple[str, str, bool]) -> None:
        """Streamlit's answer for key, kept from the first request alike; the first is Streamlit's own, recorded.

        Kept only when it is whole, a 200, and sets no cookie (a cookie is one browser's, never another's).
        """
        kept = self._replies.get(key)
        if kept is not None:
            for message in kept:
                await send(dict(message))
            return
        recorded: list[dict] = []

        async def record(message) -> None:
            recorded.append(dict(message))
            await send(message)

        await self.app(scope, receive, record)
        start = recorded[0] if recorded else {}
        whole = bool(recorded) and recorded[-1].get("type") == "http.response.body" and not recorded[-1].get("more_body", False)
        if whole and start.get("status") == 200 and not any(name.lower() == b"set-cookie" for name, _ in start.get("headers", ())):
            self._replies[key] = tuple(recorded)

    @staticmethod
    async def _send(scope, send, file: File) -> None:
        gzipped = file.packed is not None and _takes_gzip(scope)
        body = file.packed if gzipped else file.body
        headers = [(b"content-type", file.kind), (b"cache-control", KEEP.encode()), (b"content-length", str(len(body)).encode())]
        if file.packed is not None:
            headers.append((b"vary", b"Accept-Encoding"))
        if gzipped:
            headers.append((b"content-encoding", b"gzip"))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})


def _takes_gzip(scope) -> bool:
    return any(name == b"accept-encoding" and b"gzip" in value.lower() for name, value in scope.get("headers", ()))
