"""`bpe diff THEIRS --corpus INPUT...` and reading a student's merges file (bpe/files/merges_file.py).

Every kind of file a student has (merges.txt with or without '#version', any
tokenizer bpe.files.load reads, Python literal pairs) gives the same merges; every
hostile or malformed one (binary, huge, '<script>', a pickle, bad literals,
deep nesting) gives one sentence naming it, and the command exits 2.
"""

from __future__ import annotations

import ast
import json
import pickle
import subprocess
import sys
import tracemalloc
import warnings
from pathlib import Path

import pytest
import student_bpe as student
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe.cli import main
from bpe.files import formats, merges_file
from bpe.files.merges_file import parse_merges, parse_uploads, read_merges
from bpe.text.gpt2_bytes import to_unicode

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
    from bpe.files import merges_file

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


@settings(max_examples=150, deadline=None)
@given(merges=st.lists(st.tuples(st.binary(min_size=1, max_size=8), st.binary(min_size=1, max_size=8)), min_size=1, max_size=20))
def test_python_prints_of_any_merges_read_back_exactly(merges):
    """repr per line, and repr of the whole list: every escape Python writes (\\x, \\\\, quotes, \\t) read back as Python reads it."""
    assert parse_merges("pairs.txt", "".join(f"{p!r}\n" for p in merges).encode()) == merges
    assert parse_merges("printed.txt", repr(merges).encode()) == merges


@settings(max_examples=300, deadline=None)
@given(body=st.text(alphabet="ab\\'\"x0179nt\tzN{}", max_size=12), quote=st.sampled_from(["'", '"']), raw=st.booleans())
def test_a_bytes_literal_is_read_as_python_reads_it_or_refused(body, quote, raw):
    """Any literal: the value Python gives it (ast.literal_eval, warnings as errors), or a sentence where Python warns or fails."""
    written = f"{'rb' if raw else 'b'}{quote}{body}{quote}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            expected = ast.literal_eval(written)
        ok = isinstance(expected, bytes) and expected != b""
    except (SyntaxError, ValueError):
        ok = False
    try:
        got = parse_merges("pairs.txt", f"({written}, b'a')\n".encode())
    except ValueError as e:
        assert not ok or "\n" in body, (written, expected, str(e))  # a literal across lines is refused, not read
        assert "\n" not in str(e) and "pairs.txt" in str(e)
        return
    assert ok and got == [(expected, b"a")], written


JSON_LISTS = [
    ("pairs.json", json.dumps([[to_unicode(a), to_unicode(b)] for a, b in MERGES])),  # tokenizer.json's merges, as a list
    ("pairs.txt", json.dumps([[list(a), list(b)] for a, b in MERGES])),  # byte values
    ("lines.json", json.dumps([f"{to_unicode(a)} {to_unicode(b)}" for a, b in MERGES])),  # merges.txt's lines
]


@pytest.mark.parametrize("name, text", JSON_LISTS, ids=[j[0] for j in JSON_LISTS])
def test_a_json_list_of_pairs_is_read(name, text):
    assert parse_merges(name, text.encode()) == MERGES


@pytest.mark.parametrize(
    "text, says",
    [
        ('[[" t", "he"]]', "not in GPT-2's form"),  # raw text: a space GPT-2 writes as Ġ
        ('[["a", "b", "c"]]', "not a pair of two tokens"),
        ("[[[32, 300], [104]]]", "not a token"),
        ('[["a", "b"]', "not valid JSON"),
        ("[[" + "1" * 5000 + ", [97]]]", "4300 digits"),
    ],
)
def test_a_bad_json_list_is_one_sentence(text, says):
    with pytest.raises(ValueError) as e:
        parse_merges("mine.json", text.encode())
    assert "\n" not in str(e.value) and "mine.json" in str(e.value) and says in str(e.value), str(e.value)


@pytest.mark.parametrize(
    "lines, guess",
    [
        ([" t he", "h e"], "Ġt he"),  # raw spaces: b' t' + b'he' written as text
        (["\x93 x", "h e"], "ĵ x"),  # latin-1: byte 0x93 written as U+0093
        (["\u2122 x"], "âĦ¢ x"),  # UTF-8 text: '™' is three bytes
    ],
)
def test_a_merges_txt_in_another_byte_form_is_answered_with_gpt2s_form(lines, guess):
    with pytest.raises(ValueError) as e:
        parse_merges("merges.txt", ("#version: 0.2\n" + "\n".join(lines) + "\n").encode())
    said = str(e.value)
    assert "\n" not in said and "not GPT-2's form" in said and f"GPT-2's form of that line is {guess!r}" in said, said


# the reviewer's repros of issue 37.4, sized down: memory is asserted, not time
def peak_of(read) -> tuple[object, int]:
    """What read() returns (or the ValueError it raises), and the most memory Python held meanwhile, in bytes."""
    tracemalloc.start()
    try:
        out = read()
    except ValueError as e:
        out = e
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, peak


@pytest.mark.parametrize("printed", [False, True], ids=["per line", "one list"])
def test_many_pairs_are_read_pair_by_pair_in_memory_bounded_by_the_file(printed):
    """(b'ab', b'cd') 10,000 times: Python's tokenizer held every token (100 times the file: 5.2 GB for 50 MB)."""
    n = 10_000
    data = (b"[" + b", ".join([b"(b'ab', b'cd')"] * n) + b"]") if printed else b"(b'ab', b'cd')\n" * n
    merges, peak = peak_of(lambda: parse_merges("pairs.txt", data))
    assert merges == [(b"ab", b"cd")] * n
    assert peak < 12 * n  # the list, 8 bytes a merge (the file has 15 or 16 a merge): each pair and token is held once


def test_more_pairs_than_any_tokenizer_has_are_refused_before_they_are_read(monkeypatch):
    monkeypatch.setattr(merges_file, "MAX_MERGES", 1000)
    for data in (b"(b'ab', b'cd')\n" * 3000, b"(b'ab', b'cd'),\n" * 1001, ("a b\n" * 1003).encode()):
        with pytest.raises(ValueError, match="more than 1,000 merges"):
            parse_merges("pairs.txt", data)


@pytest.mark.parametrize(
    "name, data, says",
    [
        ("pairs.txt", b"(b'" + b"a" * 2_000_000 + b"', b'b')\n", "more than 4,096 characters"),  # 40 MB: 6.9 GB
        ("pairs.txt", b"(" + b"1" * 2_000_000 + b", b'a')\n", "expected merge 1 as a pair of bytes"),  # 5 million digits: 2.7 GB
        ("pairs.txt", b"[" + b"1" * 2_000_000 + b"]", "expected merge 1 as a pair of bytes"),
        ("pairs.json", b"[[" + b"1" * 2_000_000 + b", [97]]]", "4300 digits"),
    ],
    ids=["long literal", "digits", "digits in a list", "digits in JSON"],
)
def test_a_huge_literal_or_number_is_refused_without_reading_it(name, data, says):
    error, peak = peak_of(lambda: parse_merges(name, data))
    assert isinstance(error, ValueError) and says in str(error) and "\n" not in str(error), error
    assert peak < 3 * len(data)  # at most a copy or two of the file (json's scan), never a parse of it


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
    assert "cause:     ties by the joined bytes left + right (tie:concatenated)" in out and out.count("Fix: ") == 1
    # a command that serves this corpus, and the link to the step page at that merge on this run (test_app_diff follows one)
    hint = out.splitlines()[-2]
    assert f"BPE_CORPUS={files['corpus']} bash scripts/app.sh, then open http://127.0.0.1:8501/?corpus=file&" in hint
    assert hint.endswith("vocab_size=326&special_tokens=&rule=cs336&pretokenizer=gpt2&merge=32")


def test_a_corpus_the_app_cannot_serve_gets_no_link(files, tmp_path, capsys):
    (tmp_path / "a.txt").write_bytes(files["corpus"].read_bytes())
    (tmp_path / "b.txt").write_text("more text\n", encoding="utf-8")
    assert main(["diff", str(files["merges"]), "--corpus", str(tmp_path / "*.txt")]) == 0
    assert "serve one text file as its corpus (BPE_CORPUS=FILE bash scripts/app.sh)" in capsys.readouterr().out


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
