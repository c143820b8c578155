"""The compiled heap (bpe/c/heap.c through bpe/heap_c.py) is the Python heap (bpe/heap.py), only faster.

Property tests over arbitrary pre-token counts -- any bytes, invalid UTF-8, ties,
runs like 'aaaa', one-byte and empty words, huge counts, more merges than pairs,
a min pair frequency -- under every tie-break rule: the same events (merge,
count, runner-up and its count, words rewritten), the same work per merge and in
total, the same stop reason, and after every merge the same pair counts and
words. scripts/sanitize.sh runs this file under AddressSanitizer and UBSan
(BPE_CORE names that build). Also: the fallback (the core absent: the same
merges, and one sentence saying why) and bad input.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import types
from collections import Counter
from itertools import zip_longest
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import bpe.core
from bpe import PreTokens, pretokenize, train
from bpe.core import core
from bpe.heap import Heap, as_ids
from bpe.heap_c import HeapC
from bpe.rule import TIE_BREAKS
from bpe.spec import TrainSpec
from bpe.train import Run
from bpe.trainer import encode_words, made_tokens

ROOT = Path(__file__).resolve().parents[1]
built = pytest.mark.skipif(core is None, reason=f"the compiled core is absent: {bpe.core.missing}")
RULES = st.sampled_from(TIE_BREAKS)
EXAMPLES = int(os.environ.get("BPE_HEAP_C_EXAMPLES", "150"))  # scripts/sanitize.sh asks for more

# small alphabets make ties, repeated runs and shared pairs common; the full one reaches every byte
ALPHABETS = [b"a", b"ab", b"abc", b"\x00\xff", b"ab \xc3\xa9\x80", bytes(range(256))]


@st.composite
def pre_token_counts(draw) -> dict[bytes, int]:
    alphabet = draw(st.sampled_from(ALPHABETS))
    word = st.lists(st.sampled_from(alphabet), max_size=14).map(bytes)
    count = st.integers(1, 6) | st.integers(1, 2**40)
    return draw(st.dictionaries(word, count, max_size=12))


def work_of(trainer) -> Counter:
    return +Counter(trainer.work)  # counters that never moved are left out


def assert_same_run(words: dict, rule: str, max_merges: int, min_pair_frequency: int, merged: tuple = ()) -> None:
    """Both trainers, merge by merge: events, work, pair counts and words after each merge; then stop reason, vocab, totals."""
    python, compiled = Heap(words, tie_break=rule, merged=merged), HeapC(words, tie_break=rule, merged=merged)
    for mine, theirs in zip_longest(python.merges(max_merges, min_pair_frequency), compiled.merges(max_merges, min_pair_frequency)):
        assert mine == theirs  # rank, pair, bytes, new id, count, runner-up and its count, words rewritten
        assert dict(mine.work) == dict(theirs.work)
        assert python.pair_counts == compiled.pair_counts
        assert sorted(map(as_ids, python.words)) == sorted(list(ids) for ids, _ in compiled._core.words())
    assert python.stop_reason == compiled.stop_reason
    assert python.vocab == compiled.vocab
    assert work_of(python) == work_of(compiled)


@built
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(words=pre_token_counts(), rule=RULES, max_merges=st.integers(0, 40), min_pair_frequency=st.integers(0, 8))
@example(words={}, rule="cs336", max_merges=5, min_pair_frequency=1)  # nothing to merge
@example(words={b"a": 3, b"b": 1}, rule="cs336", max_merges=5, min_pair_frequency=1)  # one-byte words only
@example(words={b"aaaa": 1}, rule="rustbpe", max_merges=5, min_pair_frequency=1)  # aa, then aa aa
@example(words={b"ab": 2, b"ba": 2, b"abab": 1}, rule="huggingface", max_merges=9, min_pair_frequency=2)
def test_the_compiled_heap_makes_the_python_heaps_run(words, rule, max_merges, min_pair_frequency):
    assert_same_run(words, rule, max_merges, min_pair_frequency)


@built
@pytest.mark.parametrize("rule", TIE_BREAKS)
@pytest.mark.parametrize("word", [b"a" * n for n in range(2, 18)] + [b"ab" * 6, b"aab" * 5, b"abba" * 4, b"abcabc"])
def test_runs_and_repeats_merge_left_to_right_as_in_python(word, rule):
    assert_same_run({word: 3, word[:-1]: 2, b" " + word: 1}, rule, 60, 1)


@st.composite
def continued_run(draw) -> tuple[dict[tuple[int, ...], int], tuple]:
    """Merges a run made, and words of any token ids of its vocabulary (not only those encoding would give)."""
    words, rule = draw(pre_token_counts()), draw(RULES)
    merged = tuple((e.left, e.right) for e in Heap(words, tie_break=rule).merges(draw(st.integers(0, 30))))
    n = len(made_tokens(merged, rule == "huggingface"))
    ids = st.integers(0, n - 1) | st.integers(n - 8, n - 1)  # the newest tokens often
    return (
        draw(st.dictionaries(st.lists(ids, max_size=12).map(tuple), st.integers(1, 6) | st.integers(1, 2**40), max_size=10)),
        merged,
        rule,
    )


@built
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=continued_run(), max_merges=st.integers(0, 70), min_pair_frequency=st.integers(0, 4))
@example(run=({(256, 256, 97): 2, (97, 256): 1}, ((b"a", b"a"),), "cs336"), max_merges=5, min_pair_frequency=1)
def test_started_from_merges_and_words_of_token_ids_the_compiled_heap_makes_the_python_heaps_run(run, max_merges, min_pair_frequency):
    words, merged, rule = run
    assert_same_run(words, rule, max_merges, min_pair_frequency, merged)


@built
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=pre_token_counts(), words=pre_token_counts(), rule=RULES, k=st.integers(0, 40), more=st.integers(0, 30))
@example(source={b"aaaa": 1}, words={b"a" * 70: 2, b"aaa": 1}, rule="cs336", k=2, more=3)  # runs, and a long word
def test_words_of_bytes_are_encoded_in_c_as_encode_words_encodes_them(source, words, rule, k, more):
    # the merges of a run on other words: any merges a tokenizer could hold, not only those these words made
    merged = tuple((e.left, e.right) for e in Heap(source, tie_break=rule).merges(k))
    encoded = encode_words(words, merged, rule == "huggingface")
    compiled = HeapC(words, tie_break=rule, merged=merged)
    assert sorted(ids for ids, _ in compiled._core.words()) == sorted(w for w in encoded if len(w) > 1)
    python = Heap(encoded, tie_break=rule, merged=merged)
    n = len(made_tokens(merged, rule == "huggingface")) - 256 + more
    assert list(python.merges(n)) == list(compiled.merges(n)) and python.vocab == compiled.vocab


@built
def test_a_word_of_an_id_the_vocabulary_lacks_is_one_sentence():
    with pytest.raises(ValueError, match="^a word holds token id 257, which the vocabulary \\(of 257 tokens\\) lacks$"):
        HeapC({(97, 257): 1}, merged=[(b"a", b"b")])


text_pieces = st.sampled_from(["low", "lower", " newest", "aaaa", "ab", " ", "\n", "é", "日本", "<|endoftext|>", "🙂", "9.11"])


@built
@settings(max_examples=max(EXAMPLES // 3, 10), deadline=None)
@given(
    pieces=st.lists(text_pieces | st.binary(max_size=6).map(lambda b: b.decode("latin-1")), max_size=30),
    invalid=st.binary(max_size=8),
    rule=RULES,
    pretokenizer=st.sampled_from(["gpt2", "whitespace", "none"]),
    vocab_past_pairs=st.integers(0, 300),
    min_pair_frequency=st.integers(1, 3),
)
def test_training_on_text_gives_the_same_training(pieces, invalid, rule, pretokenizer, vocab_past_pairs, min_pair_frequency):
    data = "".join(pieces).encode("utf-8", "surrogatepass") + invalid  # invalid UTF-8 too: kept as bytes
    corpus = pretokenize(data, pretokenizer=pretokenizer, special_tokens=["<|endoftext|>"])
    spec = TrainSpec(pretokenizer=pretokenizer, special_tokens=("<|endoftext|>",), tie_break=rule, min_pair_frequency=min_pair_frequency)
    python, compiled = (
        train(corpus, vocab_past_pairs, spec.but(algorithm="heap")),
        train(corpus, vocab_past_pairs, spec.but(algorithm="heap_c")),
    )
    assert python.events == compiled.events and python.stop_reason == compiled.stop_reason
    assert python.vocab == compiled.vocab and +Counter(python.work) == +Counter(compiled.work)


# ---------------------------------------------------------------------------
# the huggingface rule's reuse of a token, which merging whole words never reaches


@built
@settings(max_examples=EXAMPLES, deadline=None)
@given(rule=RULES, choices=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), max_size=40))
@example(rule="huggingface", choices=[(97, 98), (256, 99), (98, 99), (97, 258)])  # 'a' + 'bc' = 'ab' + 'c'
def test_minting_gives_the_python_heaps_ids(rule, choices):
    python, compiled = Heap({b"abc": 1}, tie_break=rule), HeapC({b"abc": 1}, tie_break=rule)
    for a, b in choices:
        a, b = 97 + a % 3 if a % 2 else a % len(python.vocab), 97 + b % 3 if b % 2 else b % len(python.vocab)
        assert python.mint((a, b)) == compiled._core.mint(a, b)


# ---------------------------------------------------------------------------
# detail, counts beyond 64 bits, bad input


@built
def test_detail_is_the_python_heaps():
    words = pretokenize("low low lower widest newest newest", pretokenizer="whitespace").counts
    detailed = list(HeapC(words).merges(8, detail=True))
    assert detailed == list(Heap(words).merges(8, detail=True))
    assert all(e.detail is not None and e.detail.heap is not None for e in detailed)
    trainer = HeapC(words)
    next(trainer.merges(8))
    with pytest.raises(ValueError, match="^Detail is recorded from the first merge"):
        next(trainer.merges(8, detail=True))


@built
def test_counts_beyond_64_bits_train_in_python_with_the_same_merges():
    words = {b"abab": 2**62, b"ab": 2**62, b"cd": 5}
    with pytest.raises(OverflowError):
        HeapC(words)
    going = Run(PreTokens(words, None, 0), 5, TrainSpec(algorithm="heap_c"))
    assert (
        going.trained_by
        == "heap (in Python: heap_c cannot take these counts (the pair counts are beyond the compiled trainer's 64-bit counters))"
    )
    events = []
    going.until(on_merge=events.append)
    assert [e.pair for e in events] == [e.pair for e in Heap(words).merges(5)] and events[0].count == 2**62 * 3


@built
@pytest.mark.parametrize(
    "words, error, message",
    [
        ({b"ab": 0}, ValueError, "a pre-token's count must be a whole number of at least 1"),
        ({b"ab": -3}, ValueError, "a pre-token's count must be a whole number of at least 1"),
        ({b"ab": 1.5}, ValueError, "a pre-token's count must be a whole number of at least 1"),
        ({"ab": 1}, TypeError, "pre-tokens must be bytes, not str"),
    ],
)
def test_bad_counts_are_one_sentence(words, error, message):
    with pytest.raises(error, match=f"^{message}$"):
        HeapC(words)


@built
def test_a_count_that_is_an_index_but_not_an_int_is_read_as_its_value():
    class Count:
        def __index__(self) -> int:
            return 4

    assert list(HeapC({b"ab": Count()}).merges(1))[0].count == 4


# ---------------------------------------------------------------------------
# the fallback: without the core, the Python heap trains, and says why


def python_in(env: dict[str, str], code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env={**os.environ, **env}, timeout=120)


TRAIN = "from bpe import train_bpe_text; print(train_bpe_text('low lower lowest newer newest ' * 9 + 'aaaa', 290, ['<|endoftext|>'])[1])"


def test_without_the_core_the_python_heap_makes_the_same_merges():
    absent = python_in({"BPE_CORE": "0"}, TRAIN + "; from bpe.spec import DEFAULT; print(DEFAULT.algorithm)")
    assert absent.returncode == 0, absent.stderr
    merges, default = absent.stdout.splitlines()
    assert default == "heap"
    if core is not None:
        present = python_in({}, TRAIN + "; from bpe.spec import DEFAULT; print(DEFAULT.algorithm)")
        assert present.stdout.splitlines() == [merges, "heap_c"]


def test_without_the_core_bpe_core_says_why_in_one_sentence():
    def bpe_core(setting: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "BPE_CORE": setting}
        return subprocess.run([sys.executable, "-m", "bpe", "core"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)

    said = bpe_core("0")
    assert said.returncode == 0 and not said.stderr
    assert said.stdout.splitlines() == [
        "The compiled core (bpe._core) is absent: BPE_CORE=0 is set; the trainers run in Python.",
        f"bpe train trains with heap by default: {Heap.summary}",
    ]
    missing = bpe_core("/no/such/core.so").stdout.splitlines()[0]
    assert missing.startswith("The compiled core (bpe._core) is absent: BPE_CORE=/no/such/core.so could not be loaded (")


@pytest.mark.parametrize("setting", ["0", None])
def test_python_m_bpe_core_says_it_in_one_sentence_and_nothing_else(setting):
    # subtle: bpe imports bpe.core as it starts; runpy warned (RuntimeWarning on stderr) while bpe.core was a module
    env = {key: value for key, value in os.environ.items() if key != "BPE_CORE"} | ({"BPE_CORE": setting} if setting else {})
    said = subprocess.run([sys.executable, "-W", "error", "-m", "bpe.core"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert said.returncode == 0 and said.stderr == ""
    if setting == "0":
        assert said.stdout == "The compiled core (bpe._core) is absent: BPE_CORE=0 is set; the trainers run in Python.\n"
    else:  # built or not, one line (this process may have been started with BPE_CORE=0)
        assert said.stdout.startswith("The compiled core (bpe._core) is ") and said.stdout.count("\n") == 1


def test_asking_for_heap_c_without_the_core_trains_in_python_and_the_summary_says_why(tmp_path):
    (tmp_path / "corpus.txt").write_text("low lower lowest newer newest " * 20)
    command = [sys.executable, "-m", "bpe", "train", str(tmp_path / "corpus.txt"), "--vocab-size", "270", "--workers", "1"]
    for args in ([], ["--algorithm", "heap_c"]):
        result = subprocess.run(
            [*command, *args, "--out", str(tmp_path / "out")],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "BPE_CORE": "0"},
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        assert "merges made by heap (in Python: heap_c cannot run here: BPE_CORE=0 is set)\n" in result.stdout


def test_a_core_built_from_other_sources_is_not_used(tmp_path, monkeypatch):
    # a stand-in for the build (which may be absent here): a module carrying the digest of the checkout's sources
    build = types.ModuleType("bpe._core")
    build.SOURCES = bpe.core.sources_digest()
    monkeypatch.setitem(sys.modules, "bpe._core", build)
    monkeypatch.setattr(bpe, "_core", build, raising=False)
    monkeypatch.delenv("BPE_CORE", raising=False)
    assert bpe.core.load() == (build, "")
    (tmp_path / "heap.c").write_text("/* a newer heap.c than the build's */\n")
    monkeypatch.setattr(bpe.core, "SOURCES", tmp_path)
    module, why = bpe.core.load()
    assert module is None and why == "it was built from older sources than bpe/c holds (bash scripts/setup.sh rebuilds it)"


@built
def test_with_the_core_the_summary_says_the_compiled_heap_made_the_merges(tmp_path):
    (tmp_path / "corpus.txt").write_text("low lower lowest newer newest " * 20)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bpe",
            "train",
            str(tmp_path / "corpus.txt"),
            "--vocab-size",
            "270",
            "--workers",
            "1",
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0 and "merges made by heap_c (compiled)\n" in result.stdout, result.stderr


class MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")
    ]


def malloc_in_use() -> int:
    """Bytes the C heap has handed out and not had back (glibc's mallinfo2: small blocks + mmapped ones)."""
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallInfo2
    info = libc.mallinfo2()
    return info.uordblks + info.hblkhd


@built
@pytest.mark.skipif("LD_PRELOAD" in os.environ or not hasattr(ctypes.CDLL(None), "mallinfo2"), reason="needs glibc's own malloc")
def test_a_trainer_gives_back_every_byte_it_took():
    # LeakSanitizer cannot tell our leaks from the interpreter's (scripts/sanitize.sh), so count malloc's bytes instead
    words = {bytes([97 + i % 7, 98 + i % 5, 97 + i % 3]) * (1 + i % 9) + bytes([i % 256]): 1 + i % 13 for i in range(3000)}
    for rule in TIE_BREAKS:  # a first run of each, so that caches and free lists are warm
        list(HeapC(words, tie_break=rule).merges(300))
    before = malloc_in_use()
    for _ in range(5):
        for rule in TIE_BREAKS:
            list(HeapC(words, tie_break=rule).merges(300))
    assert malloc_in_use() - before < 64 * 1024  # a leak of one trainer's structures would be megabytes
