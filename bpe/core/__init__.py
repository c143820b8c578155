"""The compiled core, `bpe._core`: whether it is here, and if not, why, in one sentence.

The core is C through the CPython API (the sources are bpe/c/, built by setup.py):
exact twins of the hot paths whose Python code stays the readable reference and
the fallback, held to identical results by property tests. Nothing needs it: where
it is absent -- not built (no compiler; `bash scripts/setup.sh` builds it), built
from other sources than the checkout's (a stale build is never used), or switched
off with BPE_CORE=0 -- `core` is None, `missing` says why, and the Python code runs.
BPE_CORE=/path/to/_core.so loads that build instead (scripts/sanitize.sh: the
AddressSanitizer copy).

    bpe core   # is the core built here, and if not why (describe); python -m bpe.core says the same

Not here: what the core computes (bpe/c/*.c and their Python twins, such as heap_c.py).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path
from types import ModuleType

SOURCES = Path(__file__).resolve().parents[1] / "c"


def sources_digest(folder: Path = SOURCES) -> str:
    """sha256 of the C files under folder (names and contents): setup.py builds it into the core as SOURCES."""
    digest = hashlib.sha256()
    for path in sorted(folder.iterdir()):
        if path.suffix in (".c", ".h"):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def load() -> tuple[ModuleType | None, str]:
    """(the core module, "") or (None, why it is absent, as the end of a sentence)."""
    setting = os.environ.get("BPE_CORE", "")
    if setting == "0":
        return None, "BPE_CORE=0 is set"
    try:
        if setting:
            module = _load_file(setting)
        else:
            from .. import _core as module
    except ImportError as error:
        if setting:
            return None, f"BPE_CORE={setting} could not be loaded ({error})"
        return (
            None,
            "it is not built here (it needs gcc and the Python headers: bash scripts/setup.sh builds it in a checkout, pip install . where they are)",
        )
    if SOURCES.is_dir() and getattr(module, "SOURCES", "") != sources_digest(SOURCES):
        return None, "it was built from older sources than bpe/c holds (bash scripts/setup.sh rebuilds it)"
    return module, ""


def _load_file(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location("bpe._core", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not an extension module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


core, missing = load()

SETTINGS = ("BPE_CORE", "BPE_COMPILED")  # the environment variables that choose the compiled paths (BPE_COMPILED: pretokenize_c.py)


def settings() -> dict[str, str | None]:
    """This process's choice of compiled paths, as its environment makes it: what a worker it asks for must follow."""
    return {name: os.environ.get(name) for name in SETTINGS}


def follow(chosen: dict[str, str | None]) -> bool:
    """In a worker process: choose the compiled paths as the process that asked for the worker did; True if that changed them.

    subtle: a forkserver's worker has the environment of the process that started the forkserver, once and
    for all, not that of the call asking for the worker now: one count under BPE_CORE=0 left every later
    count's workers without the core. What was built in the worker before this call (a Tokenizer unpickled
    with its arguments) was built with the forkserver's choice: build it again after. Workers count and
    encode; heap_c.py, which takes `core` at import, is not used in them.
    """
    if chosen == settings():
        return False
    for name, value in chosen.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    global core, missing
    core, missing = load()
    return True


def describe() -> str:
    """One sentence: the core is built here, or why not."""
    if core is None:
        return f"The compiled core (bpe._core) is absent: {missing}; the trainers run in Python."
    return f"The compiled core (bpe._core) is built: {Path(core.__file__).name}."
