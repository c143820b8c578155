"""The four trainers, held to one specification: the same merges, counts and runners-up.

Worked examples pin down the rule (the textbook corpus, overlapping pairs, ties);
property tests compare the trainers with each other on small, tie-heavy corpora,
where a wrong tie-break or a missed count update shows up fastest.
"""

from __future__ import annotations

import copy
import heapq
from collections import defaultdict

import pytest
from conftest import EVERY_ALGORITHM
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import ALGORITHMS, PRETOKENIZERS, pretokenize, train, train_bpe_text
from bpe.heap import Heap, as_ids, as_text
from bpe.rule import RULES, best_two, descending, entry_pair, heap_entry, hf_byte_order, merge_word, order
from bpe.trainer import count_pairs, word_delta

EVERY_PRETOKENIZER = pytest.mark.parametrize("pretokenizer", list(PRETOKENIZERS))

TEXTBOOK = "low low low low low lower lower widest widest widest newest newest newest newest newest newest"
TEXTBOOK_MERGES = "s t, e st, o w, l ow, w est, n e, ne west, w i, wi d, wid est, low e, lowe r"

SPECIAL = "<|s|>"

# ---------------------------------------------------------------------------
# strategies: small alphabets make many ties, and ties are where trainers differ

ALPHABETS = ["ab ", "abc\n ", "aé1 \n", "ab1é'\n ", "<|s>a "]


@st.composite
def corpora(draw, with_special_tokens: bool | None = None) -> tuple[str, list[str]]:
    """(text, special tokens): pieces over one alphabet, joined by a special token or not."""
    alphabet = draw(st.sampled_from(ALPHABETS))
    pieces = draw(st.lists(st.text(alphabet=alphabet, max_size=60), min_size=1, max_size=4))
    if not (draw(st.booleans()) if with_special_tokens is None else with_special_tokens):
        return "".join(pieces), []
    return SPECIAL.join(pieces), [SPECIAL]


def run(text: str, special_tokens: list[str], pretokenizer: str, algorithm: str, num_merges: int, **options):
    corpus = pretokenize(text, pretokenizer=pretokenizer, special_tokens=special_tokens, keep_sequence=True)
    return train(corpus, num_merges, algorithm=algorithm, special_tokens=special_tokens, **options)


def summary(events) -> list[tuple]:
    return [(e.left, e.right, e.count, e.runner_up, e.runner_up_count) for e in events]


# ---------------------------------------------------------------------------
# worked examples


@EVERY_ALGORITHM
def test_textbook_corpus_gives_the_textbook_merges(algorithm):
    _, merges = train_bpe_text(TEXTBOOK, 256 + 12, [], algorithm=algorithm, pretokenizer="whitespace")
    assert [f"{a.decode()} {b.decode()}" for a, b in merges] == TEXTBOOK_MERGES.split(", ")


@EVERY_ALGORITHM
def test_textbook_vocab_is_bytes_then_merges_in_order(algorithm):
    vocab, merges = train_bpe_text(TEXTBOOK, 256 + 12 + 1, ["<|endoftext|>"], algorithm=algorithm, pretokenizer="whitespace")
    assert [vocab[i] for i in range(256)] == [bytes([i]) for i in range(256)]
    assert [vocab[256 + k] for k in range(12)] == [a + b for a, b in merges]
    assert vocab[268] == b"<|endoftext|>"


def test_overlapping_pairs_are_counted_overlapping():
    # 'aaa' holds (a, a) twice, although only one of them can be merged
    assert count_pairs([[97, 97, 97]], [1]) == {(97, 97): 2}
    assert count_pairs([[97, 97, 97]], [2]) == {(97, 97): 4}


@pytest.mark.parametrize(
    "word, pair, expected",
    [
        ([97, 97, 97], (97, 97), [256, 97]),
        ([97, 97, 97, 97], (97, 97), [256, 256]),
        ([97, 97, 97, 97, 97], (97, 97), [256, 256, 97]),
        ([1, 2, 3, 1, 2], (1, 2), [256, 3, 256]),
        ([1, 2, 1, 2, 1], (2, 1), [1, 256, 256]),
        ([1, 2, 3], (3, 1), [1, 2, 3]),
        ([], (1, 2), []),
    ],
)
def test_overlapping_pairs_merge_left_to_right(word, pair, expected):
    assert merge_word(word, pair, 256) == expected


@EVERY_ALGORITHM
def test_aaaa_merges_aa_then_aa_aa(algorithm):
    result = run("aaaa", [], "none", algorithm, 10)
    assert [(e.left, e.right, e.count) for e in result.events] == [(b"a", b"a", 3), (b"aa", b"aa", 1)]
    assert result.stop_reason == "no pairs left"


@EVERY_ALGORITHM
def test_aaa_counts_two_but_merges_once(algorithm):
    result = run("aaa", [], "none", algorithm, 10)
    assert [(e.left, e.right, e.count) for e in result.events] == [(b"a", b"a", 2), (b"aa", b"a", 1)]


@EVERY_ALGORITHM
def test_tied_pairs_go_to_greater_bytes_and_event_shows_runner_up(algorithm):
    result = run("ab cd", [], "whitespace", algorithm, 10)
    first, second = result.events
    assert (first.left, first.right, first.count) == (b"c", b"d", 1)
    assert first.runner_up == (b"a", b"b") and first.runner_up_count == 1
    assert first.tie
    assert (second.left, second.right) == (b"a", b"b")
    assert second.runner_up is None and second.runner_up_count == 0
    assert not second.tie


@EVERY_ALGORITHM
def test_event_without_tie_shows_lower_runner_up(algorithm):
    result = run("ab ab cd", [], "whitespace", algorithm, 1)
    (event,) = result.events
    assert (event.left, event.right, event.count) == (b"a", b"b", 2)
    assert event.runner_up == (b"c", b"d") and event.runner_up_count == 1
    assert not event.tie


# ---------------------------------------------------------------------------
# the trainers agree with each other


@EVERY_PRETOKENIZER
@settings(max_examples=150, deadline=None)
@given(corpus=corpora(), num_merges=st.integers(0, 40))
def test_all_algorithms_agree_on_merges_counts_and_runners_up(pretokenizer, corpus, num_merges):
    text, special_tokens = corpus
    results = {a: summary(run(text, special_tokens, pretokenizer, a, num_merges).events) for a in ALGORITHMS}
    expected = results["naive"]
    for algorithm, got in results.items():
        assert got == expected, algorithm


@EVERY_ALGORITHM
@settings(max_examples=40, deadline=None)
@given(corpus=corpora(), threshold=st.integers(2, 5), pretokenizer=st.sampled_from(list(PRETOKENIZERS)))
def test_min_pair_frequency_keeps_a_prefix_of_the_merges(algorithm, corpus, threshold, pretokenizer):
    text, special_tokens = corpus
    every = run(text, special_tokens, pretokenizer, algorithm, 60).events
    kept = run(text, special_tokens, pretokenizer, algorithm, 60, min_pair_frequency=threshold)
    assert summary(kept.events) == summary(every[: len(kept.events)])
    assert all(e.count >= threshold for e in kept.events)
    if len(kept.events) < len(every):
        assert every[len(kept.events)].count < threshold
        assert kept.stop_reason == "min_pair_frequency"


@EVERY_ALGORITHM
@settings(max_examples=40, deadline=None)
@given(corpus=corpora(), pretokenizer=st.sampled_from(list(PRETOKENIZERS)))
def test_best_count_never_increases_from_one_merge_to_the_next(algorithm, corpus, pretokenizer):
    text, special_tokens = corpus
    counts = [e.count for e in run(text, special_tokens, pretokenizer, algorithm, 60).events]
    assert counts == sorted(counts, reverse=True)


@EVERY_ALGORITHM
@settings(max_examples=40, deadline=None)
@given(
    corpus=corpora(with_special_tokens=True),
    special_tokens=st.sampled_from([[SPECIAL], [SPECIAL, "<|t|>"], [SPECIAL, SPECIAL + SPECIAL]]),
    pretokenizer=st.sampled_from(list(PRETOKENIZERS)),
)
def test_no_token_contains_a_special_token(algorithm, corpus, special_tokens, pretokenizer):
    text, _ = corpus
    vocab, _ = train_bpe_text(text, 256 + len(special_tokens) + 40, special_tokens, algorithm=algorithm, pretokenizer=pretokenizer)
    special_bytes = [s.encode() for s in special_tokens]
    learned = [t for t in vocab.values() if t not in special_bytes]
    assert not [t for t in learned if any(s in t for s in special_bytes)]
    assert [vocab[len(vocab) - len(special_tokens) + k] for k in range(len(special_tokens))] == special_bytes


# ---------------------------------------------------------------------------
# invalid UTF-8 is kept, byte for byte

binary_with_special_tokens = st.lists(st.binary(max_size=40), min_size=1, max_size=4).map(SPECIAL.encode().join)


@EVERY_ALGORITHM
@settings(max_examples=30, deadline=None)
@given(data=binary_with_special_tokens)
def test_invalid_utf8_trains_and_every_token_is_a_piece_of_the_input(algorithm, data):
    vocab, merges = train_bpe_text(data, 256 + 1 + 30, [SPECIAL], algorithm=algorithm)
    for left, right in merges:
        assert left + right in data
    assert len(vocab) == 256 + len(merges) + 1


@settings(max_examples=100, deadline=None)
@given(data=binary_with_special_tokens)
def test_pretokenize_bytes_keeps_every_byte_but_the_special_tokens(data):
    corpus = pretokenize(data, special_tokens=[SPECIAL])
    removed = data.count(SPECIAL.encode()) * len(SPECIAL)
    assert sum(len(token) * n for token, n in corpus.counts.items()) == len(data) - removed
    assert corpus.n_bytes == len(data)


@pytest.mark.parametrize("pretokenizer", ["gpt2", "gpt4", "none"])  # the lossless ones
@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=200))
def test_pretokenize_sequence_joins_back_to_the_input_bytes(pretokenizer, data):
    corpus = pretokenize(data, pretokenizer=pretokenizer, keep_sequence=True)
    assert b"".join(corpus.sequence) == data
    assert sum(len(token) * n for token, n in corpus.counts.items()) == len(data)


# ---------------------------------------------------------------------------
# trainers leave their input alone


@EVERY_ALGORITHM
@pytest.mark.parametrize("text", [TEXTBOOK, "aaaa ab ab abab", "é<|s|>éé 1 11 111"])
def test_trainer_never_mutates_its_input(algorithm, text):
    corpus = pretokenize(text, special_tokens=[SPECIAL], keep_sequence=True)
    counts, sequence = dict(corpus.counts), list(corpus.sequence)
    counts_before, sequence_before = copy.deepcopy(counts), copy.deepcopy(sequence)
    trainer = ALGORITHMS[algorithm](counts, sequence)
    assert list(trainer.merges(100, detail=True))
    assert counts == counts_before
    assert sequence == sequence_before


# ---------------------------------------------------------------------------
# the heap's merge (neighbours folded, several sites pair by pair) equals merge_word + word_delta

small_words = st.dictionaries(st.lists(st.integers(0, 3), min_size=2, max_size=30).map(bytes), st.integers(1, 5), min_size=1, max_size=6)


@settings(max_examples=500, deadline=None)
@given(words=small_words, data=st.data())
def test_heap_merge_equals_merge_word_plus_word_delta(words, data):
    trainer = Heap(words)
    pair = data.draw(st.sampled_from(sorted(trainer.pair_counts)))
    new_id = trainer.mint(pair)
    delta, touched = trainer.merge(pair, new_id, False)
    expected_delta, rewritten = defaultdict(int), 0
    for i, (word, count) in enumerate(sorted(words.items())):  # the heap numbers words in byte order
        expected = merge_word(list(word), pair, new_id)
        assert trainer.words[i] == as_text(expected)
        if len(expected) < len(word):
            rewritten += 1
            word_delta(list(word), expected, count, expected_delta)
            # the word is listed under every pair it now holds with the new token
            assert all(i in trainer.where[p] for p in zip(expected, expected[1:]) if new_id in p)
    assert touched == rewritten
    assert {p: d for p, d in delta.items() if d} == {p: d for p, d in expected_delta.items() if d}


@given(ids=st.lists(st.integers(0, 0x10FFFF), max_size=20))
def test_a_word_as_text_has_one_character_per_token(ids):
    assert len(as_text(ids)) == len(ids)
    assert as_ids(as_text(ids)) == ids


def test_a_pre_token_decoded_as_latin_1_is_its_bytes_as_text():
    word = "né ÿ".encode()
    assert word.decode("latin-1") == as_text(list(word))


# ---------------------------------------------------------------------------
# one rule: pair_key order == heap order

tokens = st.lists(st.sampled_from(b"\x00a\xff"), max_size=3).map(bytes)


@settings(max_examples=300, deadline=None)
@given(a=tokens, b=tokens)
def test_descending_orders_bytes_in_reverse(a, b):
    assert (descending(a) < descending(b)) == (a > b)
    assert (descending(a) == descending(b)) == (a == b)


@settings(max_examples=100, deadline=None)
@given(st.lists(tokens, max_size=10))
def test_sorting_by_descending_is_reverse_bytes_order(values):
    assert sorted(values, key=descending) == sorted(values, reverse=True)


@st.composite
def vocab_and_pair_counts(draw):
    """The 256 bytes, a few merged tokens (duplicates allowed: 'a bc' and 'ab c'), and counts of pairs among some ids."""
    merged = draw(st.lists(tokens.filter(lambda t: len(t) > 1), max_size=4))
    vocab = [bytes([i]) for i in range(256)] + merged
    ids = st.sampled_from([0, 33, 97, 98, 160, 255] + list(range(256, len(vocab))))
    pair_counts = draw(st.dictionaries(st.tuples(ids, ids), st.integers(1, 3), min_size=1, max_size=12))
    return vocab, pair_counts


def by_definition(rule: str, pair_counts, vocab) -> list:
    """The pairs in the order a rule chooses them, written from its definition with stable sorts."""
    pairs = sorted(pair_counts)  # the last resort: smaller ids
    if rule == "cs336":
        pairs.sort(key=lambda p: (vocab[p[0]], vocab[p[1]]), reverse=True)  # greater bytes
    elif rule == "huggingface":
        hf = [hf_byte_order()[i] if i < 256 else i for i in range(len(vocab))]
        pairs.sort(key=lambda p: (hf[p[0]], hf[p[1]]))  # smaller ids in HuggingFace's numbering
    pairs.sort(key=lambda p: pair_counts[p], reverse=True)  # the count decides first
    return pairs


EVERY_RULE = pytest.mark.parametrize("rule", list(RULES))


@EVERY_RULE
@settings(max_examples=200, deadline=None)
@given(case=vocab_and_pair_counts())
def test_popping_heap_entries_follows_the_rule(rule, case):
    vocab, pair_counts = case
    keys = [RULES[rule].token_key(i, t) for i, t in enumerate(vocab)]
    heap = [heap_entry(p, c, keys) for p, c in pair_counts.items()]
    heapq.heapify(heap)
    popped = [entry_pair(heapq.heappop(heap)) for _ in range(len(heap))]
    assert popped == by_definition(rule, pair_counts, vocab)
    assert popped == sorted(pair_counts, key=lambda p: order(p, pair_counts[p], keys))


@EVERY_RULE
@settings(max_examples=200, deadline=None)
@given(case=vocab_and_pair_counts())
def test_best_two_are_the_first_two_by_the_rule(rule, case):
    vocab, pair_counts = case
    keys = [RULES[rule].token_key(i, t) for i, t in enumerate(vocab)]
    expected = by_definition(rule, pair_counts, vocab)
    assert best_two(pair_counts, keys) == (expected[0], expected[1] if len(expected) > 1 else None)


def test_hf_numbers_the_bytes_by_their_gpt2_character():
    order_of = hf_byte_order()
    assert order_of[ord("!")] == 0 and order_of[ord("~")] == 93  # printable ASCII first
    assert order_of[0] == 188 and order_of[ord(" ")] == 188 + 32  # then 'Ā' (byte 0) ... 'Ġ' (the space)
    assert sorted(order_of) == list(range(256))


# ---------------------------------------------------------------------------
# events and detail


@EVERY_ALGORITHM
@settings(max_examples=40, deadline=None)
@given(corpus=corpora(), pretokenizer=st.sampled_from(list(PRETOKENIZERS)))
def test_tie_is_true_exactly_when_runner_up_count_equals_count(algorithm, corpus, pretokenizer):
    text, special_tokens = corpus
    for e in run(text, special_tokens, pretokenizer, algorithm, 40).events:
        assert e.tie == (e.runner_up is not None and e.runner_up_count == e.count)
        assert (e.runner_up is None) == (e.runner_up_count == 0)
        assert e.runner_up_count <= e.count
        assert e.token == e.left + e.right


@EVERY_ALGORITHM
@settings(max_examples=40, deadline=None)
@given(corpus=corpora(), pretokenizer=st.sampled_from(list(PRETOKENIZERS)))
def test_detail_mode_yields_the_same_merges(algorithm, corpus, pretokenizer):
    text, special_tokens = corpus
    plain = run(text, special_tokens, pretokenizer, algorithm, 40)
    detailed = run(text, special_tokens, pretokenizer, algorithm, 40, detail=True)
    assert detailed.events == plain.events  # detail itself is left out of the comparison
    assert summary(detailed.events) == summary(plain.events)
    assert all(e.detail is None for e in plain.events)
    assert all(e.detail is not None for e in detailed.events)


@EVERY_ALGORITHM
def test_detail_top_pair_is_the_merge(algorithm):
    for e in run(TEXTBOOK, [], "whitespace", algorithm, 12, detail=True).events:
        assert e.detail.top_pairs[0] == (e.left, e.right, e.count)
        if e.runner_up is not None:
            assert e.detail.top_pairs[1] == (*e.runner_up, e.runner_up_count)


def test_heap_detail_shows_stale_entries():
    events = run(TEXTBOOK, [], "whitespace", "heap", 12, detail=True).events
    views = [e.detail.heap for e in events]
    assert all(v is not None for v in views)
    assert any(v.stale_popped_total > 0 for v in views)
    assert all(v.stale_popped_total >= len(v.stale_popped) for v in views)
    assert all(entry.stale for v in views for entry in v.stale_popped)
    assert any(entry.stale for v in views for entry in v.entries)
    assert all(len(v.entries) <= v.size for v in views)


def test_heap_detail_says_which_stale_pops_found_the_winner_and_which_the_runner_up():
    """The heap drawn is the one choosing started from: its root is stale exactly when the winner needed pops first."""
    from bpe.data.corpora import stdlib_prose

    events = train(pretokenize(stdlib_prose(300_000), pretokenizer="gpt2"), 80, algorithm="heap", detail=True).events
    for e in events:
        view = e.detail.heap
        root = view.entries[0]
        assert (view.winner_pops > 0) == root.stale, e.rank
        assert 0 <= view.winner_pops <= view.stale_popped_total
        if view.winner_pops:  # the first pop is the root as drawn
            first = view.stale_popped[0]
            assert (first.left, first.right, first.count) == (root.left, root.right, root.count)
        else:  # the root as drawn is the winner
            assert (root.left, root.right, root.count) == (e.left, e.right, e.count)
    # pops for the runner-up happen: the story the issue told of merge 37 (the root current, the pops after it)
    assert any(e.detail.heap.winner_pops == 0 < e.detail.heap.stale_popped_total for e in events)


def is_heap(algorithm: str) -> bool:
    """The heap, or a compiled heap (whose detail the heap records)."""
    trainer = ALGORITHMS[algorithm]
    return trainer is Heap or trainer.reference is Heap


@pytest.mark.parametrize("algorithm", [a for a in ALGORITHMS if not is_heap(a)])
def test_only_the_heap_shows_a_heap(algorithm):
    events = run(TEXTBOOK, [], "whitespace", algorithm, 12, detail=True).events
    assert all(e.detail.heap is None for e in events)


@pytest.mark.parametrize("algorithm", [a for a in ALGORITHMS if is_heap(a)])
def test_the_heap_and_the_compiled_heap_show_the_heap(algorithm):
    events = run(TEXTBOOK, [], "whitespace", algorithm, 12, detail=True).events
    assert all(e.detail.heap is not None for e in events)


# ---------------------------------------------------------------------------
# work counters

TOUCHED = {
    "naive": "words_touched",
    "positions": "positions_touched",
    "parent_set": "words_touched",
    "heap": "words_touched",
    "heap_c": "words_touched",
}


@EVERY_ALGORITHM
@settings(max_examples=40, deadline=None)
@given(corpus=corpora(), pretokenizer=st.sampled_from(list(PRETOKENIZERS)))
def test_work_counts_one_merge_per_event(algorithm, corpus, pretokenizer):
    text, special_tokens = corpus
    result = run(text, special_tokens, pretokenizer, algorithm, 40)
    assert result.work.get("merges", 0) == len(result.events)
    assert result.work.get(TOUCHED[algorithm], 0) == sum(e.words for e in result.events)
    if algorithm in ("heap", "heap_c", "naive"):
        assert result.work.get("words_touched", 0) <= result.work.get("words_checked", 0)


def test_heap_touches_no_more_words_than_it_checks_on_textbook():
    result = run(TEXTBOOK, [], "whitespace", "heap", 12)
    assert result.work["merges"] == 12
    assert 0 < result.work["words_touched"] <= result.work["words_checked"]
    assert result.work["stale_pops"] > 0


def test_steps_refuses_an_unknown_algorithm_with_a_sentence():
    from bpe.train import steps

    with pytest.raises(ValueError, match="Unknown algorithm 'quick'; choose one of naive"):
        steps(pretokenize("ab ab"), 2, algorithm="quick")
