"""The SentencePiece BPE trainer (bpe/sentencepiece/trainer.py) makes exactly sentencepiece 0.2.3's model.

Each case trains sentencepiece itself (a few milliseconds) and ours on the same lines with the same options, and
holds every piece, score and type equal in id order -- and the .model files byte for byte equal: on real text in
many scripts (the 16-language paragraph, CS336's corpus), on nasty corpora (digits, mixed scripts, 'aaaa',
'abab', emoji, lines over 4192 bytes, U+2585, meta pieces in the text, \\r), over the options; a hypothesis test
over generated corpora and option combinations, one over characters from all of Unicode (the validity rule with
sentencepiece's script table); the refusals (a vocabulary too large or too small) as both say them; and what the
step page reads from the events (frequency-0 candidates, the runner-up, the pairs refused and why).
"""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe.sentencepiece.model_file import model_bytes, parse_model
from bpe.sentencepiece.spec import SentencePieceSpec
from bpe.sentencepiece.trainer import (
    DIGIT,
    SPACE_INSIDE,
    TOO_LONG,
    TWO_SCRIPTS,
    Trainer,
    prepare,
    read_lines,
    select,
    split_into_words,
    why_invalid,
)
from bpe.sentencepiece.training import train
from ui.lessons.quirks import PARAGRAPH

spm = pytest.importorskip("sentencepiece")

CS336 = Path(__file__).resolve().parents[1].parent / "shared" / "cs336" / "corpus.en"
LANGUAGES = [text for _, _, text in PARAGRAPH]
rnd = random.Random(7)
DIGITS = [
    " ".join(str(rnd.randint(0, 10 ** rnd.randint(1, 8))) + rnd.choice(["", ".", "F", "a1", "km", "１２"]) for _ in range(12))
    for _ in range(150)
]
REPEATS = ["aaaa aaa aa a aaaaa abab ababab abababab", "aaaaaaaaaaaaaaaaaaaaaa", "ab ab ab abab aabb"] * 5
EMOJI = [
    "I 🦙 llamas 👩‍👩‍👧 and 🇫🇷 flags ✊🏽 ok",
    "日本語のテキストとカタカナー、ひらがな。",
    "Ελληνικά και English mixed123 ٣٤٥ أرقام",
] * 10
LONG = ["short line " * 3, "x" * 5000, "long " * 900, "mid ▅ line", "ok line", "<s> and </s> and <unk> in text\r"] * 4


def spm_model(lines: list[str], **options) -> bytes:
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, model_type="bpe", minloglevel=2, **options)
    return out.getvalue()


def assert_same_model(lines: list[str], **options) -> None:
    """sentencepiece and ours on the same lines: both refuse, or the same pieces in the same order and the same file.

    sentencepiece is given only the options that differ from the defaults, as a spm_train command would be: it
    records every option it is given in the file, and ours records those that differ.
    """
    default = SentencePieceSpec()
    try:
        theirs = spm_model(lines, **{k: v for k, v in options.items() if k == "vocab_size" or v != getattr(default, k)})
    except RuntimeError:  # too large or too small a vocabulary, nothing to train on: ours refuses too, in a sentence
        with pytest.raises(ValueError):
            train(sentences=lines, spec=SentencePieceSpec(**options))
        return
    ours = train(sentences=lines, spec=SentencePieceSpec(**options))
    assert [(p.piece, p.score, p.type) for p in ours.pieces] == [(p.piece, p.score, p.type) for p in parse_model(theirs).pieces]
    assert model_bytes(ours) == theirs


CASES = [
    ("languages", LANGUAGES * 3, dict(vocab_size=800)),
    ("languages", LANGUAGES * 3, dict(vocab_size=1500, byte_fallback=True)),
    ("languages", LANGUAGES * 3, dict(vocab_size=900, character_coverage=1.0)),
    ("languages", LANGUAGES * 3, dict(vocab_size=700, split_by_number=False, split_by_unicode_script=False)),
    (
        "languages",
        LANGUAGES * 3,
        dict(vocab_size=600, user_defined_symbols=["the", "▁и"], control_symbols=["<sep>"], unk_id=3, bos_id=0, eos_id=-1, pad_id=1),
    ),
    ("digits", DIGITS, dict(vocab_size=300)),
    ("digits", DIGITS, dict(vocab_size=300, split_digits=True)),  # too few pieces: both refuse
    ("digits", DIGITS, dict(vocab_size=400, split_digits=True, hard_vocab_limit=False)),
    ("digits", DIGITS, dict(vocab_size=300, split_by_number=False)),
    ("repeats", REPEATS, dict(vocab_size=60, hard_vocab_limit=False)),
    ("repeats", REPEATS, dict(vocab_size=100, hard_vocab_limit=False, treat_whitespace_as_suffix=True)),
    ("repeats", REPEATS, dict(vocab_size=100, hard_vocab_limit=False, split_by_whitespace=False)),
    ("repeats", REPEATS, dict(vocab_size=100, hard_vocab_limit=False, allow_whitespace_only_pieces=True)),
    ("repeats", REPEATS, dict(vocab_size=300, hard_vocab_limit=False, max_sentencepiece_length=3)),
    ("emoji", EMOJI, dict(vocab_size=400, byte_fallback=True, hard_vocab_limit=False)),
    ("emoji", EMOJI, dict(vocab_size=200, hard_vocab_limit=False, normalization_rule_name="identity")),
    ("emoji", EMOJI, dict(vocab_size=200, hard_vocab_limit=False, add_dummy_prefix=False, remove_extra_whitespaces=False)),
    ("long lines", LONG, dict(vocab_size=50, hard_vocab_limit=False)),
    ("long lines", LONG, dict(vocab_size=50, hard_vocab_limit=False, user_defined_symbols=["ok", "line"], control_symbols=["<x>"])),
    ("long lines", LONG, dict(vocab_size=60, hard_vocab_limit=False, max_sentence_length=100, pretokenization_delimiter="and")),
]


@pytest.mark.parametrize("name, lines, options", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_the_model_is_sentencepieces(name, lines, options):
    assert_same_model(lines, **options)


@pytest.mark.parametrize(
    "options", [dict(vocab_size=2000), dict(vocab_size=1000, byte_fallback=True, split_digits=True, character_coverage=0.98)]
)
def test_cs336_corpus_makes_sentencepieces_model(tmp_path, options):
    # from the file itself, read with getline: spm_train --input=corpus.en
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(input=str(CS336), model_writer=out, model_type="bpe", minloglevel=2, **options)
    ours = train([CS336], SentencePieceSpec(**options))
    assert [(p.piece, p.score, p.type) for p in ours.pieces] == [(p.piece, p.score, p.type) for p in parse_model(out.getvalue()).pieces]


def test_lines_are_read_as_getline_reads_them(tmp_path):
    # \r kept, empty lines, a line of 4193 bytes, U+2585, no newline at the end, invalid UTF-8
    path = tmp_path / "lines.txt"
    path.write_bytes(b"ab\r\ncd\n\n\n" + b"y" * 4193 + b"\nab\xe2\x96\x85x\nlast \xff line\nab cd")
    lines = select(read_lines([path]), SentencePieceSpec())
    assert lines.lines == (b"ab\r", b"cd", b"last \xff line", b"ab cd")
    assert (lines.empty, lines.too_long, lines.reserved) == (2, 1, 1)
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        input=str(path), model_writer=out, model_type="bpe", minloglevel=2, vocab_size=30, hard_vocab_limit=False
    )
    ours = train([path], SentencePieceSpec(vocab_size=30, hard_vocab_limit=False))
    assert ours.pieces == parse_model(out.getvalue()).pieces  # (spm_train --input records the file's name in the model)


def test_input_sentence_size_reads_the_first_lines(tmp_path):
    path = tmp_path / "many.txt"
    path.write_text("".join(f"line {i} {'abc' * (i % 7)}\n" for i in range(400)))
    options = dict(vocab_size=60, hard_vocab_limit=False, input_sentence_size=150)
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        input=str(path), model_writer=out, model_type="bpe", minloglevel=2, shuffle_input_sentence=False, **options
    )
    ours = train([path], SentencePieceSpec(**options))
    assert [p.piece for p in ours.pieces] == [p.piece for p in parse_model(out.getvalue()).pieces]


ALPHABET = list("aab  ab1.Fカナー漢ひ\u0301é▁") + ["🦙", "<s>", "\r", "\t", "\u3000", "\u200b", "▅", "\x1f", "１"]
OPTIONS = {
    "byte_fallback": st.booleans(),
    "split_digits": st.booleans(),
    "split_by_number": st.booleans(),
    "treat_whitespace_as_suffix": st.booleans(),
    "split_by_whitespace": st.booleans(),
    "allow_whitespace_only_pieces": st.booleans(),
    "max_sentencepiece_length": st.sampled_from([2, 4, 16]),
    "character_coverage": st.sampled_from([0.98, 0.9995, 1.0]),
    "normalization_rule_name": st.sampled_from(["nmt_nfkc", "identity"]),
    "add_dummy_prefix": st.booleans(),
    "remove_extra_whitespaces": st.booleans(),
    "split_by_unicode_script": st.booleans(),
}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.lists(st.sampled_from(ALPHABET), max_size=14).map("".join), min_size=1, max_size=12),
    st.sampled_from([20, 40, 80, 300, 600]),
    st.fixed_dictionaries({}, optional=OPTIONS),
)
def test_any_small_corpus_and_options_make_sentencepieces_model(lines, vocab_size, options):
    assert_same_model(lines, vocab_size=vocab_size, hard_vocab_limit=False, **options)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.text(st.characters(blacklist_categories=("Cs",)), min_size=2, max_size=4), min_size=1, max_size=40),
    st.fixed_dictionaries({}, optional={k: OPTIONS[k] for k in ("split_digits", "split_by_number", "split_by_unicode_script")}),
)
def test_pairs_from_all_of_unicode_are_valid_as_sentencepiece_says(words, options):
    # identity normalization keeps the characters as they are: which pairs merge is the validity rule with spm's script table
    lines = [w.replace("\n", "") for w in words * 3]
    assert_same_model(lines, vocab_size=400, hard_vocab_limit=False, normalization_rule_name="identity", character_coverage=1.0, **options)


@pytest.mark.parametrize(
    "piece, options, why",
    [
        ("ab", {}, None),
        ("F1", {}, TWO_SCRIPTS),
        ("F1", {"split_by_number": False}, None),
        ("1.", {}, None),
        ("12", {"split_digits": True}, DIGIT),
        ("a▁b", {}, SPACE_INSIDE),
        ("▁ab", {}, None),
        ("ab▁", {"treat_whitespace_as_suffix": True}, None),
        ("カナー漢ひ", {}, None),
        ("e\u0301", {}, None),
        ("abc", {"max_sentencepiece_length": 2}, TOO_LONG),
    ],
)
def test_why_a_pair_is_not_a_candidate(piece, options, why):
    assert why_invalid(piece, SentencePieceSpec(**options)) == why


def test_words_split_at_the_whitespace_mark():
    assert split_into_words("▁a▁▁b") == ["▁a", "▁", "▁b"]
    assert split_into_words("a▁b▁", treat_whitespace_as_suffix=True) == ["a▁", "b▁"]
    assert split_into_words("▁▁a", allow_whitespace_only_pieces=True) == ["▁▁a"]


def test_a_small_corpus_fills_the_vocabulary_with_frequency_0_pieces():
    spec = SentencePieceSpec(vocab_size=40, hard_vocab_limit=False)
    trainer = Trainer(prepare(select(["abab aaa"] * 3, spec), spec), spec)
    events = list(trainer.merges())
    assert [e.piece for e in events if e.frequency == 0]  # pairs no longer in the corpus still became pieces
    assert events[-1].frequency == 0 and events[-1].runner_up is None  # ... until no candidate was left
    assert [p.piece for p in trainer.model().pieces] == [
        p.piece for p in parse_model(spm_model(["abab aaa"] * 3, vocab_size=40, hard_vocab_limit=False)).pieces
    ]
    first = events[0]
    # 'aaa' holds (a, a) twice: 6 like (a, b), and 'aa' < 'ab' breaks the tie
    assert (first.left, first.right, first.frequency, first.id, first.runner_up, first.runner_up_frequency) == (
        "a",
        "a",
        6,
        3,
        ("a", "b"),
        6,
    )
    assert first.tie


@pytest.mark.parametrize("split_digits, pair, why", [(False, "F1", TWO_SCRIPTS), (True, "12", DIGIT)])
def test_detail_says_why_frequent_pairs_are_not_candidates(split_digits, pair, why):
    spec = SentencePieceSpec(vocab_size=30, hard_vocab_limit=False, split_digits=split_digits)
    trainer = Trainer(prepare(select(["F1 " * 8 + "ab", "ab" + " 12" * 10], spec), spec), spec)
    first = next(trainer.merges(detail=True))
    assert {(a + b): reason for a, b, _, reason in first.detail.refused}[pair] == why
    assert first.detail.top[0] == (first.left, first.right, first.frequency)


def recounted_refused(trainer: Trainer, spec: SentencePieceSpec, floor: int) -> tuple:
    """MergeDetail.refused as its definition says, counted from every word now: the adjacent pairs that may not be made,
    at least `floor` frequent, most frequent first, then by their strings."""
    counts: dict[tuple[str, str], int] = {}
    for sid, row in enumerate(trainer.symbols):
        kept = [s.piece for s in row if s is not None]
        for a, b in zip(kept, kept[1:]):
            counts[(a, b)] = counts.get((a, b), 0) + trainer.weights[sid]
    why = {key: "a character outside the coverage" if "▅" in key else why_invalid(key[0] + key[1], spec) for key in counts}
    found = sorted(((n, key) for key, n in counts.items() if why[key] is not None and n >= floor), key=lambda nk: (-nk[0], nk[1]))
    return tuple((a, b, n, why[(a, b)]) for n, (a, b) in found[:40])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.lists(st.sampled_from(list("aab  1F2カ漢é▅") + ["🦙"]), max_size=16).map("".join), min_size=1, max_size=10),
    st.fixed_dictionaries({}, optional={k: OPTIONS[k] for k in ("split_digits", "split_by_whitespace", "max_sentencepiece_length")}),
)
def test_the_refused_pairs_kept_from_merge_to_merge_are_a_recount_of_every_word(lines, options):
    spec = SentencePieceSpec(vocab_size=200, hard_vocab_limit=False, **options)
    try:
        trainer = Trainer(prepare(select(lines, spec), spec), spec)
    except ValueError:  # nothing to train on
        return
    merges = trainer.merges(detail=True)
    while True:
        before = trainer.symbols  # the words as the next merge's detail sees them (the merge rewrites them after)
        snapshot = [row[:] for row in before]
        event = next(merges, None)
        if event is None:
            return
        top = event.detail.top
        floor = max(top[-1][2] if len(top) == 40 else 1, 1)
        rewritten, trainer.symbols = trainer.symbols, snapshot
        assert event.detail.refused == recounted_refused(trainer, spec, floor)
        trainer.symbols = rewritten


def test_coverage_keeps_the_frequent_characters_and_says_which_fell_out():
    spec = SentencePieceSpec(vocab_size=100, character_coverage=0.98)
    corpus = prepare(select(["a" * 200 + "b" * 10 + "ö"], spec), spec)
    assert [c for c, _ in corpus.required] == ["a", "b"] and corpus.dropped == (("ö", 1), ("▁", 1))


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(character_coverage=0.5), "between 0.98 and 1"),
        (dict(input_sentence_size=50), "more than 100"),
        (dict(unk_id=-1), "must have an id"),
        (dict(control_symbols=("<unk>",)), "must not be a control"),
        (dict(normalization_rule_name="nfkc"), "must be one of"),
    ],
)
def test_settings_sentencepiece_refuses_are_refused_in_one_sentence(options, message):
    with pytest.raises(ValueError, match=message):
        train(sentences=["a b c"], spec=SentencePieceSpec(**options))
