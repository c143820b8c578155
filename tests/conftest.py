"""Shared fixtures. The CS336 reference files live next to the project, in ../shared/cs336."""

from __future__ import annotations

from pathlib import Path

import pytest
from apptest import open_app  # noqa: F401  (the page AppTests import it from here)

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "cs336"


@pytest.fixture(scope="session")
def cs336() -> Path:
    """The folder holding corpus.en and the reference merges and vocab; skips when it is absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared/cs336 not present")
    return SHARED
