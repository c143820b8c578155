"""The server settings a classroom depends on, as `streamlit run app.py` reads them from .streamlit/config.toml."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

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
