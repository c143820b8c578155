"""Shared fixtures. The CS336 reference files and GPT-2's files live next to the project, in ../shared."""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest

# subtle: the served app shows no tracebacks (.streamlit/config.toml); a test that fails on an exception element should
# show it, and an environment variable beats the config file. Set before Streamlit reads its config.
os.environ.setdefault("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS", "full")
# and builds what it uses, never reading what another run kept on disk (serve/disk.py; tests/test_disk.py turns it on)
os.environ["BPE_CACHE"] = "off"
# the scripts/app.sh a test starts leaves the compiled core as it is (scripts/setup.sh): a build into the checkout mid-run
# gave the pool workers started after it heap_c, which this process (and the servers already running) lacked. A test
# that builds the core builds a copy in a temporary folder (test_package.py, scripts/sanitize.sh)
os.environ["BPE_CORE_BUILD"] = "0"

from apptest import finish, open_app, rerun_until  # noqa: F401  (the page AppTests import it from here)

from bpe import ALGORITHMS

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "cs336"
GPT2 = SHARED.parent / "gpt2"
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/"
collect_ignore = ["tiktoken_suite"]  # tiktoken's own tests, run against our Tokenizer in a process of their own (test_tiktoken_suite.py)


EVERY_ALGORITHM = pytest.mark.parametrize("algorithm", list(ALGORITHMS))  # a test for each trainer, named after it


def until(condition: Callable[[], object], timeout: float, what: str, every: float = 0.05) -> None:
    """Wait for condition() to be true, looking every `every` seconds; fail after `timeout` seconds saying what did not happen.

    until(lambda: pool.status("long").state == "cancelled", 10, "the stopped run to end")
    """
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        time.sleep(every)


def run_async(coroutine):
    """asyncio.run(coroutine) on a thread of its own.

    subtle: the browser tests' Playwright (sync API, one per session) keeps an event loop running in the
    main thread, and asyncio.run refuses to start inside a running loop: the websocket tests ran alone
    but failed in the whole suite.
    """
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


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


@contextmanager
def tiktoken_cache(folder: Path) -> Iterator[None]:
    """tiktoken reads its files from folder (TIKTOKEN_CACHE_DIR) inside the block; the setting is put back after."""
    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = before


@pytest.fixture(scope="session")
def tiktoken_gpt2(gpt2, tmp_path_factory):
    """tiktoken's own gpt2 encoding, given GPT-2's files offline (tiktoken caches them under the sha1 of their URL)."""
    tiktoken = pytest.importorskip("tiktoken")
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    for name in ("vocab.bpe", "encoder.json"):
        shutil.copy(gpt2 / name, cache / hashlib.sha1((TIKTOKEN_URL + name).encode()).hexdigest())
    with tiktoken_cache(cache):
        yield tiktoken.get_encoding("gpt2")


TIKTOKEN_FILES = SHARED.parent / "tiktoken"
OPENAI_URL = "https://openaipublic.blob.core.windows.net/encodings/"


@pytest.fixture(scope="session")
def tiktoken_files() -> Path:
    """The folder holding OpenAI's cl100k_base.tiktoken and o200k_base.tiktoken; skips when it is absent."""
    if not (TIKTOKEN_FILES / "o200k_base.tiktoken").is_file():
        pytest.skip("../shared/tiktoken not present")
    return TIKTOKEN_FILES


@pytest.fixture(scope="session")
def openai_encodings(tiktoken_files, tmp_path_factory) -> dict:
    """tiktoken's own cl100k_base and o200k_base, from the shared files put in a tiktoken cache (see ../shared/tiktoken/README.md)."""
    tiktoken = pytest.importorskip("tiktoken")
    cache = tmp_path_factory.mktemp("tiktoken-openai-cache")
    for name in ("cl100k_base", "o200k_base"):
        url = OPENAI_URL + name + ".tiktoken"
        shutil.copy(tiktoken_files / (name + ".tiktoken"), cache / hashlib.sha1(url.encode()).hexdigest())
    with tiktoken_cache(cache):
        return {name: tiktoken.get_encoding(name) for name in ("cl100k_base", "o200k_base")}


@pytest.fixture(scope="session")
def openai_tokenizers(tiktoken_files) -> dict:
    """Our Tokenizer over OpenAI's files, loaded once for the whole session (a few seconds each)."""
    from bpe import Tokenizer

    return {name: Tokenizer.from_openai(name, download=False) for name in ("cl100k_base", "o200k_base")}  # from ../shared, once a process


def interruptible() -> None:
    """Popen's preexec_fn for a child that must take Ctrl-C as a terminal gives it: SIGINT back to its default.

    A shell starts a background job (`cmd &`, nohup, a CI runner's step) with SIGINT ignored, its children
    inherit that, and Python then never raises KeyboardInterrupt: a SIGINT test would see the run finish.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KB tmpfs (the tests run as root here); skipped where mounting is refused (a container without the right)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True, timeout=30)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True, timeout=30)


@pytest.fixture(scope="module")
def cluster():
    """A new local Ray cluster of 2 CPUs for one module (starting Ray takes seconds), the package shipped to its workers
    as `bpe count --ray` and `bpe encode --ray` ship it; skipped where Ray is not installed."""
    ray = pytest.importorskip("ray")
    ray.init(
        address="local",  # a new cluster even if this machine already has one (ray start)
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"py_modules": [str(Path(__file__).resolve().parents[1] / "bpe")]},
    )
    yield
    ray.shutdown()
