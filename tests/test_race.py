"""The race's comparison logic: agreement, time budgets, honest clocks and work counters.

Slow inputs are built from seeded random words: many unique words make the
naive trainer's recount costly, so a small budget cuts it off for sure.
"""

from __future__ import annotations

import random
import time
from dataclasses import replace

import pytest
from conftest import EVERY_ALGORITHM

from bpe import ALGORITHMS, pretokenize, train
from bpe.lab import race as R
from bpe.lab import references as refs
from bpe.lab import sweep as sweeps

TEXTBOOK = "low low low low low lower lower widest widest widest newest newest newest newest newest newest"


def random_words(n_words: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    return " ".join("".join(rng.choice("abcdefghij") for _ in range(rng.randint(3, 12))) for _ in range(n_words))


@pytest.fixture(scope="module")
def prose():
    """About 12 KB of words: every trainer makes 100 merges in about a second or less."""
    return R.prepare(random_words(1500).encode(), pretokenizer="gpt2").corpus


@pytest.fixture(scope="module")
def slow():
    """About 70 KB of mostly unique words: one naive merge takes tens of milliseconds."""
    return R.prepare(random_words(8000, seed=1).encode(), pretokenizer="gpt2").corpus


@pytest.fixture(scope="module")
def finished(prose):
    return {a: R.run_timed(prose, a, 100, budget_s=60) for a in ALGORITHMS}


# ---------------------------------------------------------------------------
# agreement


def test_the_four_algorithms_agree_on_the_same_input(finished):
    results = list(finished.values())
    assert R.first_difference(results) is None
    assert R.compared(results) == 100


def test_agreement_check_finds_a_planted_difference(finished):
    heap = finished["heap"]
    merges = list(heap.merges)
    merges[37] = (b"zz", b"top")
    planted = replace(heap, algorithm="planted", merges=tuple(merges))
    rank, there = R.first_difference([finished["naive"], planted, finished["positions"]])
    assert rank == 37
    assert there["naive"] == (heap.merges[37], heap.counts[37])
    assert there["planted"] == ((b"zz", b"top"), heap.counts[37])
    assert there["positions"] == there["naive"]


def test_a_run_cut_off_by_its_budget_is_compared_over_the_merges_it_made(finished):
    heap = finished["heap"]
    short = replace(finished["naive"], merges=heap.merges[:40], counts=heap.counts[:40], cut_off=True, stop_reason="time budget")
    assert R.compared([short, heap]) == 40
    assert R.first_difference([short, heap]) is None


def test_a_difference_beyond_the_shortest_cut_off_run_is_still_found(finished):
    heap = finished["heap"]
    short = replace(finished["naive"], merges=heap.merges[:10], counts=heap.counts[:10], cut_off=True, stop_reason="time budget")
    longer = replace(heap, algorithm="longer", merges=heap.merges[:70] + ((b"q", b"q"),), counts=heap.counts[:71], cut_off=True)
    assert R.compared([short, longer, heap]) == 71
    rank, there = R.first_difference([short, longer, heap])
    assert rank == 70 and set(there) == {"longer", "heap"}


def test_a_finished_run_with_fewer_merges_differs_where_it_has_none(finished):
    heap = finished["heap"]
    early = replace(heap, algorithm="early", merges=heap.merges[:60], counts=heap.counts[:60], stop_reason="no pairs left")
    rank, there = R.first_difference([heap, early])
    assert rank == 60
    assert there["early"] is None and there["heap"] == (heap.merges[60], heap.counts[60])


@EVERY_ALGORITHM
def test_timed_run_makes_the_same_merges_as_train(prose, finished, algorithm):
    events = train(prose, 100, algorithm=algorithm).events
    assert finished[algorithm].merges == tuple((e.left, e.right) for e in events)
    assert finished[algorithm].counts == tuple(e.count for e in events)
    assert finished[algorithm].stop_reason == "vocab_size" and not finished[algorithm].cut_off


# ---------------------------------------------------------------------------
# time budgets and clocks


def test_time_budget_cuts_off_a_slow_run(slow, monkeypatch):
    monkeypatch.setattr(R, "WALL_FACTOR", 1_000)  # a busy machine must not bring the wall-clock cut-off first
    start = time.perf_counter()
    result = R.run_timed(slow, "naive", 5000, budget_s=0.3)
    wall = time.perf_counter() - start
    assert result.cut_off and result.stop_reason == "time budget"
    assert 0 < len(result.merges) < 5000
    # the budget is kept to within one merge (the slowest merge is the first: the words are longest)
    longest_merge = max(b - a for a, b in zip((result.seconds["initial count"],) + result.times, result.times))
    assert 0.3 <= result.total <= 0.3 + longest_merge + 0.05
    assert wall < 60  # generous: the point is that it stops, not how fast


def test_the_initial_count_counts_against_the_budget(slow):
    result = R.run_timed(slow, "positions", 100, budget_s=1e-6)
    assert result.cut_off and result.merges == ()
    assert result.total == result.seconds["initial count"] > 1e-6


def test_a_run_starved_of_processor_time_is_cut_off_by_the_wall_clock(slow, monkeypatch):
    monkeypatch.setattr(R, "CLOCK", lambda: time.perf_counter() / 10)  # as if it got a tenth of a processor
    start = time.perf_counter()
    result = R.run_timed(slow, "naive", 5000, budget_s=0.1, every_s=0.005)  # checked between turns
    assert result.cut_off and result.stop_reason == "wall-clock budget"
    assert result.total < 0.1 and time.perf_counter() - start < 10


def test_progress_callbacks_are_not_timed(slow, monkeypatch):
    monkeypatch.setattr(R, "WALL_FACTOR", 1_000)  # a busy machine must not bring the wall-clock cut-off first
    calls = []

    def redraw(snapshot: R.RaceResult) -> None:
        calls.append(len(snapshot.merges))
        start = time.thread_time()
        while time.thread_time() - start < 0.03:  # a slow chart redraw, on the same processor clock as the trainer
            pass

    cpu = time.thread_time()
    result = R.run_timed(slow, "naive", 5000, budget_s=0.25, on_progress=redraw, every_s=0.01)
    cpu = time.thread_time() - cpu
    assert len(calls) >= 5 and calls == sorted(calls)
    # subtle: a sleep would prove nothing (it uses no processor time); redraws that were timed would sit inside total
    assert cpu >= result.total + 0.03 * len(calls)


@EVERY_ALGORITHM
def test_times_are_cumulative_from_the_trainer_start(finished, algorithm):
    result = finished[algorithm]
    assert len(result.times) == len(result.merges)
    assert list(result.times) == sorted(result.times)
    assert result.seconds["initial count"] <= result.times[0] <= result.times[-1] <= result.total


def test_race_takes_turns_and_every_line_grows(slow, monkeypatch):
    # the processor budget decides who is cut off here, not the safety cut-off after WALL_FACTOR budgets of wall-clock
    # time, which a busy machine reaches first (heap, 0.1 s of processor, was cut off at load 13)
    monkeypatch.setattr(R, "WALL_FACTOR", 100)
    seen = {a: [] for a in ALGORITHMS}
    for results in R.race(slow, 100, budget_s=0.5, slice_s=0.02):
        for r in results:
            seen[r.algorithm].append(len(r.merges))
    final = results
    assert all(r.done for r in final)
    for algorithm, lengths in seen.items():
        assert lengths == sorted(lengths), algorithm
        if next(r for r in final if r.algorithm == algorithm).seconds["merge loop"] > 2 * 0.02:  # more than two slices of work
            assert len(set(lengths)) > 2, f"{algorithm} should gain merges over several turns"  # (heap_c needs one turn)
    assert next(r for r in final if r.algorithm == "naive").cut_off
    assert not next(r for r in final if r.algorithm == "heap").cut_off


def test_bad_budget_or_algorithm_is_refused(prose):
    with pytest.raises(ValueError, match="time budget"):
        R.run_timed(prose, "heap", 10, budget_s=0)
    with pytest.raises(ValueError, match="Unknown algorithm"):
        R.run_timed(prose, "quick", 10, budget_s=1)


def test_clock_overhead_is_per_merge_not_per_run():
    # not a speed test (those are benchmarks): a figure per merge is microseconds, and the
    # total for 20,000 readings -- the bug this catches -- is tens of milliseconds
    assert 0 < R.clock_overhead(n=20_000) < 1e-3


# ---------------------------------------------------------------------------
# work counters


@EVERY_ALGORITHM
def test_work_counters_are_consistent_with_the_merges_made(prose, finished, algorithm):
    work = finished[algorithm].work
    events = train(prose, 100, algorithm=algorithm, detail=True).events
    assert work["merges"] == len(finished[algorithm].merges) == 100
    touched = "positions_touched" if algorithm == "positions" else "words_touched"
    assert work[touched] == sum(e.words for e in events)
    if algorithm in ("heap", "heap_c"):
        assert work["heap_pops"] == 100  # one current entry per merge; stale ones are counted apart
        assert work["words_checked"] >= work["words_touched"]  # the index is lazy
        assert work["heap_pushes"] >= sum(1 for e in events for d in e.detail.changes if d[2] > 0) > 0
    else:
        # the scan-based trainers look at every distinct pair before each merge
        assert work["pairs_scanned"] == sum(e.detail.distinct_pairs for e in events)
    if algorithm == "naive":
        assert work["words_checked"] == 100 * len([w for w in prose.counts if len(w) > 1])
        assert work["pairs_counted"] >= work["pairs_scanned"]


def test_positions_touches_as_many_sites_as_the_pairs_occur(finished):
    # with no overlapping pairs, every occurrence of the winning pair is one site
    result = finished["positions"]
    assert result.work["positions_touched"] <= sum(result.counts)


# ---------------------------------------------------------------------------
# scaling, speed-up and the reference


def test_prepare_reads_a_path_and_takes_text_as_text(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("low lower")
    from_file, from_text = R.prepare(path), R.prepare("low lower")
    assert from_file.corpus == from_text.corpus == pretokenize("low lower", keep_sequence=True)
    assert set(from_file.seconds) == {"read", "pre-tokenize"}


def test_prefix_cuts_at_a_newline_and_log_sizes_are_log_spaced():
    assert sweeps.prefix(b"one\ntwo\nthree\n", 9) == b"one\ntwo\n"
    assert sweeps.prefix(b"short", 100) == b"short"
    assert sweeps.log_sizes(50_000, 2_000_000, 3) == [50_000, 316_228, 2_000_000]
    assert sweeps.log_sizes(10, 10, 6) == [10]
    assert sweeps.sweep_sizes(2_000_000)[0] == 50_000 and sweeps.sweep_sizes(2_000_000)[-1] == 2_000_000
    assert sweeps.sweep_sizes(400) == sweeps.log_sizes(10, 400, 6)  # small corpora start at a fortieth


def test_sweep_runs_every_size_and_drops_a_trainer_once_cut_off():
    data = "\n".join(random_words(50, seed=s) for s in range(40)).encode()
    sizes = sweeps.log_sizes(2_000, len(data), 3)
    points = list(sweeps.scaling_sweep(data, sizes, 20, budget_s=30))
    assert [(p.result.algorithm, p.n_bytes <= s) for p, s in zip(points, [s for s in sizes for _ in ALGORITHMS])] == [
        (a, True) for _ in sizes for a in ALGORITHMS
    ]
    assert all(not p.result.cut_off for p in points)
    tiny = list(sweeps.scaling_sweep(data, sizes, 20, budget_s=1e-6))
    assert [p.result.algorithm for p in tiny] == list(ALGORITHMS)  # each cut off at the first size, then dropped
    assert all(p.result.cut_off for p in tiny)


def test_pretokenize_speedup_finds_the_same_counts_with_any_number_of_workers(tmp_path):
    path = tmp_path / "corpus.txt"
    assert sweeps.write_repeated(path, b"hello world\nthe end\n", 1000) >= 1000
    points = list(sweeps.pretokenize_speedup(path, [1, 2]))
    assert [p.workers for p in points] == [1, 2]
    assert points[0].unique == points[1].unique == 5
    assert all(p.seconds > 0 for p in points)


def test_pair_count_after_replays_the_merges():
    corpus = pretokenize(TEXTBOOK, pretokenizer="whitespace")
    assert R.pair_count_after(corpus, [], (b"s", b"t")) == 9
    assert R.pair_count_after(corpus, [(b"s", b"t")], (b"e", b"st")) == 9
    assert R.pair_count_after(corpus, [(b"s", b"t")], (b"e", b"s")) == 0


@pytest.mark.skipif(not refs.hf_available(), reason="HuggingFace tokenizers is not installed")
def test_hf_reference_gives_merges_as_bytes(finished):
    text = random_words(1500)
    hf = refs.hf_reference(text, 100, ["<|endoftext|>"])
    assert len(hf.merges) == 100 and all(isinstance(t, bytes) for m in hf.merges for t in m)
    assert hf.merges[0] == finished["heap"].merges[0]  # the most frequent pair is not a tie here
    assert hf.total > 0 and not hf.cut_off
    # both clocks: processor time (its threads too), as ours are timed, and wall-clock beside it
    assert hf.wall_s is not None and hf.wall_s > 0 and set(hf.seconds) == {"train (all phases)"}
