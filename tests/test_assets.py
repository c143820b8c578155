"""serve/assets.py: Streamlit's browser files from memory, gzipped once, byte for byte what Streamlit would send, and nothing else.

The middleware is called as an ASGI server calls it (a scope, a receive, a send), with no
server around it; tests/test_server_config.py fetches a file from the real server too.
"""

from __future__ import annotations

import gzip

import pytest
from conftest import run_async

from serve.assets import Assets, static_folder

FOLDER = static_folder()


class Inner:
    """The app behind the middleware (Streamlit): records what reached it."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    async def __call__(self, scope, receive, send) -> None:
        self.paths.append(scope["path"])
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b"from streamlit"})


def ask(assets: Assets, path: str, method: str = "GET", gzip_ok: bool = True) -> tuple[int, dict[bytes, bytes], bytes]:
    sent = []
    headers = [(b"accept-encoding", b"gzip, deflate, br")] if gzip_ok else []

    async def send(message) -> None:
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b""}

    run_async(assets({"type": "http", "method": method, "path": path, "headers": headers}, receive, send))
    return sent[0]["status"], dict(sent[0]["headers"]), b"".join(m.get("body", b"") for m in sent[1:])


def some_files() -> list[str]:
    """A few of every kind: scripts, styles, fonts, images."""
    found = []
    for sub in ("js", "css", "media"):
        files = sorted(p for p in (FOLDER / "static" / sub).iterdir() if p.is_file())
        found += [f"/static/{sub}/{p.name}" for p in files[:: max(1, len(files) // 6)]]
    return found


@pytest.mark.parametrize("path", some_files())
def test_every_file_arrives_as_it_is_on_disk(path):
    assets, inner = Assets(Inner()), Inner()
    assets.app = inner
    on_disk = (FOLDER / path.lstrip("/")).read_bytes()
    status, headers, body = ask(assets, path)
    assert status == 200 and not inner.paths
    if headers.get(b"content-encoding") == b"gzip":
        body = gzip.decompress(body)
        assert int(headers[b"content-length"]) < len(on_disk)
    assert body == on_disk
    assert headers[b"cache-control"] == b"public, immutable, max-age=31536000"
    status, headers, plain = ask(assets, path, gzip_ok=False)  # a client that takes no gzip gets the bytes as they are
    assert plain == on_disk and b"content-encoding" not in headers and int(headers[b"content-length"]) == len(on_disk)


def test_a_script_is_sent_gzipped():
    script = next(p for p in some_files() if p.endswith(".js") and (FOLDER / p.lstrip("/")).stat().st_size > 10_000)
    status, headers, body = ask(Assets(Inner()), script)
    assert headers[b"content-encoding"] == b"gzip" and headers[b"vary"] == b"Accept-Encoding"
    assert headers[b"content-type"].split(b";")[0] in (b"application/javascript", b"text/javascript")  # the server's: test_server_config
    assert len(body) < (FOLDER / script.lstrip("/")).stat().st_size / 2


def test_head_sends_the_headers_only():
    path = some_files()[0]
    status, headers, body = ask(Assets(Inner()), path, method="HEAD")
    assert status == 200 and body == b"" and int(headers[b"content-length"]) > 0


@pytest.mark.parametrize(
    "path",
    [
        "/",  # the page itself: Streamlit's (its index.html, the app's title)
        "/_stcore/health",
        "/_stcore/stream",
        "/static/js/no-such-file.js",
        "/static/js/../../config.py",
        "/static/js/..",
        "/static/../index.html",
        "/static/js/%2e%2e/x.js",
        "/static/js/sub/dir.js",
        "/static/other/x.js",
        "/static/js/.hidden",
        "//static/js/x.js",
    ],
)
def test_anything_else_goes_to_streamlit(path):
    inner = Inner()
    status, _, body = ask(Assets(inner), path)
    assert inner.paths == [path] and body == b"from streamlit"


def test_other_methods_and_websockets_go_to_streamlit():
    inner = Inner()
    path = some_files()[0]
    ask(Assets(inner), path, method="POST")
    assert inner.paths == [path]
    seen = []

    async def app(scope, receive, send):
        seen.append(scope["type"])

    run_async(Assets(app)({"type": "websocket", "path": path}, None, None))
    assert seen == ["websocket"]


def test_each_file_is_read_once(monkeypatch):
    assets = Assets(Inner())
    path = some_files()[0]
    ask(assets, path)
    monkeypatch.setattr("serve.assets.File.__init__", lambda *a: pytest.fail("read again"))
    assert ask(assets, path)[0] == 200


# ---------------------------------------------------------------------------
# the page and its icon: Streamlit's own answer, kept and sent again


class Page:
    """Streamlit answering the page: headers, and the body in two pieces; a cookie when asked to set one."""

    def __init__(self, cookie: bool = False, status: int = 200) -> None:
        self.calls, self.cookie, self.status = 0, cookie, status

    async def __call__(self, scope, receive, send) -> None:
        self.calls += 1
        headers = [(b"content-type", b"text/html; charset=utf-8"), (b"etag", b'"abc"')]
        headers += [(b"set-cookie", b"session=one-browsers")] if self.cookie else []
        gzipped = any(n == b"accept-encoding" and b"gzip" in v for n, v in scope["headers"])
        await send({"type": "http.response.start", "status": self.status, "headers": headers + [(b"x-gzip", str(gzipped).encode())]})
        await send({"type": "http.response.body", "body": b"<html>", "more_body": True})
        await send({"type": "http.response.body", "body": b"</html>"})


@pytest.mark.parametrize("path", ["/", "/favicon.png"])
def test_the_page_is_streamlits_answer_kept_and_sent_again_byte_for_byte(path):
    page = Page()
    assets = Assets(page)
    first = ask(assets, path)
    assert ask(assets, path) == first and page.calls == 1  # the second from memory
    assert first[2] == b"<html></html>" and first[1][b"etag"] == b'"abc"'
    plain = ask(assets, path, gzip_ok=False)  # another answer (Streamlit gzips for those who take it): asked once, kept apart
    assert plain[1][b"x-gzip"] == b"False" and page.calls == 2 and ask(assets, path, gzip_ok=False) == plain and page.calls == 2
    ask(assets, path, method="HEAD")
    assert page.calls == 3


def test_a_page_answer_with_a_cookie_or_not_a_200_is_never_sent_again():
    for page in (Page(cookie=True), Page(status=500)):
        assets = Assets(page)
        ask(assets, "/")
        ask(assets, "/")
        assert page.calls == 2


def test_a_conditional_request_for_the_page_goes_to_streamlit():
    page = Page()
    assets = Assets(page)
    ask(assets, "/")
    sent = []

    async def send(message) -> None:
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b""}

    scope = {"type": "http", "method": "GET", "path": "/", "headers": [(b"if-none-match", b'"abc"')]}
    run_async(assets(scope, receive, send))
    assert page.calls == 2  # Streamlit says whether it is unchanged (304), not the kept answer


def test_other_pages_of_the_app_go_to_streamlit():
    page = Page()
    assets = Assets(page)
    ask(assets, "/encode")
    ask(assets, "/encode")
    assert page.calls == 2
