"""split_lines=True: each line, newline kept, is a document, as HuggingFace's `Tokenizer.train(files)` reads a file.

HuggingFace's trainer reads files line by line and gives each line (with its
'\\n') to the pre-tokenizer as its own sequence, so no pre-token spans a line end
('\\n\\t' never forms). With tie_break="huggingface" and split_lines=True ours
makes its merges exactly; the real `tokenizers` is the reference.
"""

from __future__ import annotations

import json
import random

import pytest

from bpe import ALGORITHMS, count_inputs, train_bpe, train_bpe_text
from bpe.cli import main
from bpe.data.counts_file import load_counts, read_info
from bpe.text.gpt2_bytes import from_unicode
from bpe.text.pretokenize import lines_of
from bpe.text.tally import Tally, pretokenize

NUM_MERGES = 200
VERSE = (
    "the river runs under old stone bridges where children count boats and ducks sleep in reeds while evening bells ring "
    "over quiet fields of barley; a miller keeps his wheel turning through winter, singing softly to the grinding stones "
    "as lanterns sway above the yard and snow settles on the thatch of every cottage along the lane"
)
WORDS = VERSE.split(" ")


def tab_indented_text(lines: int = 700, seed: int = 15) -> str:
    """Verse with lines indented by tabs (0-3), a blank line now and then, written for this test."""
    rng = random.Random(seed)
    out = []
    for _ in range(lines):
        line = "\t" * rng.choice([0, 1, 1, 2, 2, 3]) + " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 8)))
        out.append(line + rng.choice(["", "", ",", ";", ":", "."]))
        if rng.random() < 0.1:
            out.append("")
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def verse(tmp_path_factory):
    path = tmp_path_factory.mktemp("verse") / "verse.txt"
    path.write_text(tab_indented_text(), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def hf_merges(verse):
    """HuggingFace's BpeTrainer trained with Tokenizer.train([file]), byte-level as in bpe.lab.references.hf_reference."""
    tokenizers = pytest.importorskip("tokenizers")
    tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE())
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=256 + NUM_MERGES, initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tokenizer.train([str(verse)], trainer)
    merges = json.loads(tokenizer.to_str())["model"]["merges"]
    return [tuple(from_unicode(p) for p in (m.split(" ") if isinstance(m, str) else m)) for m in merges]


def first_difference(a, b) -> int | None:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None if len(a) == len(b) else min(len(a), len(b)))


def test_lines_keep_their_newline_and_only_newline_ends_one():
    assert lines_of("a\n\n\tb\r\nc\rd") == ["a\n", "\n", "\tb\r\n", "c\rd"]
    assert lines_of("") == [] and lines_of("\n") == ["\n"]


def test_no_pre_token_spans_a_line_end():
    text = "if x:\n\t\treturn 1\n\n\tpass"
    assert b"\n\t" in pretokenize(text).counts  # GPT-2's \s+(?!\S) takes '\n\t' before '\treturn'
    split = pretokenize(text, split_lines=True, keep_sequence=True)
    assert all(not token.endswith(b"\n") or token.count(b"\n") == len(token) for token in split.counts)
    assert b"\n\t" not in split.counts and b"".join(split.sequence) == text.encode()
    tally = Tally("gpt2", split_lines=True)
    tally.add([text])
    assert tally.counts() == split.counts


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_split_lines_reproduces_huggingface_train_from_files(verse, hf_merges, algorithm):
    assert len(hf_merges) == NUM_MERGES  # the verse has that much to say: the comparison means something
    _, ours = train_bpe(verse, 256 + NUM_MERGES, [], algorithm=algorithm, tie_break="huggingface", split_lines=True, workers=1)
    assert first_difference(ours, hf_merges) is None
    _, text_merges = train_bpe_text(verse.read_text(), 256 + NUM_MERGES, [], algorithm=algorithm, tie_break="huggingface", split_lines=True)
    assert text_merges == ours


def test_without_split_lines_the_merges_part_early(verse, hf_merges):
    _, ours = train_bpe(verse, 256 + NUM_MERGES, [], tie_break="huggingface", workers=1)
    first = first_difference(ours, hf_merges)
    assert first is not None and first < 50 and b"\n\t" in {a + b for a, b in ours[: first + 1]}


def test_counting_in_shards_and_workers_splits_lines_the_same(verse):
    whole = pretokenize(verse.read_text(), split_lines=True).counts
    assert count_inputs(verse, split_lines=True, workers=2, chunk_bytes=1000).counts == whole


def test_split_lines_must_be_true_or_false(verse):
    with pytest.raises(ValueError, match="split_lines must be True or False"):
        count_inputs(verse, split_lines="yes")


def test_the_cli_flag_end_to_end(verse, hf_merges, tmp_path, capsys):
    args = ["--vocab-size", str(256 + NUM_MERGES), "--tie-break", "huggingface", "--workers", "1"]
    assert main(["train", str(verse), "--split-lines", "--out", str(tmp_path / "direct"), *args]) == 0
    merges = (tmp_path / "direct" / "merges.txt").read_text(encoding="utf-8").splitlines()[1:]
    assert [tuple(from_unicode(p) for p in line.split(" ")) for line in merges] == hf_merges

    counts = tmp_path / "verse.parquet"
    assert main(["count", str(verse), "--split-lines", "--workers", "1", "--out", str(counts)]) == 0
    assert "each line a document" in capsys.readouterr().out
    assert read_info(counts).split_lines and load_counts(counts)[0] == pretokenize(verse.read_text(), split_lines=True).counts
    assert main(["train", "--from-counts", str(counts), "--out", str(tmp_path / "from-counts"), *args]) == 0
    assert (tmp_path / "from-counts" / "merges.txt").read_text() == (tmp_path / "direct" / "merges.txt").read_text()

    plain = tmp_path / "plain.parquet"
    assert main(["count", str(verse), "--workers", "1", "--out", str(plain)]) == 0
    assert not read_info(plain).split_lines
    capsys.readouterr()
    assert main(["train", "--from-counts", str(plain), "--split-lines", "--out", str(tmp_path / "x"), *args]) == 2
    err = capsys.readouterr().err
    assert "lines not split into documents" in err and err.count("\n") == 1
    assert main(["count", "--merge", str(counts), str(plain), "--out", str(tmp_path / "both.parquet")]) == 2
    assert "plain.parquet was counted with lines not split into documents" in capsys.readouterr().err
