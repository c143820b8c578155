"""A trainer is a plugin: a fifth one, registered here and nowhere else, is trained, raced and shown by the app's pages.

The toy trainer below is defined only in this file. Registering it (bpe.train.register)
is all it takes: train(), the race, the sidebar, the step page, the race page's chart,
its work table and its big-O table all read what they need from the class.
"""

from __future__ import annotations

import pytest
from apptest import open_app, rerun_until

from bpe import ALGORITHMS, pretokenize, train
from bpe.lab import race as R
from bpe.rule import Pair, merge_word
from bpe.spec import TrainSpec
from bpe.train import register, work_names
from bpe.trainer import Delta, Trainer, count_pairs, word_delta, word_lists

TEXTBOOK = "low low low low low lower lower widest widest widest newest newest newest newest newest newest"


class Toy(Trainer):
    """Rewrite every word at every merge: the plainest trainer that is still right."""

    name = "toy"
    summary = "rewrite every word at every merge"
    colour = "#17becf"
    complexity = ("scan every distinct pair: O(pairs scanned)", "rewrite every word: O(toy words × word length)")
    measured = ("pairs_scanned", "toy_words")
    work_names = {"toy_words": "words the toy rewrote"}
    slow = "rewrites every word at every merge."

    def __init__(self, words, sequence=None, *, tie_break="cs336") -> None:
        super().__init__(words, tie_break=tie_break)
        self.words, self.counts = word_lists(words)
        self.pair_counts = count_pairs(self.words, self.counts)

    def merge(self, pair: Pair, new_id: int, detail: bool) -> tuple[Delta, int]:
        from collections import defaultdict

        delta: Delta = defaultdict(int)
        touched = 0
        for i, (word, count) in enumerate(zip(self.words, self.counts)):
            self.work["toy_words"] += 1
            after = merge_word(word, pair, new_id)
            if len(after) != len(word):
                word_delta(word, after, count, delta)
                if detail:
                    self.record_word(word, after, count)
                self.words[i] = after
                touched += 1
        return delta, touched


@pytest.fixture
def toy():
    register(Toy)
    yield Toy
    del ALGORITHMS["toy"]


def test_a_registered_trainer_trains_and_makes_the_same_merges(toy):
    corpus = pretokenize(TEXTBOOK, pretokenizer="whitespace")
    for rule in ("cs336", "huggingface", "rustbpe"):
        mine = train(corpus, 12, TrainSpec(algorithm="toy", tie_break=rule))
        assert mine.merges == train(corpus, 12, TrainSpec(algorithm="heap", tie_break=rule)).merges
        assert mine.algorithm == "toy" and mine.work["toy_words"] == 12 * len(toy(corpus.counts).words)
    assert "toy_words" in work_names() and "toy" in ALGORITHMS


def test_a_registered_trainer_takes_part_in_the_race(toy):
    corpus = R.prepare(TEXTBOOK.encode(), pretokenizer="whitespace").corpus
    *_, final = R.race(corpus, 12, budget_s=30)
    assert [r.algorithm for r in final] == list(ALGORITHMS) and final[-1].algorithm == "toy"  # the compiled heap_c too, where built
    assert R.first_difference(final) is None and len(final[-1].merges) == 12


def test_unregistered_it_is_gone():
    assert "toy" not in ALGORITHMS  # the fixture's registration does not leak into other tests


def test_the_app_offers_it_steps_through_it_and_races_it(toy):
    at = open_app(source="textbook")
    assert "toy" in at.sidebar.selectbox(key="algorithm").options
    at.sidebar.selectbox(key="algorithm").set_value("toy").run()
    assert not at.exception, at.exception
    assert any("rewrite every word at every merge" in c.value.lower() for c in at.sidebar.caption)

    # the step page: a textbook trace is built in this process, by the toy trainer
    at.switch_page("pages/step.py").run()
    rerun_until(at, lambda at: any("merge-card" in h.value for h in at.html))
    assert any("`toy`" in m.value for m in [*at.markdown, *at.caption]), "the trace says which trainer made it"

    # the race page: a race run in this process (a worker process would not know the toy), then drawn by the page
    from serve import jobs
    from ui.views import race as race_views

    settings = at.session_state["settings"]
    key = race_views.race_key(settings)
    record = jobs.race(key, "textbook", settings.corpus.data, key.spec, 12, 30.0, False, report=lambda progress: None)
    assert [r.algorithm for r in record.results][-1] == "toy"
    at.session_state["race"] = record
    at.switch_page("pages/race.py").run()
    assert not at.exception, at.exception
    tables = [t.value for t in at.table]
    big_o = next(t for t in tables if "finding the best pair" in t.columns)
    assert big_o.loc["toy", "making the merge"] == Toy.complexity[1]
    assert "words the toy rewrote" in big_o.loc["toy", "measured per merge"]
    work = next(t for t in tables if "work per merge" in t.columns)
    assert "toy" in work.columns and "words the toy rewrote" in set(work["work per merge"])
    assert race_views.colour("toy") == "#17becf"
