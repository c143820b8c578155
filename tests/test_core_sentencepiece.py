"""The SentencePiece family's compiled twins (bpe/c/spm.c) are their Python references, only faster.

Property tests over generated input, each C path against the Python code it compiles:
- the normalizer: any bytes (malformed UTF-8, spaces, the map's keys), every switch, user-defined symbols;
- the corpus: lines -> normalized sentences, character counts, words and counts (on one thread and on several);
- the trainer: every PieceMerge (pair, frequency, runner-up, places rewritten) and the model, over corpora and
  options, with the words given by the core's corpus or as a list;
- sentencepiece's encoder: ids for any text and bytes, on trained models and on made-up ones (UNUSED pieces,
  -0.0 and positive scores, user-defined pieces, no <unk>);
- HuggingFace's BPE: ids for any text on Llama 2's file and on made-up merge lists (a pair listed twice, bytes
  missing for byte fallback, <unk> fused or not).
scripts/sanitize.sh runs this file under AddressSanitizer and UBSan (BPE_CORE names that build). Skipped where the
core is not built; a process without the core trains the same model in Python.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import bpe.core
from bpe.sentencepiece import Encoder, HFTokenizer, Piece, SentencePieceModel, SentencePieceSpec, train
from bpe.sentencepiece.model import BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED, byte_piece
from bpe.sentencepiece.normalizer import Normalizer, NormalizerSpec
from bpe.sentencepiece.trainer import Trainer, prepare, read_lines, select
from bpe.sentencepiece.trainer_c import CompiledTrainer, prepare_compiled, prepare_files

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
built = pytest.mark.skipif(bpe.core.core is None, reason=f"the compiled core is absent: {bpe.core.missing}")
pytestmark = built
EXAMPLES = int(os.environ.get("BPE_HEAP_C_EXAMPLES", "150"))  # scripts/sanitize.sh asks for more

PIECES = [b" ", b"  ", b"a", b"the", b"\xe2\x96\x81", b"\xe2\x96", b"\xed\xa0\x80", b"\x00", b"\n", b"\r", b"\t", b"\xef\xbc\xa1"]
PIECES += [
    b"e\xcc\x81",
    b"\xe3\x80\x80",
    b"\xe2\x80\x8b",
    b"\xc0\x80",
    b"\xff",
    b"\xf0\x9f\xa6\x99",
    b"\xc2\xbd",
    b"<s>",
    b"\x1f",
    b"1",
    b"F",
]
BYTES = st.lists(st.sampled_from(PIECES), max_size=16).map(b"".join)
ALPHABET = list("aab  ab1.Fカナー漢ひ\u0301é▁") + ["🦙", "<s>", "\r", "\t", "\u3000", "\u200b", "\x1f", "１", "the", "<0x41>"]
LINES = st.lists(st.lists(st.sampled_from(ALPHABET), max_size=14).map("".join), min_size=1, max_size=12)
OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "byte_fallback": st.booleans(),
        "split_digits": st.booleans(),
        "split_by_number": st.booleans(),
        "treat_whitespace_as_suffix": st.booleans(),
        "split_by_whitespace": st.booleans(),
        "allow_whitespace_only_pieces": st.booleans(),
        "max_sentencepiece_length": st.sampled_from([2, 4, 16]),
        "character_coverage": st.sampled_from([0.98, 1.0]),
        "normalization_rule_name": st.sampled_from(["nmt_nfkc", "identity"]),
        "add_dummy_prefix": st.booleans(),
        "remove_extra_whitespaces": st.booleans(),
        "split_by_unicode_script": st.booleans(),
        "user_defined_symbols": st.just(("the",)),
        "pretokenization_delimiter": st.just("ab"),
    },
)


@settings(max_examples=EXAMPLES, deadline=None)
@given(BYTES, st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.sampled_from(["nmt_nfkc", "identity"]))
def test_the_normalizer_is_its_reference(data, dummy, extra, escape, suffix, user, name):
    spec = NormalizerSpec.named(name, add_dummy_prefix=dummy, remove_extra_whitespaces=extra, escape_whitespaces=escape)
    normalizer = Normalizer(spec, treat_whitespace_as_suffix=suffix, user_defined=["the", "▁a"] if user else ())
    assert normalizer.normalize_bytes(data) == normalizer.reference(data)


def test_every_code_point_normalizes_as_the_reference_does():
    normalizer = Normalizer()
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    text = "".join("a" + chr(c) for c in points[::7]).encode()  # a seventh of them in Python's time; all in C's below
    assert normalizer.normalize_bytes(text) == normalizer.reference(text)
    spm = pytest.importorskip("sentencepiece")
    every = "".join("a" + chr(c) for c in points)
    assert normalizer.normalize(every) == spm.SentencePieceNormalizer(rule_name="nmt_nfkc").normalize(every)


def python_corpus(lines, spec):
    return prepare(select(lines, spec), spec)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LINES, OPTIONS)
def test_the_corpus_is_its_reference(lines, options):
    spec = SentencePieceSpec(vocab_size=5000, hard_vocab_limit=False, **options)
    try:
        expected = python_corpus(lines, spec)
    except ValueError as error:
        with pytest.raises(ValueError, match=str(error)[:30]):
            prepare_compiled(select(lines, spec), spec)
        return
    corpus = prepare_compiled(select(lines, spec), spec)
    assert corpus.all_words() == expected.words
    assert (corpus.required, corpus.dropped, corpus.characters, corpus.coverage) == (
        expected.required,
        expected.dropped,
        expected.characters,
        expected.coverage,
    )


@pytest.mark.parametrize("split", [True, False])
def test_several_threads_make_the_corpus_of_one(split):
    lines = [line for _, _, line in __import__("ui.lessons.quirks", fromlist=["PARAGRAPH"]).PARAGRAPH] * 60  # ~1,000 lines
    lines += (SHARED / "cs336" / "corpus.en").read_text().splitlines()
    one = prepare_compiled(select(lines, SentencePieceSpec(num_threads=1, split_by_whitespace=split)), SentencePieceSpec(num_threads=1))
    spec = SentencePieceSpec(num_threads=4, split_by_whitespace=split)
    many = prepare_compiled(select(lines, spec), spec)
    assert many.compiled.sentences() == one.compiled.sentences()
    assert sorted(many.compiled.words()) == sorted(
        prepare_compiled(select(lines, spec.but(num_threads=1)), spec.but(num_threads=1)).compiled.words()
    )
    assert many.required == one.required


def events(trainer):
    return [
        (e.rank, e.left, e.right, e.id, e.frequency, e.runner_up, e.runner_up_frequency, e.occurrences, e.dropped) for e in trainer.merges()
    ]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LINES, st.sampled_from([20, 40, 80, 300, 600]), OPTIONS, st.booleans())
@example(["abab aaa"] * 3, 40, {}, True)
def test_the_trainer_is_its_reference(lines, vocab_size, options, from_corpus):
    spec = SentencePieceSpec(vocab_size=vocab_size, hard_vocab_limit=False, **options)
    try:
        corpus = python_corpus(lines, spec)
    except ValueError:
        return
    python = Trainer(corpus, spec)
    compiled = CompiledTrainer(prepare_compiled(select(lines, spec), spec) if from_corpus else corpus, spec)
    assert events(compiled) == events(python)
    assert compiled.stop_reason == python.stop_reason
    assert compiled.model().pieces == python.model().pieces


def test_the_trainer_on_real_text_is_its_reference():
    spec = SentencePieceSpec(vocab_size=1500, byte_fallback=True)
    lines = (SHARED / "cs336" / "corpus.en").read_text().splitlines()
    assert train(sentences=lines, spec=spec, compiled=True).pieces == train(sentences=lines, spec=spec, compiled=False).pieces


def test_detail_comes_from_the_reference_with_the_same_merges():
    spec = SentencePieceSpec(vocab_size=60, hard_vocab_limit=False)
    lines = ["F1 F1 the theme", "aaa abab"]
    compiled = CompiledTrainer(prepare_compiled(select(lines, spec), spec), spec)
    detailed = list(compiled.merges(detail=True))
    assert all(e.detail is not None for e in detailed)
    assert [e.piece for e in detailed] == [e.piece for e in Trainer(python_corpus(lines, spec), spec).merges()]


# ---------------------------------------------------------------------------
# encoders

TRAINED = {}


def trained(options: tuple) -> SentencePieceModel:
    if options not in TRAINED:
        lines = (SHARED / "cs336" / "corpus.en").read_text().splitlines()[:300] + ["🦙 the llama 12345 ＡＢＣ", "日本語 テキスト"]
        TRAINED[options] = train(sentences=lines, spec=SentencePieceSpec(**dict(options)))
    return TRAINED[options]


MODELS = [
    (("vocab_size", 600),),
    (("vocab_size", 900), ("byte_fallback", True), ("user_defined_symbols", ("the", "🦙"))),
    (
        ("vocab_size", 500),
        ("treat_whitespace_as_suffix", True),
        ("normalization_rule_name", "identity"),
        ("unk_id", -1),
        ("byte_fallback", True),
    ),
]
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30) | st.lists(
    st.sampled_from(ALPHABET + ["  ", "\x00", "½"]), max_size=8
).map("".join)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(MODELS), TEXT | BYTES, st.booleans(), st.booleans())
def test_sentencepieces_encoder_is_its_reference(options, text, bos, eos):
    encoder = Encoder(trained(options))
    assert encoder.encode(text, add_bos=bos, add_eos=eos) == encoder.reference(text, add_bos=bos, add_eos=eos)


def made_up_model(scores: list[float], byte_fallback: bool) -> SentencePieceModel:
    """Pieces no trainer makes: UNUSED pieces to resegment, scores -0.0 and positive, a user-defined piece inside words."""
    pieces = [Piece("<unk>", 0.0, UNKNOWN), Piece("<s>", 0.0, CONTROL)]
    if byte_fallback:
        pieces += [Piece(byte_piece(b), 0.0, BYTE) for b in range(256)]
    normal = ["▁", "a", "b", "c", "ab", "bc", "abc", "▁a", "▁ab", "▁abc", "ca", "cab", "aa", "aaa"]
    kinds = [NORMAL, NORMAL, NORMAL, NORMAL, UNUSED, NORMAL, UNUSED, NORMAL, NORMAL, NORMAL, UNUSED, NORMAL, NORMAL, UNUSED]
    pieces += [Piece(p, scores[i % len(scores)], k) for i, (p, k) in enumerate(zip(normal, kinds))]
    pieces.append(Piece("bb", 0.0, USER_DEFINED))
    return SentencePieceModel(tuple(pieces), NormalizerSpec.named("identity"), {"model_type": 2, "byte_fallback": byte_fallback})


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    st.lists(st.sampled_from([-0.0, 0.0, -1.0, -2.0, 1.5, -1e-45, float("inf")]), min_size=1, max_size=6),
    st.booleans(),
    st.lists(st.sampled_from(["a", "b", "c", " ", "bb", "é", "🦙"]), max_size=14).map("".join),
)
def test_sentencepieces_encoder_on_made_up_models_is_its_reference(scores, byte_fallback, text):
    encoder = Encoder(made_up_model(scores, byte_fallback))
    assert encoder.encode(text) == encoder.reference(text)


def hf_python(tok: HFTokenizer, text: str) -> list[int]:
    """The tokenizer with its compiled BPE taken away."""
    compiled = tok._compiled
    tok._compiled = None
    core, bpe.core.core = bpe.core.core, None
    try:
        return tok.encode(text)
    finally:
        bpe.core.core = core
        tok._compiled = compiled


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_huggingfaces_bpe_on_llama2_is_its_reference(text):
    tok = _llama2()
    assert tok.encode(text) == hf_python(tok, text)


_LLAMA = []


def _llama2() -> HFTokenizer:
    if not _LLAMA:
        _LLAMA.append(HFTokenizer.load(SHARED / "llama2" / "tokenizer.json"))
    return _LLAMA[0]


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    st.lists(st.sampled_from([("a", "b"), ("b", "c"), ("ab", "c"), ("a", "bc"), ("c", "a"), ("ab", "ab"), ("a", "a")]), max_size=8),
    st.booleans(),
    st.booleans(),
    st.sampled_from([None, "<unk>"]),
    st.lists(st.sampled_from(["a", "b", "c", "é", "🦙", "x", "ab"]), max_size=14).map("".join),
)
def test_huggingfaces_bpe_on_made_up_merges_is_its_reference(merges, fuse, fallback, unk, text):
    vocab = {"<unk>": 0, "a": 1, "b": 2, "c": 3, "ab": 4, "bc": 5, "abc": 6, "ca": 7, "abab": 8, "aa": 9}
    vocab.update({byte_piece(b): 10 + i for i, b in enumerate(range(0x80, 0xC4))})  # some bytes only: é falls back, 🦙 does not
    config = {
        "model": {
            "type": "BPE",
            "vocab": vocab,
            "merges": [list(m) for m in merges],
            "fuse_unk": fuse,
            "byte_fallback": fallback,
            "unk_token": unk,
        }
    }
    tok = HFTokenizer(config)
    assert tok.encode(text) == hf_python(tok, text)


def test_without_the_core_training_and_encoding_give_the_same_results(tmp_path):
    script = (
        "import sys, json; sys.path.insert(0, sys.argv[1])\n"
        "import bpe.core\n"
        "from bpe.sentencepiece import train, SentencePieceSpec, Encoder\n"
        "lines = open(sys.argv[2]).read().splitlines()[:200]\n"
        "model = train(sentences=lines, spec=SentencePieceSpec(vocab_size=400, byte_fallback=True))\n"
        "print(json.dumps([bpe.core.core is None, [p.piece for p in model.pieces], Encoder(model).encode('the lowest 🦙')]))\n"
    )
    run = lambda env: json.loads(  # noqa: E731
        subprocess.run(
            [sys.executable, "-c", script, str(ROOT), str(SHARED / "cs336" / "corpus.en")],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    without, with_core = run({"BPE_CORE": "0"}), run({})
    assert without[0] is True and with_core[0] is False
    assert without[1:] == with_core[1:]


def test_a_broken_charsmap_is_refused_by_the_core_too():
    with pytest.raises(ValueError, match="broken"):
        bpe.core.core.SpmNormalizer(b"\x00\x04\x00\x00" + b"\x00" * 2000, True, True, True, False, ())


def test_llama2s_real_cases_with_the_core():
    tok = _llama2()
    for case in json.loads((SHARED / "llama2" / "tests.json").read_text()):
        assert tok.encode(case["text"]) == case["ids"]


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    st.lists(
        st.sampled_from([b"", b"ab cd", b"ab\r", b"x" * 120, b"a\xe2\x96\x85b", b"\xe2\x96\x85", b"\xe2\x96", b"\xff the", b"<s> 1"]),
        max_size=12,
    ),
    st.booleans(),
    st.sampled_from([0, 101]),
)
def test_the_core_reads_files_as_read_lines_and_select_do(tmp_path_factory, lines, final_newline, limit):
    path = tmp_path_factory.mktemp("files") / "lines.txt"
    path.write_bytes(b"\n".join(lines) + (b"\n" if final_newline else b""))
    spec = SentencePieceSpec(vocab_size=5000, hard_vocab_limit=False, max_sentence_length=100, input_sentence_size=limit)
    python = select(read_lines([path, path]), spec)
    try:
        expected = prepare(python, spec)
    except ValueError as error:
        with pytest.raises(ValueError, match=str(error)[:30]):
            prepare_files([path, path], spec)
        return
    corpus = prepare_files([path, path], spec)
    assert (corpus.lines.kept, corpus.lines.empty, corpus.lines.too_long, corpus.lines.reserved) == (
        len(python.lines),
        python.empty,
        python.too_long,
        python.reserved,
    )
    assert corpus.all_words() == expected.words and corpus.required == expected.required


def test_a_file_that_cannot_be_read_is_refused_in_one_sentence(tmp_path):
    with pytest.raises(ValueError, match="Cannot read .*missing.txt"):
        prepare_files([tmp_path / "missing.txt"], SentencePieceSpec())
