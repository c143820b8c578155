"""bpe.lab.diagnose against a student's own trainers (tests/student_bpe.py), on real text.

Each mistake a student makes is trained by a plain recount loop written apart
from the library; the diagnosis must name where their merges first part from
the reference (found here from CS336's own reference merges, or from the
student's correct loop), both pairs, the kind (from counts recounted here) and
the mistake. Trainings are kept short: each runs a few merges past where its
mistake shows.
"""

from __future__ import annotations

import pytest
import student_bpe as student
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import TrainSpec
from bpe.data.corpora import stdlib_prose
from bpe.files.load import parse_merges_txt
from bpe.lab.diagnose import CAUSES, KINDS, MISTAKES, diagnose, merge_right_to_left

SPECIAL = "<|endoftext|>"
SPEC = TrainSpec(special_tokens=(SPECIAL,))


@pytest.fixture(scope="module")
def corpus_en(cs336) -> str:
    return (cs336 / "corpus.en").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def reference_en(cs336) -> list[tuple[bytes, bytes]]:
    """The merges of CS336's own reference train_bpe on corpus.en (vocab 500, <|endoftext|>)."""
    return parse_merges_txt((cs336 / "train-bpe-reference-merges.txt").read_text(encoding="utf-8"))


def first_difference(a, b) -> int | None:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)


def counts_at(text: str, reference, theirs, d: int, special_tokens=(SPECIAL,)) -> tuple[int, int]:
    """Their pair's and the reference's pair's counts after the shared merges, recounted by the student's own code."""
    counts = student.counts_after(text, special_tokens, tuple(reference[:d]))
    return counts.get(theirs[d], 0), counts.get(reference[d], 0)


def kind_of(counts: tuple[int, int]) -> str:
    return "impossible" if counts[0] == 0 else "tie" if counts[0] == counts[1] else "count"


def check(found, text: str, reference, theirs, cause: str) -> None:
    d = first_difference(theirs, reference)
    assert d is not None, "the student's mistake made no difference: the case tests nothing"
    assert found.first_difference == d
    assert (found.theirs, found.reference) == (theirs[d], reference[d])
    counts = counts_at(text, reference, theirs, d)
    assert found.kind == kind_of(counts) and found.reference_count == counts[1]
    assert found.cause == cause, found.sentence
    assert f"merge {d + 1:,}" in found.sentence and found.fix
    if not cause.endswith(":other"):
        assert found.reproduced_through == len(theirs), found.tried  # the mistake makes every one of their merges


# (the student's mistake, merges trained: a few past where it shows on corpus.en -- for a tie, past where the
# tie rules part from each other, 64 to 145 -- the cause to name)
ON_CORPUS_EN = [
    ("tie:smaller", 100, "tie:smaller"),
    ("tie:concatenated", 70, "tie:concatenated"),  # the issue's own case: ' ' + 'd' against ' a' + 'nd' at index 31
    ("tie:token_ids", 150, "tie:token_ids"),
    ("tie:first_seen", 75, "tie:other"),  # max(counts, key=counts.get): none of the known rules
    ("whitespace_split", 15, "whitespace_split"),
    ("no_pretokenization", 8, "no_pretokenization"),
    ("stale_counts", 15, "stale_counts"),
    ("overlap_right_to_left", 205, "overlap_right_to_left"),  # shows only at merge 198, after ' .' + '..'
]


@pytest.mark.parametrize("mistake, merges, cause", ON_CORPUS_EN, ids=[c[0] for c in ON_CORPUS_EN])
def test_each_mistake_is_found_on_corpus_en(corpus_en, reference_en, mistake, merges, cause):
    theirs = student.train(corpus_en, merges, (SPECIAL,), mistake)
    found = diagnose(theirs, corpus_en.encode(), SPEC)
    check(found, corpus_en, reference_en, theirs, cause)


def test_the_concatenated_tie_is_explained_as_explain_tie_says(corpus_en):
    theirs = student.train(corpus_en, 70, (SPECIAL,), "tie:concatenated")
    found = diagnose(theirs, corpus_en.encode(), SPEC)
    assert (found.first_difference, found.theirs, found.reference) == (31, (b" ", b"d"), (b" a", b"nd"))
    assert found.kind == "tie" and found.theirs_count == found.reference_count == 609
    assert "' a' > ' '" in found.sentence  # what the cs336 rule compares, and which pair it takes
    assert "(left, right)" in found.fix and "max(counts" in found.fix


def test_tie_mistakes_a_short_list_cannot_tell_apart_are_all_named(corpus_en):
    theirs = student.train(corpus_en, 40, (SPECIAL,), "tie:smaller")  # the tie rules part from each other at 64 and later
    found = diagnose(theirs, corpus_en.encode(), SPEC)
    assert found.kind == "tie" and found.reproduced_through == 40
    assert {found.cause, *found.also} == {"tie:token_ids", "tie:huggingface", "tie:smaller", "tie:concatenated"}
    assert "more of your merges would tell them apart" in found.sentence


def test_special_tokens_not_split_on_stdlib_prose():
    text = stdlib_prose(100_000)  # documents joined by <|endoftext|>
    assert SPECIAL in text
    reference = student.train(text, 25, (SPECIAL,))  # the student's correct loop is the reference here
    theirs = student.train(text, 25, (SPECIAL,), "special_tokens_not_split")
    check(diagnose(theirs, text.encode(), SPEC), text, reference, theirs, "special_tokens_not_split")


def test_the_reference_itself_is_the_same(corpus_en, reference_en):
    found = diagnose(reference_en, corpus_en.encode(), SPEC)
    assert (found.kind, found.first_difference, found.cause, found.reproduced_through) == ("same", None, None, 243)
    assert found.as_dict()["theirs"] is None and found.fix == ""


def test_a_correct_student_is_the_same_under_every_setting_it_matches(corpus_en):
    theirs = student.train(corpus_en, 40, (SPECIAL,))
    assert diagnose(theirs, corpus_en.encode(), SPEC).kind == "same"
    # the same list checked against rustbpe's rule parts at the first tie the two rules break apart: the student follows cs336
    found = diagnose(theirs, corpus_en.encode(), SPEC.but(tie_break="rustbpe"))
    assert (found.kind, found.cause, found.first_difference) == ("tie", "tie:cs336", 31)


def test_a_prefix_is_shorter_and_a_longer_list_is_longer(reference_en, corpus_en):
    data = corpus_en.encode()
    shorter = diagnose(reference_en[:100], data, SPEC, vocab_size=500)
    assert (shorter.kind, shorter.first_difference, shorter.reproduced_through) == ("shorter", None, 100)
    assert shorter.reference == reference_en[100] and shorter.theirs is None
    longer = diagnose(reference_en, data, SPEC, vocab_size=300)
    assert (longer.kind, longer.reproduced_through) == ("longer", 43) and longer.theirs == reference_en[43]


def test_a_mistake_still_agreeing_at_its_time_budget_makes_at_least_that_many(corpus_en):
    theirs = student.train(corpus_en, 15, (SPECIAL,), "stale_counts")
    found = diagnose(theirs, corpus_en.encode(), SPEC, budget_s=0)
    assert (found.cause, found.first_difference, found.reproduced_through, found.complete) == ("stale_counts", 1, 2, False)
    assert "at least the first 2 (it was stopped at its time budget)" in found.sentence


def test_merges_of_other_text_are_different_input(corpus_en):
    theirs = student.train(stdlib_prose(60_000), 100, (SPECIAL,))
    found = diagnose(theirs, corpus_en.encode(), SPEC)
    assert found.cause == "different_input" and found.foreign is not None
    rank, token = found.foreign
    assert theirs[rank][0] + theirs[rank][1] == token and token not in corpus_en.encode()


def test_a_merge_of_a_token_not_yet_made_is_impossible(reference_en, corpus_en):
    theirs = list(reference_en[:20])
    theirs[10] = (b" the", b"m")  # ' the' is merge 5's token, made later in the reference (merge 13 ' the' needs ' t' + 'he')
    found = diagnose(theirs, corpus_en.encode(), SPEC)
    assert found.first_difference == 10 and found.kind in ("impossible", "count")
    theirs[10] = (b"zz", b"q")
    found = diagnose(theirs, corpus_en.encode(), SPEC)
    assert (found.kind, found.missing, found.theirs_count) == ("impossible", b"zz", None)


def test_real_tools_lists_are_their_rules(corpus_en):
    """Merges made by HuggingFace tokenizers and rustbpe themselves, checked against CS336's rule: their tie rules."""
    refs = pytest.importorskip("bpe.lab.references")
    found = []
    for available, train_it, cause in (
        (refs.hf_available, refs.hf_reference, "tie:huggingface"),
        (refs.rustbpe_available, refs.rustbpe_reference, "tie:token_ids"),
    ):
        if not available():
            continue
        theirs = train_it(corpus_en, 150, (SPECIAL,)).merges  # the two rules part from each other at merge 145
        d = diagnose(theirs, corpus_en.encode(), SPEC)
        assert (d.kind, d.cause, d.reproduced_through) == ("tie", cause, 150)
        found.append(cause)
    if not found:
        pytest.skip("neither tokenizers nor rustbpe is installed")


def test_json_keys(corpus_en):
    theirs = student.train(corpus_en, 40, (SPECIAL,), "tie:smaller")
    out = diagnose(theirs, corpus_en.encode(), SPEC).as_dict()
    assert {"first_difference", "theirs", "reference", "kind", "cause", "reproduced_through"} <= set(out)
    assert out["theirs"] == ["Ġ", "d"] and out["reference"] == ["Ġa", "nd"]  # GPT-2's byte-to-unicode, as merges.txt writes them
    assert out["kind"] in KINDS and out["cause"] in CAUSES and out["top_pairs"][0] == ["Ġa", "nd", out["reference_count"]]


def test_every_mistake_has_a_cause_the_issue_lists():
    assert {m.cause for m in MISTAKES} | {"tie:other", "count:other", "different_input"} == set(CAUSES)
    assert {"tie:smaller", "tie:token_ids", "tie:huggingface", "tie:cs336", "tie:other", "special_tokens_not_split"} <= set(CAUSES)
    assert {"whitespace_split", "no_pretokenization", "overlap_right_to_left", "stale_counts", "count:other", "different_input"} <= set(
        CAUSES
    )


def test_merge_right_to_left():
    assert merge_right_to_left([97, 97, 97], (97, 97), 256) == [97, 256]
    assert merge_right_to_left([1, 2, 3, 1, 2], (1, 2), 256) == [256, 3, 256]


@settings(max_examples=25, deadline=None)
@given(
    words=st.lists(
        st.sampled_from(["low", "lower", "newest", "widest", "aaa", "banana", "the", "then", " ", "\n"]), min_size=3, max_size=40
    ),
    mistake=st.sampled_from([None, "tie:smaller", "tie:token_ids", "whitespace_split", "overlap_right_to_left", "stale_counts"]),
)
def test_first_difference_pairs_and_kind_on_any_text(words, mistake):
    """On any text: where and how a student's list parts from the student's correct one is what diagnose says."""
    text = " ".join(words)
    reference = student.train(text, 12)
    theirs = student.train(text, 12, mistake=mistake)
    found = diagnose(theirs, text.encode(), TrainSpec(), vocab_size=256 + len(reference))
    d = first_difference(theirs, reference)
    if d is None and len(theirs) == len(reference):
        assert found.kind == "same"
        return
    if d is None:
        assert found.kind == ("shorter" if len(theirs) < len(reference) else "longer")
        return
    assert (found.first_difference, found.theirs, found.reference) == (d, theirs[d], reference[d])
    counts = counts_at(text, reference, theirs, d, special_tokens=())
    assert found.kind == kind_of(counts) and found.reference_count == counts[1]
    assert found.cause in CAUSES and found.reproduced_through >= d
