"""Each tie-break rule reproduces the real trainer it is named after, merge for merge, with every algorithm.

The real trainers get the pre-tokens ours get: the text is cut at special
tokens first (HuggingFace's trainer does not cut them, rustbpe knows none), each
piece is one sequence, and both split it with GPT-2's regex (HuggingFace's
ByteLevel pre-tokenizer, rustbpe's `pattern`). What cannot be made equal: they
take Python str, so invalid UTF-8 cannot reach them (ours trains on the raw
bytes); and their regex engines (Oniguruma, fancy-regex) and Unicode tables are
not Python's `regex` -- on the texts here they agree, which
test_huggingface_pre_tokenizes_as_we_do checks.
"""

from __future__ import annotations

from collections import Counter
from functools import cache

import pytest
from conftest import EVERY_ALGORITHM
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import ALGORITHMS, TIE_BREAKS, explain_tie, pretokenize, train, train_bpe_text
from bpe.data.corpora import stdlib_prose
from bpe.lab import race as R
from bpe.lab import references as refs
from bpe.text.gpt2_bytes import to_unicode
from bpe.text.pretokenizers import split_on_special

SPECIAL = "<|endoftext|>"
REFERENCES = {"huggingface": (refs.hf_available, refs.hf_reference), "rustbpe": (refs.rustbpe_available, refs.rustbpe_reference)}
EVERY_REFERENCE = pytest.mark.parametrize("rule", list(REFERENCES))
WITH_AND_WITHOUT_SPECIALS = pytest.mark.parametrize("special_tokens", [(), (SPECIAL,)], ids=["no-special_tokens", "endoftext"])

# merges compared per algorithm: the slow teaching trainers make fewer (and naive and positions
# take the first 500 KB of the prose); every count is past the first tie the rules break differently
CORPUS_EN_MERGES = {"naive": 60, "positions": 244, "parent_set": 244, "heap": 244, "heap_c": 244}
STDLIB_MERGES = {"naive": 60, "positions": 150, "parent_set": 150, "heap": 1000, "heap_c": 1000}
STDLIB_BYTES = {"naive": 500_000, "positions": 500_000, "parent_set": 2_000_000, "heap": 2_000_000, "heap_c": 2_000_000}


def reference_trainer(rule: str):
    available, trainer = REFERENCES[rule]
    if not available():
        pytest.skip(f"the package behind the {rule} rule is not installed")
    return trainer


@cache
def prose(n_bytes: int) -> str:
    return stdlib_prose(n_bytes)


@cache
def pretokenized(text: str, special_tokens: tuple[str, ...]):
    return pretokenize(text, special_tokens=special_tokens, keep_sequence=True)


@cache
def reference_merges(rule: str, text: str, num_merges: int, special_tokens: tuple[str, ...]) -> list:
    return list(reference_trainer(rule)(text, num_merges, special_tokens).merges)


def ours(text: str, num_merges: int, special_tokens: tuple[str, ...], algorithm: str, rule: str) -> list:
    return train(pretokenized(text, special_tokens), num_merges, algorithm=algorithm, special_tokens=special_tokens, tie_break=rule).merges


def first_difference(a: list, b: list) -> int | None:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None if len(a) == len(b) else min(len(a), len(b)))


@pytest.fixture(scope="module")
def corpus_en(cs336) -> str:
    return (cs336 / "corpus.en").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------
# the real trainers, on real text


@EVERY_REFERENCE
@EVERY_ALGORITHM
@WITH_AND_WITHOUT_SPECIALS
def test_same_merges_as_the_real_trainer_on_corpus_en(rule, algorithm, special_tokens, corpus_en):
    n = CORPUS_EN_MERGES[algorithm]
    expected = reference_merges(rule, corpus_en, 244, special_tokens)[:n]
    assert first_difference(ours(corpus_en, n, special_tokens, algorithm, rule), expected) is None


@EVERY_REFERENCE
@EVERY_ALGORITHM
@WITH_AND_WITHOUT_SPECIALS
def test_same_merges_as_the_real_trainer_on_stdlib_prose(rule, algorithm, special_tokens):
    text, n = prose(STDLIB_BYTES[algorithm]), STDLIB_MERGES[algorithm]
    expected = reference_merges(rule, text, 1000, special_tokens)[:n]
    assert first_difference(ours(text, n, special_tokens, algorithm, rule), expected) is None


@EVERY_REFERENCE
@WITH_AND_WITHOUT_SPECIALS
def test_cs336_differs_from_the_real_trainer_within_the_merges_compared(rule, special_tokens, corpus_en):
    # the comparisons above are not vacuous: a tie that the rules break differently comes early in both texts
    for text in (corpus_en, prose(500_000)):
        expected = reference_merges(rule, text, 1000 if len(text) > 200_000 else 244, special_tokens)
        assert first_difference(ours(text, 244, special_tokens, "heap", "cs336"), expected) < 60


def test_the_three_rules_make_three_different_merge_lists(corpus_en):
    lists = {rule: tuple(ours(corpus_en, 244, (SPECIAL,), "heap", rule)) for rule in TIE_BREAKS}
    assert len(set(lists.values())) == 3


small_texts = st.lists(st.text(alphabet="ab \nаé!", max_size=30), min_size=1, max_size=6)


@EVERY_REFERENCE
@settings(max_examples=60, deadline=None)
@given(pieces=small_texts, num_merges=st.integers(1, 30), with_special=st.booleans())
def test_same_merges_as_the_real_trainer_on_small_tie_heavy_texts(rule, pieces, num_merges, with_special):
    special_tokens = (SPECIAL,) if with_special else ()
    text = (SPECIAL if with_special else "").join(pieces)
    expected = list(reference_trainer(rule)(text, num_merges, special_tokens).merges)
    corpus = pretokenize(text, special_tokens=special_tokens, keep_sequence=True)
    for algorithm in ALGORITHMS:
        got = train(corpus, num_merges, algorithm=algorithm, special_tokens=special_tokens, tie_break=rule).merges
        assert got == expected, algorithm


@WITH_AND_WITHOUT_SPECIALS
def test_huggingface_pre_tokenizes_as_we_do(special_tokens, corpus_en):
    tokenizers = pytest.importorskip("tokenizers")
    byte_level = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    for text in (corpus_en, prose(500_000)):
        theirs = Counter(t for piece in split_on_special(text, special_tokens) for t, _ in byte_level.pre_tokenize_str(piece))
        mine = Counter({to_unicode(token): n for token, n in pretokenize(text, special_tokens=special_tokens).counts.items()})
        assert theirs == mine


# ---------------------------------------------------------------------------
# what the rules are, on worked examples


@pytest.mark.parametrize(
    "rule, first",
    [("cs336", (b"s", b"t")), ("huggingface", (b"e", b"s")), ("rustbpe", (b"e", b"s"))],
)
@EVERY_ALGORITHM
def test_the_textbook_tie_goes_to_each_rules_pair(rule, first, algorithm):
    # 'es' and 'st' both occur 9 times: cs336 wants greater bytes, the others smaller ids
    text = "low low low low low lower lower widest widest widest newest newest newest newest newest newest"
    _, merges = train_bpe_text(text, 257, [], algorithm=algorithm, pretokenizer="whitespace", tie_break=rule)
    assert merges[0] == first


@EVERY_ALGORITHM
def test_huggingface_orders_bytes_by_their_gpt2_character(algorithm):
    # ' a', 'aa' and 'a!' occur once each. rustbpe takes ' a' (32 < 97); HuggingFace numbers ' ' (as 'Ġ')
    # 220, 'a' 64 and '!' 0, so it takes 'a!'; cs336 takes the greatest bytes, 'aa'
    first = {rule: train_bpe_text(" aa!", 257, [], algorithm=algorithm, pretokenizer="none", tie_break=rule)[1][0] for rule in TIE_BREAKS}
    assert first == {"cs336": (b"a", b"a"), "huggingface": (b"a", b"!"), "rustbpe": (b" ", b"a")}


@pytest.mark.parametrize("rule", list(TIE_BREAKS))
@EVERY_ALGORITHM
@settings(max_examples=25, deadline=None)
@given(pieces=small_texts, num_merges=st.integers(0, 40))
def test_events_report_ties_and_runners_up_under_every_rule(rule, algorithm, pieces, num_merges):
    corpus = pretokenize("".join(pieces), keep_sequence=True)
    events = train(corpus, num_merges, algorithm=algorithm, tie_break=rule, detail=True).events
    heap = train(corpus, num_merges, algorithm="heap", tie_break=rule).events
    assert [(e.left, e.right, e.count, e.runner_up, e.runner_up_count) for e in events] == [
        (e.left, e.right, e.count, e.runner_up, e.runner_up_count) for e in heap
    ]
    merges = []
    for e in events:
        assert e.tie == (e.runner_up is not None and e.runner_up_count == e.count)
        assert e.detail.top_pairs[0] == (e.left, e.right, e.count)
        if e.tie:  # the rule, asked about the two tied pairs, picks the merge that was made
            choice = {c.rule: c.pair for c in explain_tie([e.runner_up, (e.left, e.right)], merges)}
            assert choice[rule] == (e.left, e.right)
        merges.append((e.left, e.right))


def test_explain_tie_names_each_rules_pair_and_why():
    choices = {c.rule: c for c in explain_tie([(b"e", b"s"), (b"s", b"t")])}
    assert choices["cs336"].pair == (b"s", b"t") and "'s' > 'e'" in choices["cs336"].reason
    assert choices["huggingface"].pair == (b"e", b"s") and "(68, 82) < (82, 83)" in choices["huggingface"].reason
    assert choices["rustbpe"].pair == (b"e", b"s") and "(101, 115) < (115, 116)" in choices["rustbpe"].reason
    shifted = {c.rule: c for c in explain_tie([(b"e", b"s"), (b"s", b"t")], special_tokens=1)}
    assert "(69, 83) < (83, 84)" in shifted["huggingface"].reason  # its special tokens come first


def test_explain_tie_uses_the_ids_of_merged_tokens():
    merges = [(b"e", b"s"), (b"s", b"t")]  # 'es' = 256, 'st' = 257
    choices = {c.rule: c.pair for c in explain_tie([(b"w", b"es"), (b"e", b"st")], merges)}
    assert choices == {"cs336": (b"w", b"es"), "huggingface": (b"e", b"st"), "rustbpe": (b"e", b"st")}


@pytest.mark.parametrize(
    "pairs, merges, message",
    [([(b"a", b"b")], [], "at least two pairs"), ([(b"a", b"b"), (b"ab", b"c")], [], "'ab'.* neither a byte nor made")],
)
def test_explain_tie_refuses_what_is_not_a_tie(pairs, merges, message):
    with pytest.raises(ValueError, match=message):
        explain_tie(pairs, merges)


def test_an_unknown_rule_is_a_sentence():
    with pytest.raises(ValueError, match="Unknown tie-break rule 'hf'; choose one of cs336, huggingface, rustbpe"):
        train_bpe_text("ab ab", 258, [], tie_break="hf")


# ---------------------------------------------------------------------------
# HuggingFace's reuse of a token whose bytes already exist


def test_huggingface_rule_reuses_a_token_and_counts_distinct_tokens():
    # twins cannot arise from merging whole words; a trainer handed one shows what the rule does
    from bpe.heap import Heap

    for rule, reused in (("huggingface", True), ("cs336", False), ("rustbpe", False)):
        trainer = Heap({b"abc": 1}, tie_break=rule)
        first = trainer.mint((97, 98))  # 'ab'
        trainer.mint((first, 99))  # 'abc'
        bc = trainer.mint((98, 99))
        twin = trainer.mint((97, bc))  # 'a' + 'bc' = 'abc' again
        assert (twin == first + 1) == reused
        assert len(trainer.vocab) == (256 + 3 if reused else 256 + 4)


@EVERY_REFERENCE
def test_a_race_under_a_tools_rule_agrees_with_that_tool(rule, corpus_en):
    reference = reference_trainer(rule)(corpus_en, 100, (SPECIAL,))
    corpus = pretokenized(corpus_en, (SPECIAL,))
    *_, final = R.race(corpus, 100, budget_s=60, tie_break=rule)
    assert refs.REFERENCE_RULES[reference.algorithm] == rule
    assert R.first_difference([*final, reference]) is None
