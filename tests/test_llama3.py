"""Llama 3's real tokenizer (../shared/llama3): byte-level BPE with HuggingFace's ignore_merges, loaded and encoded exactly.

Its pre-tokenizer is cl100k's regex (a Split that keeps the gaps: taken as our cl100k, with its compiled scanner),
and `"ignore_merges": true` makes a pre-token that is itself one of its 128,000 tokens that token, whatever the
merges would make of it: 588 of its tokens are not what their merges build (' việc' is 100769, where merging gives
three tokens). Held to the ids the real tokenizer gives (tests.json) and to HuggingFace `tokenizers` on any text.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe import Tokenizer
from bpe.files import formats

LLAMA3 = Path(__file__).resolve().parents[2] / "shared" / "llama3"
pytestmark = pytest.mark.skipif(not (LLAMA3 / "tokenizer.json").is_file(), reason="../shared/llama3 is not on this machine")


@pytest.fixture(scope="module")
def loaded():
    return formats.read(LLAMA3 / "tokenizer.json")


@pytest.fixture(scope="module")
def llama3(loaded):
    return Tokenizer.from_loaded(loaded)


@pytest.fixture(scope="module")
def hf():
    tokenizers = pytest.importorskip("tokenizers")
    return tokenizers.Tokenizer.from_file(str(LLAMA3 / "tokenizer.json"))


def python_path(tok: Tokenizer) -> Tokenizer:
    """The same tokenizer without the compiled core: the readable encoder's ids."""
    return Tokenizer(tok.vocab, tok.merges, tok.special_tokens, pretokenizer=tok.pretokenizer, ignore_merges=tok.ignore_merges)


def test_it_loads_as_cl100k_with_ignore_merges(llama3):
    assert llama3.pretokenizer.name == "cl100k" and llama3.ignore_merges
    assert len(llama3.vocab) == 128_256 and llama3.ids[b"<|begin_of_text|>"] == 128_000


def test_the_real_tokenizers_ids_for_its_own_test_cases(llama3, monkeypatch):
    cases = json.loads((LLAMA3 / "tests.json").read_text())
    assert len(cases) == 14
    for case in cases:
        assert llama3.encode(case["text"]) == case["ids"], case["text"][:40]
    monkeypatch.setattr("bpe.core.core", None)  # the readable encoder gives them too
    python = python_path(llama3)
    assert python._compiled is None
    for case in cases:
        assert python.encode(case["text"]) == case["ids"], case["text"][:40]


def test_a_pre_token_that_is_a_token_is_that_token_not_what_its_merges_make(loaded, llama3):
    assert llama3.encode(" việc") == [100769]
    merged = Tokenizer.from_loaded(dataclasses.replace(loaded, ignore_merges=False))
    assert merged.encode(" việc") == [3355, 26298, 66]
    assert llama3.encode(" việc", k=len(llama3.merges) - 1) == merged.encode(" việc", k=len(llama3.merges) - 1)  # k merges: merged


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=60) | st.sampled_from(["  việc nhiều\n\n", "x" * 300]))
def test_any_text_gives_huggingfaces_ids(llama3, hf, text):
    assert llama3.encode(text, allowed_special=(), disallowed_special=()) == hf.encode(text, add_special_tokens=False).ids


def test_saved_and_loaded_back_it_keeps_ignore_merges_and_huggingface_reads_it(llama3, hf, tmp_path):
    llama3.save(tmp_path)
    document = json.loads((tmp_path / "tokenizer.json").read_text())
    assert document["model"]["ignore_merges"] is True
    back = Tokenizer.load(tmp_path / "tokenizer.json")
    text = "Llama 3 writes việc and nhiều in one token each.\n"
    assert back.ignore_merges and back.encode(text) == llama3.encode(text)
    tokenizers = pytest.importorskip("tokenizers")
    assert (
        tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json")).encode(text).ids == hf.encode(text, add_special_tokens=False).ids
    )
