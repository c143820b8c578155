"""Browser tests: start the app on a free port and drive it with Debian's chromium.

Screenshots go to tests/screenshots/ (git-ignored) for a person to look at.
Skips when /usr/bin/chromium or playwright is missing; scripts/test.sh installs both.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
SHOTS = ROOT / "tests" / "screenshots"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items) -> None:
    """Mark every test in this folder `browser`, so `-m "not browser"` skips them.

    subtle: a `pytestmark` in a conftest marks nothing; it only works in a test module.
    """
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.browser)


# the heading each page draws first (the sidebar's title is ui/pages.py's; a page's heading is its own)
HEADINGS = {
    "step": "Step through BPE training",
    "race": "Algorithm race",
    "threshold": "Threshold explorer",
    "tokenize": "Tokenize & export",
    "vocabulary": "Vocabulary",
    "encode": "Encode, step by step",
    "compare": "Real tokenizers side by side",
    "quirks": "Quirks gallery",
    "lesson": "Pre-tokens",
    "quiz": "Predict the next merge",
    "encode_lesson": "Start from the bytes",
    "encode_quiz": "which pair is merged first?",
    "diff": "Check your own BPE",
    "playlist": "Lecture playlist",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def running_app(env: dict[str, str] | None = None):
    """A fresh server on a free port, started as the README says a teacher starts it (`bash scripts/app.sh`), with env
    added to its environment (BPE_CORPUS=...); yields its URL.

    The server's output goes to tests/screenshots/server-PORT.log (never to an unread pipe,
    which would fill up and stall the server).
    """
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian chromium is not installed (scripts/test.sh installs it)")
    port = _free_port()
    SHOTS.mkdir(parents=True, exist_ok=True)
    command = ["bash", str(ROOT / "scripts" / "app.sh"), "--server.headless", "true"]  # it execs `streamlit run app.py`
    command += ["--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"]
    with open(SHOTS / f"server-{port}.log", "wb") as log:
        proc = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.time() + 60
            while time.time() < deadline:
                try:
                    if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                        break
                except OSError:
                    time.sleep(0.3)
            else:
                pytest.fail("the app did not start within 60 s")
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@pytest.fixture(scope="session")
def app_url():
    with running_app() as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


# Installed in every page before Streamlit's own code: counts, from the websocket's own messages, the script runs the
# page asks for (a BackMsg with rerun_script, field 11) and the answers (a ForwardMsg with script_finished, field 6,
# other than FINISHED_EARLY_FOR_RERUN = 2, which only says a newer run took over). `answered` is the number of runs
# asked when the last answer came: every run asked for has ended when it equals `asked`.
RUNS_JS = """(() => {
  const runs = window.__runs = {asked: 0, answered: 0, delay: 0};  // delay: ms each message is held back (a slow server)
  const varint = (b, i) => {  // [value, next index]; past the end: [NaN, end]
    let v = 0, s = 1;
    while (i < b.length) { const x = b[i++]; v += (x & 127) * s; s *= 128; if (x < 128) return [v, i]; }
    return [NaN, b.length];
  };
  const fields = data => {  // the top-level fields of a protobuf message: {number: varint value, or true}
    const b = new Uint8Array(data), out = {};  // a message that is not protobuf ends the scan early; it never throws
    for (let i = 0, key, v; i < b.length;) {
      [key, i] = varint(b, i);
      const type = key & 7;
      if (type === 0) { [v, i] = varint(b, i); out[key >>> 3] = v; }
      else if (type === 2) { [v, i] = varint(b, i); i += v; out[key >>> 3] = true; }
      else if (type === 1) { i += 8; out[key >>> 3] = true; }
      else if (type === 5) { i += 4; out[key >>> 3] = true; }
      else return out;
    }
    return out;
  };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', e => {
        if (!(e.data instanceof ArrayBuffer)) return;
        const status = fields(e.data)[6];
        if (status !== undefined && status !== 2) runs.answered = runs.asked;
      });
    }
    send(data) {
      if ((data instanceof ArrayBuffer || ArrayBuffer.isView(data)) && fields(ArrayBuffer.isView(data) ? data.slice().buffer : data)[11]) runs.asked++;
      if (runs.delay) setTimeout(() => super.send(data), runs.delay);
      else super.send(data);
    }
  };
})();"""


def new_context(browser, **options):
    """browser.new_context(**options) whose pages count their script runs (RUNS_JS), for wait_idle."""
    context = browser.new_context(**options)
    context.add_init_script(RUNS_JS)
    return context


@pytest.fixture
def page(browser, app_url):
    # tall enough that a screenshot shows the whole page: Streamlit scrolls inside its own container
    context = new_context(browser, viewport={"width": 1400, "height": 2200})
    pg = context.new_page()
    pg.goto(app_url)
    wait_idle(pg)
    yield pg
    context.close()


# subtle: Streamlit sends a widget's change from a setTimeout(0) that the click's handler queues (its batching), so
# right after a click the run is not asked for yet: the wait first lets the page's queued timers run (two turns)
TIMERS_RUN_JS = "() => new Promise(done => setTimeout(() => setTimeout(done, 0), 0))"
IDLE_JS = """() => {
  if (!window.__runs) throw new Error('this page does not count its runs: make its context with conftest.new_context');
  const state = document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state');
  return window.__runs.asked > 0 && window.__runs.answered === window.__runs.asked && state === 'notRunning';
}"""


def wait_idle(page, timeout: int = 60_000) -> None:
    """Wait until every script run the page has asked the server for has ended, and the page shows it (RUNS_JS).

    An event, not a pause: a click's rerun is counted when the browser sends it (once the timers its handler queued
    have run), so a run the server has not started yet is waited for, however long a busy machine takes to start it.
    """
    page.evaluate(TIMERS_RUN_JS)
    page.wait_for_function(IDLE_JS, timeout=timeout)


def enter(page, label: str, value: str, key: str = "Enter") -> None:
    """Type value into the box labelled label, send it (Enter; Control+Enter for a text area) and wait for the run."""
    box = page.get_by_label(label)
    box.fill(value)
    box.press(key)
    wait_idle(page)


def open_from_sidebar(page, name: str, heading: str | None = None, timeout: int = 60_000) -> None:
    """Click the sidebar's link to page `name`, wait until the browser has asked for that page's run and the run has
    ended; then, when given, wait for the page's heading.

    subtle: the page change is sent a little after the click (the router's own turns), later than wait_idle's
    timers; waiting for the run to be asked first makes sure wait_idle waits for that run, not the old page's.
    """
    asked = page.evaluate("() => window.__runs.asked")
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name=name).click()
    page.wait_for_function(f"() => window.__runs.asked > {asked}", timeout=timeout)
    wait_idle(page, timeout)
    if heading is not None:
        page.get_by_role("heading", name=heading).first.wait_for(timeout=timeout)


# Resolves once no element of the page has moved or changed size for FRAMES animation frames in a row.
SETTLED_JS = """frames => new Promise(done => {
    const boxes = () => JSON.stringify([...document.querySelectorAll('[data-testid="stAppViewContainer"] *')].map(e => {
        const r = e.getBoundingClientRect(); return [Math.round(r.x), Math.round(r.y), Math.round(r.width), Math.round(r.height)]; }));
    let last = boxes(), still = 0;
    const tick = () => { const now = boxes(); still = now === last ? still + 1 : 0; last = now;
                         if (still >= frames) done(true); else requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
})"""


def settled(page, frames: int = 8, timeout: int = 60_000) -> None:
    """Wait until the layout has stopped moving (after a resize, a zoom, a rerun): an event, not a fixed pause.

    Layout checks run after this: charts and columns re-lay out when the viewport
    changes, and a check made mid-way would measure a half-drawn page.
    """
    wait_idle(page, timeout)
    # subtle: an element whose component is still loading (Streamlit's lazy chunks, React's Suspense) is drawn as a
    # grey stSkeleton box, and its layout does not move meanwhile: on a first visit the Tokenize page's text box and
    # metrics stayed skeletons ~1.5 s after its run ended, and the projector screenshots showed grey boxes
    page.wait_for_function(NO_SKELETON_JS, timeout=timeout)
    page.wait_for_function(SETTLED_JS, arg=frames, timeout=timeout)


NO_SKELETON_JS = """() => !document.querySelector('[data-testid="stAppViewContainer"] [data-testid="stSkeleton"]')"""


def shot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


SIZES = ((1280, 720), (1920, 1080))  # a classroom projector, and a large screen


def shots(page, name: str) -> list[Path]:
    """What a class sees without scrolling, at each of SIZES: tests/screenshots/{name}-1280x720.png, ..."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    before, paths = page.viewport_size, []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        settled(page)  # charts and columns re-lay out
        paths.append(SHOTS / f"{name}-{width}x{height}.png")
        page.screenshot(path=str(paths[-1]))
    page.set_viewport_size(before)
    settled(page)
    return paths


CLIPPED_JS = """
() => {
  // text cut off by its box: an element holding text whose content is wider than it shows,
  // inside a box that hides overflow (ellipsis, hidden, clip); scrolling tables and charts excluded
  const bad = [];
  const scope = document.querySelectorAll('[data-testid="stMain"] *, [data-testid="stSidebar"] *');
  for (const el of scope) {
    if (!el.offsetParent || el.closest('[data-testid="stDataFrame"], [data-testid="stVegaLiteChart"], svg, canvas')) continue;
    if (el.closest('[data-testid="stSidebar"][data-collapsed="true"]')) continue;  // folded away (presenter mode): not shown
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    let box = el;
    for (let i = 0; i < 4 && box; i++, box = box.parentElement) {
      const cs = getComputedStyle(box);
      const hides = cs.textOverflow === 'ellipsis' || ['hidden', 'clip'].includes(cs.overflowX);
      if (hides && box.scrollWidth > box.clientWidth + 1) {
        bad.push(box.innerText.trim().slice(0, 80));
        break;
      }
    }
  }
  // a select box shows its choice in an <input>: cut off when the value is wider than the box
  for (const el of document.querySelectorAll('[data-testid="stMain"] input[role="combobox"], [data-testid="stSidebar"] input[role="combobox"]')) {
    if (el.closest('[data-testid="stSidebar"][data-collapsed="true"]')) continue;
    if (el.offsetParent && el.scrollWidth > el.clientWidth + 1) bad.push(el.value.slice(0, 80));
  }
  return [...new Set(bad)];
}
"""


SMALL_TEXT_JS = """
() => {
  // text smaller than 18 px in the main view and the sidebar (charts set their own sizes)
  const small = [];
  for (const el of document.querySelectorAll('[data-testid="stMain"] *, [data-testid="stSidebar"] *')) {
    if (!el.offsetParent || el.closest('[data-testid="stVegaLiteChart"], [data-testid="stDataFrame"], svg, canvas')) continue;
    if (el.closest('[data-testid="stSidebar"][data-collapsed="true"]')) continue;  // folded away (presenter mode)
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    const size = parseFloat(getComputedStyle(el).fontSize);
    if (own && size < 17.9) small.push(`${size}px: ${el.textContent.trim().slice(0, 40)}`);
  }
  return [...new Set(small)];
}
"""


LOW_CONTRAST_JS = """
() => {
  // text in the main view paler than WCAG's 4.5:1 against the background behind it: a projector washes
  // grey out, so at the back of the room it disappears. The text's colour is drawn through its boxes'
  // opacity (Streamlit's captions are dark text at opacity 0.6). Left out: faded on purpose (an opacity
  // of 0.5 or less: the Encode page's later pre-tokens; disabled buttons), invisible on purpose
  // (transparent, visibility hidden), a slider's number (it sits outside the box whose colour it takes), and
  // code blocks' syntax colours (code to copy, not for the class to read: Streamlit's theme).
  const rgba = s => { const m = s.match(/[\\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
  const lum = c => { const [r, g, b] = c.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
                     return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const pale = [];
  for (const el of document.querySelectorAll('[data-testid="stMain"] *')) {
    if (!el.offsetParent || el.closest('[data-testid="stVegaLiteChart"], [data-testid="stDataFrame"], svg, canvas')) continue;
    if (el.closest('button:disabled, [data-testid="stSlider"], [data-testid="stCode"]')) continue;
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    const cs = getComputedStyle(el);
    if (!own || cs.visibility !== 'visible') continue;
    let opacity = 1, bg = null;
    for (let e = el; e; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (!bg) opacity *= parseFloat(s.opacity);  // the boxes between the text and its background
      if (!bg && rgba(s.backgroundColor)[3] > 0.5) bg = rgba(s.backgroundColor);
    }
    const fg = rgba(cs.color), alpha = fg[3] * opacity;
    if (opacity <= 0.5 || fg[3] === 0) continue;
    bg = bg || [255, 255, 255, 1];
    const shown = fg.slice(0, 3).map((v, i) => v * alpha + bg[i] * (1 - alpha));
    const [hi, lo] = [lum(shown), lum(bg.slice(0, 3))].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    if (ratio < 4.5) pale.push(`${ratio.toFixed(1)}:1 ${el.textContent.trim().slice(0, 40)}`);
  }
  return [...new Set(pale)];
}
"""


def low_contrast(page) -> list[str]:
    """Texts in the main view with less than 4.5:1 contrast against their background (grey a projector washes out)."""
    return page.evaluate(LOW_CONTRAST_JS)


def small_text(page) -> list[str]:
    """Texts under 18 px in the main view and the open sidebar (charts set their own sizes)."""
    return page.evaluate(SMALL_TEXT_JS)


def clipped(page) -> list[str]:
    """The texts in the main view and sidebar that are cut off (wider than the box that shows them)."""
    return page.evaluate(CLIPPED_JS)


def pick(page, label: str, option: str) -> None:
    """Choose an option in the selectbox labelled label (sidebar or main).

    A corpus preset's full label matches its shorter name in the sidebar: the part before " (".
    """
    page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first.click()
    page.get_by_role("option", name=option.split(" (")[0]).first.click()
    wait_idle(page)
