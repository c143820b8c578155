"""Continuing a tokenizer's training (bpe train MORE --from TOKENIZER): every id and merge kept, and the new merges are
what the definition says -- the new text's counts after the existing merges, trained on under the rule.

The property: continuing from the first k merges of a run on the same text gives exactly that run's merges, under
every tie-break rule and with every trainer (the compiled heap started from words of token ids among them). Against
the definition itself: an oracle written here (count every pair of the GPT-2-encoded pre-tokens, take the highest,
merge, again) gives GPT-2's continuation. Every format continues alike: ours, GPT-2's files, tokenizer.json, .tiktoken.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bpe import Tokenizer, TrainSpec, pretokenize, train
from bpe.cli import main
from bpe.data.corpora import stdlib_prose
from bpe.rule import TIE_BREAKS
from bpe.tokenizer.continued import continue_from_counts, continue_training, continuing_spec
from bpe.train import ALGORITHMS
from bpe.trainer import encode_words

SPECIAL = "<|endoftext|>"
WORDS = ["low", " lower", " newest", " widest", " wider", "aaaa", " aaa", " ab", "ba", " 9.11", " café", "日本", " 🙂"]
TRAINERS = [name for name in ALGORITHMS if name != "positions"]  # positions: below, on a small corpus (it links every occurrence)


@st.composite
def texts(draw) -> str:
    words = draw(st.lists(st.sampled_from(WORDS) | st.text(alphabet="abcé ", min_size=1, max_size=6), min_size=1, max_size=40))
    return "".join(words)


def run_of(text: str, merges: int, spec: TrainSpec):
    return train(pretokenize(text, special_tokens=list(spec.special_tokens)), merges, spec)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts(), rule=st.sampled_from(TIE_BREAKS), algorithm=st.sampled_from(TRAINERS), k=st.integers(0, 40), more=st.integers(1, 40))
@example(text="low lower newest widest " * 3, rule="cs336", algorithm="heap_c", k=0, more=10)  # from bytes alone
@example(text="aaaa aaa aa", rule="huggingface", algorithm="heap_c", k=1, more=9)  # runs of one byte
def test_continuing_from_the_first_k_merges_of_a_run_gives_that_run(text, rule, algorithm, k, more):
    spec = TrainSpec(special_tokens=(SPECIAL,), tie_break=rule, algorithm=algorithm)
    full = run_of(text, k + more, spec)
    first = Tokenizer.from_merges(full.merges[:k], [SPECIAL])
    counts = pretokenize(text, special_tokens=[SPECIAL]).counts
    done = continue_from_counts(first, counts, len(first.vocab) + more, continuing_spec(first, tie_break=rule, algorithm=algorithm))
    assert done.tokenizer.merges == full.merges
    assert list(done.counts) == [e.count for e in full.events[k:]]
    assert all(done.tokenizer.vocab[i] == token for i, token in first.vocab.items())  # every id kept, the special token's too


@settings(max_examples=60, deadline=None)
@given(text=texts(), other=texts(), k=st.integers(0, 60), long=st.integers(0, 200))
def test_the_trainer_starts_from_each_pre_token_as_the_tokenizer_encodes_it(text, other, k, long):
    merges = run_of(text, k, TrainSpec()).merges
    tok = Tokenizer.from_merges(merges)  # its ids are the trainer's: bytes, then the merges in order
    counts = pretokenize(other + " " + text[:3] * long).counts  # words past encoder.py's LONG_WORD too
    assert encode_words(counts, merges) == {tuple(tok._word_ids(word, len(merges))): n for word, n in counts.items()}


@pytest.mark.parametrize("rule", TIE_BREAKS)
def test_the_positions_trainer_and_no_special_token_continue_alike(rule):
    text = "low lower lowest newer newest widest " * 5
    spec = TrainSpec(tie_break=rule, algorithm="positions")
    full = run_of(text, 30, spec)
    first = Tokenizer.from_merges(full.merges[:12])
    done = continue_from_counts(first, pretokenize(text).counts, 256 + 30, continuing_spec(first, tie_break=rule, algorithm="positions"))
    assert done.tokenizer.merges == full.merges
    assert done.tokenizer.vocab == Tokenizer.from_merges(full.merges).vocab  # no special token: the ids of the full run, too


# ---------------------------------------------------------------------------
# against the definition, from GPT-2


def oracle(tok: Tokenizer, counts: dict[bytes, int], n: int) -> list[tuple[bytes, bytes]]:
    """The definition, naively: each pre-token encoded with tok, as tuples of token bytes; then n times: count every pair,
    take the highest count (a tie: the greater (left bytes, right bytes), cs336's rule), merge it left to right everywhere."""
    words = Counter()
    for word, count in counts.items():
        words[tuple(tok.vocab[i] for i in tok._word_ids(word, len(tok.merges)))] += count
    merges = []
    for _ in range(n):
        pairs = Counter()
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += count
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], p))
        merges.append(best)
        rewritten = Counter()
        for word, count in words.items():
            out, i = [], 0
            while i < len(word):
                if word[i : i + 2] == best:
                    out.append(best[0] + best[1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            rewritten[tuple(out)] += count
        words = rewritten
    return merges


@pytest.fixture(scope="module")
def prose() -> str:
    return stdlib_prose(300_000)


def test_gpt2_continued_keeps_every_id_and_learns_what_the_definition_says(gpt2, prose, tmp_path):
    tok = Tokenizer.load(gpt2)
    (tmp_path / "more.txt").write_text(prose)
    more = continue_training(tok, tmp_path / "more.txt", len(tok.vocab) + 40)
    counts = pretokenize(prose, special_tokens=list(tok.special_tokens)).counts
    assert more.merges[: len(tok.merges)] == tok.merges and more.merges[len(tok.merges) :] == oracle(tok, counts, 40)
    assert {i: more.vocab[i] for i in tok.vocab} == tok.vocab  # every id, <|endoftext|>'s 50256 too
    assert sorted(set(more.vocab) - set(tok.vocab)) == list(range(50257, 50297))
    sample = prose[:20_000]
    assert len(more.encode(sample)) < len(tok.encode(sample))  # the new merges apply
    assert more.decode(more.encode(sample)) == sample


def test_every_format_continues_alike_and_the_result_loads_in_huggingface(prose, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    base = Tokenizer.from_training(run_of(prose[:100_000], 300, TrainSpec(special_tokens=(SPECIAL,))))
    base.save(tmp_path / "base")
    counts = pretokenize(prose[100_000:], special_tokens=[SPECIAL]).counts
    results = {}
    for name in ("base", "base/tokenizer.json", "base/vocab.json", "base/tokenizer.tiktoken"):
        tok = Tokenizer.load(tmp_path / name, special_tokens=[SPECIAL])
        grown = continue_from_counts(tok, counts, len(tok.vocab) + 50, continuing_spec(tok)).tokenizer
        assert {i: grown.vocab[i] for i in tok.vocab} == tok.vocab
        results[name] = grown.merges
    assert len({tuple(m) for m in results.values()}) == 1 and len(results["base"]) == len(base.merges) + 50
    grown.save(tmp_path / "grown")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "grown" / "tokenizer.json"))
    sample = prose[100_000:110_000]
    assert hf.encode(sample).ids == grown.encode(sample)


def test_a_vocab_size_with_no_room_or_another_pretokenizer_is_one_sentence():
    tok = Tokenizer.from_merges([(b"a", b"b")], [SPECIAL])
    with pytest.raises(ValueError, match="^vocab_size 258 leaves no room for a new merge: the tokenizer already has 258 tokens.$"):
        continue_from_counts(tok, {b"abab": 2}, 258, continuing_spec(tok))
    with pytest.raises(ValueError, match="^Continuing a tokenizer pre-tokenizes as the tokenizer does"):
        continuing_spec(tok, pretokenizer="cl100k")


# ---------------------------------------------------------------------------
# the CLI


def test_cli_continues_from_text_and_from_counts_alike(prose, tmp_path, capsys):
    (tmp_path / "first.txt").write_text(prose[:150_000])
    (tmp_path / "more.txt").write_text(prose[150_000:])
    assert (
        main(["train", str(tmp_path / "first.txt"), "--vocab-size", "600", "--special-token", SPECIAL, "--out", str(tmp_path / "tok")]) == 0
    )
    capsys.readouterr()
    assert (
        main(["train", str(tmp_path / "more.txt"), "--from", str(tmp_path / "tok"), "--vocab-size", "800", "--out", str(tmp_path / "a")])
        == 0
    )
    said = capsys.readouterr().out
    assert "Continued" in said and "its 343 merges and 600 tokens kept, 200 new merges (ids 600..799); vocab 800 tokens." in said
    assert "time: load tokenizer 0" in said and "initial count" in said
    counts = str(tmp_path / "more.parquet")
    assert main(["count", str(tmp_path / "more.txt"), "--special-token", SPECIAL, "--out", counts]) == 0
    assert (
        main(["train", "--from-counts", counts, "--from", str(tmp_path / "tok"), "--vocab-size", "800", "--out", str(tmp_path / "b")]) == 0
    )
    a, b = (json.loads((tmp_path / name / "tokenizer.json").read_text()) for name in "ab")
    assert a["model"] == b["model"] and len(a["model"]["merges"]) == 543
    capsys.readouterr()
    assert (
        main(["train", str(tmp_path / "more.txt"), "--from", str(tmp_path / "tok"), "--vocab-size", "500", "--out", str(tmp_path / "c")])
        == 2
    )
    assert "error: vocab_size 500 leaves no room for a new merge: the tokenizer already has 600 tokens." in capsys.readouterr().err
    other = ["--from-counts", counts, "--from", str(tmp_path / "tok"), "--pretokenizer", "cl100k", "--vocab-size", "900"]
    assert main(["train", *other, "--out", str(tmp_path / "d")]) == 2
    assert "records its own pre-tokenizer" in capsys.readouterr().err
    assert not Path(tmp_path / "c").exists() or not any((tmp_path / "c").iterdir())
