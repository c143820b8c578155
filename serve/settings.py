"""The app's settings from the environment, read here and nowhere else.

| variable | default | what it sets |
|---|---|---|
| BPE_WORKERS | cores - 1 (at least 1) | the pool's worker processes for long jobs (races, sweeps, big trainings) |
| BPE_WORKER_MEMORY_MB | serve.pool.MEMORY_MB (4096) | the address space one worker process may use; past it its job fails in one sentence |
| BPE_CACHE | $XDG_CACHE_HOME or ~/.cache, /bpe-workbench | where what the server builds for every class is kept between starts (and the library the merges of OpenAI's rank files, bpe/files/load.py); off keeps nothing |
| BPE_PRELOAD | 1 | 0 leaves the real tokenizers unloaded until a page needs one |
| BPE_CORPUS | unset | a text file the sidebar offers as one more corpus, 'file' in links: `bpe diff` prints a link that opens it at a merge |
| BPE_POOL, BPE_POOL_KEY, BPE_REPLICA | unset | set by serve/replicas.py for each replica: the machine's pool server (its socket, its key) and the replica's name |
| STREAMLIT_SERVER_COOKIE_SECRET | a random one per start | Streamlit's own; the replicas are given one (every machine the same) |

Each is read when asked for, not at import: the replicas' supervisor and the tests set them per process.
Not here: what the library reads itself, which is the library's, not the app's: BPE_COMPILED=0
(bpe/text/gigatoken.py: count pre-tokens in Python only), BPE_CORE (bpe/core/: 0 for no compiled core, or
the path of one to load), and tiktoken's cache folder, TIKTOKEN_CACHE_DIR, as tiktoken reads it
(bpe/files/openai.py's cache_dir, which ui/real.py asks too). This module imports nothing of the app: a worker process reads it too.

    settings.long_job_workers()  # -> 1 on a 2-core machine, unless BPE_WORKERS says otherwise
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

WORKERS = "BPE_WORKERS"
WORKER_MEMORY = "BPE_WORKER_MEMORY_MB"
PRELOAD = "BPE_PRELOAD"
CORPUS = "BPE_CORPUS"
POOL = "BPE_POOL"
POOL_KEY = "BPE_POOL_KEY"
REPLICA = "BPE_REPLICA"
COOKIE_SECRET = "STREAMLIT_SERVER_COOKIE_SECRET"


def long_job_workers() -> int:
    """Processes for long runs: BPE_WORKERS if set, else one core fewer than the machine has (at least one).

    subtle: one core is left to the server, which draws every student's clicks; bpe.data.count's counting,
    a short job of its own process, takes every core instead (bpe.data.count.counting_workers).
    """
    configured = os.environ.get(WORKERS, "").strip()
    if configured:
        return max(1, int(configured))
    return max(1, (os.cpu_count() or 1) - 1)


def worker_memory_mb(default: int) -> int:
    """The megabytes of address space one worker process may use: BPE_WORKER_MEMORY_MB if set, else default."""
    return int(os.environ.get(WORKER_MEMORY) or default)


def cache_folder() -> Path | None:
    """Where serve/disk.py keeps what the server builds between starts: BPE_CACHE, else $XDG_CACHE_HOME/bpe-workbench,
    else ~/.cache/bpe-workbench; None when BPE_CACHE is off (or 0, none). The library's rule (bpe.files.load.cache_folder),
    which keeps the merges recovered from OpenAI's rank files there too."""
    from bpe.files.load import cache_folder as library_cache_folder  # when asked: this module imports nothing at start

    return library_cache_folder()


def preload() -> bool:
    """Load the real tokenizers in the background when the server starts (BPE_PRELOAD=0: only when a page needs one)."""
    return os.environ.get(PRELOAD, "1") != "0"


def corpus_file() -> Path | None:
    """The text file this server offers as a corpus of its own (BPE_CORPUS), or None: only the one the person who
    started the server named, so that a link ('?corpus=file') names no path and reads no other file."""
    value = os.environ.get(CORPUS, "").strip()
    return Path(value) if value else None


@dataclass(frozen=True)
class SharedPool:
    """Where a replica finds the machine's pool server, and what it calls itself there."""

    address: str  # the pool server's Unix socket
    key: bytes  # the secret its connections are authenticated with
    replica: str  # this replica's name, as the proxy's cookie knows it


def shared_pool() -> SharedPool | None:
    """The pool server a replica shares (BPE_POOL, BPE_POOL_KEY, BPE_REPLICA), or None: the server keeps a pool of its own."""
    address = os.environ.get(POOL)
    if not address:
        return None
    return SharedPool(address, pool_key(), os.environ.get(REPLICA, "r"))


def pool_key() -> bytes:
    """The pool server's secret (BPE_POOL_KEY, as hex)."""
    return bytes.fromhex(os.environ[POOL_KEY])


def replica_env(address: str, key: bytes, cookie_secret: str) -> dict[str, str]:
    """What serve/replicas.py adds to each process's environment: the pool server, its key, Streamlit's cookie secret."""
    return {POOL: address, POOL_KEY: key.hex(), COOKIE_SECRET: cookie_secret}


def cookie_secret() -> str | None:
    """The cookie secret given to this machine (every machine of a deployment needs the same), or None."""
    return os.environ.get(COOKIE_SECRET) or None
