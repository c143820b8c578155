"""`bpe diff THEIRS --corpus INPUT...` and reading a student's merges file (bpe/merges_file.py).

Every kind of file a student has (merges.txt with or without '#version', any
tokenizer bpe.load reads, Python literal pairs) gives the same merges; every
hostile or malformed one (binary, huge, '<script>', a pickle, bad literals,
deep nesting) gives one sentence naming it, and the command exits 2.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import student_bpe as student
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import formats
from bpe.cli import main
from bpe.gpt2_bytes import to_unicode
from bpe.merges_file import parse_merges, parse_uploads, read_merges

ROOT = Path(__file__).resolve().parents[1]
SPECIAL = "<|endoftext|>"
MERGES = [(b" ", b"t"), (b"h", b"e"), (b" t", b"he"), (b"\xe2", b"\x80"), (b"\xe2\x80", b"\x94"), (b"'", b'"')]


def merges_txt(merges, version: bool = True) -> str:
    return ("#version: 0.2\n" if version else "") + "".join(f"{to_unicode(a)} {to_unicode(b)}\n" for a, b in merges)


# ---------------------------------------------------------------------------
# reading every kind of file


@pytest.mark.parametrize(
    "name, data",
    [
        ("merges.txt", merges_txt(MERGES).encode()),
        ("mine.txt", merges_txt(MERGES, version=False).encode()),
        ("pairs.txt", "".join(f"{p!r}\n" for p in MERGES).encode()),
        ("printed.txt", repr(MERGES).encode()),  # print(merges) of a CS336 trainer: one line
        ("script.py", ("merges = [\n" + "".join(f"    {p!r},  # merge {i}\n" for i, p in enumerate(MERGES)) + "]\n").encode()),
    ],
)
def test_every_text_kind_gives_the_same_merges(name, data):
    assert parse_merges(name, data) == MERGES


def test_tokenizer_files_and_folders_give_their_merges(tmp_path):
    folder = tmp_path / "tok"
    formats.save(folder, formats.files(MERGES, [SPECIAL], "gpt2", [None] * len(MERGES)))
    assert read_merges(folder) == MERGES
    for name in ("tokenizer.json", "tokenizer.bpe.json", "vocab.json", "merges.txt"):
        assert read_merges(folder / name) == MERGES, name
    files = {name: (folder / name).read_bytes() for name in ("vocab.json", "merges.txt")}
    assert parse_uploads(files) == MERGES
    assert parse_uploads({"tokenizer.json": (folder / "tokenizer.json").read_bytes()}) == MERGES


HOSTILE = [
    ("binary.bin", bytes(range(256)) * 4, "not a text file"),
    ("merges.pkl", pickle.dumps(MERGES), "pickle"),
    ("merges.txt", pickle.dumps(MERGES, protocol=4), "pickle"),  # a pickle under a text name: known by its first byte
    ("merges.txt", b"<script>alert(1)</script>\n", "two tokens"),
    ("pairs.txt", b"(b' t', 'he')\n", "text, not bytes"),
    ("pairs.txt", b"(b' t', b'he'\n", "not closed"),
    ("pairs.txt", b"(b'a', b'b', b'c')\n", "pair of bytes"),
    ("pairs.txt", b"(b'', b'a')\n", "empty token"),
    ("pairs.txt", b"(b'a' + b'b', b'c')\n", "pair of bytes"),
    ("pairs.txt", b"(__import__('os').system('echo pwned'), b'a')\n", "pair of bytes"),
    ("pairs.txt", b"(" * 100_000 + b"b'a', b'b'" + b")" * 100_000, "pair of bytes"),  # deep nesting: a flat scanner reads it
    ("pairs.txt", b"[(b'a', b'b')", "not closed"),
    ("pairs.txt", b"(b'\\xzz', b'a')\n", "not a valid bytes literal"),
    ("empty.txt", b"", "empty"),
    ("nul.txt", b"(b'a', b'b')\n\0", "NUL"),
    ("merges.txt", "Ġ t\nh e x\n".encode(), "two tokens"),
    ("tokenizer.json", b'{"model": {"type": "Unigram"}}', "only BPE"),
]


@pytest.mark.parametrize("name, data, says", HOSTILE, ids=[f"{i}-{h[0]}" for i, h in enumerate(HOSTILE)])
def test_hostile_and_malformed_files_get_one_sentence(name, data, says, capsys):
    with pytest.raises(ValueError) as e:
        parse_merges(name, data)
    message = str(e.value)
    assert "\n" not in message and name in message and says in message, message
    assert "pwned" not in capsys.readouterr().out


def test_a_huge_file_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from bpe import merges_file

    monkeypatch.setattr(merges_file, "MAX_BYTES", 1000)
    path = tmp_path / "huge.txt"
    path.write_bytes(b"(b'a', b'b')\n" * 200)
    with pytest.raises(ValueError, match="too big"):
        read_merges(path)


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=400) | st.text(alphabet="(b'\\x0)[], \nĠabc#\"", max_size=200).map(str.encode))
def test_any_bytes_give_merges_or_one_sentence(data):
    try:
        merges = parse_merges("fuzz.txt", data)
    except ValueError as e:
        assert "\n" not in str(e) and "fuzz.txt" in str(e)
        return
    assert merges and all(isinstance(a, bytes) and isinstance(b, bytes) and a and b for a, b in merges)


# ---------------------------------------------------------------------------
# the command


@pytest.fixture(scope="module")
def files(tmp_path_factory, cs336) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("diff")
    text = (cs336 / "corpus.en").read_text(encoding="utf-8")
    mistaken = student.train(text, 70, (SPECIAL,), "tie:concatenated")
    (folder / "theirs.txt").write_text("".join(f"{p!r}\n" for p in mistaken), encoding="utf-8")
    (folder / "merges.txt").write_text(merges_txt(mistaken, version=False), encoding="utf-8")
    return {
        "theirs": folder / "theirs.txt",
        "merges": folder / "merges.txt",
        "corpus": cs336 / "corpus.en",
        "reference": cs336 / "train-bpe-reference-merges.txt",
    }


def test_json_says_where_both_merges_kind_cause_and_how_far(files, capsys):
    assert main(["diff", str(files["theirs"]), "--corpus", str(files["corpus"]), "--special-token", SPECIAL, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["first_difference"] == 31 and out["theirs"] == ["Ġ", "d"] and out["reference"] == ["Ġa", "nd"]
    assert (out["kind"], out["cause"], out["reproduced_through"]) == ("tie", "tie:concatenated", 70)
    assert out["true_count_of_theirs"] == out["true_count_of_reference"] == 609 and out["settings"]["num_merges"] == 70


def test_text_output_names_the_merge_the_pairs_the_cause_and_the_fix(files, capsys):
    assert main(["diff", str(files["merges"]), "--corpus", str(files["corpus"])]) == 0
    out = capsys.readouterr().out
    assert "merge 32 of 70: a tie broken another way" in out and "' ' + 'd'" in out and "' a' + 'nd'" in out
    assert (
        "cause:     ties by the joined bytes left + right (tie:concatenated)" in out
        and out.count("Fix: ") == 1
        and "merge 32" in out.splitlines()[-2]
    )


def test_the_reference_merges_are_the_same(files, capsys):
    assert main(["diff", str(files["reference"]), "--corpus", str(files["corpus"]), "--special-token", SPECIAL, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["first_difference"], out["kind"], out["cause"], out["reproduced_through"]) == (None, "same", None, 243)
    assert out["theirs"] is None and out["reference"] is None


@pytest.mark.parametrize(
    "args, says",
    [
        (["/dev/null/nothing.txt", "--corpus", "CORPUS"], "no such file"),
        (["THEIRS", "--corpus", "/no/such/corpus.txt"], "corpus.txt"),
        (["THEIRS", "--corpus", "CORPUS", "--tie-break", "largest"], "tie-break rule"),
        (["THEIRS", "--corpus", "CORPUS", "--vocab-size", "100"], "vocab_size 100 is too small"),
        (["THEIRS", "--corpus", "CORPUS", "--pattern", "("], "regex"),
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(files, args, says, capsys):
    args = [str(files["theirs"]) if a == "THEIRS" else str(files["corpus"]) if a == "CORPUS" else a for a in args]
    assert main(["diff", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and says in err, err


def test_the_real_command_refuses_a_pickle_without_a_traceback(files, tmp_path):
    evil = tmp_path / "merges.pkl"
    evil.write_bytes(pickle.dumps(MERGES))
    done = subprocess.run(
        [sys.executable, "-m", "bpe", "diff", str(evil), "--corpus", str(files["corpus"])], capture_output=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 2 and b"Traceback" not in done.stderr and b"pickle" in done.stderr
