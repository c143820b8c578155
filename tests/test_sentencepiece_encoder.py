"""Encoding the SentencePiece family exactly: as sentencepiece does from a .model, as HuggingFace does from a tokenizer.json.

- bpe/sentencepiece/encoder.py against sentencepiece's SentencePieceProcessor on models trained in the tests
  (byte fallback or <unk>, user-defined symbols, split digits, whitespace as suffix, identity normalization):
  ids, pieces and decoded text for any text (every script, emoji, control characters) and any bytes
  (malformed UTF-8), and the .model files written here loaded by sentencepiece itself.
- bpe/sentencepiece/hf.py against HuggingFace `tokenizers` on Llama 2's and Mistral's real tokenizer.json (their
  12 real cases each, then any text, with and without special tokens, and decoding), and on the tokenizer.json
  written here for a trained model, which `tokenizers` loads and which encodes as sentencepiece does where the
  two normalize alike (identity).
- encode_steps ends where encode does; .model files that are not SentencePiece BPE models are refused in one
  sentence, never with a traceback.
"""

from __future__ import annotations

import functools
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bpe.sentencepiece import SentencePieceSpec, model_bytes, parse_model, read_model, train, write_model
from bpe.sentencepiece.encoder import Encoder
from bpe.sentencepiece.hf import HFTokenizer, TokenizerJsonError, tokenizer_json, write_tokenizer_json
from bpe.sentencepiece.model_file import ModelFileError
from ui.lessons.quirks import PARAGRAPH

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
LINES = [text for _, _, text in PARAGRAPH] + (SHARED / "cs336" / "corpus.en").read_text().splitlines()[:400]
SPECS = {
    "unk": dict(vocab_size=1000),
    "byte fallback": dict(vocab_size=1500, byte_fallback=True),
    "user-defined": dict(vocab_size=800, byte_fallback=True, user_defined_symbols=["the", "🦙"], split_digits=True),
    "suffix identity": dict(
        vocab_size=600, treat_whitespace_as_suffix=True, normalization_rule_name="identity", remove_extra_whitespaces=False
    ),
    "identity": dict(vocab_size=1000, normalization_rule_name="identity", byte_fallback=True),
    "no dummy prefix": dict(vocab_size=700, add_dummy_prefix=False, byte_fallback=True, control_symbols=["<sep>"]),
}
# text the cases are made of: every script and then some
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30) | st.lists(
    st.sampled_from(
        [" ", "  ", "\n", "\t", "🦙", "é", "\u0301", "<s>", "</s>", "<unk>", "日本", "ا", "▁", "\x00", "\ufffd", "Ꙋ", "1234", "ｶﾞ", "½"]
    )
    | st.sampled_from(LINES).map(lambda line: line[:25]),
    max_size=6,
).map("".join)
BYTES = st.lists(
    st.sampled_from([b" ", b"a", b"\xe2\x96\x81", b"\xe2\x96", b"\xed\xa0\x80", b"\x00", b"\xff", b"\xf0\x9f\xa6\x99", b"the"]), max_size=10
).map(b"".join)


@functools.cache
def trained(name: str):
    """(our model, sentencepiece's processor on the same model's bytes)."""
    model = train(sentences=LINES, spec=SentencePieceSpec(**SPECS[name]))
    return model, spm.SentencePieceProcessor(model_proto=model_bytes(model))


@pytest.mark.parametrize("name", SPECS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=TEXT)
@example(text="  Hello   world  ")
@example(text="🦙🦙 the llama")
def test_encoding_is_sentencepieces(name, text):
    model, processor = trained(name)
    encoder = Encoder(model)
    ids = processor.encode(text)
    assert encoder.encode(text) == ids
    assert encoder.encode_as_pieces(text) == processor.encode(text, out_type=str)
    assert encoder.decode(ids) == processor.decode(ids)
    assert encoder.encode(text, add_bos=True, add_eos=True) == processor.encode(text, add_bos=True, add_eos=True)


@pytest.mark.parametrize("name", ["unk", "byte fallback"])
@settings(max_examples=50, deadline=None)
@given(data=BYTES)
def test_malformed_utf8_encodes_as_sentencepiece_does(name, data):
    model, processor = trained(name)
    assert Encoder(model).encode(data) == processor.encode(data)


def test_the_model_file_written_here_is_the_one_sentencepiece_loads(tmp_path):
    model, processor = trained("byte fallback")
    write_model(model, tmp_path / "tokenizer.model")
    loaded = spm.SentencePieceProcessor(model_file=str(tmp_path / "tokenizer.model"))
    text = "The library opens at nine 🦙 — 図書館は9時に開きます。"
    assert loaded.encode(text) == processor.encode(text) == Encoder(read_model(tmp_path / "tokenizer.model")).encode(text)


def test_encode_steps_end_where_encode_does():
    model, processor = trained("unk")
    normalized, steps = Encoder(model).encode_steps("the lowest newest")
    assert normalized == "▁the▁lowest▁newest"
    assert list(steps[-1].symbols) == processor.encode("the lowest newest", out_type=str)
    assert all(len(s.symbols) == len(normalized) - k - 1 for k, s in enumerate(steps))  # one symbol fewer a merge


# ---------------------------------------------------------------------------
# HuggingFace's files


@functools.cache
def hf(name: str):
    path = SHARED / name / "tokenizer.json"
    return HFTokenizer.load(path), tokenizers.Tokenizer.from_file(str(path))


@pytest.mark.parametrize("name", ["llama2", "mistral"])
def test_the_real_cases_of_llama2_and_mistral(name):
    ours, _ = hf(name)
    cases = json.loads((SHARED / name / "tests.json").read_text())
    assert len(cases) == 12
    for case in cases:
        assert ours.encode(case["text"]) == case["ids"], case["text"]


@pytest.mark.parametrize("name", ["llama2", "mistral"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT)
@example(text="<s>hello</s> <unk>")
@example(text="🦙Ꙋ\x00\ufffd")
def test_any_text_encodes_as_huggingface_does(name, text):
    ours, theirs = hf(name)
    ids = theirs.encode(text).ids
    assert ours.encode(text) == ids
    assert ours.encode(text, add_special_tokens=False) == theirs.encode(text, add_special_tokens=False).ids
    assert ours.decode(ids) == theirs.decode(ids)
    assert ours.decode(ids, skip_special_tokens=False) == theirs.decode(ids, skip_special_tokens=False)


@pytest.mark.parametrize("name", list(SPECS))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT)
def test_the_tokenizer_json_written_here_encodes_as_huggingface_and_sentencepiece_do(name, text):
    model, processor = trained(name)
    config = tokenizer_json(model)
    theirs = _hf_of(name)
    ids = theirs.encode(text).ids
    assert HFTokenizer(config).encode(text) == ids
    assert HFTokenizer(config).decode(ids) == theirs.decode(ids)
    if (
        model.normalizer.name == "identity"
        and not model.treat_whitespace_as_suffix
        and not any(p in text for p in ("<s>", "</s>", "<unk>", "<sep>", "▁"))
    ):
        # HuggingFace's character map works per grapheme, its converter knows no suffix, and sentencepiece strips a
        # '▁' of the text's own at its end as whitespace: without those the two agree
        assert ids == processor.encode(text)


@functools.cache
def _hf_of(name: str):
    return tokenizers.Tokenizer.from_str(json.dumps(tokenizer_json(trained(name)[0])))


def test_write_tokenizer_json_is_loaded_by_tokenizers(tmp_path):
    model, processor = trained("byte fallback")
    write_tokenizer_json(model, tmp_path / "tokenizer.json")
    loaded = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert loaded.encode("hello world").ids == processor.encode("hello world")


def test_a_tokenizer_json_of_another_family_is_refused_in_one_sentence(tmp_path):
    gpt2 = SHARED / "gpt2"
    config = {"model": {"type": "WordPiece", "vocab": {}}}
    with pytest.raises(TokenizerJsonError, match="WordPiece model"):
        HFTokenizer(config)
    config = json.loads((SHARED / "llama2" / "tokenizer.json").read_text())
    config["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False}
    with pytest.raises(TokenizerJsonError, match="ByteLevel pre-tokenizer"):
        HFTokenizer(config)
    assert gpt2.exists()


# ---------------------------------------------------------------------------
# .model files from anywhere


def test_a_unigram_model_is_refused_in_one_sentence(tmp_path):
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(LINES[16:200]), model_writer=out, vocab_size=300, model_type="unigram", hard_vocab_limit=False, minloglevel=2
    )
    with pytest.raises(ModelFileError, match="is a unigram model; this tool reads SentencePiece BPE models only"):
        parse_model(out.getvalue())


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_corrupt_model_file_is_refused_in_one_sentence_or_read(data):
    model, _ = trained("unk")
    blob = bytearray(model_bytes(model)[:3000])
    for _ in range(data.draw(st.integers(1, 5))):
        blob[data.draw(st.integers(0, len(blob) - 1))] = data.draw(st.integers(0, 255))
    blob = blob[: data.draw(st.integers(0, len(blob)))]
    try:
        parse_model(bytes(blob))
    except ModelFileError as error:
        assert str(error).endswith(".") and "\n" not in str(error)


def test_a_model_file_that_is_not_one_is_refused(tmp_path):
    (tmp_path / "x.model").write_bytes(b"\x00" * 100)
    with pytest.raises(ModelFileError):
        read_model(tmp_path / "x.model")
    with pytest.raises(ModelFileError, match="Cannot read"):
        read_model(tmp_path / "missing.model")
    with pytest.raises(ModelFileError, match="empty"):
        parse_model(b"")
