"""Every loader under hostile input: a correct load, or one ValueError sentence that names the file.

Never another exception, a hang, memory out of proportion to the input, or corrupt data
accepted. First one reproducer per failure class a fuzzer found (issue 15), then a bounded
fuzz test per loader: valid files of each format mutated (bytes flipped, cut, inserted,
and snippets that broke loaders before: ids of 2**32, 5000-digit numbers, lone surrogates,
deep nesting). Each fuzz test has an explicit max_examples (FUZZ_EXAMPLES) and no deadline.
"""

from __future__ import annotations

import base64
import bz2
import functools
import gzip
import io
import json
import lzma
import os
import signal
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import regex
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_core_encoder import python_twin

from bpe import Tokenizer, count_inputs, pretokenize, train, train_from_counts
from bpe.cli import main
from bpe.data.counts_file import CountsInfo, load_counts, metadata_of, save_counts
from bpe.files import formats, load
from bpe.text.pretokenizers import find_specials, split_on_special

SPECIAL = "<|endoftext|>"
TEXT = "the lowest lower newest widest, it's 12 naïve cafés — 日本 🙂\n\tindented line\n" * 8
SAMPLES = ["Hello world", "the lowest newest", "  spaces and\ttabs\n\n", "naïve 日本 🙂", f"a{SPECIAL}b", ""]
FUZZ_EXAMPLES = int(os.environ.get("BPE_FUZZ_EXAMPLES", "120"))  # per loader in CI; set more to fuzz longer
FUZZ = settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@contextmanager
def no_hang(seconds: int = 20):
    """Fail (rather than wait forever) if the block is still running after `seconds`: a hang detector, not a timing."""

    def stop(*_):
        raise TimeoutError(f"still running after {seconds} s: it hangs")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def one_sentence(call, name: str):
    """call()'s result, or None when it raised a one-line ValueError naming `name`; anything else fails the test."""
    try:
        return call()
    except ValueError as e:
        message = str(e)
        assert "\n" not in message and name in message, message
        return None


def lacks_a_byte(tok: Tokenizer, text: str) -> str | None:
    """The one-line sentence encode() gives for a byte the vocabulary lacks, or None when it encodes."""
    try:
        tok.encode(text)
    except ValueError as e:
        assert "\n" not in str(e) and "lacks" in str(e), e
        return str(e)
    return None


def small_tokenizer() -> Tokenizer:
    corpus = pretokenize(TEXT, special_tokens=[SPECIAL])
    return Tokenizer.from_training(train(corpus, 60, special_tokens=[SPECIAL]))


def tiktoken_text(tok: Tokenizer) -> str:
    return "".join(f"{base64.b64encode(t).decode()} {i}\n" for i, t in tok.vocab.items() if t.decode("utf-8", "replace") != SPECIAL)


def encodes_correctly(tok: Tokenizer) -> None:
    """A loaded tokenizer must encode to ids of its vocabulary that decode to the text (or refuse a byte it lacks),
    the compiled encoder's ids the Python path's."""
    for text in SAMPLES:
        try:
            ids = tok.encode(text)
        except ValueError:
            continue  # a byte the vocabulary lacks: said in one sentence
        assert all(i in tok.vocab for i in ids)
        assert tok._compiled is None or ids == python_twin(tok).encode(text)
        if tok.pretokenizer.spelled in ("gpt2", "gpt4", "cl100k", "o200k", "none"):
            assert tok.decode_bytes(ids) == text.encode()


# ---------------------------------------------------------------------------
# one reproducer per class


def test_ids_of_2_to_the_32_or_more_are_refused_in_every_format(tmp_path):
    tok = small_tokenizer()
    shifted = {i + 2**33: t for i, t in tok.vocab.items()}  # 'wörld' decoded as 'wörnd' when pair keys collided
    with pytest.raises(ValueError, match="from 0 to 2\\*\\*32 - 1"):
        Tokenizer(shifted, tok.merges, [SPECIAL])
    tok.save(tmp_path / "t")
    (tmp_path / "t" / "tokenizer.manifest.json").unlink()  # files edited by hand, as another tool's: no manifest to refuse them
    vocab = json.loads((tmp_path / "t" / "vocab.json").read_text())
    vocab[next(iter(vocab))] = 110 * 2**32
    (tmp_path / "t" / "vocab.json").write_text(json.dumps(vocab))
    with pytest.raises(ValueError, match="vocab.json: the id of .* from 0 to 2\\*\\*32 - 1"):
        Tokenizer.load(tmp_path / "t" / "vocab.json")
    hf = json.loads((tmp_path / "t" / "tokenizer.json").read_text())
    hf["model"]["vocab"]["a"] = 2**32
    (tmp_path / "t" / "tokenizer.json").write_text(json.dumps(hf))
    with pytest.raises(ValueError, match="tokenizer.json: the id of 'a'"):
        Tokenizer.load(tmp_path / "t" / "tokenizer.json")
    path = tmp_path / "big.tiktoken"
    path.write_text(tiktoken_text(tok).replace(" 97\n", f" {2**32}\n"))
    with pytest.raises(ValueError, match="big.tiktoken: line 98: rank 4294967296 is not below 2\\*\\*32"):
        Tokenizer.load(path)


COMPRESS = {
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
    ".zst": zstandard.ZstdCompressor().compress,
}


@pytest.mark.parametrize("suffix", list(COMPRESS))
@pytest.mark.parametrize("name", ["text.txt", "records.jsonl"])
def test_truncated_compressed_inputs_and_trailing_garbage_are_refused(tmp_path, suffix, name):
    text = (json.dumps({"text": TEXT}) + "\n") * 50 if name.endswith("jsonl") else TEXT * 50
    data = COMPRESS[suffix](text.encode())
    path = tmp_path / (name + suffix)
    path.write_bytes(data + data)  # two streams one after another are one text
    assert count_inputs(path, workers=1).counts == count_inputs(_plain(tmp_path, text + text, name), workers=1).counts
    for cut in (1, 7, len(data) // 2):
        path.write_bytes(data[:-cut])
        with pytest.raises(ValueError, match=f"{path.name} is not valid {suffix} data"):
            count_inputs(path, workers=1)
    for garbage in (b"trailing garbage", b"g"):  # gzip said "Not a gzipped file (b'tr')" (issue 26.7)
        path.write_bytes(data + garbage)
        with pytest.raises(
            ValueError, match=rf"{path.name} is not valid \{suffix} data \(bytes follow the end of the compressed data\)\.$"
        ):
            count_inputs(path, workers=1)


def _plain(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / ("plain-" + name)
    path.write_text(text, encoding="utf-8")
    return path


def counts_file(path: Path, meta: bytes | None = None, tokens=(b"a", b"b"), counts=(3, 2)) -> Path:
    table = pa.table({"token": pa.array(list(tokens), pa.binary()), "count": pa.array(list(counts), pa.int64())})
    if meta is None:
        info = CountsInfo("gpt2", (), (), 0, sum(counts), len(tokens))
        meta = json.dumps(metadata_of(info)).encode()
    pq.write_table(table.replace_schema_metadata({b"bpe.counts": meta}), path)
    return path


@pytest.mark.parametrize(
    "meta", [b"[]", b"5", b"null", b"[" * 990 + b"]" * 990, b'{"pretokenizer": "gpt2", "unique": ' + b"9" * 5000 + b"}"]
)
def test_counts_metadata_that_is_json_but_not_an_object_or_too_deep_is_one_sentence(tmp_path, meta):
    path = counts_file(tmp_path / "c.parquet", meta)
    with pytest.raises(ValueError, match="c.parquet has unreadable bpe.counts metadata"):
        load_counts(path)


def test_a_jsonl_line_nested_too_deeply_or_with_a_5000_digit_number(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"text": "ok"}\n' + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ValueError, match="deep.jsonl line 2 is JSON nested too deeply"):
        count_inputs(path, workers=1)
    path.write_text('{"text": "ok", "n": ' + "9" * 5000 + "}\n")
    with pytest.raises(ValueError, match="deep.jsonl line 1 holds a number of thousands of digits"):
        count_inputs(path, workers=1)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"pattern": []}, "Unknown pre-tokenizer|not list"),
        ({"merges": None}, "merges must be a list"),
        ({"special_tokens": 123}, "special_tokens must be a list of strings, not int"),
        ({"special_tokens": ["\ud800"]}, "lone surrogate"),
        ({"counts": 5}, "counts must be a list"),
        ({"vocab": [b"a"]}, "vocab must map token ids to bytes"),
    ],
)
def test_wrong_kinds_of_tokenizer_arguments_are_value_errors(changes, message):
    args = {"vocab": {i: bytes([i]) for i in range(256)}, "merges": [], **changes}
    with pytest.raises(ValueError, match=message):
        Tokenizer(**args)


class CountingRanks(dict):
    """A rank table that counts its look-ups, to show the work of recovering merges grows as n log n, not n^2."""

    lookups = 0

    def get(self, key, default=None):
        CountingRanks.lookups += 1
        return super().get(key, default)


def test_recovering_merges_from_a_long_tiktoken_token_is_not_quadratic():
    ranks = CountingRanks({bytes([b]): b for b in range(256)})
    ranks[b"aa"] = 256
    ranks[b"a" * 30_000] = 257
    CountingRanks.lookups = 0
    with pytest.raises(ValueError, match="cannot be made by joining two tokens"):
        load.merges_from_ranks(ranks)
    assert CountingRanks.lookups < 200_000  # rescanning every pair after each join: ~ 30,000**2 / 2 = 450 million


def test_encoding_text_that_ends_in_a_long_repetitive_special_token():
    special = "a" * 5000
    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [], [special])
    with no_hang(20):  # the regex split took 26 s here
        ids = tok.encode("x" + "a" * 4999 + special)
    assert ids == [ord("x"), 256] + [ord("a")] * 4999  # the leftmost occurrence, as a regex split finds it


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="ab<|>", max_size=30),
    tokens=st.lists(st.text(alphabet="ab<|>", min_size=1, max_size=5), min_size=1, max_size=4, unique=True),
)
def test_finding_special_tokens_with_str_find_equals_the_regex_alternation(text, tokens):
    alternation = regex.compile("|".join(regex.escape(t) for t in sorted(tokens, key=len, reverse=True)))
    assert [(m.start(), m.group()) for m in alternation.finditer(text)] == list(find_specials(text, tokens))
    assert split_on_special(text, tokens) == alternation.split(text)


@pytest.mark.parametrize("name", ["ranks.tiktoken", "tokenizer.json"])
def test_a_fifo_or_a_device_in_a_directory_is_not_read(tmp_path, name):
    os.mkfifo(tmp_path / name)
    with no_hang(20), pytest.raises(ValueError, match="no tokenizer here"):
        Tokenizer.load(tmp_path)
    os.unlink(tmp_path / name)
    (tmp_path / name).symlink_to("/dev/zero")
    with no_hang(20), pytest.raises(ValueError, match="no tokenizer here"):
        Tokenizer.load(tmp_path)
    with pytest.raises(ValueError, match="a device, not a file"):
        Tokenizer.load(tmp_path / name)
    with pytest.raises(ValueError, match="is a device, not a file"):
        count_inputs(tmp_path / name, workers=1)


def test_a_counts_file_of_millions_of_one_token_is_refused_at_its_first_batch(tmp_path):
    rows = 2_000_000  # dictionary + run-length encoded: a few KB on disk
    meta = json.dumps(metadata_of(CountsInfo("gpt2", (), (), 0, rows, rows))).encode()
    table = pa.table({"token": pa.array([b"a"] * rows, pa.binary()), "count": pa.array([1] * rows, pa.int64())})
    path = tmp_path / "rle.parquet"
    pq.write_table(table.replace_schema_metadata({b"bpe.counts": meta}), path, use_dictionary=True)
    del table
    assert path.stat().st_size < 200_000
    with pytest.raises(ValueError, match="rle.parquet lists a token twice"):
        load_counts(path)


def test_the_positions_trainer_refuses_counts_that_expand_past_its_limit(tmp_path):
    path = tmp_path / "big.parquet"
    save_counts(path, {b"hello": 10**9, b"world": 3}, CountsInfo("gpt2", ()))
    with pytest.raises(ValueError, match="positions trainer keeps every byte of every occurrence"):
        train_from_counts(path, 300, algorithm="positions")
    assert train_from_counts(path, 260, algorithm="heap")[1][0] == (b"l", b"o")


def test_5000_digit_numbers_are_one_sentence_in_every_format(tmp_path, capsys):
    tok = small_tokenizer()
    tok.save(tmp_path / "t")
    (tmp_path / "t" / "tokenizer.manifest.json").unlink()  # files edited by hand, as another tool's: no manifest to refuse them
    huge = "9" * 5000
    for name in ("vocab.json", "tokenizer.json", "tokenizer.bpe.json"):
        path = tmp_path / "t" / name
        original = path.read_text()
        path.write_text(original.replace("256", huge, 1) if "256" in original else original.replace("1", huge, 1))
        with pytest.raises(ValueError, match=f"{name}: it holds a number of thousands of digits"):
            Tokenizer.load(path)
        path.write_text(original)
    path = tmp_path / "r.tiktoken"
    path.write_text(tiktoken_text(tok).replace(" 97\n", f" {huge}\n"))
    with pytest.raises(ValueError, match="r.tiktoken: line 98: rank 9{20}... is not below 2"):
        Tokenizer.load(path)
    assert main(["decode", str(tmp_path / "t"), huge]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a token id" in err


def test_lone_surrogates_and_duplicate_added_tokens_name_the_file(tmp_path):
    tok = small_tokenizer()
    tok.save(tmp_path / "t")
    (tmp_path / "t" / "tokenizer.manifest.json").unlink()  # files edited by hand, as another tool's: no manifest to refuse them
    hf_path = tmp_path / "t" / "tokenizer.json"
    hf = json.loads(hf_path.read_text())
    hf["added_tokens"].append(dict(hf["added_tokens"][0]))
    hf_path.write_text(json.dumps(hf))
    with pytest.raises(ValueError, match="tokenizer.json: added token '<\\|endoftext\\|>' is listed twice"):
        Tokenizer.load(hf_path)
    hf["added_tokens"][-1] = {**hf["added_tokens"][0], "content": "\ud800", "id": 9999}
    hf_path.write_text(json.dumps(hf))
    with pytest.raises(ValueError, match="tokenizer.json: token '\\\\ud800' holds a lone surrogate"):
        Tokenizer.load(hf_path)
    vocab_path = tmp_path / "t" / "vocab.json"
    vocab_path.write_text(vocab_path.read_text()[:-1] + ', "\\ud800": 99999}')
    with pytest.raises(ValueError, match="vocab.json: token '\\\\ud800' holds a lone surrogate"):
        Tokenizer.load(vocab_path)
    meta = json.dumps(metadata_of(CountsInfo("gpt2", ("\ud800",), (), 0, 5, 2))).encode()
    path = counts_file(tmp_path / "s.parquet", meta)
    with pytest.raises(ValueError, match="s.parquet has unreadable bpe.counts metadata .*lone surrogate"):
        load_counts(path)


def test_pyarrows_errors_are_one_line(tmp_path, capsys):
    path = counts_file(tmp_path / "c.parquet")
    data = bytearray(path.read_bytes())
    data[20:60] = b"\xff" * 40  # inside the first column chunk
    path.write_bytes(bytes(data))
    assert main(["train", "--from-counts", str(path), "--vocab-size", "300", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    page = tmp_path / "p.parquet"
    page.write_bytes(bytes(data))
    assert one_sentence(lambda: count_inputs(page, workers=1, text_column="token"), "p.parquet") is None


# ---------------------------------------------------------------------------
# fuzzing: mutated files of every format

SNIPPETS = [
    b'"\\ud800"',
    b"4294967296",
    b"18446744073709551616",
    b"9" * 5000,
    b"[" * 1200,
    b"null",
    b"[]",
    b"-1",
    b"1e400",
    b'"',
    b"\n",
    b"\x00",
    b"\xff\xfe",
    b"{}",
    b'""',
    b"#version: 0.2\n",
    b"YWFh 4294967296\n",
    b"\xc4\xa0 t\n",
]
OPS = st.lists(
    st.tuples(
        st.sampled_from(["flip", "delete", "insert", "truncate", "snippet", "duplicate"]),
        st.integers(0, 1 << 20),
        st.integers(0, 255),
        st.integers(1, 64),
        st.sampled_from(SNIPPETS),
    ),
    min_size=1,
    max_size=3,
)


def mutate(data: bytes, ops) -> bytes:
    """Apply a few random edits to data: [('flip', at, byte, length, snippet), ...]."""
    out = bytearray(data)
    for kind, at, byte, length, snippet in ops:
        at = at % (len(out) + 1)
        if kind == "flip" and at < len(out):
            out[at] ^= byte or 1
        elif kind == "delete":
            del out[at : at + length]
        elif kind == "insert":
            out[at:at] = bytes([byte]) * length
        elif kind == "truncate":
            del out[at:]
        elif kind == "snippet":
            out[at : at + length % 8] = snippet
        elif kind == "duplicate":
            out[at:at] = out[at : at + length]
    return bytes(out)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A small tokenizer in every format: {name: bytes}."""
    directory = tmp_path_factory.mktemp("saved")
    tok = small_tokenizer()
    tok.save(directory)
    files = {p.name: p.read_bytes() for p in directory.iterdir()}
    files["ranks.tiktoken"] = tiktoken_text(tok).encode()
    return files


@pytest.mark.parametrize("name", ["tokenizer.json", "tokenizer.bpe.json", "ranks.tiktoken", "vocab.json", "merges.txt"])
@FUZZ
@given(ops=OPS)
def test_fuzz_tokenizer_files(saved, tmp_path_factory, name, ops):
    directory = tmp_path_factory.mktemp("fuzz")
    for other in ("vocab.json", "merges.txt") if name in ("vocab.json", "merges.txt") else ():
        (directory / other).write_bytes(saved[other])
    (directory / name).write_bytes(mutate(saved[name], ops))
    with no_hang(30):
        tok = one_sentence(lambda: Tokenizer.load(directory / name, special_tokens=[SPECIAL]), name)
        files = {n: (directory / n).read_bytes() for n in ("vocab.json", "merges.txt")} if name in ("vocab.json", "merges.txt") else {}
        files[name] = (directory / name).read_bytes()  # GPT-2's pair uploaded together, or the one file
        uploaded = one_sentence(lambda: formats.read_uploads(files), name)
    if tok is not None:
        encodes_correctly(tok)
    if uploaded is not None:
        encodes_correctly(Tokenizer.from_loaded(uploaded))
    out, err = io.StringIO(), io.StringIO()
    with no_hang(30), redirect_stdout(out), redirect_stderr(err):  # the CLI: ids, or one line and exit code 2
        code = main(["encode", str(directory / name), "--text", "Hello world", "--special-token", SPECIAL])
    encodes = tok is not None and lacks_a_byte(tok, "Hello world") is None  # a byte the vocabulary lacks: exit 2, one line
    assert (code, err.getvalue()) == (0, "") if encodes else code == 2 and err.getvalue().count("\n") == 1


@FUZZ
@given(ops=OPS, metadata=st.booleans())
def test_fuzz_counts_files(tmp_path_factory, ops, metadata):
    path = tmp_path_factory.mktemp("counts") / "c.parquet"
    counts = {b"the": 9, b" low": 4, b"est": 2}
    if metadata:  # the JSON settings mutated, the Parquet intact
        meta = json.dumps(metadata_of(CountsInfo("gpt2", (SPECIAL,), (), 10, 15, 3))).encode()
        counts_file(path, mutate(meta, ops), tuple(counts), tuple(counts.values()))
    else:
        save_counts(path, counts, CountsInfo("gpt2", (SPECIAL,)))
        path.write_bytes(mutate(path.read_bytes(), ops))
    loaded = one_sentence(lambda: load_counts(path), "c.parquet")
    if loaded is not None:
        result = one_sentence(lambda: train_from_counts(path, 270), "c.parquet")
        assert result is None or len(result[1]) <= 270 - 256


def _inputs() -> dict[str, bytes]:
    jsonl = "".join(json.dumps({"text": line}) + "\n" for line in TEXT.splitlines(keepends=True)).encode()
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"text": TEXT.splitlines(keepends=True)}), sink)
    made = {"in.txt": TEXT.encode(), "in.jsonl": jsonl, "in.parquet": sink.getvalue().to_pybytes()}
    for suffix, compress in COMPRESS.items():
        made["in.txt" + suffix] = compress(TEXT.encode())
    made["in.jsonl.zst"] = COMPRESS[".zst"](jsonl)
    return made


INPUTS = _inputs()


def strictly(new):
    """The standard library's decompressor objects, stream after stream, every byte used (bz2.decompress and
    lzma.decompress ignore garbage after the first stream; a file that ends in garbage is corrupt)."""

    def decompress(data: bytes) -> bytes:
        out = []
        while data:
            decompressor = new()
            out.append(decompressor.decompress(data))
            if not decompressor.eof:
                raise EOFError("truncated")
            data = decompressor.unused_data
        return b"".join(out)

    return decompress


REFERENCE = {".gz": gzip.decompress, ".bz2": strictly(bz2.BZ2Decompressor), ".xz": strictly(lzma.LZMADecompressor)}


@pytest.mark.parametrize("name", list(INPUTS))
@FUZZ
@given(ops=OPS)
def test_fuzz_input_formats(tmp_path_factory, name, ops):
    path = tmp_path_factory.mktemp("inputs") / name
    data = mutate(INPUTS[name], ops)
    path.write_bytes(data)
    with no_hang(30):
        counted = one_sentence(lambda: count_inputs(path, workers=1, special_tokens=[SPECIAL]), name)
    suffix = Path(name).suffix
    if suffix in REFERENCE and name.startswith("in.txt") and data:  # accepted exactly when the reference decompresses it, to the same text
        try:
            text = REFERENCE[suffix](data)
        except Exception:
            assert counted is None, "corrupt compressed data was accepted"
        else:
            assert counted is not None and counted.counts == pretokenize(text, special_tokens=[SPECIAL]).counts


TOKENS = st.one_of(st.binary(min_size=0, max_size=4), st.text(max_size=3), st.integers(), st.none())
IDS = st.one_of(st.integers(-3, 300), st.integers(2**31, 2**40), st.booleans(), st.text(max_size=2))


@FUZZ
@given(
    vocab=st.one_of(
        st.dictionaries(IDS, TOKENS, max_size=6), st.none(), st.lists(TOKENS, max_size=3), st.just({i: bytes([i]) for i in range(256)})
    ),
    merges=st.one_of(st.none(), st.lists(st.one_of(st.tuples(TOKENS, TOKENS), TOKENS), max_size=3), st.just([(b"a", b"b")])),
    special_tokens=st.one_of(st.none(), st.integers(), st.text(max_size=3), st.lists(st.one_of(st.text(max_size=4), TOKENS), max_size=3)),
    pretokenizer=st.one_of(
        st.sampled_from(["gpt2", "gpt4", "none", "whitespace", "gtp2", "(", "a|", ""]), st.none(), st.lists(st.text(max_size=2), max_size=2)
    ),
)
def test_fuzz_the_tokenizer_constructor(vocab, merges, special_tokens, pretokenizer):
    try:
        tok = Tokenizer(vocab, merges, special_tokens, pretokenizer=pretokenizer)
    except ValueError as e:
        assert "\n" not in str(e)
        return
    encodes_correctly(tok)


@FUZZ
@given(text=st.one_of(st.text(max_size=40), st.binary(max_size=40)), ids=st.lists(IDS, max_size=6), k=st.one_of(st.none(), IDS))
def test_fuzz_encode_and_decode(text, ids, k):
    tok = FIXED
    for call in (lambda: tok.encode(text, k), lambda: tok.decode(ids), lambda: list(tok.encode_iterable([text], k))):
        try:
            call()
        except ValueError as e:
            assert "\n" not in str(e)


FIXED = small_tokenizer()


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=6)
    | st.sampled_from(["\ud800", "BPE", "ByteLevel", "Split", SPECIAL]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["type", "content", "id", "model", "vocab", "merges", "Regex", "pattern"]) | st.text(max_size=4),
            inner,
            max_size=3,
        )
    ),
    max_leaves=8,
)


def replace_node(document, path: list[int], value):
    """document with the node that path picks (each step an index into a container's children) replaced by value."""
    if not path or not isinstance(document, (dict, list)) or not document:
        return value
    keys = list(document) if isinstance(document, dict) else list(range(len(document)))
    key = keys[path[0] % len(keys)]
    copy = dict(document) if isinstance(document, dict) else list(document)
    copy[key] = replace_node(document[key], path[1:], value)
    return copy


@pytest.mark.parametrize("name", ["tokenizer.json", "tokenizer.bpe.json", "vocab.json"])
@FUZZ
@given(path=st.lists(st.integers(0, 10_000), min_size=1, max_size=5), value=JSON_VALUES)
def test_fuzz_json_tokenizer_files_node_by_node(saved, tmp_path_factory, name, path, value):
    directory = tmp_path_factory.mktemp("json")
    (directory / "merges.txt").write_bytes(saved["merges.txt"])
    document = replace_node(json.loads(saved[name]), path, value)
    (directory / name).write_text(json.dumps(document), encoding="utf-8", errors="surrogatepass")
    tok = one_sentence(lambda: Tokenizer.load(directory / name), name)
    if tok is not None:
        encodes_correctly(tok)


# the SentencePiece family: a .model (protobuf's wire format, read by hand) and its tokenizer.json


@functools.cache
def family() -> dict[str, bytes]:
    """A small SentencePiece BPE model's files: {name: bytes}."""
    from bpe.sentencepiece import SentencePieceSpec, model_bytes, tokenizer_json
    from bpe.sentencepiece import train as train_pieces

    model = train_pieces(sentences=TEXT.splitlines(), spec=SentencePieceSpec(vocab_size=320, byte_fallback=True, hard_vocab_limit=False))
    llama = json.loads((Path(__file__).resolve().parents[2] / "shared" / "llama2" / "tokenizer.json").read_text(encoding="utf-8"))
    like_llama = tokenizer_json(model) | {part: llama[part] for part in ("normalizer", "pre_tokenizer", "post_processor", "decoder")}
    return {
        "tokenizer.model": model_bytes(model),
        "tokenizer.json": json.dumps(tokenizer_json(model)).encode(),
        "llama.json": json.dumps(like_llama).encode(),  # Llama 2's steps (Prepend, the <s> template) on the small model
    }


def pieces_encode_correctly(tok) -> None:
    """A loaded tokenizer of the family encodes to ids of its vocabulary, the Python path's ids where it follows sentencepiece."""
    for text in SAMPLES:
        ids = tok.encode(text)
        assert all(i in tok.vocab for i in ids)
        if tok.follows == "sentencepiece":
            assert ids == tok.encoder.reference(text)
        tok.decode(ids)
        tok.decode_bytes(ids, skip_special_tokens=False)


@pytest.mark.parametrize("name", ["tokenizer.model", "tokenizer.json", "llama.json"])
@FUZZ
@given(ops=OPS)
def test_fuzz_the_sentencepiece_familys_files(name, ops):
    data = mutate(family()[name], ops)
    with no_hang(30):
        loaded = one_sentence(lambda: formats.read_uploads({name: data}), name)
    if loaded is not None and loaded.family == "sentencepiece":
        pieces_encode_correctly(Tokenizer.from_loaded(loaded))


@pytest.mark.parametrize("name", ["tokenizer.json", "llama.json"])
@FUZZ
@given(path=st.lists(st.integers(0, 10_000), min_size=1, max_size=5), value=JSON_VALUES)
def test_fuzz_the_sentencepiece_tokenizer_json_node_by_node(name, path, value):
    document = replace_node(json.loads(family()[name]), path, value)
    data = json.dumps(document).encode("utf-8", "surrogatepass")
    loaded = one_sentence(lambda: formats.read_uploads({"tokenizer.json": data}), "tokenizer.json")
    if loaded is not None:
        tok = one_sentence(lambda: Tokenizer.from_loaded(loaded), "tokenizer.json")
        if tok is not None and tok.family == "sentencepiece":
            pieces_encode_correctly(tok)


@FUZZ
@given(path=st.lists(st.integers(0, 10_000), min_size=1, max_size=3), value=JSON_VALUES)
def test_fuzz_counts_metadata_node_by_node(tmp_path_factory, path, value):
    meta = replace_node(
        json.loads(json.dumps(metadata_of(CountsInfo("gpt2", (SPECIAL,), ({"path": "a.txt", "format": "text"},), 10, 15, 3)))), path, value
    )
    file = counts_file(
        tmp_path_factory.mktemp("meta") / "m.parquet", json.dumps(meta).encode("utf-8", "surrogatepass"), (b"a", b"b", b"c"), (9, 4, 2)
    )
    if one_sentence(lambda: load_counts(file), "m.parquet") is not None:
        one_sentence(lambda: train_from_counts(file, 260), "m.parquet")


# ---------------------------------------------------------------------------
# any regex that compiles is a lossless pre-tokenizer (issue 26.1)

REGEX_ATOMS = st.sampled_from(
    [
        "a",
        "b",
        " ",
        ".",
        r"\w",
        r"\W",
        r"\d",
        r"\s",
        r"\S",
        r"\p{L}",
        r"\p{N}",
        "[a-c]",
        "[^ ]",
        r"\b",
        "^",
        "$",
        "'s",
        "日",
        "(?=b)",
        "(?<=a)",
        "(?!a)",
    ]
)
REGEX = st.recursive(
    REGEX_ATOMS,
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["*", "+", "?", "{1,3}", "+?", "*?", "{2}"])).map("".join),
        st.lists(inner, min_size=2, max_size=3).map("".join),
        st.lists(inner, min_size=2, max_size=3).map("|".join),
        inner.map(lambda r: f"({r})"),
        inner.map(lambda r: f"(?:{r})"),
        inner.map(lambda r: f"(?i:{r})"),
    ),
    max_leaves=6,
)
REGEX_TEXT = st.text(st.sampled_from("ab \n.'s日1é\udc80"), max_size=24)  # \udc80: an invalid byte as read (surrogateescape)


@FUZZ
@given(
    pretokenizer=st.one_of(REGEX, st.text(st.sampled_from(r"ab .\w\s()[]|*+?{}^$"), min_size=1, max_size=8)),
    texts=st.lists(REGEX_TEXT, min_size=1, max_size=3),
)
def test_fuzz_any_compiling_regex_loses_no_byte(pretokenizer, texts):
    """For any regex a tokenizer takes: training counts cover every byte, and decode_bytes(encode(x)) == x."""
    from hypothesis import assume

    try:
        Tokenizer.from_merges([], pretokenizer=pretokenizer)
    except ValueError as e:  # does not compile, matches the empty string, or is a (mistyped) name: one sentence
        assert "\n" not in str(e)
        assume(False)
    corpus = SPECIAL.join(texts)
    with no_hang(20):
        counted = pretokenize(corpus.encode("utf-8", "surrogateescape"), pretokenizer=pretokenizer, special_tokens=[SPECIAL])
        assert sum(len(token) * n for token, n in counted.counts.items()) == counted.n_bytes - len(SPECIAL.encode()) * (len(texts) - 1)
        assert b"" not in counted.counts
        tok = Tokenizer.from_training(train(counted, 8, special_tokens=[SPECIAL]), pretokenizer)
        for text in [*texts, corpus]:
            data = text.encode("utf-8", "surrogateescape")
            assert tok.decode_bytes(tok.encode(data)) == data
            assert tok.decode_bytes(list(tok.encode_iterable([data[:5], data[5:]]))) == data


# ---------------------------------------------------------------------------
# count --merge adds up any counts exactly, or refuses in one sentence naming the files (issue 26.5)

MERGE_COUNTS = st.dictionaries(
    st.sampled_from([b"a", b"b", b" the", b"\xff"]),
    st.one_of(st.integers(1, 10), st.integers(2**62, 2**63 - 1), st.just(2**63 - 1)),
    min_size=1,
    max_size=4,
)


@settings(FUZZ, max_examples=max(FUZZ_EXAMPLES // 2, 10))  # each example writes and reads Parquet files: ~35 ms
@given(files=st.lists(MERGE_COUNTS, min_size=1, max_size=3))
def test_fuzz_count_merge_sums(tmp_path_factory, files, capsys):
    directory = tmp_path_factory.mktemp("merge")
    paths = [str(counts_file(directory / f"p{i}.parquet", None, tuple(c), tuple(c.values()))) for i, c in enumerate(files)]
    out = directory / "all.parquet"
    out.write_bytes(b"the old file")
    expected: dict[bytes, int] = {}
    for counts in files:
        for token, n in counts.items():
            expected[token] = expected.get(token, 0) + n
    code = main(["count", "--merge", *paths, "--out", str(out)])
    _, err = capsys.readouterr()
    if max(expected.values()) > 2**63 - 1:
        assert code == 2 and err.startswith("error: Adding up ") and err.count("\n") == 1, err
        assert all(p in err for p in paths) and "overflows" in err
        assert out.read_bytes() == b"the old file"
    else:
        assert code == 0, err
        assert load_counts(out)[0] == expected
    assert sorted(p.name for p in directory.iterdir()) == sorted([*(Path(p).name for p in paths), "all.parquet"])  # no temporary file
