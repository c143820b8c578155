"""SentencePiece's normalizer (bpe/sentencepiece/normalizer.py) gives exactly what sentencepiece 0.2.3's does.

Against sentencepiece's own SentencePieceNormalizer: text over all of Unicode (every code point, and generated
strings), malformed UTF-8 byte by byte, every combination of the whitespace switches, identity and nmt_nfkc; the
map shipped with the package is the one a model trained by sentencepiece holds, rule for rule; a charsmap is read
from a .model and from a tokenizer.json; broken and hostile maps are refused in one sentence.
"""

from __future__ import annotations

import base64
import functools
import io
import json
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe.sentencepiece.model_file import charsmap_of
from bpe.sentencepiece.normalizer import CharsMap, Normalizer, NormalizerSpec, nmt_nfkc, to_text

spm = pytest.importorskip("sentencepiece")

SWITCHES = [
    dict(add_dummy_prefix=a, remove_extra_whitespaces=r, escape_whitespaces=e)
    for a in (True, False)
    for r in (True, False)
    for e in (True, False)
]
# bytes that make the interesting cases: spaces, ▁'s bytes, a cut-off character, a surrogate's, NUL, controls, fullwidth, é
PIECES = [b" ", b"  ", b"a", b"\xe2\x96\x81", b"\xe2\x96", b"\xed\xa0\x80", b"\x00", b"\n", b"\r", b"\t", b"\xef\xbc\xa1", b"e\xcc\x81"]
PIECES += [b"\xe3\x80\x80", b"\xe2\x80\x8b", b"\xc0\x80", b"\xf4\x90\x80\x80", b"\xff", b"\xf0\x9f\xa6\x99", b"\xc2\xbd", b"\xef\xbf\xbd"]


@functools.cache
def spm_normalizer(name: str, **switches: bool):
    return spm.SentencePieceNormalizer(rule_name=name, **switches)


@functools.cache
def normalizer(name: str, **switches: bool) -> Normalizer:
    return Normalizer(NormalizerSpec.named(name, **switches))


@pytest.fixture(scope="module")
def trained_model(tmp_path_factory) -> bytes:
    """A model sentencepiece trains itself (nmt_nfkc): the map it carries."""
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(["hello world, the normalizer's test"] * 20),
        model_writer=out,
        vocab_size=30,
        model_type="bpe",
        minloglevel=2,
    )
    return out.getvalue()


def test_the_shipped_map_is_the_one_sentencepiece_writes_into_a_model(trained_model):
    assert nmt_nfkc().blob in trained_model
    assert nmt_nfkc().blob == base64.b64decode(json.loads(json.dumps(base64.b64encode(nmt_nfkc().blob).decode())))


def test_the_shipped_map_has_sentencepieces_rules(trained_model):
    # its rules read out of the trie, against spm's Decompile of the rule by name (225,276 rules)
    rules = nmt_nfkc().rules()
    theirs = {key.encode(): value.encode() for key, value in spm_normalizer("nmt_nfkc").Decompile()}
    assert len(rules) == len(theirs) > 200_000
    assert rules == theirs


def test_every_code_point_normalizes_as_sentencepiece_does():
    # each code point after an 'a' (so that a key of two characters starting with it would show), in chunks
    ours, theirs = Normalizer(), spm_normalizer("nmt_nfkc")
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for i in range(0, len(points), 20_000):
        chunk = "".join("a" + chr(c) for c in points[i : i + 20_000])
        assert ours.normalize(chunk) == theirs.normalize(chunk), f"from U+{points[i]:04X}"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=40), st.sampled_from(SWITCHES), st.sampled_from(["nmt_nfkc", "identity"]))
def test_any_text_normalizes_as_sentencepiece_does(text, switches, name):
    assert normalizer(name, **switches).normalize(text) == spm_normalizer(name, **switches).normalize(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14), st.sampled_from(SWITCHES), st.sampled_from(["nmt_nfkc", "identity"]))
def test_any_bytes_normalize_as_sentencepiece_does(pieces, switches, name):
    data = b"".join(pieces)
    assert normalizer(name, **switches).normalize_bytes(data) == spm_normalizer(name, **switches).normalize(data)


@pytest.mark.parametrize("suffix", [False, True])
def test_the_dummy_prefix_goes_last_when_whitespace_is_a_suffix(suffix):
    normalizer = Normalizer(treat_whitespace_as_suffix=suffix)
    assert normalizer.normalize(" Hello  world ") == ("Hello▁world▁" if suffix else "▁Hello▁world")


def test_malformed_utf8_becomes_one_replacement_character_per_byte():
    assert to_text(b"a\xe2\x96b") == "a\ufffd\ufffdb"  # Python's errors="replace" gives one
    assert Normalizer().normalize_bytes(b"a\xe2\x96b") == "▁a\ufffd\ufffdb".encode()
    assert Normalizer().normalize("a\udc80b") == "▁a\ufffd\ufffd\ufffdb"  # a lone surrogate: its three bytes


def test_text_the_map_removes_normalizes_to_nothing():
    assert Normalizer().normalize("\u200b \u200b") == ""
    assert Normalizer().normalize("   ") == ""


def test_a_charsmap_is_read_from_a_model_and_from_a_tokenizer_json(tmp_path, trained_model):
    (tmp_path / "m.model").write_bytes(trained_model)
    assert charsmap_of(tmp_path / "m.model").blob == nmt_nfkc().blob
    config = {
        "normalizer": {
            "type": "Sequence",
            "normalizers": [{"type": "Precompiled", "precompiled_charsmap": base64.b64encode(nmt_nfkc().blob).decode()}],
        }
    }
    (tmp_path / "tokenizer.json").write_text(json.dumps(config))
    assert charsmap_of(tmp_path / "tokenizer.json").blob == nmt_nfkc().blob
    (tmp_path / "plain.json").write_text(json.dumps({"normalizer": None}))
    assert charsmap_of(tmp_path / "plain.json") is None


def test_a_user_defined_symbol_is_copied_not_mapped():
    assert Normalizer(user_defined=["ＡＢ"]).normalize("ＡＢＣ") == "▁ＡＢC"


@pytest.mark.parametrize(
    "blob, why",
    [
        (b"", "shorter than its own header"),
        (struct.pack("<I", 4096) + b"\0" * 100, "longer than the map"),
        (struct.pack("<I", 1000) + b"\0" * 2000, "multiple of 1024"),
        (struct.pack("<I", 1024) + b"\0" * 1024 + b"ab", "do not end with a NUL"),
        (struct.pack("<I", 1024) + b"\0" * 1024 + b"a\0", "does not hold together"),  # a root with no offset
        (
            struct.pack("<I", 1024) + struct.pack("<I", 0xFFFFFC00) + b"\0" * 1020 + b"a\0",
            "does not hold together",
        ),  # children past the end
    ],
)
def test_a_broken_charsmap_is_refused_in_one_sentence(blob, why):
    with pytest.raises(ValueError, match=why):
        CharsMap(blob)
