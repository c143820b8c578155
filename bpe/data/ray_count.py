"""Counting pre-tokens on a Ray cluster: count.py's shards and tallies, as a map-reduce.

What it does: cut the inputs into shards here (inputs.py), group them into
map tasks -- each reads its shards where it runs and keeps one `Tally`, like
a local worker -- and add the tasks' counts up in a tree of reduce tasks: as
soon as two partial counts are ready, a task adds them (an Arrow group-by, in
C++). Partial counts travel between nodes through Ray's object store; only the
total comes back to this process. The counts equal local counting exactly.

What it does not do: train (the merge loop stays on one machine: the counts of
unique pre-tokens fit where the text does not), start a multi-node cluster, or
copy inputs: every node must read the inputs at the same path (a shared file
system), and have this package installed (`pip install .[ray]`).

    counted = count_on_ray(["/shared/owt/*.jsonl.zst"], "auto", special_tokens=["<|endoftext|>"])
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..text.pretokenize import Progress
from ..text.tally import compiled_path
from .count import Counted, Paths, count_shards, reporter
from .inputs import Reading, Shard, resolve_inputs, shards

TASKS_PER_CPU = 2  # map tasks per CPU of the cluster: enough to balance, few enough that each splits its units once
MAX_RETRIES = 3  # a task whose worker dies is run again this many times (Ray's default, said here)


def count_on_ray(paths: Paths, address: str | None = "auto", **reading) -> Counted:
    """Count pre-tokens on Ray: the cluster at address ('auto', 'ray://host:10001', 'local'), or the one already connected.

    The keyword arguments say how inputs are read, as count_inputs takes them (bpe.data.inputs.Reading).
    """
    return count_on_ray_with(paths, address, Reading.of(**reading))


def count_on_ray_with(
    paths: Paths,
    address: str | None,
    options: Reading,
    progress: Progress | None = None,
    hook: Callable[[int], None] | None = None,
) -> Counted:
    """count_on_ray with the reading options as one value: count_on_ray_with(paths, "auto", spec.reading()).

    progress(done, total) in bytes of the inputs, as each map task is done. A map task whose worker is lost
    (its process killed, its node gone) is run again by Ray (MAX_RETRIES): a task only reads and counts, so
    the total is the same. hook (for tests): called in a map task with its group's number after its first
    batch is counted (a test kills the worker there).
    """
    inputs = resolve_inputs(paths)
    jobs = [shard for source in inputs for shard in shards(source, options)]
    ray, started = connect(address)
    try:
        groups = _groups(jobs, max(1, int(ray.cluster_resources().get("CPU", 1))) * TASKS_PER_CPU)
        count_task, add_task = ray.remote(_count_group), ray.remote(_add)
        mapped = [
            count_task.options(num_returns=2, max_retries=MAX_RETRIES).remote(group, options, n, hook) for n, group in enumerate(groups)
        ]
        report = reporter(progress, sum(source.size for source in inputs))
        sizes = {table: sum(shard.size for shard in group) for (table, _), group in zip(mapped, groups)}
        total = _reduce_tree(ray, [table for table, _ in mapped], add_task, lambda ref: report and report(sizes.pop(ref, 0)))
        stats = ray.get([stat for _, stat in mapped])
        table = ray.get(total) if total is not None else None
        if report:
            report(sum(sizes.values()))  # the map tasks not waited for one by one (a single one)
    except ray.exceptions.RayTaskError as e:
        if isinstance(e.cause, ValueError):  # a bad input, said in one sentence where it was read
            raise ValueError(str(e.cause)) from None
        raise
    finally:
        if started:
            ray.shutdown()
    counts = dict(zip(table.column("token").to_pylist(), table.column("count").to_pylist())) if table is not None else {}
    return Counted(
        counts,
        tuple(inputs),
        sum(stat[0] for stat in stats),
        max((stat[1] for stat in stats), default=0),
        len(groups),
        compiled_bytes=sum(stat[2] for stat in stats),
        python_why=tuple(sorted({why for stat in stats for why in stat[3]})),
        library=compiled_path(options.pretokenizer)[0] if options.compiled else "",
    )


def connect(address: str | None, doing: str = "Counting"):
    """(the ray module, whether this call connected it): the cluster already joined, else the one at address.

    This package is shipped along (runtime_env py_modules), so the cluster runs this very code.
    """
    try:
        import ray
    except ImportError:
        raise ValueError(f"{doing} on Ray needs the ray package: pip install .[ray] (or pip install ray).") from None
    if ray.is_initialized():
        return ray, False
    package = str(Path(__file__).resolve().parents[1])  # the whole bpe package
    try:
        ray.init(address=address, runtime_env={"py_modules": [package]}, log_to_driver=False)
    except ConnectionError as e:
        raise ValueError(f"No Ray cluster at {address!r} ({e}).") from None
    return ray, True


def _groups(jobs: list[Shard], n: int) -> list[list[Shard]]:
    """Shards dealt into at most n groups of about equal size, largest shards first."""
    groups: list[list[Shard]] = [[] for _ in range(min(n, len(jobs)))]
    sizes = [0] * len(groups)
    for shard in sorted(jobs, key=lambda s: -s.size):
        i = sizes.index(min(sizes))
        groups[i].append(shard)
        sizes[i] += shard.size
    return groups


def _reduce_tree(ray, refs: list, add_task, on_ready: Callable[[object], object] | None = None):
    """Add partial counts two at a time as they become ready, until one is left (None if there were none).

    on_ready(ref) is told of each one ready, as it is.
    """
    pending, ready = list(refs), []
    while len(pending) + len(ready) > 1:
        if len(ready) < 2:
            done, pending = ray.wait(pending, num_returns=1)
            ready += done
            if on_ready is not None:
                on_ready(done[0])
        while len(ready) >= 2:
            pending.append(add_task.remote(ready.pop(), ready.pop()))
    return (ready or pending or [None])[0]


# ---------------------------------------------------------------------------
# the tasks (they run on the cluster)


def _count_group(group: list[Shard], options: Reading, n: int = 0, hook: Callable[[int], None] | None = None):
    """Map: one tally over a group of shards -> (Arrow table of token, count; (text bytes, peak RSS, compiled bytes, why Python))."""
    import pyarrow as pa

    pending = [hook] if hook is not None else []

    def after_batch(_disk_bytes: int) -> None:
        if pending:
            pending.pop()(n)

    counted = count_shards(group, options, after_batch if pending else None)
    table = pa.table({"token": pa.array(list(counted.counts), pa.binary()), "count": pa.array(list(counted.counts.values()), pa.int64())})
    stats = (counted.text_bytes, counted.peak_rss, counted.compiled_bytes, counted.python_why)
    return table, stats  # (the tasks' processor time is Ray's to report)


def _add(a, b):
    """Reduce: two tables of counts -> one, equal tokens added up (in Arrow, not Python)."""
    import pyarrow as pa

    summed = pa.concat_tables([a, b]).group_by("token").aggregate([("count", "sum")])
    return pa.table({"token": summed.column("token"), "count": summed.column("count_sum")})
