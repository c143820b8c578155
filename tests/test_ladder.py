"""A ladder of vocabulary sizes from one run (bpe train --vocab-size 500,1000,2000): each size's folder is what training to
that size alone makes (a prefix of the next), the held-out pieces are never trained on, and the bytes per token said are
those of encoding the held-out text with each folder's tokenizer.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bpe import Tokenizer, count_inputs
from bpe.cli import main
from bpe.data.corpora import stdlib_prose
from bpe.data.inputs import Reading, read_shard
from bpe.lab.ladder import bytes_per_token, hold_out, ladder, parse_sizes

SPECIAL = "<|endoftext|>"
SIZES = "500,1000,2000"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ladder")
    documents = [d for d in stdlib_prose(1_200_000).split("\n\n") if d.strip()]
    (folder / "docs.jsonl").write_text("".join(json.dumps({"text": d}) + "\n" for d in documents))
    return folder / "docs.jsonl"


def merges_of(folder: Path) -> list[str]:
    return (folder / "merges.txt").read_text(encoding="utf-8").splitlines()


def test_each_size_is_training_to_that_size_alone_and_a_prefix_of_the_next(corpus, tmp_path, capsys):
    counts = tmp_path / "counts.parquet"
    assert main(["count", str(corpus), "--special-token", SPECIAL, "--out", str(counts)]) == 0
    held = ["--held-out", str(corpus)]
    assert main(["train", "--from-counts", str(counts), "--vocab-size", SIZES, *held, "--out", str(tmp_path / "ladder")]) == 0
    said = capsys.readouterr().out
    for size in (500, 1000, 2000):
        assert main(["train", "--from-counts", str(counts), "--vocab-size", str(size), "--out", str(tmp_path / f"alone{size}")]) == 0
        for name in ("merges.txt", "vocab.json", "tokenizer.json", "tokenizer.tiktoken"):
            assert (tmp_path / "ladder" / str(size) / name).read_bytes() == (tmp_path / f"alone{size}" / name).read_bytes()
    assert merges_of(tmp_path / "ladder" / "500") == merges_of(tmp_path / "ladder" / "1000")[: 1 + 243]  # the header line, 243 merges
    assert f"held out: {corpus} (given with --held-out)" in said
    figures = [float(x) for x in re.findall(r"^\s+[\d,]+\s+[\d,]+\s+([\d.]+)$", said, re.M)]
    assert len(figures) == 3 and figures == sorted(figures)  # more merges, more bytes per token


def test_by_default_about_one_piece_in_a_hundred_is_held_out_never_counted_and_measured(corpus, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("bpe.lab.ladder.MIN_PIECE", 4 << 10)  # pieces of 4 KB: ~300 of them in this 1.3 MB corpus
    reading = Reading(special_tokens=(SPECIAL,))
    held = hold_out([corpus], reading)
    assert len(held.kept) + len(held.held) >= 100 and len(held.held) == (len(held.kept) + len(held.held)) // 100
    assert main(["train", str(corpus), "--vocab-size", SIZES, "--special-token", SPECIAL, "--out", str(tmp_path / "out")]) == 0
    said = capsys.readouterr().out
    assert re.search(r"held out: every 100th of [\d,]+ pieces of the inputs \(\d+ pieces\), never counted for training", said)
    # what was trained on: the kept pieces' counts, exactly
    kept = count_inputs([corpus], special_tokens=[SPECIAL], workers=1)
    from bpe.data.count import count_with

    trained = count_with([corpus], reading, workers=1, only=held.kept)
    assert trained.text_bytes < kept.text_bytes and re.search(f"in {trained.text_bytes / 1e6:,.1f} MB of text", said)
    # what the summary measured: the held-out documents encoded with each folder's tokenizer
    documents = [d for piece in held.held for batch in read_shard(piece, reading) for d in batch.documents]
    size = sum(len(d.encode()) for d in documents)
    for n in (500, 1000, 2000):
        tok = Tokenizer.load(tmp_path / "out" / str(n))
        tokens = sum(len(tok.encode(d)) for d in documents)
        assert re.search(rf"^\s+{n:,}\s+[\d,]+\s+{size / tokens:.3f}$", said, re.M)


def test_ladder_cuts_and_bytes_per_token():
    merges = [(b"a", b"b"), (b"ab", b"c"), (b"x", b"y")]
    assert ladder([257, 258, 260, 300], merges, n_special=1) == [(257, 0), (258, 1), (260, 3), (300, 3)]
    assert ladder([259], [(b"a", b"bc"), (b"b", b"c"), (b"ab", b"c")], 0, distinct=True) == [(259, 3)]  # a reused token makes none
    tok = Tokenizer.from_merges(merges)
    assert bytes_per_token(tok, ["abc abc"], [0, 2]) == [(7, 1.0), (3, 7 / 3)]


@pytest.mark.parametrize(
    "argv, sentence",
    [
        (["--vocab-size", "500,x"], "--vocab-size takes a whole number or several joined by commas (8000,16000,32000), not '500,x'."),
        (["--vocab-size", "500", "--held-out", "x.txt"], "--held-out and --no-held-out go with several --vocab-size"),
    ],
)
def test_bad_ladders_are_one_sentence(corpus, tmp_path, capsys, argv, sentence):
    assert main(["train", str(corpus), *argv, "--out", str(tmp_path / "out")]) == 2
    assert sentence in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"several joined by commas \(8000,16000,32000\)\.$"):
        parse_sizes("")


def test_a_small_input_holds_nothing_out_and_says_so(tmp_path, capsys):
    (tmp_path / "small.txt").write_text("low lower newest widest " * 200)
    assert main(["train", str(tmp_path / "small.txt"), "--vocab-size", "260,270", "--out", str(tmp_path / "out")]) == 0
    said = capsys.readouterr().out
    assert "held out: nothing: the inputs make 1 piece(s), fewer than 10" in said and "-" in said
