"""A student's browser on `scripts/app.sh --replicas 2` when the replica it is on dies: it carries on at its merge, by itself."""

from __future__ import annotations

import os
import re
import signal
import tempfile
from pathlib import Path

import pytest
from conftest import until
from test_replicas import HAPROXY, Served, healthy

from .conftest import CHROMIUM, new_context, shot, wait_idle

pytestmark = pytest.mark.skipif(HAPROXY is None or not os.path.exists(CHROMIUM), reason="needs HAProxy and Debian's chromium")


APP = '[data-testid="stApp"]'


# Records every connection state the page passes through, so a state held for less than a frame is not missed.
RECORD_STATES = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    window.connectionStates = [];
    new MutationObserver(() => window.connectionStates.push(app.getAttribute('data-test-connection-state')))
        .observe(app, {attributes: true, attributeFilter: ['data-test-connection-state']});
}"""


def merge_shown(page) -> int:
    return int(re.search(r"Merge (\d+) of", page.locator(".merge-card").inner_text()).group(1))


def test_a_browser_whose_replica_dies_reconnects_to_another_at_its_merge(browser):
    # subtle: the session's browser, not a second sync_playwright(): one holds an event loop in this thread,
    # and Playwright refuses to start another inside it when the whole suite runs
    with tempfile.TemporaryDirectory() as folder:
        server = Served(Path(folder))
        context = new_context(browser, viewport={"width": 1280, "height": 720})
        try:
            page = context.new_page()
            page.goto(f"http://127.0.0.1:{server.port}/")
            wait_idle(page, 120_000)
            for k in (2, 3, 4):
                page.get_by_role("button", name="Next").first.click()
                page.wait_for_function(f"() => /Merge {k} of/.test(document.querySelector('.merge-card')?.innerText || '')")
            replica = next(c["value"] for c in page.context.cookies() if c["name"] == "BPE_REPLICA")
            pid, port = server.replicas()[replica]
            page.evaluate(RECORD_STATES)
            os.kill(pid, signal.SIGKILL)
            # the page notices (its connection leaves CONNECTED), reconnects by itself (to the other replica: the dead
            # one refuses) and opens a new session at the merge in its URL. Wait for each of those events, then click
            # Next once: it must go on from that merge, neither lost nor counted twice.
            page.wait_for_function("() => window.connectionStates.some(s => s !== 'CONNECTED')", timeout=60_000)
            page.wait_for_selector(f'{APP}[data-test-connection-state="CONNECTED"]', timeout=90_000)
            wait_idle(page, 120_000)
            assert merge_shown(page) == 4, "the new session did not open at the merge in the URL"
            page.get_by_role("button", name="Next").first.click()
            page.wait_for_function("() => /Merge 5 of/.test(document.querySelector('.merge-card')?.innerText || '')")
            wait_idle(page)
            assert merge_shown(page) == 5, "one click moved more than one merge"
            assert "merge=5" in page.url
            shot(page, "replicas-after-a-replica-died")
            until(lambda: server.replicas()[replica][0] != pid and healthy(port), 90, f"{replica} to be started again")
        finally:
            context.close()
            server.process.send_signal(signal.SIGINT)
            assert server.process.wait(60) == 0
