"""Renamed keyword arguments keep working under their old names (bpe/renamed.py), and files keep their keys.

One word per idea: `pretokenizer` is the pre-tokenizer (once `pattern`), `n_special` a number of
special tokens (once `specials` or `special_tokens`); code and files written before the rename still work.
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from bpe import TrainSpec, explain_tie, pretokenize, train_bpe_text, train_from_counts
from bpe.cli import parser
from bpe.data.counts_file import KEY, CountsInfo, read_info, save_counts
from bpe.events import stop_sentence
from bpe.lab.threshold import replay, sample_of
from bpe.lab.vocabulary import compression_curve
from bpe.tokenizer.tokenizer import Tokenizer

TEXT = "low lower widest newest " * 3


def test_pattern_is_the_old_name_of_pretokenizer():
    assert train_bpe_text(TEXT, 262, [], pattern="whitespace") == train_bpe_text(TEXT, 262, [], pretokenizer="whitespace")
    assert TrainSpec(pattern="o200k") == TrainSpec(pretokenizer="o200k") == TrainSpec.of(pattern="o200k")
    assert CountsInfo(pattern="cl100k", special_tokens=()) == CountsInfo("cl100k", ())
    assert pretokenize(TEXT, pattern="none") == pretokenize(TEXT, pretokenizer="none")
    assert Tokenizer.from_merges([], pattern="whitespace").pretokenizer == Tokenizer.from_merges([], pretokenizer="whitespace").pretokenizer


def test_the_old_and_the_new_name_together_are_refused():
    with pytest.raises(TypeError, match="got both pretokenizer= and its old name pattern="):
        TrainSpec(pretokenizer="gpt2", pattern="gpt2")
    with pytest.raises(TypeError, match="both pretokenizer="):
        train_bpe_text(TEXT, 262, [], pretokenizer="gpt2", pattern="none")


@pytest.mark.parametrize("command", [["train", "x.txt", "--vocab-size", "300", "--out", "o"], ["count", "x.txt", "--out", "c.parquet"]])
def test_the_command_line_takes_pattern_for_pretokenizer(command):
    assert parser().parse_args([*command, "--pretokenizer", "o200k"]).pretokenizer == "o200k"
    assert parser().parse_args([*command, "--pattern", "o200k"]).pretokenizer == "o200k"


def test_specials_is_the_old_name_of_n_special():
    assert stop_sentence("vocab_size", 0, vocab_size=257, specials=1) == stop_sentence("vocab_size", 0, vocab_size=257, n_special=1)
    pairs = [(b"e", b"s"), (b"s", b"t")]
    assert explain_tie(pairs, special_tokens=1) == explain_tie(pairs, n_special=1) != explain_tie(pairs)
    tok = Tokenizer.from_merges([(b"l", b"o"), (b"lo", b"w")])
    seen = replay(tok, sample_of(TEXT))
    assert compression_curve(seen, specials=2, points=3) == compression_curve(seen, n_special=2, points=3)


def test_a_counts_file_keeps_the_keys_of_its_first_format(tmp_path):
    # "pretokenizer" is the pre-tokenizer's name, "pattern" its regex: files written before and after the renames read alike
    path = tmp_path / "c.parquet"
    save_counts(path, {b"low": 2, b" low": 1}, CountsInfo("whitespace", ()))
    written = json.loads(pq.read_schema(path).metadata[KEY])
    assert written["pretokenizer"] == "whitespace" and written["pattern"] == r"""\S+""" and "regex" not in written
    info = read_info(path)
    assert (info.pretokenizer, info.regex) == ("whitespace", r"""\S+""")
    assert train_from_counts(path, 258, pattern="whitespace") == train_from_counts(path, 258, pretokenizer="whitespace")
