"""bpe.lab.diagnose against a student's own trainers (tests/student_bpe.py), on real text.

Each mistake a student makes is trained by a plain loop written apart from the
library; the diagnosis must name where their merges first part from the
reference (found here from CS336's own reference merges, or from the student's
correct loop), both pairs, the kind (from counts recounted here) and the
mistake, and never a mistake that does not make their list past that merge.
Trainings are kept short: each runs a few merges past where its mistake shows,
on the text where it shows soonest (corpus.en, documents of its last lines,
the stdlib's prose and source, the TinyStories-like stories).
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest
import student_bpe as student
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import TrainSpec
from bpe.data.corpora import stdlib_prose
from bpe.files.load import parse_merges_txt
from bpe.lab.diagnose import CAUSES, KINDS, MISTAKES, diagnose, label, make_mistake, merge_right_to_left, neighbour_delta
from ui.corpus import SOURCES

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


def check(found, text: str, reference, theirs, cause: str, special_tokens=(SPECIAL,)) -> None:
    d = first_difference(theirs, reference)
    assert d is not None, "the student's mistake made no difference: the case tests nothing"
    assert found.first_difference == d
    assert (found.theirs, found.reference) == (theirs[d], reference[d])
    counts = counts_at(text, reference, theirs, d, special_tokens)
    assert found.kind == kind_for(counts, cause) and found.reference_count == counts[1], found.sentence
    assert set(found.cause.split("+")) == set(cause.split("+")), found.sentence
    assert f"merge {d + 1:,}" in found.sentence and found.fix
    if not cause.endswith(":other"):
        assert found.reproduced_through == len(theirs), found.tried  # the mistake makes every one of their merges
    else:  # no mistake named that does not make their list past the first difference (a tie rule: all of it)
        assert found.reproduced_through == d and not found.also, found.tried
        assert all(t.reproduced_through <= d or not may_be_named(t, found.tried, len(theirs)) for t in found.tried), found.tried
        assert f"None of the known mistakes makes your list past merge {d + 1:,}" in found.sentence


def may_be_named(t, tried, n: int) -> bool:
    """Whether a mistake tried makes enough of a list to be its cause: a tie rule all of it (it counts right, so it makes
    all of a list that breaks ties its way), two at once more than either alone."""
    alone = {u.cause: u.reproduced_through for u in tried}
    if t.cause in {m.cause for m in MISTAKES if m.is_tie}:
        return t.reproduced_through == n
    return all(t.reproduced_through > alone[c] for c in t.cause.split("+")) if "+" in t.cause else True


def kind_for(counts: tuple[int, int], cause: str) -> str:
    """The kind a cause makes of the true counts: equal counts are a count difference when the cause counts another way."""
    kind = kind_of(counts)
    return "count" if kind == "tie" and not cause.startswith("tie:") else kind


# (the student's mistake, merges trained: a few past where it shows on corpus.en -- for a tie, past where the
# tie rules part from each other, 64 to 145 -- the cause to name)
ON_CORPUS_EN = [
    ("tie:smaller", 100, "tie:smaller"),
    ("tie:concatenated", 70, "tie:concatenated"),  # the issue's own case: ' ' + 'd' against ' a' + 'nd' at index 31
    ("tie:token_ids", 150, "tie:token_ids"),
    ("tie:greater_token_ids", 100, "tie:greater_token_ids"),  # max((count, (id1, id2))): parts at merge 93
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


@pytest.fixture(scope="module")
def documents_en(cs336) -> str:
    """corpus.en's last 300 lines (its German, with 'ä' and '€'), five lines a document, joined by <|endoftext|>."""
    lines = (cs336 / "corpus.en").read_text(encoding="utf-8").splitlines(keepends=True)[-300:]
    return SPECIAL.join("".join(lines[i : i + 5]) for i in range(0, len(lines), 5))


def test_characters_not_bytes_parts_where_the_reference_merges_two_bytes_of_one_character(documents_en):
    reference = student.train(documents_en, 180, (SPECIAL,), incremental=True)
    theirs = student.train(documents_en, 180, (SPECIAL,), "characters_not_bytes", incremental=True)
    found = diagnose(theirs, documents_en.encode(), SPEC)
    check(found, documents_en, reference, theirs, "characters_not_bytes")
    a, b = found.reference
    assert len(a) == len(b) == 1 and (a + b).decode("utf-8")  # two lone bytes that make one character
    assert found.implied is not None and found.implied[1] == 0  # their trainer never holds that pair
    assert "'\\xc3' + '\\xa4'" in found.sentence and "\\\\x" not in found.sentence  # each byte escaped once


def test_two_mistakes_at_once_characters_and_special_tokens_not_split(documents_en):
    reference = student.train(documents_en, 180, (SPECIAL,), incremental=True)
    theirs = student.train(documents_en, 180, (SPECIAL,), "characters_not_bytes+special_tokens_not_split", incremental=True)
    found = diagnose(theirs, documents_en.encode(), SPEC)
    check(found, documents_en, reference, theirs, "characters_not_bytes+special_tokens_not_split")
    alone = {t.cause: t.reproduced_through for t in found.tried}
    assert found.first_difference < alone["special_tokens_not_split"] < len(theirs)  # one alone makes some of their list
    assert "two mistakes at once" in found.sentence and found.fix.count(". ") >= 1  # both fixes


@pytest.mark.parametrize("text, merges", [("stdlib", 75), ("corpus.en", 425)])
def test_adjacent_occurrences_is_a_count_difference(corpus_en, text, merges):
    """An incremental update that reads a touching occurrence's old neighbour: on corpus.en the pair it undercounts
    ties with theirs by the true counts (the issue's 'g' + 'in'), a count difference that looks like a tie."""
    text = stdlib_prose(100_000) if text == "stdlib" else corpus_en
    reference = student.train(text, merges, (SPECIAL,), incremental=True)
    theirs = student.train(text, merges, (SPECIAL,), "adjacent_occurrences")
    found = diagnose(theirs, text.encode(), SPEC)
    check(found, text, reference, theirs, "adjacent_occurrences")
    assert found.implied is not None and found.implied != (found.theirs_count, found.reference_count)
    if found.theirs_count == found.reference_count:
        assert found.reference == (b"g", b"in") and found.implied[1] < found.reference_count
        assert "so it looks like a tie, but it is a count difference" in found.sentence


def test_line_by_line_on_python_source():
    """Python's own source: a newline and the next line's indentation are one pre-token, unless each line is read alone."""
    text = (Path(sysconfig.get_paths()["stdlib"]) / "string.py").read_text(encoding="utf-8")
    reference = student.train(text, 40, (SPECIAL,), incremental=True)
    theirs = student.train(text, 40, (SPECIAL,), "line_by_line")
    found = diagnose(theirs, text.encode(), SPEC)
    check(found, text, reference, theirs, "line_by_line")
    assert found.reference[0] == b"\n"


def test_special_tokens_removed_on_stories():
    stories = pytest.importorskip("test_hf_file_trainer").stories(1000)  # the TinyStories-like stories; some end in a bare word
    reference = student.train(stories, 60, (SPECIAL,))
    theirs = student.train(stories, 60, (SPECIAL,), "special_tokens_removed")
    found = diagnose(theirs, stories.encode(), SPEC)
    check(found, stories, reference, theirs, "special_tokens_removed")
    assert {t.cause: t.reproduced_through for t in found.tried}["special_tokens_not_split"] < len(theirs)


def test_a_file_is_diagnosed_as_its_bytes_are(tmp_path):
    """The mistakes that read documents (special tokens deleted from each) and the settings checks, on a file."""
    stories = pytest.importorskip("test_hf_file_trainer").stories(1000)
    path = tmp_path / "stories.txt"
    path.write_text(stories, encoding="utf-8")
    for mistake, spec in (("special_tokens_removed", SPEC), (None, TrainSpec())):
        theirs = student.train(stories, 60, (SPECIAL,), mistake)
        from_file, from_bytes = diagnose(theirs, [str(path)], spec), diagnose(theirs, stories.encode(), spec)
        assert (from_file.cause, from_file.reproduced_through, from_file.sentence) == (
            from_bytes.cause,
            from_bytes.reproduced_through,
            from_bytes.sentence,
        )


def test_no_special_token_given_for_a_corpus_that_spells_one_is_different_input():
    """A correct trainer given <|endoftext|>, checked by someone who gave none: which --special-token to add."""
    stories = pytest.importorskip("test_hf_file_trainer").stories(1000)
    theirs = student.train(stories, 60, (SPECIAL,))
    found = diagnose(theirs, stories.encode(), TrainSpec())
    assert (found.cause, found.reproduced_through) == ("different_input", 60), found.sentence
    assert f"spells {stories.count(SPECIAL):,} times" in found.sentence and "--special-token '<|endoftext|>'" in found.fix
    assert "count:other" not in {found.cause, *found.also}


@pytest.mark.parametrize("text", ["stdlib", "stories"])
def test_a_first_seen_tie_is_never_given_a_cause_that_does_not_make_it(text):
    text = stdlib_prose(60_000) if text == "stdlib" else pytest.importorskip("test_hf_file_trainer").stories(1000)
    reference = student.train(text, 60, (SPECIAL,))
    theirs = student.train(text, 60, (SPECIAL,), "tie:first_seen")
    found = diagnose(theirs, text.encode(), SPEC)
    check(found, text, reference, theirs, "tie:other")
    assert found.walk is not None and found.walk.not_top_total == 0  # every pair of theirs is the most frequent: counts right


def test_two_merges_swapped_by_hand_did_not_take_the_maximum():
    text = stdlib_prose(100_000)
    reference = list(student.train(text, 60, (SPECIAL,), incremental=True))
    counts = student.counts_after(text, (SPECIAL,), tuple(reference[:36]))
    assert counts[reference[36]] > counts[reference[37]]  # the swap takes a less frequent pair first
    theirs = reference[:36] + [reference[37], reference[36]] + reference[38:]
    found = diagnose(theirs, text.encode(), SPEC)
    assert (found.first_difference, found.kind, found.cause) == (36, "count", "not_the_maximum"), found.sentence
    assert found.reproduced_through == 60 and found.walk.not_top_total == 1
    assert (
        f"occurs {counts[reference[37]]:,} times there" in found.sentence
        and "at every other merge of your list yours is the most frequent" in found.sentence
    )


def test_a_list_of_the_huggingface_rule_on_the_textbook_names_both_rules_that_make_it():
    text = SOURCES["textbook"].text
    spec = TrainSpec(pretokenizer="whitespace", special_tokens=(SPECIAL,))
    theirs = make_mistake("tie:huggingface", text.encode(), spec, 12)
    found = diagnose(theirs, text.encode(), spec)
    assert (found.kind, found.reproduced_through) == ("tie", 12)
    assert {found.cause, *found.also} == {"tie:token_ids", "tie:huggingface"}
    assert label("tie:huggingface") in found.sentence and "rustbpe" in found.sentence
    assert "the rustbpe rule" in found.fix and "the huggingface rule" in found.fix


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
    assert {"first_difference", "theirs", "reference", "kind", "cause", "cause_label", "reproduced_through"} <= set(out)
    assert out["theirs"] == ["Ġ", "d"] and out["reference"] == ["Ġa", "nd"]  # GPT-2's byte-to-unicode, as merges.txt writes them
    assert out["kind"] in KINDS and out["cause"] in CAUSES and out["top_pairs"][0] == ["Ġa", "nd", out["true_count_of_reference"]]
    # the counts named for whose count of which pair they are
    assert out["true_count_of_theirs"] == out["true_count_of_reference"] == 609
    assert out["implied_count_of_theirs"] is None and "theirs_count" not in out


def test_every_mistake_has_a_cause_the_issue_lists():
    assert {m.cause for m in MISTAKES} | {"tie:other", "count:other", "different_input", "not_the_maximum"} == set(CAUSES)
    assert {"characters_not_bytes", "adjacent_occurrences", "tie:greater_token_ids", "special_tokens_removed", "line_by_line"} <= set(
        CAUSES
    )
    assert {"tie:smaller", "tie:token_ids", "tie:huggingface", "tie:cs336", "tie:other", "special_tokens_not_split"} <= set(CAUSES)
    assert {"whitespace_split", "no_pretokenization", "overlap_right_to_left", "stale_counts", "count:other", "different_input"} <= set(
        CAUSES
    )


def test_merge_right_to_left():
    assert merge_right_to_left([97, 97, 97], (97, 97), 256) == [97, 256]
    assert merge_right_to_left([1, 2, 3, 1, 2], (1, 2), 256) == [256, 3, 256]


def test_neighbour_delta_reads_the_old_word_where_occurrences_touch():
    br, i_n, g = 300, 301, 103  # br in g in g, merging (in, g) -> 400
    delta = neighbour_delta([([br, i_n, g, i_n, g], 1)], (i_n, g), 400)
    assert dict(delta) == {(br, i_n): -1, (br, 400): 1, (g, i_n): -2, (400, i_n): 1, (g, 400): 1}


MODELLED = ["tie:smaller", "tie:token_ids", "tie:greater_token_ids", "whitespace_split", "overlap_right_to_left", "stale_counts"]
MODELLED += ["characters_not_bytes", "adjacent_occurrences", "characters_not_bytes+stale_counts"]


@settings(max_examples=40, deadline=None)
@given(
    words=st.lists(
        st.sampled_from(["low", "lower", "newest", "widest", "aaa", "banana", "the", "then", "bringing", "für", "naïve", "—", " ", "\n"]),
        min_size=3,
        max_size=40,
    ),
    mistake=st.sampled_from([None, "tie:first_seen", *MODELLED]),
)
def test_first_difference_pairs_kind_and_cause_on_any_text(words, mistake):
    """On any text: where and how a student's list parts from the student's correct one is what diagnose says; a cause
    named makes their list past that merge (a mistake that makes it all is found), and none is named otherwise."""
    text = " ".join(words)
    reference = student.train(text, 12)
    theirs = student.train(text, 12, mistake=mistake)
    spec = TrainSpec()
    found = diagnose(theirs, text.encode(), spec, vocab_size=256 + len(reference))
    d = first_difference(theirs, reference)
    if d is None and len(theirs) == len(reference):
        assert found.kind == "same"
        return
    if d is None:
        assert found.kind == ("shorter" if len(theirs) < len(reference) else "longer")
        return
    assert (found.first_difference, found.theirs, found.reference) == (d, theirs[d], reference[d])
    counts = counts_at(text, reference, theirs, d, special_tokens=())
    counted_another_way = found.implied is not None or (found.walk is not None and found.walk.not_top_total > 0)
    assert found.kind == kind_of(counts) or (kind_of(counts) == "tie" and found.kind == "count" and counted_another_way)
    assert found.reference_count == counts[1]
    if found.cause in ("tie:other", "count:other", "different_input"):
        assert found.reproduced_through == d and not found.also
    elif found.cause != "not_the_maximum":  # a mistake named: it makes their list past d, as far as said
        made = make_mistake(found.cause, text.encode(), spec, len(theirs))
        assert found.reproduced_through > d and made[: found.reproduced_through] == list(theirs[: found.reproduced_through])
    if mistake in MODELLED:  # as far as the vocab size asks (mistakes are trained over its merges only)
        assert found.reproduced_through == min(len(theirs), found.num_merges), (found.cause, found.tried)
