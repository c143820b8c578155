"""Every trainer reproduces the CS336 reference run on corpus.en exactly.

The reference files write token bytes through GPT-2's byte-to-unicode table
(b' the' reads 'Ġthe'); the special token is stored as its literal text, which
the table leaves unchanged because it is printable ASCII.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bpe import ALGORITHMS, PreTokens, pretokenize_file, train, train_bpe
from bpe.text.gpt2_bytes import to_unicode

SPECIAL = "<|endoftext|>"
VOCAB_SIZE = 500


def reference_merges(folder: Path) -> list[tuple[str, str]]:
    lines = (folder / "train-bpe-reference-merges.txt").read_text(encoding="utf-8").splitlines()
    return [tuple(line.split(" ")) for line in lines if line]


def reference_vocab(folder: Path) -> set[str]:
    return set(json.loads((folder / "train-bpe-reference-vocab.json").read_text(encoding="utf-8")))


def as_unicode(merges: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(to_unicode(left), to_unicode(right)) for left, right in merges]


@pytest.fixture(scope="module", params=list(ALGORITHMS))
def trained(request, cs336):
    """(algorithm, vocab, merges) of train_bpe on corpus.en, one run per algorithm."""
    algorithm = request.param
    vocab, merges = train_bpe(cs336 / "corpus.en", VOCAB_SIZE, [SPECIAL], algorithm=algorithm)
    return algorithm, vocab, merges


@pytest.fixture(scope="module")
def corpus_with_sequence(cs336) -> PreTokens:
    return pretokenize_file(cs336 / "corpus.en", special_tokens=[SPECIAL], keep_sequence=True)


def test_reference_files_are_consistent(cs336):
    # 256 bytes + 1 special token + the merges make up the reference vocab
    assert len(reference_merges(cs336)) == VOCAB_SIZE - 256 - 1
    assert len(reference_vocab(cs336)) == VOCAB_SIZE
    assert SPECIAL in reference_vocab(cs336)


def test_merges_equal_reference_merges(trained, cs336):
    algorithm, _, merges = trained
    assert as_unicode(merges) == reference_merges(cs336), algorithm


def test_vocab_values_equal_reference_vocab_keys(trained, cs336):
    algorithm, vocab, _ = trained
    assert len(vocab) == VOCAB_SIZE
    assert {to_unicode(token) for token in vocab.values()} == reference_vocab(cs336), algorithm


def test_special_token_is_the_last_id_and_stored_as_its_text(trained):
    _, vocab, _ = trained
    assert vocab[VOCAB_SIZE - 1] == SPECIAL.encode("utf-8")
    assert to_unicode(vocab[VOCAB_SIZE - 1]) == SPECIAL


def test_kept_sequence_holds_every_pretoken_occurrence(corpus_with_sequence):
    assert corpus_with_sequence.sequence is not None
    assert Counter(corpus_with_sequence.sequence) == corpus_with_sequence.counts
    assert not any(SPECIAL.encode() in token for token in corpus_with_sequence.sequence)


@pytest.mark.parametrize("with_sequence", [True, False], ids=["sequence", "counts-only"])
def test_positions_matches_reference_with_and_without_the_sequence(corpus_with_sequence, cs336, with_sequence):
    # positions is the one trainer that reads the order of occurrences; without it, it rebuilds one from counts
    corpus = corpus_with_sequence if with_sequence else PreTokens(corpus_with_sequence.counts)
    result = train(corpus, VOCAB_SIZE - 256 - 1, algorithm="positions", special_tokens=[SPECIAL])
    assert as_unicode(result.merges) == reference_merges(cs336)
    assert {to_unicode(t) for t in result.vocab.values()} == reference_vocab(cs336)
