"""`bpe train --sentencepiece`: spm_train's options, the three files written together, the summary, the refusals.

The model it writes is sentencepiece's own for the same options (byte for byte the pieces; sentencepiece and
HuggingFace tokenizers load the files it writes), a mix of the two families' options is refused in one
sentence, and so are the settings sentencepiece refuses.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bpe.cli import main
from bpe.sentencepiece import read_model

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")
CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "cs336" / "corpus.en"


def test_train_writes_sentencepieces_model_and_the_other_files(tmp_path, capsys):
    out = tmp_path / "tok"
    assert (
        main(["train", str(CORPUS), "--sentencepiece", "--vocab-size", "1200", "--byte-fallback", "--split-digits", "--out", str(out)]) == 0
    )
    said = capsys.readouterr().out
    assert "Made 864 merges: the vocabulary reached its size, 1,200 pieces (259 meta pieces, 864 merged, 77 characters)" in said
    assert "characters: 77 kept" in said and "fell out and are <unk>" in said
    theirs = io.BytesIO()
    spm.SentencePieceTrainer.train(
        input=str(CORPUS), model_writer=theirs, model_type="bpe", vocab_size=1200, byte_fallback=True, split_digits=True, minloglevel=2
    )
    expected = spm.SentencePieceProcessor(model_proto=theirs.getvalue())
    ours = spm.SentencePieceProcessor(model_file=str(out / "tokenizer.model"))
    assert read_model(out / "tokenizer.model").pieces[5].piece == expected.id_to_piece(5)
    assert [ours.id_to_piece(i) for i in range(1200)] == [expected.id_to_piece(i) for i in range(1200)]
    text = "The library opens at nine in the morning, 1234 🦙."
    assert ours.encode(text) == expected.encode(text) == tokenizers.Tokenizer.from_file(str(out / "tokenizer.json")).encode(text).ids
    vocab = (out / "tokenizer.vocab").read_text(encoding="utf-8").splitlines()
    assert vocab[0] == "<unk>\t0" and len(vocab) == 1200 and vocab[-1].endswith("\t-940")


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--pretokenizer", "gpt2"], "--pretokenizer is for byte-level BPE"),
        (["--special-token", "<|endoftext|>"], "--special-token is for byte-level BPE"),
        (["--character-coverage", "0.5"], "between 0.98 and 1"),
        (["--input-sentence-size", "50"], "more than 100"),
    ],
)
def test_refusals_are_one_sentence(tmp_path, capsys, extra, message):
    assert main(["train", str(CORPUS), "--sentencepiece", "--vocab-size", "1000", "--out", str(tmp_path / "t"), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("error: ") and "Traceback" not in err


def test_a_sentencepiece_option_without_sentencepiece_is_refused(tmp_path, capsys):
    assert main(["train", str(CORPUS), "--vocab-size", "1000", "--byte-fallback", "--out", str(tmp_path / "t")]) == 2
    assert "--byte-fallback is an option of the SentencePiece family: add --sentencepiece." in capsys.readouterr().err


def test_too_large_a_vocabulary_says_the_largest_that_works(tmp_path, capsys):
    assert main(["train", str(CORPUS), "--sentencepiece", "--vocab-size", "100000", "--out", str(tmp_path / "t")]) == 2
    assert "Set vocab_size to at most 15,186" in capsys.readouterr().err
    assert not (tmp_path / "t" / "tokenizer.model").exists()
    assert (
        main(["train", str(CORPUS), "--sentencepiece", "--vocab-size", "100000", "--no-hard-vocab-limit", "--out", str(tmp_path / "t")])
        == 0
    )
    assert len(read_model(tmp_path / "t" / "tokenizer.model").pieces) == 15186
