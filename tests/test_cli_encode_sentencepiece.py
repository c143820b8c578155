"""`bpe encode` / `bpe decode` with the SentencePiece family: Llama 2's tokenizer.json and a .model trained here.

The array is, for each document, the ids HuggingFace tokenizers (or sentencepiece, for a .model) gives it, then </s>;
a text file's documents are its non-empty lines (the newline not encoded), in every input format, compressed or not,
cut into shards anywhere and encoded by any number of workers; bpe decode writes it back as tokenizers decodes it
with the special tokens kept. Options the family cannot honour are refused in one sentence.
"""

from __future__ import annotations

import functools
import gzip
import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bpe import Tokenizer
from bpe.cli import main
from bpe.sentencepiece import SentencePieceSpec, model_bytes, train
from bpe.tokenizer.encode_files import encode_files

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
LLAMA = SHARED / "llama2" / "tokenizer.json"
DOCS = ["The library opens at nine 🦙", "  spaces   and\ttabs\r", "日本語のテキスト", "<s>a special</s> in text", "x"]
TEXT = "\n".join([DOCS[0], "", *DOCS[1:]]) + "\n\nno newline at the end"  # an empty line is no document
LINES = [*DOCS, "no newline at the end"]


@functools.cache
def hf() -> object:
    return tokenizers.Tokenizer.from_file(str(LLAMA))


def expected(docs: list[str], add: bool = False, eot: list[int] = (2,)) -> list[int]:
    return [i for d in docs for i in [*hf().encode(d, add_special_tokens=add).ids, *eot]]


def ids_of(text: str) -> list[int]:
    return [int(i) for i in text.split()]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("inputs")
    (folder / "a.txt").write_text(TEXT, encoding="utf-8")
    (folder / "a.txt.gz").write_bytes(gzip.compress(TEXT.encode()))
    (folder / "a.jsonl").write_text("".join(json.dumps({"text": d}) + "\n" for d in [*DOCS, "two\nlines"]), encoding="utf-8")
    pq.write_table(pa.table({"text": [*DOCS, "two\nlines"]}), folder / "a.parquet", row_group_size=2)
    return {p.name: p for p in folder.iterdir()}


def test_encode_text_prints_huggingfaces_ids(capsys):
    text = "Hello world 🦙\nnext"
    assert main(["encode", str(LLAMA), "--text", text]) == 0
    assert ids_of(capsys.readouterr().out) == hf().encode(text, add_special_tokens=False).ids
    assert main(["encode", str(LLAMA), "--text", text, "--add-special-tokens"]) == 0
    assert ids_of(capsys.readouterr().out) == hf().encode(text).ids


def test_encode_a_file_reads_lines(inputs, capsys):
    assert main(["encode", str(LLAMA), "--file", str(inputs["a.txt"])]) == 0
    assert ids_of(capsys.readouterr().out) == expected([*DOCS[:1], "", *DOCS[1:], "", "no newline at the end"], eot=[])


@pytest.mark.parametrize("name", ["a.txt", "a.txt.gz"])
@pytest.mark.parametrize("workers", [1, 2])
def test_a_text_files_documents_are_its_lines_however_it_is_cut(inputs, tmp_path, name, workers):
    out = tmp_path / "ids.npy"
    done = encode_files(Tokenizer.load(LLAMA), [inputs[name]], out, workers=workers, chunk_bytes=16, parallel_min_bytes=0)
    assert np.load(out).tolist() == expected(LINES) and done.documents == len(LINES)


@pytest.mark.parametrize("name", ["a.jsonl", "a.parquet"])
def test_a_record_or_a_row_is_a_document_newlines_and_all(inputs, tmp_path, name):
    out = tmp_path / "ids.npy"
    encode_files(Tokenizer.load(LLAMA), [inputs[name]], out, workers=2, chunk_bytes=40, parallel_min_bytes=0, add_special_tokens=True)
    assert np.load(out).tolist() == expected([*DOCS, "two\nlines"], add=True)


def test_bpe_encode_then_decode(inputs, tmp_path, capsys):
    out = tmp_path / "ids.npy"
    assert main(["encode", str(LLAMA), str(inputs["a.jsonl"]), "--out", str(out), "--add-special-tokens", "--workers", "1"]) == 0
    said = capsys.readouterr().out
    assert "after each document: </s> (2); before each: <s> (1)" in said and "as HuggingFace tokenizers" in said
    ids = np.load(out).tolist()
    assert main(["decode", str(LLAMA), "--file", str(out), "--out", str(tmp_path / "text.txt")]) == 0
    assert (tmp_path / "text.txt").read_bytes().decode() == hf().decode(ids, skip_special_tokens=False)
    assert main(["decode", str(LLAMA), *map(str, hf().encode("Hello world").ids)]) == 0
    assert capsys.readouterr().out == "<s> Hello world"


def test_a_model_file_encodes_each_line_as_sentencepiece(inputs, tmp_path):
    lines = (SHARED / "cs336" / "corpus.en").read_text().splitlines()[:200]
    data = model_bytes(train(sentences=lines, spec=SentencePieceSpec(vocab_size=500, byte_fallback=True)))
    (tmp_path / "tok").mkdir()
    (tmp_path / "tok" / "tokenizer.model").write_bytes(data)
    processor = spm.SentencePieceProcessor(model_proto=data)
    out = tmp_path / "ids.npy"
    assert main(["encode", str(tmp_path / "tok"), str(inputs["a.txt"]), "--out", str(out), "--add-special-tokens"]) == 0
    assert np.load(out).tolist() == [i for line in LINES for i in [*processor.encode(line, add_bos=True, add_eos=True)]]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--text", "x", "--k", "3"], "--k is for byte-level tokenizers; .* is a SentencePiece tokenizer"),
        (["--text", "x", "--special-text", "text"], "--special-text is for byte-level tokenizers"),
        (["--text", "x", "--pretokenizer", "gpt2"], "--pretokenizer gpt2: .* cuts no pre-tokens by a regex; leave the option out"),
        (["--text", "x", "--special-token", "<|endoftext|>"], "special tokens are its meta pieces .*'<\\|endoftext\\|>' cannot be added"),
        (["x.txt", "--out", "ids.npy", "--eot", "<|endoftext|>"], "--eot <\\|endoftext\\|>: not a special token of"),
    ],
)
def test_options_the_family_cannot_honour_are_one_sentence(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.txt").write_text("x\n")
    assert main(["encode", str(LLAMA), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(message, err), err


def test_add_special_tokens_is_refused_for_a_byte_level_tokenizer(capsys):
    assert main(["encode", str(SHARED / "gpt2"), "--text", "x", "--add-special-tokens"]) == 2
    assert "--add-special-tokens is for the SentencePiece family" in capsys.readouterr().err
