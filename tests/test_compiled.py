"""The compiled pre-tokenization path (bpe/text/gigatoken.py, gigatoken) counts exactly what the Python path counts, or not at all.

gigatoken counts where the compiled core is absent (with it, the core's own pre-tokenizer
counts: tests/test_core_pretokenize.py), so every test here switches the core off, in this
process and in the worker processes it starts (BPE_CORE=0).

Each equality test calls the compiled path itself (gigatoken.count_utf8), so a
fallback cannot hide a difference; and each case the compiled path refuses
(invalid UTF-8, other pre-tokenizers, characters whose Unicode class differs,
gigatoken missing or another version) is shown to fall back and still count
right. Skipped where gigatoken is not installed (it is optional).
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe import pretokenize
from bpe.cli import main
from bpe.data.corpora import SEPARATOR as DOCUMENT_END
from bpe.data.count import count_inputs
from bpe.text import gigatoken
from bpe.text.pretokenizers import PRETOKENIZERS
from bpe.text.tally import Tally

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
EOT = "<|endoftext|>"

needs_gigatoken = pytest.mark.skipif(gigatoken.unavailable("gpt2") is not None, reason=str(gigatoken.unavailable("gpt2")))


@pytest.fixture(autouse=True)
def without_the_core(monkeypatch):
    monkeypatch.setenv("BPE_CORE", "0")
    monkeypatch.setattr("bpe.core.core", None)
    monkeypatch.setattr("bpe.core.missing", "BPE_CORE=0 is set")


def python_counts(data: bytes, special_tokens=(), split_lines=False) -> dict[bytes, int]:
    return pretokenize(data, special_tokens=list(special_tokens), split_lines=split_lines, compiled=False).counts


def compiled_counts(data: bytes, special_tokens=(), split_lines=False) -> dict[bytes, int]:
    assert gigatoken.refusal(data) is None, gigatoken.refusal(data)
    pairs = gigatoken.count_utf8(data, list(special_tokens), split_lines, joined=False)
    counts = dict(pairs)
    assert len(counts) == len(pairs)  # each pre-token once
    return counts


# ---------------------------------------------------------------------------
# generated text over all of Unicode

# what GPT-2's regex treats specially: contractions, whitespace of every kind and in runs,
# letters with combining marks, numbers of every script, punctuation, and the DISAGREE-free rest
PIECES = [
    "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'", "''", " 's", "'x",
    " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0",
    "\u1680", "\u2000", "\u200a", "\u200b", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\u180e", "\ufeff",
    "a", "Z", "é", "e\u0301", "\u0915\u093f", "日本", "ß", "ǅ", "ʰ", "\u0301", "\u20dd",
    "1", "42", "2024", "²", "½", "٣", "Ⅻ", "①", "𝟙",
    "!", "?!", ".", "...", "-", "—", "“", "”", "€", "😀", "👩‍👩‍👧", "\x00", "\x7f", "\U0010fffd",
]  # fmt: skip
ALL_CHARACTERS = st.characters(exclude_categories=["Cs"])


def unicode_text() -> st.SearchStrategy[str]:
    piece = st.one_of(st.sampled_from(PIECES), ALL_CHARACTERS, st.text(ALL_CHARACTERS, max_size=6))
    return st.lists(piece, max_size=60).map("".join)


def without_disagreements(text: str) -> str:
    return "".join(c for c in text if not any(first <= ord(c) <= last for first, last in gigatoken.DISAGREE))


@needs_gigatoken
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=unicode_text())
def test_counts_equal_the_python_path_on_text_over_all_of_unicode(text):
    data = without_disagreements(text).encode()
    assert compiled_counts(data) == python_counts(data)


@needs_gigatoken
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(unicode_text(), min_size=1, max_size=5),
    special_tokens=st.lists(st.sampled_from([EOT, "<|s|>", "<|", "|>", "ab", "aa", "a", " ", "\n", "é"]), max_size=3, unique=True),
    split_lines=st.booleans(),
)
def test_special_tokens_and_lines_cut_the_same_places(parts, special_tokens, split_lines):
    # special_tokens at the edges, doubled, overlapping one another ('<|' in '<|s|>'), overlapping themselves ('aa')
    joiners = special_tokens or [""]
    text = joiners[0] + "".join(without_disagreements(p) + joiners[i % len(joiners)] for i, p in enumerate(parts)) + joiners[-1]
    data = text.encode()
    assert compiled_counts(data, special_tokens, split_lines) == python_counts(data, special_tokens, split_lines)


@needs_gigatoken
@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=80))
def test_invalid_utf8_is_refused_and_counted_by_python(data):
    try:
        data.decode("utf-8")
        valid = True
    except UnicodeDecodeError:
        valid = False
    assert (gigatoken.refusal(data) is None) == (valid and data == without_disagreements(data.decode()).encode())
    tally = Tally("gpt2")
    tally.add([data])
    assert tally.counts() == python_counts(data)
    assert tally.compiled_bytes == (len(data) if gigatoken.refusal(data) is None else 0)


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=40) | st.text(max_size=12).map(lambda t: t.encode("utf-8", "surrogatepass")), size=st.integers(1, 7))
def test_utf8_is_checked_a_slice_at_a_time_as_one_piece(data, size):
    """A character or an invalid sequence cut by a slice boundary is judged as Python's decoder judges the whole."""
    try:
        data.decode("utf-8")
        valid = True
    except UnicodeDecodeError:
        valid = False
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gigatoken, "_SLICE", size)
        assert (gigatoken.refusal(data) != "not valid UTF-8") == valid


# ---------------------------------------------------------------------------
# Unicode tables


@needs_gigatoken
def test_the_disagreement_table_is_measured_from_both_libraries():
    # every code point in three contexts: if gigatoken or regex change their Unicode tables, this fails
    assert gigatoken.disagreements() == gigatoken.DISAGREE


@needs_gigatoken
def test_a_character_whose_class_differs_goes_to_the_python_path():
    first, _ = gigatoken.DISAGREE[0]
    data = f"it is a{chr(first)}b 42".encode()
    assert gigatoken.refusal(data) == "characters whose Unicode class gigatoken and regex disagree on"
    assert dict(gigatoken.count_utf8(data)) != python_counts(data)  # why: gigatoken would count it otherwise
    tally, python = Tally("gpt2"), Tally("gpt2", compiled=False)
    for t in (tally, python):
        t.add([data, "plain text", "caf\udce9"])  # a batch of three documents: only the first two are refused
    assert tally.counts() == python.counts()
    assert tally.compiled_bytes == len("plain text")
    assert tally.python_why == {gigatoken.refusal(data), "not valid UTF-8"}


# ---------------------------------------------------------------------------
# which pre-tokenizers


@needs_gigatoken
@pytest.mark.parametrize("pretokenizer", [p for p in [*PRETOKENIZERS, "gpt4"] if p != "gpt2"] + [r"\w+|\W"])
def test_other_pre_tokenizers_use_the_python_path(pretokenizer):
    assert gigatoken.unavailable(pretokenizer) == "gigatoken 0.10.0 counts only the gpt2 pre-tokenizer's pre-tokens"
    tally = Tally(pretokenizer)
    tally.add(["it's 42 words"])
    assert tally.compiled_bytes == 0 and tally.python_why == {"the compiled core is absent (BPE_CORE=0 is set)"}
    assert tally.counts() == pretokenize("it's 42 words", pretokenizer=pretokenizer, compiled=False).counts


@needs_gigatoken
def test_gpt2s_regex_given_as_a_string_is_gpt2():
    assert gigatoken.unavailable(PRETOKENIZERS["gpt2"].regex) is None


@pytest.mark.parametrize(
    "setup, why",
    [
        (lambda mp: mp.setenv("BPE_COMPILED", "0"), "BPE_COMPILED=0 is set"),
        (lambda mp: mp.setitem(sys.modules, "gigatoken", None), "gigatoken is not installed (pip install .[fast])"),
        pytest.param(
            lambda mp: mp.setattr("importlib.metadata.version", lambda name: "9.9.9"), "gigatoken 9.9.9 is installed", marks=needs_gigatoken
        ),
        pytest.param(lambda mp: mp.setattr("regex.__version__", "1999.1.1"), "regex 1999.1.1 is installed", marks=needs_gigatoken),
    ],
    ids=["switched-off", "not-installed", "another-gigatoken", "another-regex"],
)
def test_without_a_checked_gigatoken_the_python_path_counts(monkeypatch, setup, why):
    setup(monkeypatch)
    gigatoken._library.cache_clear()
    try:
        assert gigatoken.unavailable("gpt2").startswith(why)
        tally = Tally("gpt2")
        tally.add([b"it is what it is"])
        assert tally.counts() == python_counts(b"it is what it is") and tally.compiled_bytes == 0
    finally:
        gigatoken._library.cache_clear()


# ---------------------------------------------------------------------------
# real corpora, every input format, shards and worker processes


def real_text() -> bytes:
    """The CS336 corpus and the prose of the standard library: English, code comments, some of every script."""
    from bpe.data.corpora import extract_prose, find_python_files, read_python

    parts = []
    if (SHARED / "cs336" / "corpus.en").is_file():
        parts.append((SHARED / "cs336" / "corpus.en").read_bytes())
    stdlib = Path(os.__file__).parent
    for path in sorted(find_python_files(stdlib))[:400]:
        parts.append(extract_prose(read_python(path)).encode("utf-8", "surrogateescape"))
    return DOCUMENT_END.encode().join(parts)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("compiled")
    data = real_text()
    (folder / "corpus.txt").write_bytes(data)
    documents = data.decode("utf-8", "surrogateescape").split(EOT)
    (folder / "corpus.txt.gz").write_bytes(gzip.compress(data, 1))
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"text": d}) + "\n" for d in documents))
    pq.write_table(pa.table({"text": documents}), folder / "corpus.parquet", row_group_size=50)
    return folder


@needs_gigatoken
@pytest.mark.parametrize("name", ["corpus.txt", "corpus.txt.gz", "corpus.jsonl", "corpus.parquet"])
def test_real_corpora_in_every_format_count_the_same_in_workers(corpus, name, monkeypatch):
    path = corpus / name
    monkeypatch.setattr("bpe.data.count.PARALLEL_MIN_BYTES", 0)  # a pool even for this small corpus
    kwargs = {"special_tokens": [EOT], "chunk_bytes": 1 << 20}
    fast = count_inputs(path, workers=2, **kwargs)
    slow = count_inputs(path, workers=1, compiled=False, **kwargs)
    assert fast.workers == (1 if name.endswith(".gz") else 2)  # a compressed file is one shard
    assert fast.counts == slow.counts and fast.text_bytes == slow.text_bytes
    assert fast.compiled_bytes == fast.text_bytes > 100_000, fast.counted_by()
    assert fast.counted_by() == "counted by gigatoken 0.10.0 (compiled)"
    assert slow.compiled_bytes == 0 and slow.counted_by() == "counted in Python (the Python path was asked for)"


@needs_gigatoken
def test_a_file_with_some_invalid_bytes_is_counted_by_both_paths(tmp_path):
    good = ("plain words and more words. " * 40_000).encode()
    path = tmp_path / "mixed.txt"
    path.write_bytes(good + b"\n" + EOT.encode() + b"caf\xe9 \xff\xfe" + b"\n" + EOT.encode() + good)
    fast = count_inputs(path, workers=1, special_tokens=[EOT], chunk_bytes=1 << 20)
    assert fast.counts == count_inputs(path, workers=1, special_tokens=[EOT], compiled=False).counts
    # only the shard (~1 MB) holding the invalid bytes goes to Python
    assert fast.text_bytes - (1 << 20) - 100_000 < fast.compiled_bytes < fast.text_bytes
    assert fast.counted_by().startswith("counted by gigatoken 0.10.0 (compiled) 1.1 MB, in Python 1.1 MB")
    assert fast.counted_by().endswith("(not valid UTF-8)")


# ---------------------------------------------------------------------------
# the CLI says which path counted; one thread per process


@needs_gigatoken
def test_bpe_count_says_which_path_counted(corpus, tmp_path, capsys):
    path = str(corpus / "corpus.txt")
    assert main(["count", path, "--out", str(tmp_path / "a.parquet"), "--special-token", EOT, "--workers", "1"]) == 0
    assert "pre-tokens counted by gigatoken 0.10.0 (compiled)" in capsys.readouterr().out
    args = ["count", path, "--out", str(tmp_path / "b.parquet"), "--special-token", EOT, "--workers", "1", "--pattern", "gpt4"]
    assert main(args) == 0
    assert "pre-tokens counted in Python (the compiled core is absent (BPE_CORE=0 is set))" in capsys.readouterr().out
    assert main(["count", path, "--out", str(tmp_path / "c.parquet"), "--special-token", EOT, "--workers", "1", "--no-compiled"]) == 0
    assert "pre-tokens counted in Python (the Python path was asked for)" in capsys.readouterr().out
    assert pq.read_table(tmp_path / "a.parquet").equals(pq.read_table(tmp_path / "c.parquet"))


@needs_gigatoken
def test_gigatoken_counts_on_one_thread_and_prints_nothing():
    # a fresh process: rayon's pool starts at the first call, with RAYON_NUM_THREADS=1 then
    script = (
        "import os\n"
        "from bpe.text import gigatoken\n"
        "def threads(): return int(next(l for l in open('/proc/self/status') if l.startswith('Threads:')).split()[1])\n"
        "before = threads()\n"
        "gigatoken.count_utf8(b'it is what it is ' * 100000)\n"
        "print(threads() - before, os.environ.get('RAYON_NUM_THREADS'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RAYON_NUM_THREADS"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", "None"]  # one worker thread of rayon's, and the environment as it was
    assert result.stderr == ""  # gigatoken's timing lines went nowhere


@needs_gigatoken
def test_bpe_train_says_which_path_counted(corpus, tmp_path, capsys):
    path = str(corpus / "corpus.txt")
    base = ["train", path, "--vocab-size", "300", "--special-token", EOT, "--workers", "1"]
    assert main([*base, "--out", str(tmp_path / "heap")]) == 0
    heap = capsys.readouterr().out
    assert "\npre-tokens counted by gigatoken 0.10.0 (compiled)\n" in heap
    assert main([*base, "--out", str(tmp_path / "positions"), "--algorithm", "positions"]) == 0
    assert "\npre-tokens counted in Python (the positions algorithm reads every occurrence in order)\n" in capsys.readouterr().out
    merges = [(tmp_path / name / "merges.txt").read_text() for name in ("heap", "positions")]
    assert merges[0] == merges[1]  # the same counts, so the same merges
