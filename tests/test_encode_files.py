"""`bpe encode TOKENIZER INPUT... --out ids.npy`: an array of ids that is encode() of each document, plus the end-of-text id,
for every input format and any number of workers; tiktoken's ids on real documents; bpe decode streams it back.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import re
import signal
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from conftest import interruptible

from bpe import Tokenizer, pretokenize, train
from bpe.cli import main
from bpe.data.corpora import stdlib_prose
from bpe.files.ids import read_ids
from bpe.tokenizer.encode_files import encode_files

SPECIAL = "<|endoftext|>"
DOCS = [
    "The quick brown fox jumps over the lazy dog. It's the dog's day!",
    f"Numbers 12345 and 3.14159{SPECIAL}a second story after the token.",
    "naïve café — 日本語 🙂 ünïcödé\n\n  spaces   and\ttabs\r\n",
    "",
    "def f(x):\n    return x ** 2  # squares\n" * 3,
]
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    text = "\n".join(DOCS) * 4
    return Tokenizer.from_training(train(pretokenize(text, special_tokens=[SPECIAL]), 60, special_tokens=[SPECIAL]))


def write_inputs(folder: Path) -> dict[str, tuple[Path, list[str | bytes]]]:
    """One file of each format: its path, and its documents as encode() should see them (a text file is one, as bytes)."""
    folder.mkdir(parents=True, exist_ok=True)
    text = "\n".join(DOCS).encode() + b"caf\xe9 au lait\n"  # invalid UTF-8 inside a text file
    cut_short = text + "日本".encode()[:-1]  # and a character cut short at its end
    records = [json.dumps({"text": d}) + "\n" for d in DOCS]
    files = {
        "plain.txt": (cut_short, [cut_short]),
        "plain.txt.gz": (gzip.compress(text), [text]),
        "plain.txt.bz2": (bz2.compress(text), [text]),
        "plain.txt.xz": (lzma.compress(text), [text]),
        "plain.txt.zst": (zstandard.ZstdCompressor().compress(text), [text]),
        "records.jsonl": ("".join(records).encode(), DOCS),
        "records.jsonl.gz": (gzip.compress("".join(records).encode()), DOCS),
    }
    found = {}
    for name, (data, documents) in files.items():
        (folder / name).write_bytes(data)
        found[name] = (folder / name, documents)
    table = pa.table({"text": DOCS + [None], "id": list(range(len(DOCS) + 1))})
    pq.write_table(table, folder / "rows.parquet", row_group_size=2)
    found["rows.parquet"] = (folder / "rows.parquet", DOCS)
    binary = pa.table({"text": pa.array([d.encode() for d in DOCS], pa.binary())})
    pq.write_table(binary, folder / "bytes.parquet", row_group_size=3)
    found["bytes.parquet"] = (folder / "bytes.parquet", DOCS)
    return found


def expected(tok: Tokenizer, documents, eot: int | None, **options) -> list[int]:
    ids = []
    for document in documents:
        ids += tok.encode(document, **options) + ([eot] if eot is not None else [])
    return ids


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return write_inputs(tmp_path_factory.mktemp("inputs"))


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize(
    "name",
    [
        "plain.txt",
        "plain.txt.gz",
        "plain.txt.bz2",
        "plain.txt.xz",
        "plain.txt.zst",
        "records.jsonl",
        "records.jsonl.gz",
        "rows.parquet",
        "bytes.parquet",
    ],
)
def test_the_array_is_encode_of_each_document_and_the_eot_for_every_format_and_worker_count(tok, inputs, tmp_path, name, workers):
    path, documents = inputs[name]
    out = tmp_path / "ids.npy"
    done = encode_files(tok, [path], out, workers=workers, chunk_bytes=64, parallel_min_bytes=0)  # shards of ~64 bytes
    eot = tok.ids[SPECIAL.encode()]
    assert np.load(out).tolist() == expected(tok, documents, eot)
    assert done.documents == len(documents) and done.tokens == len(np.load(out))
    assert done.workers == (workers if workers == 1 or len(list(read_shards(path))) > 1 else 1)
    assert np.load(out, mmap_mode="r").dtype == np.uint16


def test_workers_encode_with_the_encoder_the_caller_chose(tok, inputs, tmp_path, monkeypatch):
    from test_core_pretokenize import switch_the_core_off

    from bpe.core import core, missing

    if core is None:
        pytest.skip(f"the compiled core is absent: {missing}")
    # the workers' forkserver has the environment of whichever call started it (tests/test_core_pretokenize.py's twin)
    path, documents = inputs["records.jsonl"]
    for core_off, encoder in ((True, "Python (encoder.py)"), (False, "compiled (bpe._core)")):
        with monkeypatch.context() as m:
            if core_off:
                switch_the_core_off(m)
            done = encode_files(tok, [path], tmp_path / "ids.npy", workers=2, chunk_bytes=64, parallel_min_bytes=0)
        assert done.workers == 2 and done.encoder == encoder
        assert np.load(tmp_path / "ids.npy").tolist() == expected(tok, documents, tok.ids[SPECIAL.encode()])


def read_shards(path: Path):
    from bpe.data.inputs import Reading, describe, shards

    return shards(describe(path), Reading(chunk_bytes=64, special_tokens=(SPECIAL,)))


def test_every_format_at_once_in_input_order_the_same_in_one_process_and_in_three(tok, inputs, tmp_path):
    paths = [path for path, _ in inputs.values()]
    eot = tok.ids[SPECIAL.encode()]
    want = [i for _, documents in inputs.values() for i in expected(tok, documents, eot)]
    for workers in (1, 3):
        out = tmp_path / f"ids{workers}.bin"
        done = encode_files(tok, paths, out, workers=workers, chunk_bytes=48, parallel_min_bytes=0)
        assert list(np.fromfile(out, dtype=np.uint16)) == want
        meta = json.loads(Path(str(out) + ".json").read_text())
        assert (meta["dtype"], meta["count"], meta["eot"]) == ("uint16", len(want), eot) and done.workers == workers
        assert [i for block in read_ids(out, block=7) for i in block] == want


def test_special_token_text_can_be_plain_text_and_the_eot_left_out_or_chosen(tok, inputs, tmp_path):
    path, documents = inputs["records.jsonl"]
    out = tmp_path / "ids.npy"
    encode_files(tok, [path], out, special="text", eot=None, workers=2, chunk_bytes=40, parallel_min_bytes=0)
    assert np.load(out).tolist() == expected(tok, documents, None, allowed_special=(), disallowed_special=())
    with pytest.raises(
        ValueError, match="records.jsonl: the text spells the special token '<\\|endoftext\\|>', which this tokenizer refuses"
    ):
        encode_files(tok, [path], out, special="refuse", workers=2, chunk_bytes=40, parallel_min_bytes=0)
    assert np.load(out).tolist() == expected(tok, documents, None, allowed_special=(), disallowed_special=())  # the old file, whole
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file, no worker's part


def test_uint32_when_an_id_does_not_fit_in_16_bits(tmp_path):
    big = Tokenizer({i: bytes([i]) for i in range(256)} | {70_000: b"ab"}, [(b"a", b"b")], [])
    (tmp_path / "t.txt").write_text("abab c")
    encode_files(big, [tmp_path / "t.txt"], tmp_path / "ids.npy")
    array = np.load(tmp_path / "ids.npy")
    assert array.dtype == np.uint32 and array.tolist() == big.encode("abab c")


# ---------------------------------------------------------------------------
# tiktoken's ids on real documents


@pytest.fixture(scope="module")
def real_documents(tmp_path_factory, cs336) -> tuple[Path, list[str]]:
    prose = stdlib_prose(400_000).split("\n\n")
    corpus = (cs336 / "corpus.en").read_text(encoding="utf-8")[:200_000].split("\n\n")
    documents = [d for d in prose + corpus if d.strip()]
    path = tmp_path_factory.mktemp("real") / "docs.jsonl"
    path.write_text("".join(json.dumps({"text": d}) + "\n" for d in documents))
    return path, documents


def tiktoken_script(enc, documents: list[str]) -> list[int]:
    """What a user's tiktoken script writes: encode_ordinary_batch over the documents, each followed by eot."""
    ids = []
    for doc in enc.encode_ordinary_batch(documents, num_threads=2):
        ids += doc + [enc.eot_token]
    return ids


def test_gpt2_ids_equal_tiktokens_on_real_documents(real_documents, tiktoken_gpt2, gpt2, tmp_path):
    path, documents = real_documents
    tok = Tokenizer.from_openai("gpt2", download=False)
    encode_files(tok, [path], tmp_path / "ids.npy", special="text", workers=2, parallel_min_bytes=0, chunk_bytes=1 << 16)
    assert np.load(tmp_path / "ids.npy").tolist() == tiktoken_script(tiktoken_gpt2, documents)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_cl100k_and_o200k_ids_equal_tiktokens_on_real_documents(real_documents, openai_encodings, name, tmp_path):
    path, documents = real_documents
    tok = Tokenizer.from_openai(name, download=False)
    encode_files(tok, [path], tmp_path / "ids.npy", special="text", workers=2, parallel_min_bytes=0, chunk_bytes=1 << 16)
    ids = np.load(tmp_path / "ids.npy")
    assert ids.dtype == np.uint32 and ids.tolist() == tiktoken_script(openai_encodings[name], documents)


# ---------------------------------------------------------------------------
# the command line


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def folder(tok, tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("tok")
    tok.save(directory)
    return directory


def test_bpe_encode_writes_the_array_and_says_what_it_did(folder, tok, inputs, tmp_path):
    path, documents = inputs["records.jsonl"]
    code, out, err = run("encode", str(folder), str(path), "--out", str(tmp_path / "ids.npy"))
    assert code == 0, err
    assert np.load(tmp_path / "ids.npy").tolist() == expected(tok, documents, tok.ids[SPECIAL.encode()])
    assert f"encoded {len(documents)} documents" in out and "bytes per token" in out and "MB/s" in out
    assert "special-token text: encoded as special tokens; after each document: <|endoftext|>" in out
    assert "encoder: " in out and "peak memory" in out and "uint16" in out


def test_bpe_decode_streams_an_array_or_a_text_of_ids_back_to_the_bytes(folder, tok, inputs, tmp_path):
    path, _ = inputs["plain.txt"]
    assert run("encode", str(folder), str(path), "--out", str(tmp_path / "ids.npy"), "--no-eot")[0] == 0
    data = path.read_bytes()
    for source in ("ids.npy",):
        assert run("decode", str(folder), "--file", str(tmp_path / source), "--out", str(tmp_path / "back.txt"))[0] == 0
        assert (tmp_path / "back.txt").read_bytes() == data
    (tmp_path / "ids.txt").write_text(" ".join(map(str, tok.encode(data))) + "\n")
    assert run("decode", str(folder), "--file", str(tmp_path / "ids.txt"), "--out", str(tmp_path / "back2.txt"))[0] == 0
    assert (tmp_path / "back2.txt").read_bytes() == data


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--pattern", "cl100k", "--text", "hi"],
            "--pretokenizer cl100k: .* records its own pre-tokenizer \\(gpt2\\); leave the option out",
        ),
        (["--pattern", "([", "--text", "hi"], "The pre-tokenizer regex '\\(\\[' does not compile"),
        (["--text", "hi", "--workers", "2"], "--workers is for encoding INPUT files into an array"),
        (["--text", "hi", "--out", "{TMP}/x.npy"], "--out is for encoding INPUT files into an array"),
        (["{IN}"], "Name where the ids go: --out ids.npy"),
        (["{IN}", "--out", "{TMP}/ids.csv"], "ids.csv: the ids are written as .npy \\(NumPy\\) or .bin"),
        (["{IN}", "--out", "{TMP}/ids.npy", "--text", "x"], "Give INPUT files to encode into --out, or --text/--file"),
        (["{IN}", "--out", "{TMP}/ids.npy", "--eot", "<|nope|>"], "--eot <\\|nope\\|>: not a special token of .* --special-token adds one"),
        (
            ["{IN}", "--out", "{TMP}/ids.npy", "--special-text", "refuse"],
            "records.jsonl: the text spells the special token '<\\|endoftext\\|>'",
        ),
    ],
)
def test_an_option_the_tokenizer_or_the_command_cannot_honour_is_one_sentence(folder, inputs, tmp_path, argv, message):
    path, _ = inputs["records.jsonl"]
    code, _, err = run("encode", str(folder), *(a.format(IN=path, TMP=tmp_path) for a in argv))
    assert code == 2 and err.count("\n") == 1, err
    assert re.search(message, err), err


def test_bpe_encode_of_a_text_says_when_special_token_text_became_a_special_token(folder):
    code, out, err = run("encode", str(folder), "--text", f"hi{SPECIAL}there")
    assert code == 0 and "note: special-token text in the input was encoded as special tokens (<|endoftext|> -> " in err
    code, out, err = run("encode", str(folder), "--text", f"hi{SPECIAL}there", "--special-text", "text")
    assert code == 0 and err == ""


def test_a_truncated_array_or_a_bin_without_its_dtype_is_refused_naming_it(folder, tok, tmp_path):
    (tmp_path / "t.txt").write_text("low lower")
    assert run("encode", str(folder), str(tmp_path / "t.txt"), "--out", str(tmp_path / "ids.npy"))[0] == 0
    data = (tmp_path / "ids.npy").read_bytes()
    (tmp_path / "cut.npy").write_bytes(data[:-1])
    code, _, err = run("decode", str(folder), "--file", str(tmp_path / "cut.npy"))
    assert code == 2 and "cut.npy: ends after" in err and "it is truncated" in err
    (tmp_path / "raw.bin").write_bytes(data[128:])
    code, _, err = run("decode", str(folder), "--file", str(tmp_path / "raw.bin"))
    assert code == 2 and "raw.bin: a raw .bin needs raw.bin.json beside it" in err
    (tmp_path / "ids.txt").write_text("15 ٣ 7")
    code, _, err = run("decode", str(folder), "--file", str(tmp_path / "ids.txt"))
    assert code == 2 and "'٣' is not a token id" in err


@pytest.mark.parametrize(
    ("shape", "header_bytes"),
    [("('x',)", None), ("(-5,)", None), ("(True,)", None), ("(3,)", 60_000)],
)
def test_a_damaged_npy_header_is_one_sentence_naming_the_file(folder, tmp_path, shape, header_bytes):
    text = f"{{'descr': '<u2', 'fortran_order': False, 'shape': {shape}, }}".ljust(header_bytes or 0) + "\n"
    (tmp_path / "bad.npy").write_bytes(b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode() + b"\x01\x00" * 3)
    code, out, err = run("decode", str(folder), "--file", str(tmp_path / "bad.npy"))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"error: {tmp_path / 'bad.npy'}: ") and ("is no number of ids" in err or "header cannot be read" in err), err


def test_a_full_disk_while_workers_encode_names_the_output(tok, tmp_path, small_disk):
    """The workers write their shards beside the output: the disk fills in a worker, and the sentence names the output."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(
        "".join(f"w{i:05d}x low lower\n" for i in range(60_000))
    )  # 1 MB of text: shards of 256 KB, each more ids than the disk holds
    out = small_disk / "ids.npy"
    with pytest.raises(ValueError) as refused:
        encode_files(tok, [str(corpus)], out, workers=2, parallel_min_bytes=0, chunk_bytes=1 << 18)
    assert str(refused.value) == f"Cannot write {out}: the disk is full."
    assert list(small_disk.iterdir()) == []  # no shard left behind


@pytest.mark.parametrize("suffix", [".txt", ".txt.zst"])
def test_a_document_cut_where_no_cut_is_safe_loses_no_byte_and_says_so(tok, tmp_path, monkeypatch, suffix):
    from bpe.data import inputs

    monkeypatch.setattr(inputs, "MAX_STRETCH", 1 << 14)
    text = ("naïve" + "x7" * 20_000 + "日本").encode() * 4  # no whitespace: no safe place to cut
    path = tmp_path / f"long{suffix}"
    path.write_bytes(zstandard.ZstdCompressor().compress(text) if suffix.endswith(".zst") else text)
    with pytest.warns(inputs.CutWarning, match="were cut anyway"):
        encode_files(tok, [str(path)], tmp_path / "ids.npy", eot=None, workers=1, chunk_bytes=1 << 13)
    assert b"".join(tok.decode_bytes(list(block)) for block in read_ids(tmp_path / "ids.npy")) == text


# ---------------------------------------------------------------------------
# flat memory


def peak_of(script: str) -> int:
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


def test_encoding_and_decoding_a_file_four_times_bigger_takes_no_more_memory(tok, folder, tmp_path):
    """The process's peak (ru_maxrss, after a warm-up) for 3 MB and 12 MB of input: within 25 MB of each other."""
    unit = ("\n".join(DOCS) + "\n").encode()
    for mb in (3, 12):
        (tmp_path / f"in{mb}.txt").write_bytes(unit * (mb * 1_000_000 // len(unit)))
    peaks = {}
    for mb in (3, 12):
        script = f"""
import resource, sys
from bpe.cli import main
assert main(["encode", {str(folder)!r}, {str(tmp_path / f"in{mb}.txt")!r}, "--out", {str(tmp_path / f"ids{mb}.npy")!r}, "--workers", "1", "--no-eot"]) == 0
with open({str(tmp_path / f"out{mb}.txt")!r}, "w") as f:
    sys.stdout = f
    assert main(["decode", {str(folder)!r}, "--file", {str(tmp_path / f"ids{mb}.npy")!r}, "--out", {str(tmp_path / f"back{mb}.txt")!r}]) == 0
sys.stdout = sys.__stdout__
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""
        peaks[mb] = peak_of(script) * 1024
        assert (tmp_path / f"back{mb}.txt").read_bytes() == (tmp_path / f"in{mb}.txt").read_bytes()
    assert peaks[12] - peaks[3] < 25 << 20, peaks


# ---------------------------------------------------------------------------
# signals: the old array, no worker left, no temporary file (but the main process's own after SIGKILL)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGINT, 130), (signal.SIGKILL, -signal.SIGKILL)])
def test_a_signal_while_workers_encode_ends_every_process_and_keeps_the_old_array(folder, tmp_path, sig, code):
    from test_faults import PIPE_CLOSES, alive, at_least, descendants, wait_for

    big = tmp_path / "big.txt"
    big.write_text("the lowest lower newest widest naïve café 日本 hello world 12345\n" * 400_000)  # ~26 MB
    out = tmp_path / "ids.npy"
    np.save(out, np.arange(5, dtype=np.uint16))
    before = out.read_bytes()
    argv = [sys.executable, "-m", "bpe", "encode", str(folder), str(big), "--out", str(out), "--workers", "2"]
    slow = os.environ | {"BPE_CORE": "0"}  # the Python encoder: seconds of work, so the signal always finds the workers busy
    proc, tree = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=slow, preexec_fn=interruptible), {}
    try:
        tree = wait_for(lambda: at_least(4, descendants(proc.pid)), 60, "starting two workers")  # + forkserver, resource tracker
        wait_for(lambda: [p for p in tmp_path.iterdir() if ".part" in p.name], 60, "a worker writing its shard")
        os.kill(proc.pid, sig)
        try:
            _, err = proc.communicate(timeout=PIPE_CLOSES)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the caller's pipe was still open {PIPE_CLOSES} s after {sig.name}: {descendants(proc.pid)}") from None
        assert proc.returncode == code, err
        wait_for(lambda: not alive(tree), PIPE_CLOSES, f"the end of {tree}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in alive(tree):
            os.kill(pid, signal.SIGKILL)
    assert out.read_bytes() == before
    left = sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp"))
    if sig == signal.SIGKILL:  # the main process's own temporary array cannot be removed by it; the workers' parts are
        assert all(name.startswith(".ids.npy.") and ".part" not in name for name in left) and len(left) <= 1, left
    else:
        assert left == []


# ---------------------------------------------------------------------------
# a folder of shards (what bpe encode --ray writes), read as one array


def write_shards(folder: Path, parts: list[list[int]], counts: list[int] | None = None, names: list[str] | None = None) -> None:
    from bpe.files.ids import MANIFEST, IdsWriter, shards_manifest

    folder.mkdir()
    names = names or [f"ids.{n:05d}.npy" for n in range(len(parts))]
    for name, ids in zip(names, parts):
        if "/" not in name:
            with IdsWriter(folder / name, "uint16") as out:
                out.write(ids)
    shards = [{"file": name, "count": n} for name, n in zip(names, counts or [len(p) for p in parts])]
    (folder / MANIFEST).write_text(json.dumps(shards_manifest("uint16", shards)))


def test_a_folder_of_shards_reads_as_one_array_in_the_manifests_order(tmp_path):
    from bpe.files.ids import load_ids

    write_shards(tmp_path / "ids", [[1, 2, 3], [], [4, 5]], names=["b.npy", "c.npy", "a.npy"])
    assert [i for block in read_ids(tmp_path / "ids", block=2) for i in block] == [1, 2, 3, 4, 5]
    assert load_ids(tmp_path / "ids").tolist() == [1, 2, 3, 4, 5] and load_ids(tmp_path / "ids").dtype == np.uint16
    manifest = json.loads((tmp_path / "ids" / "manifest.json").read_text())
    shards = [np.load(tmp_path / "ids" / s["file"], mmap_mode="r") for s in manifest["shards"]]
    assert np.concatenate(shards).tolist() == [1, 2, 3, 4, 5]  # the reader docs/inputs.md shows: NumPy alone


def test_a_folder_of_shards_that_is_not_whole_is_refused_in_one_sentence(tmp_path):
    from bpe.files.ids import load_ids

    (tmp_path / "none").mkdir()
    with pytest.raises(ValueError, match=r"none: a folder of ids holds manifest.json, which lists its shards"):
        list(read_ids(tmp_path / "none"))
    write_shards(tmp_path / "outside", [[1]], names=["../elsewhere.npy"])
    with pytest.raises(ValueError, match=r"the shard '../elsewhere.npy' is not a file of that folder"):
        list(read_ids(tmp_path / "outside"))
    write_shards(tmp_path / "short", [[1, 2], [3]], counts=[2, 5])
    for read in (lambda p: list(read_ids(p)), load_ids):
        with pytest.raises(ValueError, match=r"ids.00001.npy: holds 1 ids, but manifest.json says 5: the shard is not of this run"):
            read(tmp_path / "short")
    (tmp_path / "short" / "manifest.json").write_text('{"format": "something else"}')
    with pytest.raises(ValueError, match=r"not a manifest of token ids"):
        list(read_ids(tmp_path / "short"))
