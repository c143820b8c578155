"""Tokenizer.load of the SentencePiece family: a .model or a tokenizer.json gives a SentencePieceTokenizer with the
everyday interface, exact to the tool whose file it is.

- Llama 2's and Mistral's real tokenizer.json through Tokenizer.load: their 12 real cases each (which hold <s>:
  add_special_tokens=True), and any text against HuggingFace `tokenizers`, encoding and decoding.
- .model files trained in the tests, through Tokenizer.load, against sentencepiece's SentencePieceProcessor.
- Uploads (formats.read_uploads), a folder saved and loaded again (the .model first), pickling; encode_iterable
  reads lines, decode_blocks is decode_bytes a block at a time, encode_steps ends in encode's ids.
- A unigram .model, a corrupt one, and a tokenizer.json of another family are refused in one sentence.
"""

from __future__ import annotations

import errno
import functools
import io
import json
import os
import pickle
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bpe import SentencePieceTokenizer, Tokenizer, atomic
from bpe.files import formats
from bpe.sentencepiece import SentencePieceSpec, model_bytes, train

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
LINES = (SHARED / "cs336" / "corpus.en").read_text().splitlines()[:300] + ["図書館は9時に開きます。", "Ναι, η βιβλιοθήκη 🦙"]
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20) | st.lists(
    st.sampled_from(
        [" ", "  ", "\n", "\t", "🦙", "é", "<s>", "</s>", "<unk>", "日本", "▁", "\x00", "\ufffd", "Ꙋ", "1234", "the", "lowest"]
    ),
    max_size=8,
).map("".join)


@functools.cache
def real(name: str) -> tuple[SentencePieceTokenizer, object]:
    path = SHARED / name / "tokenizer.json"
    return Tokenizer.load(path), tokenizers.Tokenizer.from_file(str(path))


@functools.cache
def trained(byte_fallback: bool = True) -> tuple[bytes, object]:
    """A .model trained here, and sentencepiece's processor on it."""
    data = model_bytes(
        train(sentences=LINES, spec=SentencePieceSpec(vocab_size=700 if byte_fallback else 500, byte_fallback=byte_fallback))
    )
    return data, spm.SentencePieceProcessor(model_proto=data)


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("spm") / "tokenizer.model"
    path.write_bytes(trained()[0])
    return path


@functools.cache
def from_model(path: Path) -> SentencePieceTokenizer:
    return Tokenizer.load(path)


# ---------------------------------------------------------------------------
# Llama 2 and Mistral, as HuggingFace tokenizers


@pytest.mark.parametrize("name", ["llama2", "mistral"])
def test_the_real_cases_through_tokenizer_load(name):
    tok, _ = real(name)
    assert isinstance(tok, SentencePieceTokenizer) and tok.family == "sentencepiece" and tok.follows == "tokenizers"
    cases = json.loads((SHARED / name / "tests.json").read_text())
    assert len(cases) == 12
    for case in cases:
        assert case["ids"][0] == 1  # the real ids hold <s>, which HuggingFace's post-processor puts first
        assert tok.encode(case["text"], add_special_tokens=True) == case["ids"], case["text"]
        assert tok.encode(case["text"]) == case["ids"][1:], case["text"]
    assert tok.special_tokens == ("<unk>", "<s>", "</s>") and tok.n_vocab == 32000 and tok.eot_token == 2


@pytest.mark.parametrize("name", ["llama2", "mistral"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT)
@example(text="<s>hello</s> <unk>🦙Ꙋ\x00")
def test_any_text_as_huggingface_tokenizers(name, text):
    tok, theirs = real(name)
    assert tok.encode(text) == theirs.encode(text, add_special_tokens=False).ids
    ids = theirs.encode(text).ids
    assert tok.encode(text, add_special_tokens=True) == ids
    assert tok.decode(ids) == theirs.decode(ids)
    assert tok.decode(ids, skip_special_tokens=False) == theirs.decode(ids, skip_special_tokens=False)
    assert tok.encode(text.encode()) == tok.encode(text)


def test_the_vocabulary_names_pieces_and_their_bytes():
    tok, _ = real("llama2")
    assert tok.pieces[15043] == "▁Hello" and tok.vocab[15043] == b" Hello" and tok.piece_ids["▁Hello"] == 15043
    assert tok.pieces[13] == "<0x0A>" and tok.vocab[13] == b"\n" and tok.vocab[1] == b"<s>"
    assert tok.ids[b" Hello"] == 15043 and tok.max_token_value == 31999
    assert tok.encode_batch(["Hello world", "a"], add_special_tokens=True) == [[1, 15043, 3186], [1, 263]]
    assert tok.decode_batch([[15043, 3186]]) == ["Hello world"]


def test_an_id_outside_the_vocabulary_is_refused_in_one_sentence():
    tok, _ = real("llama2")
    with pytest.raises(ValueError, match=r"^Token id 32000 is not in the vocabulary \(ids 0..31999\)\.$"):
        tok.decode([15043, 32000])


def test_bytes_of_byte_pieces_are_kept_by_decode_bytes_and_replaced_by_decode():
    tok, theirs = real("llama2")
    ids = [15043, tok.piece_ids["<0xF0>"], tok.piece_ids["<0x9F>"], 3186]  # an emoji cut short
    assert tok.decode(ids) == theirs.decode(ids) == "Hello\ufffd\ufffd world"
    assert tok.decode_bytes(ids) == b"Hello\xf0\x9f world"


# ---------------------------------------------------------------------------
# .model files, as sentencepiece


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=TEXT)
@example(text="  Hello   world  🦙")
def test_a_model_file_encodes_as_sentencepiece(model_file, text):
    tok = from_model(model_file)
    _, processor = trained()
    assert tok.follows == "sentencepiece" and tok.model is not None
    assert tok.encode(text) == processor.encode(text)
    assert tok.encode(text, add_special_tokens=True) == processor.encode(text, add_bos=True)
    ids = processor.encode(text)
    assert tok.decode(ids) == processor.decode(ids)
    assert tok.encode(text.encode() + b"\xff") == processor.encode(text.encode() + b"\xff")


def test_without_byte_fallback_unknown_characters_are_one_unk(tmp_path):
    data, processor = trained(byte_fallback=False)
    (tmp_path / "tokenizer.model").write_bytes(data)
    tok = Tokenizer.load(tmp_path)
    assert tok.encode("a 🦙🦙 b") == processor.encode("a 🦙🦙 b") and tok.piece_ids["<unk>"] in tok.encode("a 🦙🦙 b")
    with pytest.raises(KeyError):  # no byte pieces: a byte-level name for a byte is not one of its pieces
        tok.piece_ids["<0x41>"]


def test_encode_steps_end_in_encodes_ids(model_file):
    for tok in (Tokenizer.load(model_file), real("llama2")[0]):
        text = "<s>the lowest 🦙"
        words = tok.encode_steps(text)
        assert [i for word in words for i in word.ids] == tok.encode(text)
        for word in words:
            assert word.steps[0].at is None and word.steps[0].id is None  # the start
            for before, after in zip(word.steps, word.steps[1:], strict=False):
                assert len(after.symbols) == len(before.symbols) - 1 and after.symbols[after.at] == tok.pieces[after.id]
    by_score = Tokenizer.load(model_file).encode_steps("the lowest")
    assert by_score[0].text == "▁the▁lowest" and all(s.score is not None and s.rank is None for s in by_score[0].steps[1:])
    by_rank = real("llama2")[0].encode_steps("<s>the lowest")
    assert by_rank[0].special and by_rank[0].ids == (1,) and all(s.rank is not None for s in by_rank[1].steps[1:])


# ---------------------------------------------------------------------------
# streams: lines in, blocks of ids out


LINE_TEXT = st.lists(st.sampled_from(["a", "the lowest", " ", "\n", "\n\n", "🦙", "日本", "é"]), max_size=12).map("".join)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=LINE_TEXT, cuts=st.lists(st.integers(0, 40), max_size=4), as_bytes=st.booleans(), add=st.booleans())
def test_encode_iterable_encodes_each_line(model_file, text, cuts, as_bytes, add):
    lines = text.split("\n")
    if lines[-1] == "":  # after a last newline, or of an empty text: no line
        lines.pop()
    data = text.encode() if as_bytes else text
    bounds = sorted({0, len(data), *(min(c, len(data)) for c in cuts)})
    pieces = [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    for tok in (from_model(model_file), real("mistral")[0]):
        expected = [i for line in lines for i in tok.encode(line, add_special_tokens=add)]
        assert list(tok.encode_iterable(pieces, add_special_tokens=add)) == expected


def test_encode_iterable_takes_str_or_bytes_not_a_mix(model_file):
    with pytest.raises(ValueError, match="all str or all bytes"):
        list(Tokenizer.load(model_file).encode_iterable(["a\n", b"b"]))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=TEXT, specials=st.lists(st.sampled_from([0, 1, 2]), max_size=3), cuts=st.lists(st.integers(0, 30), max_size=4), skip=st.booleans()
)
def test_decode_blocks_is_decode_bytes_a_block_at_a_time(model_file, text, specials, cuts, skip):
    for tok in (from_model(model_file), real("llama2")[0]):
        ids = specials[:1] + tok.encode(text) + specials[1:] + tok.encode(text[::-1])
        bounds = sorted({0, len(ids), *(min(c, len(ids)) for c in cuts)})
        blocks = [ids[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
        assert b"".join(tok.decode_blocks(blocks, skip_special_tokens=skip)) == tok.decode_bytes(ids, skip_special_tokens=skip)


# ---------------------------------------------------------------------------
# files: uploads, folders, pickles


def test_uploads_of_either_file_are_recognised(model_file):
    llama = (SHARED / "llama2" / "tokenizer.json").read_bytes()
    for files, follows in [
        ({"tokenizer.json": llama}, "tokenizers"),
        ({"llama-2.json": llama}, "tokenizers"),  # another name: told by its content
        ({"tokenizer.model": model_file.read_bytes()}, "sentencepiece"),
        ({"my-run.model": model_file.read_bytes()}, "sentencepiece"),  # a .model by its suffix
    ]:
        loaded = formats.read_uploads(files)
        assert loaded.family == "sentencepiece"
        assert Tokenizer.from_loaded(loaded).follows == follows


def test_a_saved_model_writes_both_files_and_loads_the_model_first(model_file, tmp_path):
    tok = Tokenizer.load(model_file)
    written = tok.save(tmp_path / "out")
    assert [p.name for p in written] == [
        "tokenizer.model",
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        formats.MANIFEST,
    ]
    assert (tmp_path / "out" / "tokenizer.model").read_bytes() == model_file.read_bytes()
    again = Tokenizer.load(tmp_path / "out")
    assert again.follows == "sentencepiece" and again.encode("the lowest 🦙") == tok.encode("the lowest 🦙")
    text = "Hello there, the lowest 🦙"
    assert tokenizers.Tokenizer.from_file(str(tmp_path / "out" / "tokenizer.json")).encode(text).ids == tok.encode(text)
    assert Tokenizer.load(tmp_path / "out" / "tokenizer.json").follows == "tokenizers"


def test_a_saved_tokenizer_json_is_the_file_it_was_read_from(tmp_path):
    tok, theirs = real("mistral")
    tok.save(tmp_path)
    assert not (tmp_path / "tokenizer.model").exists()
    again = Tokenizer.load(tmp_path)
    assert json.loads((tmp_path / "tokenizer.json").read_text()) == json.loads((SHARED / "mistral" / "tokenizer.json").read_text())
    assert again.encode("Hello 🦙 world", add_special_tokens=True) == theirs.encode("Hello 🦙 world").ids


def test_a_save_replaces_the_other_familys_files(model_file, tmp_path):
    byte_level = Tokenizer.from_merges([(b"l", b"o"), (b"lo", b"w")], ["<|endoftext|>"])
    byte_level.save(tmp_path)
    Tokenizer.load(model_file).save(tmp_path)
    assert not (tmp_path / "vocab.json").exists() and Tokenizer.load(tmp_path).family == "sentencepiece"
    byte_level.save(tmp_path)
    assert not (tmp_path / "tokenizer.model").exists() and Tokenizer.load(tmp_path).family == "byte-level"


def test_a_save_cut_short_between_renames_is_refused_not_a_mix(model_file, tmp_path, monkeypatch):
    Tokenizer.load(model_file).save(tmp_path)
    other = SentencePieceTokenizer.from_model(train(sentences=LINES, spec=SentencePieceSpec(vocab_size=400)))
    real_replace, calls = os.replace, []

    def replace(*args):  # the manifest saying a save is under way and the .model are renamed; the tokenizer.json is not
        calls.append(args)
        if len(calls) > 2:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real_replace(*args)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(atomic.OutputError, match="^Cannot write "):
        other.save(tmp_path)
    monkeypatch.undo()
    with pytest.raises(ValueError, match=r"did not finish \(tokenizer.model is from it, tokenizer.json is from the one before\)"):
        Tokenizer.load(tmp_path)


def test_a_tokenizer_and_what_a_file_held_pickle_as_the_file(model_file):
    for tok in (Tokenizer.load(model_file), real("llama2")[0]):
        again = pickle.loads(pickle.dumps(tok))
        assert again.encode("the lowest 🦙") == tok.encode("the lowest 🦙") and again.follows == tok.follows
        # the app reads an upload in a worker process and hands the server what it read
        loaded = pickle.loads(pickle.dumps(tok._loaded))
        assert Tokenizer.from_loaded(loaded).encode("the lowest 🦙") == tok.encode("the lowest 🦙")


# ---------------------------------------------------------------------------
# refusals, one sentence each


def test_a_unigram_model_is_refused_in_one_sentence(tmp_path):
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(LINES[:200]), model_writer=out, vocab_size=300, model_type="unigram", hard_vocab_limit=False, minloglevel=2
    )
    (tmp_path / "tokenizer.model").write_bytes(out.getvalue())
    message = r"is a unigram model; this tool reads SentencePiece BPE models only \(model_type=bpe\)\.$"
    with pytest.raises(ValueError, match=message):
        Tokenizer.load(tmp_path)
    with pytest.raises(ValueError, match=message):
        formats.read_uploads({"t5.model": out.getvalue()})


@pytest.mark.parametrize("data", [b"", b"\x00" * 64, b"\x0a\xff\xff\xff\xff\x0f", b"not a model at all"])
def test_a_corrupt_model_is_refused_in_one_sentence(tmp_path, data):
    (tmp_path / "tokenizer.model").write_bytes(data)
    with pytest.raises(ValueError) as caught:
        Tokenizer.load(tmp_path / "tokenizer.model")
    assert str(caught.value).endswith(".") and "\n" not in str(caught.value)


def test_a_tokenizer_json_of_the_family_with_a_unigram_model_is_refused(tmp_path):
    document = json.loads((SHARED / "llama2" / "tokenizer.json").read_text())
    document["model"] = {"type": "Unigram", "vocab": [["<unk>", 0.0]], "unk_id": 0}
    (tmp_path / "tokenizer.json").write_text(json.dumps(document))
    with pytest.raises(ValueError, match="holds a Unigram model; this tool reads BPE models of the SentencePiece family"):
        Tokenizer.load(tmp_path)


def test_extra_special_tokens_are_refused_for_the_family():
    with pytest.raises(ValueError, match="special tokens are its meta pieces"):
        Tokenizer.load(SHARED / "llama2" / "tokenizer.json", special_tokens=["<|endoftext|>"])


def test_bpe_diff_refuses_the_familys_merges_in_one_sentence(model_file):
    from bpe.files.merges_file import read_merges

    for path in (SHARED / "llama2" / "tokenizer.json", model_file):
        with pytest.raises(ValueError, match="a SentencePiece tokenizer, whose pieces are made of characters, not bytes"):
            read_merges(path)
