"""Counting on Ray gives the counts of counting locally, bit for bit.

One local cluster (2 CPUs, conftest.cluster) serves the whole module: starting Ray takes seconds.
The package is shipped to the cluster's workers as `bpe count --ray` does it
(runtime_env py_modules), so they run this very code.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bpe import count_inputs
from bpe.cli import main

pytestmark = pytest.mark.ray
ray = pytest.importorskip("ray")
ray_count = pytest.importorskip("bpe.data.ray_count")

SPECIAL = "<|endoftext|>"
DOCUMENTS = ["The cat sat. It's 42!", "naïve café 日本語\n\n  indented", "x" * 200, "emoji 🙂\r\nlines"] * 50


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("ray-inputs")
    (folder / "a.txt").write_text(SPECIAL.join(DOCUMENTS) * 3, encoding="utf-8")
    (folder / "b.jsonl.gz").write_bytes(gzip.compress("".join(json.dumps({"text": d}) + "\n" for d in DOCUMENTS).encode()))
    pq.write_table(pa.table({"text": DOCUMENTS}), folder / "c.parquet", row_group_size=30)
    return [folder / "a.txt", folder / "b.jsonl.gz", folder / "c.parquet"]


def test_ray_counts_equal_local_counts_bit_for_bit(cluster, inputs):
    local = count_inputs(inputs, special_tokens=[SPECIAL], workers=1, chunk_bytes=4096)
    # small shards, so there are many map tasks and the reduce tree has several levels
    on_ray = ray_count.count_on_ray(inputs, None, special_tokens=[SPECIAL], chunk_bytes=4096)
    assert on_ray.workers > 2
    assert on_ray.counts == local.counts
    assert on_ray.text_bytes == local.text_bytes
    assert on_ray.inputs == local.inputs


def test_ray_map_tasks_count_with_the_compiled_path_and_say_so(cluster, inputs):

    from bpe.text import gigatoken

    if gigatoken.unavailable("gpt2") is not None:
        pytest.skip(gigatoken.unavailable("gpt2"))
    on_ray = ray_count.count_on_ray(inputs, None, special_tokens=[SPECIAL], chunk_bytes=4096)
    python = count_inputs(inputs, special_tokens=[SPECIAL], workers=1, compiled=False)
    here = count_inputs(inputs, special_tokens=[SPECIAL], workers=1)  # the core's scanner, or gigatoken without it
    assert on_ray.counts == python.counts
    assert on_ray.compiled_bytes == on_ray.text_bytes and on_ray.counted_by() == here.counted_by()
    assert here.counted_by().endswith("(compiled)")
    assert ray_count.count_on_ray(inputs, None, special_tokens=[SPECIAL], compiled=False).counted_by() == python.counted_by()


def test_cli_count_on_ray_writes_the_same_counts_file(cluster, inputs, tmp_path):
    paths = [str(p) for p in inputs]
    assert main(["count", *paths, "--special-token", SPECIAL, "--workers", "1", "--out", str(tmp_path / "local.parquet")]) == 0
    assert main(["count", *paths, "--special-token", SPECIAL, "--ray", "auto", "--out", str(tmp_path / "ray.parquet")]) == 0
    assert (tmp_path / "ray.parquet").read_bytes() == (tmp_path / "local.parquet").read_bytes()


def test_a_bad_input_on_ray_is_one_sentence(cluster, tmp_path):
    (tmp_path / "bad.jsonl").write_text('{"text": "fine"}\n{"body": "x"}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl line 2 has no field 'text'") as raised:
        ray_count.count_on_ray([tmp_path / "bad.jsonl"], None)
    assert "Traceback" not in str(raised.value)


def test_no_input_text_gives_no_counts(cluster, tmp_path):
    (tmp_path / "empty.txt").write_text("")
    assert ray_count.count_on_ray([tmp_path / "empty.txt"], None).counts == {}


def test_shards_are_dealt_into_groups_of_about_equal_size():
    from bpe.data.inputs import Input, Shard

    source = Input(Path("x"), "text", "", 100)
    sizes = [50, 10, 10, 10, 10, 5, 5]
    groups = ray_count._groups([Shard(source, 0, s, s) for s in sizes], 2)
    assert sorted(sum(s.size for s in g) for g in groups) == [50, 50]
    assert len(ray_count._groups([Shard(source, 0, 1, 1)], 8)) == 1
