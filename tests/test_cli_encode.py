"""`python -m bpe encode / decode` with a tokenizer saved by `python -m bpe train`.

Most cases call bpe.cli.main in-process (fast); a few run the real command in a
subprocess to check the exit code, the bytes on stdout and that no traceback shows.
"""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import pytest

from bpe import train_bpe
from bpe.cli import main
from bpe.files import formats
from bpe.tokenizer.tokenizer import Tokenizer

ROOT = Path(__file__).resolve().parents[1]
SPECIAL = "<|endoftext|>"
CORPUS = ("low lower lowest newer newest widest, it's 123 naïve café.\n" * 20) + SPECIAL + "more low text\n"


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cli")
    corpus = folder / "corpus.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    out = folder / "tok"
    code = main(["train", str(corpus), "--vocab-size", "300", "--special-token", SPECIAL, "--out", str(out), "--workers", "1"])
    assert code == 0
    return out


def bpe(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bpe", *args], input=stdin, capture_output=True, cwd=ROOT, timeout=60)


def ids_of(text: str) -> list[int]:
    return [int(i) for i in text.split()]


def test_train_writes_all_four_formats(saved):
    assert sorted(p.name for p in saved.iterdir()) == sorted([*formats.file_names(), formats.MANIFEST])
    assert all(c is not None for c in Tokenizer.load(saved).counts)


def test_encode_text_prints_the_ids(saved, capsys):
    assert main(["encode", str(saved), "--text", f"lowest newer{SPECIAL}x"]) == 0
    ids = ids_of(capsys.readouterr().out)
    tok = Tokenizer.load(saved)
    assert ids == tok.encode(f"lowest newer{SPECIAL}x")
    assert tok.ids[SPECIAL.encode()] in ids


def test_encode_with_the_first_k_merges(saved, capsys):
    main(["encode", str(saved), "--text", "lowest", "--k", "0"])
    assert ids_of(capsys.readouterr().out) == list(b"lowest")


def test_encode_a_file_of_any_bytes(saved, tmp_path, capsys):
    data = b"low \xff\xfe lower \xc3"
    path = tmp_path / "in.bin"
    path.write_bytes(data)
    main(["encode", str(saved), "--file", str(path)])
    assert Tokenizer.load(saved).decode_bytes(ids_of(capsys.readouterr().out)) == data


def test_decode_ids_from_arguments(saved, capsys):
    ids = Tokenizer.load(saved).encode("newest widest")
    assert main(["decode", str(saved), *map(str, ids)]) == 0
    assert capsys.readouterr().out == "newest widest"


def test_round_trip_through_pipes_keeps_every_byte(saved):
    data = "naïve café 🙂\n\tlow  lower\r\n".encode() + b"\xff\x00" + SPECIAL.encode()
    encoded = bpe("encode", str(saved), stdin=data)
    assert encoded.returncode == 0, encoded.stderr
    decoded = bpe("decode", str(saved), stdin=encoded.stdout)
    assert decoded.returncode == 0, decoded.stderr
    assert decoded.stdout == data


@pytest.mark.parametrize(
    "args, message",
    [
        (["decode", "{dir}", "12", "x7"], "'x7' is not a token id"),
        (["decode", "{dir}", "999999"], "Token id 999999 is not in the vocabulary"),
        (["encode", "{dir}", "--text", "a", "--k", "-1"], "k must be a whole number of merges, at least 0"),
        (["encode", "{missing}", "--text", "a"], "no such file or directory"),
        (["encode", "{dir}", "--file", "{missing}"], "No such file or directory"),
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(saved, tmp_path, capsys, args, message):
    filled = [a.format(dir=saved, missing=tmp_path / "missing") for a in args]
    assert main(filled) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1


def test_a_broken_tokenizer_file_is_an_error_not_a_traceback(saved, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    text = (saved / "tokenizer.bpe.json").read_text()
    (broken / "tokenizer.bpe.json").write_text(text[: len(text) // 2])
    result = bpe("encode", str(broken), "--text", "low")
    assert result.returncode == 2
    assert b"Traceback" not in result.stderr
    assert b"not valid JSON" in result.stderr and b"looks truncated" in result.stderr


# ---------------------------------------------------------------------------
# tie-break rules, and other tools' files


@pytest.mark.parametrize("rule", ["cs336", "huggingface", "rustbpe"])
def test_train_with_a_tie_break_rule_makes_that_rules_merges(tmp_path, rule):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    args = ["train", str(corpus), "--vocab-size", "300", "--special-token", SPECIAL, "--workers", "1"]
    assert main([*args, "--tie-break", rule, "--out", str(tmp_path / rule)]) == 0
    _, expected = train_bpe(corpus, 300, [SPECIAL], tie_break=rule)
    assert Tokenizer.load(tmp_path / rule).merges == expected


def test_the_rules_differ_on_this_corpus(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    merges = {rule: tuple(train_bpe(corpus, 300, [SPECIAL], tie_break=rule)[1]) for rule in ("cs336", "huggingface", "rustbpe")}
    assert len(set(merges.values())) == 3


def test_an_unknown_tie_break_is_one_sentence(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    assert main(["train", str(corpus), "--vocab-size", "300", "--tie-break", "hf", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == "error: Unknown tie-break rule 'hf'; choose one of cs336, huggingface, rustbpe.\n"


def test_encode_with_gpt2s_own_files_matches_tiktoken(gpt2, tiktoken_gpt2, capsys):
    text = f"Hello world, naïve 🙂{SPECIAL}  end\n"
    assert main(["encode", str(gpt2 / "encoder.json"), "--text", text]) == 0
    assert ids_of(capsys.readouterr().out) == tiktoken_gpt2.encode(text, allowed_special="all")


def test_a_tiktoken_file_with_a_special_token_and_a_pattern(saved, tmp_path, capsys):
    tok = Tokenizer.load(saved)
    ranks = {token: i for i, token in tok.vocab.items() if token != SPECIAL.encode()}
    path = tmp_path / "t.tiktoken"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()))
    assert main(["encode", str(path), "--special-token", SPECIAL, "--pattern", "gpt4", "--text", f"low{SPECIAL}"]) == 0
    ids = ids_of(capsys.readouterr().out)
    assert ids == Tokenizer.load(path, special_tokens=[SPECIAL], pretokenizer="gpt4").encode(f"low{SPECIAL}")
    assert main(["decode", str(path), *map(str, ids), "--special-token", SPECIAL]) == 0
    assert capsys.readouterr().out == f"low{SPECIAL}"
