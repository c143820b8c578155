"""What the pages get from ui.runs: traces and trainings built once, in worker processes for big corpora, and reused.

Driven through AppTest on the step page (which calls trace_for at its top) and
the tokenize page (trained_for); the page content itself is tested elsewhere.
"""

from __future__ import annotations

import random
import time

from conftest import open_app, rerun_until, until

import serve.jobs
import ui.work
from bpe import pretokenize
from bpe.spec import TrainSpec
from serve.jobs import RunKey, trace_of
from ui.runs import INLINE_BYTES, TRACE_SECONDS, Trace


def words(n: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    return " ".join("".join(rng.choice("abcdefghij") for _ in range(rng.randint(3, 12))) for _ in range(n))


def counting(monkeypatch, name: str) -> list:
    """Count the runs of serve.jobs.name made in this process (the inline ones, for tiny corpora)."""
    calls, real = [], getattr(serve.jobs, name)
    monkeypatch.setattr(serve.jobs, name, lambda *a, **k: calls.append(a) or real(*a, **k))
    return calls


def traces(at) -> list[tuple]:
    """(key, trace) of every trace the pool holds."""
    return ui.work.pool().find(lambda key: isinstance(key, RunKey) and key.purpose == "trace")


def paste(at, text: str, vocab_size: int, algorithm: str = "heap") -> None:
    at.sidebar.selectbox(key="source").set_value("paste").run()
    at.sidebar.text_area(key="pasted").set_value(text).run()
    at.sidebar.selectbox(key="algorithm").set_value(algorithm).run()
    at.sidebar.number_input(key="vocab_size").set_value(vocab_size).run()


def test_a_smaller_vocab_is_a_prefix_of_the_trace_already_built(monkeypatch):
    calls = counting(monkeypatch, "trace")
    at = open_app(source="textbook")  # 12 merges, traced in this process: the corpus fits on a slide
    assert len(calls) == 1  # the spy sees this corpus's runs (they are not sent to a worker it cannot see)
    at.sidebar.number_input(key="vocab_size").set_value(256 + 5 + 1).run()
    assert not at.exception and len(calls) == 1  # nothing retrained
    assert not any(ui.work.pool().busy().values())  # not in a worker either
    [(_, full)] = traces(at)
    assert len(full.events) == 12
    assert "of 5" in next(h.value for h in at.html if "merge-card" in h.value)


def test_a_larger_vocab_is_built_once_then_serves_every_smaller_one(monkeypatch):
    at = open_app(source="ties")
    calls = counting(monkeypatch, "trace")
    at.sidebar.number_input(key="vocab_size").set_value(256 + 20 + 1).run()
    at.sidebar.number_input(key="vocab_size").set_value(256 + 3 + 1).run()
    at.sidebar.number_input(key="vocab_size").set_value(256 + 15 + 1).run()
    assert len(calls) == 1 and not at.exception


def test_a_big_corpus_is_traced_in_a_worker_with_the_same_merges_as_here():
    text = words(3000)
    assert len(text) > INLINE_BYTES
    at = open_app(source="textbook")
    paste(at, text, 256 + 100)
    key = at.session_state["watching"]["trace"]
    assert key.corpus == at.session_state["settings"].key  # the pasted corpus's trace, asked of the pool
    assert ui.work.pool().wait(key, 120).state == "done"
    rerun_until(at, lambda at: any("merge-card" in h.value for h in at.html))
    there = ui.work.pool().status(key).result
    corpus = pretokenize(text.encode(), pretokenizer="gpt2", special_tokens=["<|endoftext|>"])
    here = trace_of(corpus, 99, TrainSpec(), TRACE_SECONDS, lambda progress: None, time.perf_counter())
    assert [(e.pair, e.count) for e in there.events[:99]] == [(e.pair, e.count) for e in here.events]
    assert [e.detail.top_pairs for e in there.events[:99]] == [e.detail.top_pairs for e in here.events]
    assert isinstance(there, Trace)


def test_a_slow_algorithm_says_which_is_fast_and_switching_frees_its_worker():
    at = open_app(source="textbook")
    paste(at, words(8000), 256 + 2000, algorithm="naive")  # ~70 KB of mostly unique words: naive takes its whole budget
    advice = " ".join(i.value for i in at.info)
    assert "heap" in advice and "Pick heap in the sidebar" in advice
    assert any("worker process" in p.proto.text for p in at.get("progress"))
    naive = at.session_state["watching"]["trace"]
    at.sidebar.selectbox(key="algorithm").set_value("heap").run()
    until(lambda: ui.work.pool().status(naive).state == "cancelled", 30, "the naive trace, which nobody watches any more, to end")
    rerun_until(at, lambda at: any("merge-card" in h.value for h in at.html))


def test_the_tokenize_page_gets_a_training_from_a_worker_and_reuses_it_for_a_smaller_vocab():
    at = open_app("pages/tokenize.py", source="textbook")
    paste(at, words(3000), 256 + 200)
    rerun_until(at, lambda at: any(m.label == "Merges used" and m.value.endswith("of 199") for m in at.metric))
    [(_, training)] = ui.work.pool().find(lambda key: isinstance(key, RunKey) and key.purpose == "train" and key.merges == 250)
    assert len(training.events) == 250  # built for the vocab size rounded up, so nudging it up reuses the run
    at.sidebar.number_input(key="vocab_size").set_value(256 + 120).run()
    assert not at.exception and ui.work.pool().busy()["short running"] == 0  # no new run: the prefix served
    assert any(m.label == "Merges used" and m.value.endswith("of 119") for m in at.metric)


def test_the_tie_break_rule_is_part_of_every_trace_and_trainings_key(monkeypatch):
    at = open_app(source="textbook")
    at.sidebar.selectbox(key="tie_break").set_value("huggingface").run()
    at.sidebar.selectbox(key="tie_break").set_value("cs336").run()
    rules = {key.spec.tie_break: run for key, run in traces(at)}
    assert rules["cs336"].events[0].token == b"st" and rules["huggingface"].events[0].token == b"es"

    for page in ("pages/tokenize.py", "pages/threshold.py"):
        at.switch_page(page).run()
        at.sidebar.selectbox(key="tie_break").set_value("rustbpe").run()
        assert not at.exception
    trainings = {
        key.spec.tie_break: run for key, run in ui.work.pool().find(lambda key: isinstance(key, RunKey) and key.purpose == "train")
    }
    assert trainings["rustbpe"].merges[0] == (b"e", b"s") and trainings["rustbpe"].tie_break == "rustbpe"
    assert trainings["cs336"].merges[0] == (b"s", b"t")
    replays = ui.work.pool().find(lambda key: isinstance(key, RunKey) and key.purpose == "replays")
    assert {key.spec.tie_break for key, _ in replays} == {"rustbpe"}  # the threshold page was first drawn under rustbpe


class Stalled:
    """A pool whose every call gets no answer in time, as a RemotePool's calls to a stopped pool server end."""

    def __getattr__(self, name):
        def call(*args, **kwargs):
            raise ui.work.Unavailable("The worker pool is not answering: it did not answer 'done' in time.")

        return call


def test_a_pool_that_does_not_answer_is_one_sentence_and_the_page_comes_back(monkeypatch):
    at = open_app()
    working = ui.work.pool
    monkeypatch.setattr(ui.work, "pool", lambda: Stalled())
    at.sidebar.selectbox(key="source").set_value("ties").run()  # a new run: the page asks the pool for it
    assert not at.exception, at.exception
    assert [w.value for w in at.warning] == [ui.work.NOT_ANSWERING]
    monkeypatch.setattr(ui.work, "pool", working)  # the supervisor started a new pool server
    at.run()  # what the page's retry does once the pool answers
    assert not at.exception and not at.warning
    assert "Merge <b>1</b>" in " ".join(h.proto.body for h in at.get("html"))
