"""Encoding datasets on a Ray cluster: encode_files.py's shards, each encoded by a Ray task.

What it does: cut the inputs into shards here, as the local `bpe encode` does (encode_files.py's jobs,
in input order), send the tokenizer to the cluster once (Ray's object store; each worker process
builds it once), and encode each shard in a task where Ray runs it, which writes the shard's ids as
one .npy file beside the output. The output is
- a folder: those .npy files, and `manifest.json`, written last, which lists them in input order with
  their counts -- `bpe decode`, bpe.files.ids.read_ids and load_ids read it as one array; or
- one .npy or .bin file, when its name says so: the shards appended in input order as they are done,
  each removed once appended.
Either way it holds the ids of the local run: the same ids in the same order, in the same dtype
(uint16 when every id of the tokenizer fits), since each shard is encoded by the same encode_job.

A worker lost mid-run (its process killed, its node gone): Ray runs the task again (MAX_RETRIES),
which writes its shard again from the start under its shard's own name. A shard's file is renamed
into place only when complete, and each shard is named once, by its place in the input, so a
document is never written twice or left out; what a lost attempt left (a temporary file) is
removed at the end and counted in the summary.

What it does not do: copy inputs or outputs between nodes. Every node reads the inputs and writes
the output at the same path (a shared file system), and has this package installed (`pip install
.[ray]`); this package's own code is shipped with the job, as counting on Ray does (data/ray_count.py).

    done = encode_on_ray(tok, ["/shared/owt/*.jsonl.zst"], "/shared/owt-ids", "auto")
    done.tokens, done.phases, done.lost
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .. import atomic
from ..data.count import reporter
from ..data.inputs import CHUNK_BYTES, Reading, resolve_inputs, warn_unsafe_cuts
from ..data.ray_count import connect
from ..files.ids import HEADER_BYTES, MANIFEST, IdsWriter, dtype_for, kind_of, read_manifest, shards_manifest
from ..memory import peak_rss
from .encode_files import (
    SPECIAL_TEXT,
    Encoded,
    Job,
    Part,
    Progress,
    Settings,
    _jobs,
    default_eot,
    default_special,
    encode_job,
    encoder_of,
    reading_of,
)

if TYPE_CHECKING:
    from .tokenizer import Tokenizer

MAX_RETRIES = 3  # a task whose worker dies is run again this many times (Ray's default, said here)
TASKS_PER_CPU = 2  # shards in flight per CPU of the cluster: each CPU has its next shard waiting


@dataclass(frozen=True)
class EncodedOnRay(Encoded):
    """An encoded dataset (encode_files.Encoded), and what the cluster did."""

    phases: dict[str, float] = field(default_factory=dict)  # seconds of each phase, in order
    tasks: int = 0  # shards encoded, one task each
    cpus: int = 0  # of the cluster
    lost: int = 0  # attempts lost with their worker (and run again): the temporary files they left
    shards: bool = False  # the output is a folder of shards (False: one array)


def encode_on_ray(
    tok: Tokenizer,
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    out: str | os.PathLike,
    address: str | None = "auto",
    *,
    special: str | None = None,
    eot: int | None | str = "default",
    progress: Progress | None = None,
    k: int | None = None,
    hook: Callable[[int], None] | None = None,
    **reading,
) -> EncodedOnRay:
    """encode_files on a Ray cluster (address: 'auto', 'ray://host:10001', 'local'; None: the one already joined).

    out: a folder (shards and manifest.json) or one .npy / .bin file. The other keywords are encode_files' (the reading
    ones: text_field, text_column, chunk_bytes). hook (for tests): called in a task with its shard's index after its
    first batch is written (a test kills the worker there).
    """
    text_field, text_column, chunk_bytes = reading_of(reading)
    start = time.perf_counter()
    phases: dict[str, float] = {}
    special = special or default_special(tok)
    if special not in SPECIAL_TEXT:
        raise ValueError(f"special is one of {', '.join(SPECIAL_TEXT)}, not {special!r}.")
    eot_id = default_eot(tok) if eot == "default" else eot
    if eot_id is not None and eot_id not in tok.vocab:
        raise ValueError(f"The end-of-text id {eot_id} is not in the vocabulary.")
    out = Path(out)
    folder = is_folder_output(out)
    atomic.check_folder(out) if folder else atomic.check_writable(out)
    inputs = resolve_inputs(paths)
    total = sum(source.size for source in inputs)
    clock = time.perf_counter()
    ray, started = connect(address, "Encoding")
    try:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        phases["connect"] = time.perf_counter() - clock
        if chunk_bytes == CHUNK_BYTES:  # as encode_files cuts for its workers: shards enough to keep every CPU busy
            chunk_bytes = max(1 << 20, min(chunk_bytes, total // (cpus * 4) + 1))
        cut_at = tok.special_tokens if special != "text" else ()
        options = Reading(text_field, text_column, tuple(cut_at), tok.pretokenizer, chunk_bytes)
        settings = Settings(special, eot_id, k, options, dtype_for(tok.max_token_value))
        clock = time.perf_counter()
        jobs = _jobs(inputs, options)
        phases["cut"] = time.perf_counter() - clock
        clock = time.perf_counter()
        # names this run's shards (hidden where they are joined into one file) and a lost attempt's leftovers
        run = f"{'' if folder else '.'}{out.name}.{secrets.token_hex(4)}"
        shipped = [ray.put(tok)]  # in a list: handed to the task as the reference, read once per worker process
        phases["tokenizer to the cluster"] = time.perf_counter() - clock
        meta = {"tokenizer": tok.name, "eot": eot_id, "special": special}
        clock = time.perf_counter()
        where = out if folder else (out.parent if str(out.parent) else Path("."))
        if folder:
            where.mkdir(parents=True, exist_ok=True)
        try:
            parts = _run(ray, jobs, shipped, run, settings, where, cpus * TASKS_PER_CPU, reporter(progress, total), hook, folder, out, meta)
            phases["encode"] = time.perf_counter() - clock
            clock = time.perf_counter()
            if folder:
                _write_manifest(out, run, parts, settings.dtype, meta)
            phases["manifest" if folder else "join"] = time.perf_counter() - clock
        finally:
            lost = _remove_leftovers(where, run, folder)
    except ray.exceptions.RayTaskError as e:
        if isinstance(e.cause, (ValueError, OSError)):  # a bad input or a full disk, said in one sentence where it happened
            raise ValueError(str(e.cause)) from None
        raise
    except ray.exceptions.RayError as e:  # a task given up after MAX_RETRIES lost workers, a cluster gone
        raise ValueError(f"Encoding on Ray failed: {str(e).splitlines()[0]}") from None
    finally:
        if started:
            ray.shutdown()
    if progress and not jobs:
        progress(0, 0)
    warn_unsafe_cuts(sum(p.unsafe_cuts for p in parts))
    return EncodedOnRay(
        out,
        settings.dtype,
        sum(p.tokens for p in parts),
        sum(p.documents for p in parts),
        sum(p.text_bytes for p in parts),
        tuple(inputs),
        special,
        eot_id,
        time.perf_counter() - start,
        workers=cpus,
        worker_peak_rss=max((p.peak_rss for p in parts), default=0),
        worker_cpu_seconds=sum(p.cpu_seconds for p in parts),
        encoder=", ".join(sorted({p.encoder for p in parts if p.encoder})) or encoder_of(tok),
        phases=phases,
        tasks=len(jobs),
        cpus=cpus,
        lost=lost,
        shards=folder,
    )


def is_folder_output(out: Path) -> bool:
    """Whether out names a folder of shards (not a name ending in .npy or .bin): the one sentence otherwise is kind_of's."""
    if out.suffix.lower() in (".npy", ".bin"):
        kind_of(out)
        return False
    if out.suffix and not out.is_dir():
        raise ValueError(f"{out}: the ids on Ray are written as a folder of shards (a name without a suffix) or as one .npy or .bin file.")
    return True


def shard_name(run: str, index: int) -> str:
    return f"{run}.{index:05d}.npy"


def _run(ray, jobs: list[Job], shipped, run, settings, where: Path, window: int, report, hook, folder: bool, out: Path, meta) -> list[Part]:
    """Keep up to `window` shards in flight, in input order; join them in order into out (unless out is a folder)."""
    task = ray.remote(_encode_shard).options(max_retries=MAX_RETRIES)
    ahead, flying, done, parts = iter(jobs), {}, {}, []
    writer = None if folder else IdsWriter(out, settings.dtype, meta)
    try:
        while True:
            while len(flying) + len(done) < window and (job := next(ahead, None)) is not None:
                flying[task.remote(shipped, job, settings, str(where), shard_name(run, job.index), hook)] = job
            if not flying:
                break
            ready, _ = ray.wait(list(flying), num_returns=1)
            job = flying.pop(ready[0])
            part = ray.get(ready[0])
            done[part.index] = part
            if report:
                report(job.shard.size)
            while len(parts) in done:  # join in input order: the next shard, when it is done
                part = done.pop(len(parts))
                if writer is not None:
                    _append(writer, Path(part.path))
                parts.append(part)
        if writer is not None:
            writer.close()
    except BaseException:
        if writer is not None:
            writer.abort()
        for ref in flying:
            ray.cancel(ref, force=True)
        if folder:  # no manifest is written: the shards of this run go
            for job in jobs:
                with contextlib.suppress(OSError):
                    (where / shard_name(run, job.index)).unlink()
        raise
    return parts


def _append(writer: IdsWriter, path: Path) -> None:
    """A shard's ids (after its .npy header, which IdsWriter writes HEADER_BYTES long) to the end of writer; the shard goes."""
    with open(path, "rb") as f:
        f.seek(HEADER_BYTES)
        while block := f.read(1 << 22):
            writer.write(block)
    path.unlink()


def _write_manifest(out: Path, run: str, parts: list[Part], dtype: str, meta: dict) -> None:
    """The manifest, written last (atomically); then the shards of the run it replaces, if any, go."""
    older: list[Path] = []
    if (out / MANIFEST).exists():
        with contextlib.suppress(ValueError):
            folder, manifest = read_manifest(out)
            older = [folder / s["file"] for s in manifest["shards"] if Path(s["file"]).name == s["file"]]
    shards = [{"file": Path(p.path).name, "count": p.tokens, "documents": p.documents, "text_bytes": p.text_bytes} for p in parts]
    text = json.dumps(shards_manifest(dtype, shards, meta), indent=1) + "\n"
    atomic.write_text(out / MANIFEST, text)
    kept = {s["file"] for s in shards}
    for path in older:
        if path.name not in kept:
            with contextlib.suppress(OSError):
                path.unlink()


def _remove_leftovers(where: Path, run: str, folder: bool) -> int:
    """Remove what this run leaves but must not: temporary files of lost attempts (counted), and joined shards."""
    lost = 0
    for path in where.glob(f".{run}.*{atomic.TMP_SUFFIX}"):  # a shard while written (atomic's temporary name): its worker was lost
        with contextlib.suppress(OSError):
            path.unlink()
            lost += 1
    if not folder:
        for path in where.glob(f"{run}.*.npy"):  # shards of a joined run that failed half way
            with contextlib.suppress(OSError):
                path.unlink()
    return lost


# ---------------------------------------------------------------------------
# the task (it runs on the cluster)

_tokenizers: dict[object, Tokenizer] = {}  # in a worker process: the tokenizer of each run, built once


def _encode_shard(shipped: list, job: Job, settings: Settings, where: str, name: str, hook) -> Part:
    """Encode one shard into where/name (.npy, renamed into place when complete) -> its Part."""
    import ray

    key = shipped[0].hex()
    tok = _tokenizers.get(key)
    if tok is None:
        _tokenizers.clear()  # one run's at a time
        tok = _tokenizers[key] = ray.get(shipped[0])
    path = Path(where) / name
    pending = [hook] if hook is not None else []

    def after_batch(_disk_bytes: int) -> None:
        if pending:
            pending.pop()(job.index)

    cpu = time.process_time()
    with IdsWriter(path, settings.dtype) as writer:
        part = encode_job(tok, job, settings, writer.write, after_batch if pending else None)
    return Part(
        part.index,
        part.tokens,
        part.documents,
        part.text_bytes,
        part.disk_bytes,
        str(path),
        peak_rss(),
        time.process_time() - cpu,
        encoder_of(tok),
        part.unsafe_cuts,
    )
