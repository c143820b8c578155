"""Encoding on Ray gives the array of encoding here, id for id, and a worker killed mid-run loses or doubles no document.

One local cluster of 2 CPUs (two worker processes at a time) serves the module, started as `bpe encode
--ray local` starts one; the package is shipped to its workers (runtime_env py_modules), so they run
this very code. A worker is killed by a hook the task calls after its first batch: SIGKILL, once.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import numpy as np
import pytest
from test_encode_files import SPECIAL, expected, write_inputs

from bpe import Tokenizer, count_inputs, pretokenize, train
from bpe.cli import main
from bpe.files.ids import MANIFEST, load_ids, read_ids
from bpe.tokenizer.encode_files import encode_files

pytestmark = pytest.mark.ray
ray = pytest.importorskip("ray")
ray_encode = pytest.importorskip("bpe.tokenizer.ray_encode")
ray_count = pytest.importorskip("bpe.data.ray_count")


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    from test_encode_files import DOCS

    text = "\n".join(DOCS) * 4
    return Tokenizer.from_training(train(pretokenize(text, special_tokens=[SPECIAL]), 60, special_tokens=[SPECIAL]))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict:
    return write_inputs(tmp_path_factory.mktemp("inputs"))


def want(tok: Tokenizer, inputs: dict) -> list[int]:
    eot = tok.ids[SPECIAL.encode()]
    return [i for _, documents in inputs.values() for i in expected(tok, documents, eot)]


def kill_once(marker: Path, shard: int):
    """A hook that kills the worker encoding shard `shard`, the first time only (the marker file goes with it)."""
    marker.write_text("kill")
    where = str(marker)

    def hook(index: int) -> None:
        if index != shard:
            return
        try:
            os.unlink(where)  # atomic: one attempt only finds it
        except FileNotFoundError:
            return
        os.kill(os.getpid(), signal.SIGKILL)

    return hook


def test_a_folder_of_shards_holds_the_local_array_for_every_format_in_input_order(cluster, tok, inputs, tmp_path):
    paths = [path for path, _ in inputs.values()]
    local = encode_files(tok, paths, tmp_path / "local.npy", workers=1)
    done = ray_encode.encode_on_ray(tok, paths, tmp_path / "ids", None, chunk_bytes=48)  # shards of ~48 bytes: many tasks
    assert done.tasks > 10 and done.shards and done.lost == 0
    manifest = json.loads((tmp_path / "ids" / MANIFEST).read_text())
    assert len(manifest["shards"]) == done.tasks and manifest["count"] == local.tokens == done.tokens
    assert load_ids(tmp_path / "ids").tolist() == np.load(tmp_path / "local.npy").tolist() == want(tok, inputs)
    assert [i for block in read_ids(tmp_path / "ids" / MANIFEST, block=5) for i in block] == want(tok, inputs)
    assert load_ids(tmp_path / "ids").dtype == np.uint16
    assert (done.documents, done.text_bytes) == (local.documents, local.text_bytes)
    assert set(done.phases) == {"connect", "cut", "tokenizer to the cluster", "encode", "manifest"}
    assert not [p.name for p in (tmp_path / "ids").iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("name", ["ids.npy", "ids.bin"])
def test_joined_into_one_file_it_is_the_local_file_byte_for_byte(cluster, tok, inputs, tmp_path, name):
    paths = [path for path, _ in inputs.values()]
    encode_files(tok, paths, tmp_path / f"local-{name}", workers=1)
    seen = []
    ray_encode.encode_on_ray(tok, paths, tmp_path / name, None, chunk_bytes=48, progress=lambda done, total: seen.append((done, total)))
    assert (tmp_path / name).read_bytes() == (tmp_path / f"local-{name}").read_bytes()
    if name.endswith(".bin"):
        assert Path(f"{tmp_path / name}.json").read_text() == Path(f"{tmp_path / f'local-{name}'}.json").read_text()
    total = sum(p.stat().st_size for p in paths)
    assert seen[-1] == (total, total) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [name, f"local-{name}"] + [f"{n}.json" for n in (name, f"local-{name}") if n.endswith(".bin")]
    )


def test_uint32_when_an_id_does_not_fit_in_16_bits(cluster, tmp_path):
    big = Tokenizer({i: bytes([i]) for i in range(256)} | {70_000: b"ab"}, [(b"a", b"b")], [])
    (tmp_path / "t.txt").write_text("abab c" * 100)
    ray_encode.encode_on_ray(big, [tmp_path / "t.txt"], tmp_path / "ids", None, chunk_bytes=64)
    array = load_ids(tmp_path / "ids")
    assert array.dtype == np.uint32 and array.tolist() == big.encode("abab c" * 100)


def test_a_worker_killed_mid_run_is_run_again_and_no_document_is_lost_or_doubled(cluster, tok, inputs, tmp_path):
    paths = [path for path, _ in inputs.values()]
    hook = kill_once(tmp_path / "kill-shard-3", 3)
    done = ray_encode.encode_on_ray(tok, paths, tmp_path / "ids", None, chunk_bytes=48, hook=hook)
    assert not (tmp_path / "kill-shard-3").exists()  # the hook did kill a worker
    assert done.lost == 1  # the killed attempt's half-written shard, found and removed
    assert load_ids(tmp_path / "ids").tolist() == want(tok, inputs)
    assert done.documents == sum(len(documents) for _, documents in inputs.values())
    assert not [p.name for p in (tmp_path / "ids").iterdir() if p.name.startswith(".")]
    hook = kill_once(tmp_path / "kill-shard-0", 0)  # joined: the first shard, which the rest wait for
    ray_encode.encode_on_ray(tok, paths, tmp_path / "ids.npy", None, chunk_bytes=48, hook=hook)
    assert np.load(tmp_path / "ids.npy").tolist() == want(tok, inputs)


def test_a_worker_killed_while_counting_is_run_again_and_the_counts_are_the_same(cluster, inputs, tmp_path):
    from bpe.data.inputs import Reading

    paths = [path for path, _ in inputs.values()]
    local = count_inputs(paths, special_tokens=[SPECIAL], workers=1, chunk_bytes=48)
    seen = []
    hook = kill_once(tmp_path / "kill-group-1", 1)
    on_ray = ray_count.count_on_ray_with(
        paths, None, Reading(special_tokens=(SPECIAL,), chunk_bytes=48), lambda d, t: seen.append((d, t)), hook
    )
    assert not (tmp_path / "kill-group-1").exists()
    assert on_ray.counts == local.counts and on_ray.text_bytes == local.text_bytes
    total = sum(p.stat().st_size for p in paths)
    assert seen[-1] == (total, total)


def test_the_cli_encodes_on_ray_and_decodes_the_folder_as_one_array(cluster, tok, inputs, tmp_path, capsys):
    tok.save(tmp_path / "tok")
    paths = [str(path) for path, _ in inputs.values()]
    assert main(["encode", str(tmp_path / "tok"), *paths, "--ray", "auto", "--out", str(tmp_path / "ids")]) == 0
    said = capsys.readouterr().out
    assert "time: connect" in said and "Ray: " in said and f"listed in order in {tmp_path / 'ids' / MANIFEST}" in said
    assert main(["encode", str(tmp_path / "tok"), *paths, "--out", str(tmp_path / "local.npy")]) == 0
    for source in (tmp_path / "ids", tmp_path / "local.npy"):
        assert main(["decode", str(tmp_path / "tok"), "--file", str(source), "--out", str(tmp_path / f"{source.stem}.txt")]) == 0
    assert (tmp_path / "ids.txt").read_bytes() == (tmp_path / "local.txt").read_bytes()
    assert main(["encode", str(tmp_path / "tok"), *paths, "--ray", "auto", "--workers", "2", "--out", str(tmp_path / "x")]) == 2
    assert "--workers is for encoding here" in capsys.readouterr().err


def test_a_second_run_into_the_folder_replaces_the_first_whole(cluster, tok, inputs, tmp_path):
    paths = [path for path, _ in inputs.values()]
    ray_encode.encode_on_ray(tok, paths, tmp_path / "ids", None, chunk_bytes=48)
    first = {p.name for p in (tmp_path / "ids").iterdir()}
    ray_encode.encode_on_ray(tok, paths[:1], tmp_path / "ids", None, chunk_bytes=1 << 20)
    left = {p.name for p in (tmp_path / "ids").iterdir()}
    assert not (left - {MANIFEST}) & first  # the first run's shards went once the new manifest was written
    assert load_ids(tmp_path / "ids").tolist() == expected(tok, inputs["plain.txt"][1], tok.ids[SPECIAL.encode()])


def test_a_bad_input_on_ray_is_one_sentence_and_leaves_no_shard(cluster, tok, tmp_path):
    (tmp_path / "bad.jsonl").write_text('{"text": "fine"}\n{"body": "x"}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl line 2 has no field 'text'") as raised:
        ray_encode.encode_on_ray(tok, [tmp_path / "bad.jsonl"], tmp_path / "ids", None)
    assert "Traceback" not in str(raised.value)
    assert list((tmp_path / "ids").iterdir()) == []
