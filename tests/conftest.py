"""Shared fixtures. The CS336 reference files and GPT-2's files live next to the project, in ../shared."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
from apptest import finish, open_app, rerun_until  # noqa: F401  (the page AppTests import it from here)

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "cs336"
GPT2 = SHARED.parent / "gpt2"
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/"


@pytest.fixture(scope="session")
def cs336() -> Path:
    """The folder holding corpus.en and the reference merges and vocab; skips when it is absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared/cs336 not present")
    return SHARED


@pytest.fixture(scope="session")
def gpt2() -> Path:
    """The folder holding GPT-2's encoder.json and vocab.bpe; skips when it is absent."""
    if not (GPT2 / "encoder.json").is_file():
        pytest.skip("../shared/gpt2 not present")
    return GPT2


@pytest.fixture(scope="session")
def tiktoken_gpt2(gpt2, tmp_path_factory):
    """tiktoken's own gpt2 encoding, given GPT-2's files offline (tiktoken caches them under the sha1 of their URL)."""
    tiktoken = pytest.importorskip("tiktoken")
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    for name in ("vocab.bpe", "encoder.json"):
        shutil.copy(gpt2 / name, cache / hashlib.sha1((TIKTOKEN_URL + name).encode()).hexdigest())
    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    try:
        yield tiktoken.get_encoding("gpt2")
    finally:
        if before is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = before
