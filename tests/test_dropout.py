"""BPE-dropout (encode(..., dropout=p, seed=s)): each merge skipped with probability p, as HuggingFace tokenizers' BPE(dropout=p).

HuggingFace draws from an unseeded thread-local generator (rand's rng(), word.rs merge_all), so no seed makes its
samples ours: the two are held to one exact distribution instead. `exact` walks the definition -- word.rs's loop, every
draw a branch (skip with p, merge with 1 - p) -- and gives each segmentation's probability; then ours (seeded: the
same samples every run) and HuggingFace's (unseeded) are each sampled N times, and every segmentation's frequency must
be within EPSILON of its probability. For a correct sampler, by Hoeffding's inequality and a union bound over the M
segmentations, a frequency strays that far with probability at most 2·M·exp(-2·N·EPSILON²) = 2·M·exp(-25), below
4e-10 with M ≤ 14 (these words' most; N = 20,000, EPSILON = 0.025), and below 5e-9 for all 12 of HuggingFace's cases
together: the test cannot fail by luck. (Ours, seeded, draws the same samples every run: it cannot fail by luck at all.)
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from random import Random

import pytest

from bpe import Tokenizer, pretokenize, train
from bpe.data.corpora import stdlib_prose

N = 20_000
EPSILON = 0.025
WORDS = [b" lower", b" newest", b"strawberry", b" aaaa"]


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    text = stdlib_prose(200_000) + " aaaa aaa aa" * 50
    return Tokenizer.from_training(train(pretokenize(text), 300))


def exact(tok: Tokenizer, word: bytes, p: float) -> dict[tuple[bytes, ...], float]:
    """Each segmentation's probability under HuggingFace's BPE-dropout, by walking every draw of its loop (word.rs merge_all).

    A state: the parts (None where merged into the left neighbour), the heap of (rank, place) (kept sorted), the
    entries skipped since the last one not skipped. Equal states reached by different draws are added up.
    """
    ranks: dict[tuple[bytes, bytes], int] = {}
    for rank, pair in enumerate(tok.merges):
        ranks.setdefault(pair, rank)  # a pair listed twice: its first rank

    def rank_at(parts, i):
        j = next((j for j in range(i + 1, len(parts)) if parts[j] is not None), None)
        return (None, None) if parts[i] is None or j is None else (ranks.get((parts[i], parts[j])), j)

    start = tuple(bytes([b]) for b in word)
    queue = tuple(sorted((rank_at(start, i)[0], i) for i in range(len(start) - 1) if rank_at(start, i)[0] is not None))
    states, done = {(start, queue, ()): 1.0}, defaultdict(float)
    while states:
        following: dict = defaultdict(float)
        for (parts, queue, skipped), chance in states.items():
            if not queue:
                done[tuple(t for t in parts if t is not None)] += chance
                continue
            top, rest = queue[0], queue[1:]
            if p > 0:  # skipped: put aside
                following[(parts, rest, (*skipped, top))] += chance * p
            if p < 1:  # not skipped: the ones put aside come back, and top merges if it still can
                back = tuple(sorted(rest + skipped))
                rank, i = top
                now, j = rank_at(parts, i)
                if now != rank:
                    following[(parts, back, ())] += chance * (1 - p)
                    continue
                new = list(parts)
                new[i], new[j] = parts[i] + parts[j], None
                new = tuple(new)
                pushed = [(r, i) for r in [rank_at(new, i)[0]] if r is not None]
                left = next((h for h in range(i - 1, -1, -1) if new[h] is not None), None)
                if left is not None and rank_at(new, left)[0] is not None:
                    pushed.append((rank_at(new, left)[0], left))
                following[(new, tuple(sorted(back + tuple(pushed))), ())] += chance * (1 - p)
        states = following
    return dict(done)


def assert_near(samples: Counter, probabilities: dict, n: int) -> None:
    assert set(samples) <= set(probabilities)  # nothing the definition cannot give
    assert math.isclose(sum(probabilities.values()), 1.0)
    for segmentation, probability in probabilities.items():
        assert abs(samples[segmentation] / n - probability) <= EPSILON, (segmentation, samples[segmentation] / n, probability)


def test_the_definition_is_its_worked_example():
    tok = Tokenizer.from_merges([(b"l", b"o"), (b"lo", b"w")], pretokenizer="whitespace")
    assert exact(tok, b"low", 0.5) == {(b"l", b"o", b"w"): 0.5, (b"lo", b"w"): 0.25, (b"low",): 0.25}
    counts = dict(tok.segmentations("low", 0.5, N))
    assert abs(counts[(b"low",)] / N - 0.25) <= EPSILON and abs(counts[(b"l", b"o", b"w")] / N - 0.5) <= EPSILON


@pytest.mark.parametrize("p", [0.1, 0.3, 0.6])
@pytest.mark.parametrize("word", WORDS)
def test_ours_samples_the_definitions_distribution(tok, word, p):
    assert_near(Counter(dict(tok.segmentations(word, p, N, seed=7))), exact(tok, word, p), N)


@pytest.mark.parametrize("p", [0.1, 0.3, 0.6])
@pytest.mark.parametrize("word", WORDS)
def test_huggingface_samples_the_same_distribution(tok, word, p, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    tok.save(tmp_path)
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    text = word.decode()
    assert hf.encode(text).ids == tok.encode(text)  # without dropout, the same ids
    hf.model.dropout = p
    samples = Counter(tuple(tok.vocab[i] for i in hf.encode(text).ids) for _ in range(N))
    assert_near(samples, exact(tok, word, p), N)


def test_dropout_zero_is_encode_and_one_is_the_bytes(tok):
    text = " lower newest strawberry, and the rest of it"
    assert tok.encode(text, dropout=0.0) == tok.encode(text)
    assert tok.decode_bytes(tok.encode(text, dropout=1.0)) == text.encode() and len(tok.encode(text, dropout=1.0)) == len(text.encode())
    assert tok.encode(text, dropout=1e-12, seed=1) == tok.encode(text)  # a draw below 1e-12: none in a few hundred


def test_the_same_seed_gives_the_same_ids_and_a_random_draws_on(tok):
    text = " lower newest strawberry " * 20
    assert tok.encode(text, dropout=0.3, seed=5) == tok.encode(text, dropout=0.3, seed=5)
    assert tok.encode(text, dropout=0.3, seed=5) != tok.encode(text, dropout=0.3, seed=6)
    rng = Random(5)
    first, second = tok.encode(text, dropout=0.3, seed=rng), tok.encode(text, dropout=0.3, seed=rng)
    assert first == tok.encode(text, dropout=0.3, seed=5) and second != first
    for ids in (first, second):
        assert tok.decode(ids) == text  # other segmentations, the same text


def test_special_tokens_stay_whole_under_dropout():
    tok = Tokenizer.from_merges([(b"l", b"o"), (b"lo", b"w")], ["<|endoftext|>"])
    ids = tok.encode("low<|endoftext|>low", dropout=0.5, seed=1)
    assert tok.ids[b"<|endoftext|>"] in ids and tok.decode(ids) == "low<|endoftext|>low"


@pytest.mark.parametrize("p", [-0.1, 1.5, "0.5", True])
def test_a_dropout_that_is_no_probability_is_one_sentence(tok, p):
    with pytest.raises(ValueError, match="^dropout is a probability, from 0 to 1, not"):
        tok.encode("low", dropout=p)
