"""The server settings a classroom depends on, as `streamlit run app.py` reads them from .streamlit/config.toml."""

from __future__ import annotations

import gzip
import ipaddress
import os
import re
import socket
import subprocess
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

from serve.assets import static_folder

CONFIG = tomllib.loads((Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml").read_text())


@pytest.mark.parametrize(
    ("section", "option", "value", "why"),
    [
        # a full gc.collect(2) after every script run walked every cached trace: ~70% of the server's processor
        # time with 15 students stepping (benchmarks/classroom.py: p95 1.68 s with it, 0.05 s without)
        ("runner", "postScriptGC", False, "a forced full collection after every click"),
        ("client", "toolbarMode", "viewer", "Streamlit's Stop and Deploy in front of a class"),
        ("server", "maxUploadSize", 5, "the uploader promising 200 MB while the app takes 5"),
        ("theme", "baseFontSize", 18, "14 px text on a projector"),
    ],
)
def test_the_server_is_configured_for_a_classroom(section, option, value, why):
    assert CONFIG.get(section, {}).get(option) == value, why


def test_the_app_takes_as_much_as_the_uploader_says():
    from ui.corpus import MAX_UPLOAD_BYTES

    assert CONFIG["server"]["maxUploadSize"] * 1_000_000 == MAX_UPLOAD_BYTES


# ---------------------------------------------------------------------------
# listening on this machine only, unless told otherwise

ROOT = Path(__file__).resolve().parents[1]


def listening_addresses(port: int) -> set[str]:
    """The local addresses of the sockets listening on port (IPv4 and IPv6), from /proc/net/tcp*: {'127.0.0.1'}."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                raw = bytes.fromhex(address)
                words = [raw[i : i + 4][::-1] for i in range(0, len(raw), 4)]  # each 32-bit word is little-endian
                found.add(str(ipaddress.ip_address(b"".join(words))))
    return found


def test_the_one_server_command_listens_on_this_machine_only(tmp_path):
    """`bash scripts/app.sh` without --server.address: 127.0.0.1, not every interface (the class command passes 0.0.0.0)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "STREAMLIT_SERVER_ADDRESS"}
    command = ["bash", "scripts/app.sh", "--server.port", str(port), "--server.headless", "true", "--server.fileWatcherType", "none"]
    with open(tmp_path / "app.log", "wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**env, "BPE_PRELOAD": "0"})
    try:
        deadline = time.monotonic() + 60
        while not listening_addresses(port):
            assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "app.log").read_text()
            time.sleep(0.2)
        assert listening_addresses(port) == {"127.0.0.1"}
        # and Streamlit's browser files come from memory, gzipped (serve/assets.py), typed as Streamlit types them
        script = next((static_folder() / "static" / "js").glob("index.*.js"))
        asked = urllib.request.Request(f"http://127.0.0.1:{port}/static/js/{script.name}", headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(asked, timeout=30) as answer:
            assert answer.headers["Content-Encoding"] == "gzip" and answer.headers["Content-Type"] == "application/javascript"
            assert gzip.decompress(answer.read()) == script.read_bytes()
    finally:
        process.terminate()
        process.wait(30)


def test_the_replicas_proxy_listens_on_this_machine_only_by_default():
    from serve.replicas import split_options

    assert split_options(["--replicas", "2"])[1] == "127.0.0.1"
    assert split_options(["--replicas", "2", "--server.address", "0.0.0.0"])[1] == "0.0.0.0"


def test_the_readme_opens_the_class_and_hall_commands_to_the_network():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"bash scripts/app\.sh [^`\n]*", readme)
    for needs in ("--server.port 8501", "--replicas 2"):
        assert any(needs in c and "--server.address 0.0.0.0" in c for c in commands), (
            f"no README command with {needs} opens the app to a class"
        )


def test_a_browser_gets_no_traceback_when_serving():
    """What the served app sends for an error no page caught: Streamlit's generic sentence, no type, message or source."""
    assert CONFIG["client"]["showErrorDetails"] == "none"
    from streamlit import config
    from streamlit.testing.v1 import AppTest

    script = "raise ValueError('secret at /home/teacher/bpe/ui/link.py')"
    before = config.get_option("client.showErrorDetails")
    config.set_option("client.showErrorDetails", CONFIG["client"]["showErrorDetails"])
    try:
        at = AppTest.from_string(script).run()
    finally:
        config.set_option("client.showErrorDetails", before)
    [shown] = at.exception
    sent = f"{shown.message} {shown.stack_trace} {shown.proto}"
    assert "secret" not in sent and "/home/teacher" not in sent and "ValueError" not in sent and not shown.stack_trace
