"""Counts files: count once, train many times, with the settings checked and nothing unsafe read.

Training from a counts file must give exactly the merges of training on the
text it was counted from; a file made with other settings is refused in one
sentence that names the setting; a file that is not a well-formed counts file
is refused too (it is Parquet data, read column by column: nothing is unpickled).
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bpe import ALGORITHMS, count_inputs, train_bpe, train_from_counts
from bpe.cli import main
from bpe.data.counts_file import KEY, CountsInfo, describe_inputs, load_counts, merge_counts_files, read_info, save_counts

ROOT = Path(__file__).resolve().parents[1]
SPECIAL = "<|endoftext|>"
TEXT = (
    ("low lower lowest newer newest widest, it's 123 naïve café.\n" * 30) + SPECIAL + "more low text \udcff\n"
)  # \udcff: the invalid byte 0xff


@pytest.fixture()
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes(TEXT.encode("utf-8", "surrogateescape"))
    return path


def count_to_file(paths, out, special_tokens=(SPECIAL,), pretokenizer="gpt2"):
    counted = count_inputs(paths, pretokenizer=pretokenizer, special_tokens=special_tokens, workers=1)
    info = CountsInfo(pretokenizer, tuple(special_tokens), describe_inputs(counted.inputs, "text", "text"), counted.text_bytes)
    return save_counts(out, counted.counts, info), counted


def test_round_trip_keeps_counts_and_settings(corpus, tmp_path):
    info, counted = count_to_file(corpus, tmp_path / "c.parquet")
    counts, loaded = load_counts(tmp_path / "c.parquet")
    assert counts == counted.counts and b" \xff" in counts  # invalid UTF-8 kept as bytes
    assert loaded == info == read_info(tmp_path / "c.parquet")
    assert loaded.unique == len(counts) and loaded.pre_tokens == sum(counts.values()) and loaded.text_bytes == corpus.stat().st_size
    assert loaded.inputs[0]["path"] == str(corpus) and loaded.inputs[0]["format"] == "text"


def test_rows_are_most_frequent_first(corpus, tmp_path):
    count_to_file(corpus, tmp_path / "c.parquet")
    column = pq.read_table(tmp_path / "c.parquet").column("count").to_pylist()
    assert column == sorted(column, reverse=True)


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_training_from_counts_equals_training_on_the_text(corpus, tmp_path, algorithm):
    count_to_file(corpus, tmp_path / "c.parquet")
    expected = train_bpe(corpus, 320, [SPECIAL], algorithm=algorithm)
    assert train_from_counts(tmp_path / "c.parquet", 320, algorithm=algorithm) == expected
    assert train_from_counts(tmp_path / "c.parquet", 320, [SPECIAL], pretokenizer="gpt2", algorithm=algorithm) == expected


def test_cli_count_then_train_from_counts_writes_the_same_tokenizer(corpus, tmp_path):
    assert (
        main(["train", str(corpus), "--vocab-size", "320", "--special-token", SPECIAL, "--out", str(tmp_path / "direct"), "--workers", "1"])
        == 0
    )
    assert main(["count", str(corpus), "--special-token", SPECIAL, "--out", str(tmp_path / "c.parquet"), "--workers", "1"]) == 0
    for vocab in ("300", "320"):  # count once, train many
        assert main(["train", "--from-counts", str(tmp_path / "c.parquet"), "--vocab-size", vocab, "--out", str(tmp_path / vocab)]) == 0
    for name in ("merges.txt", "vocab.json", "tokenizer.json", "tokenizer.bpe.json"):
        assert (tmp_path / "320" / name).read_bytes() == (tmp_path / "direct" / name).read_bytes()
    assert (tmp_path / "300" / "merges.txt").read_text().splitlines() == (tmp_path / "320" / "merges.txt").read_text().splitlines()[:44]


def test_a_cli_process_trains_from_counts_without_numpy_and_writes_the_same_tokenizer(corpus, tmp_path):
    """`bpe train --from-counts` keeps numpy out of its process (a third of pyarrow's import): the same files."""
    count_to_file(corpus, tmp_path / "c.parquet")
    assert main(["train", "--from-counts", str(tmp_path / "c.parquet"), "--vocab-size", "320", "--out", str(tmp_path / "here")]) == 0
    argv = ["train", "--from-counts", str(tmp_path / "c.parquet"), "--vocab-size", "320", "--out", str(tmp_path / "alone")]
    code = f"import sys; from bpe.cli import main; code = main({argv!r}); print(code, 'numpy' in sys.modules, 'pyarrow' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == "0 False True"
    for name in ("merges.txt", "vocab.json", "tokenizer.json", "tokenizer.bpe.json", "tokenizer.tiktoken"):
        assert (tmp_path / "alone" / name).read_bytes() == (tmp_path / "here" / name).read_bytes()


@pytest.mark.parametrize(
    "options, phrase",
    [
        ({"pattern": "gpt4"}, "counted with the 'gpt2' pre-tokenizer, not 'gpt4'"),
        ({"special_tokens": []}, r"counted with special tokens \['<\|endoftext\|>'\], not \[\]"),
        ({"special_tokens": ["<|other|>"]}, "counted with special tokens"),
    ],
)
def test_settings_that_contradict_the_file_are_refused(corpus, tmp_path, options, phrase):
    count_to_file(corpus, tmp_path / "c.parquet")
    special_tokens = options.pop("special_tokens", None)
    with pytest.raises(ValueError, match=phrase):
        train_from_counts(tmp_path / "c.parquet", 300, special_tokens, **options)


def test_a_pre_tokenizers_other_name_is_the_same_setting(corpus, tmp_path):
    count_to_file(corpus, tmp_path / "c.parquet", pretokenizer="gpt4")  # counted under the old name
    assert train_from_counts(tmp_path / "c.parquet", 300, pretokenizer="cl100k") == train_from_counts(tmp_path / "c.parquet", 300)


def test_cli_refuses_contradicting_settings_and_inputs_with_from_counts(corpus, tmp_path, capsys):
    count_to_file(corpus, tmp_path / "c.parquet")
    out = str(tmp_path / "out")
    assert main(["train", "--from-counts", str(tmp_path / "c.parquet"), "--vocab-size", "300", "--pattern", "gpt4", "--out", out]) == 2
    assert "'gpt2' pre-tokenizer, not 'gpt4'" in capsys.readouterr().err
    assert main(["train", str(corpus), "--from-counts", str(tmp_path / "c.parquet"), "--vocab-size", "300", "--out", out]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["train", "--vocab-size", "300", "--out", out]) == 2
    assert "Name the text to train on" in capsys.readouterr().err


def test_merging_counts_files_equals_counting_all_inputs(tmp_path):
    (tmp_path / "a.txt").write_text("low lower lowest " * 5)
    (tmp_path / "b.txt").write_text("newer newest low " * 3)
    count_to_file(tmp_path / "a.txt", tmp_path / "a.parquet")
    count_to_file(tmp_path / "b.txt", tmp_path / "b.parquet")
    assert main(["count", "--merge", str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"), "--out", str(tmp_path / "ab.parquet")]) == 0
    counts, info = load_counts(tmp_path / "ab.parquet")
    assert counts == count_inputs([tmp_path / "a.txt", tmp_path / "b.txt"], special_tokens=[SPECIAL], workers=1).counts
    assert [entry["path"] for entry in info.inputs] == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    assert info.text_bytes == (tmp_path / "a.txt").stat().st_size + (tmp_path / "b.txt").stat().st_size


def test_merging_files_made_with_different_settings_is_refused(tmp_path):
    (tmp_path / "a.txt").write_text("low lower")
    count_to_file(tmp_path / "a.txt", tmp_path / "a.parquet")
    count_to_file(tmp_path / "a.txt", tmp_path / "w.parquet", pretokenizer="whitespace")
    with pytest.raises(ValueError, match="w.parquet was counted with the 'whitespace' pre-tokenizer, not 'gpt2'"):
        merge_counts_files([tmp_path / "a.parquet", tmp_path / "w.parquet"], tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()


# ---------------------------------------------------------------------------
# reading is safe: anything but a well-formed counts file is refused


def metadata(**changes) -> dict:
    info = {"pretokenizer": "gpt2", "special_tokens": [], "inputs": [], "text_bytes": 3, "pre_tokens": 3, "unique": 2}
    return {KEY: json.dumps({**info, **changes}).encode()}


def write_table(path, columns: dict, meta: dict | None) -> None:
    table = pa.table(columns)
    pq.write_table(table.replace_schema_metadata(meta), path)


BAD_FILES = {
    "no-metadata": ({"token": pa.array([b"a", b"b"]), "count": [2, 1]}, None, "no bpe.counts metadata"),
    "string-tokens": ({"token": ["a", "b"], "count": [2, 1]}, metadata(), "needs a binary column 'token'"),
    "no-count": ({"token": pa.array([b"a", b"b"])}, metadata(), "integer column 'count'"),
    "twice": ({"token": pa.array([b"a", b"a"]), "count": [2, 1]}, metadata(), "lists a token twice"),
    "zero": ({"token": pa.array([b"a", b"b"]), "count": [2, 0]}, metadata(), "count below 1"),
    "null": ({"token": pa.array([b"a", None]), "count": [2, 1]}, metadata(), "empty cells"),
    "bad-json": ({"token": pa.array([b"a", b"b"]), "count": [2, 1]}, {KEY: b"{not json"}, "unreadable bpe.counts metadata"),
    "wrong-type": ({"token": pa.array([b"a", b"b"]), "count": [2, 1]}, metadata(unique="2"), "unreadable bpe.counts metadata"),
    "short": ({"token": pa.array([b"a", b"b"]), "count": [2, 1]}, metadata(unique=3), "has 2 rows but its metadata says 3"),
    "unknown-pattern": ({"token": pa.array([b"a", b"b"]), "count": [2, 1]}, metadata(pretokenizer="gpt9"), "does not know"),
    "changed-regex": ({"token": pa.array([b"a", b"b"]), "count": [2, 1]}, metadata(pattern="x+"), "different 'gpt2' regex"),
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_malformed_counts_files_are_refused_in_one_sentence(tmp_path, name, capsys):
    columns, meta, phrase = BAD_FILES[name]
    path = tmp_path / f"{name}.parquet"
    write_table(path, columns, meta)
    with pytest.raises(ValueError, match=phrase):
        train_from_counts(path, 300)
    assert main(["train", "--from-counts", str(path), "--vocab-size", "300", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert phrase.split("'")[0].split("\\")[0] in err and "Traceback" not in err


def test_a_pickle_is_never_loaded(tmp_path):
    class Boom:
        def __reduce__(self):
            return (print, ("unpickled!",))

    path = tmp_path / "evil.parquet"
    path.write_bytes(pickle.dumps(Boom()))
    with pytest.raises(ValueError, match="is not a Parquet file"):
        load_counts(path)
    with pytest.raises(ValueError, match="No such file"):
        load_counts(tmp_path / "missing.parquet")
