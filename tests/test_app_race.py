"""The algorithm race page, driven by Streamlit's AppTest (no browser).

Races run in the server's worker pool, in real worker processes: a test clicks
Start, then reruns the page (as the page's polling fragment does in a browser)
until the run has ended.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from dataclasses import replace

import pytest
from apptest import ROOT
from conftest import finish, open_app, until
from streamlit.testing.v1 import AppTest

import ui.work
from bpe import ALGORITHMS
from bpe.heap_c import HeapC
from bpe.lab import race as R
from bpe.lab import references as refs
from bpe.lab import sweep as sweeps
from bpe.train import ABSENT
from ui.views.race import REFERENCE_LINES, colour, slopes, time_domain

SECTIONS = ["Scaling", "Parallel pre-tokenization"]


@pytest.fixture
def app():
    return open_app("pages/race.py", source="textbook")


def charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


def table_with(at, column: str):
    """The first st.table on the page with this column (or index name), as a DataFrame."""
    return next(t.value for t in at.table if column in t.value.columns or t.value.index.name == column)


def running(at, purpose: str = "race"):
    """The pool's status of this session's run for purpose."""
    return ui.work.pool().status(at.session_state["watching"][purpose])


def slow_corpus(at, merges: int = 400) -> None:
    """Paste ~70 KB of mostly unique words: naive takes seconds, so a race is still going when the test looks."""
    rng = random.Random(1)
    words = " ".join("".join(rng.choice("abcdefghij") for _ in range(rng.randint(3, 12))) for _ in range(8000))
    at.sidebar.selectbox(key="source").set_value("paste").run()
    at.sidebar.text_area(key="pasted").set_value(words).run()
    at.sidebar.number_input(key="vocab_size").set_value(256 + merges + 1).run()


def test_page_invites_a_race_before_one_is_run(app):
    assert app.title[0].value == "Algorithm race"
    assert any("Start the race" in i.value for i in app.info)
    assert app.session_state["race"] is None
    assert [h.value for h in app.main.header] == SECTIONS


def test_race_runs_in_a_worker_then_draws_a_chart_and_an_agreement_verdict(app):
    app.button(key="race_start").click().run()
    assert not app.exception
    assert "race" in app.session_state["watching"]  # the page only follows it
    finish(app)
    assert len(app.get("vega_lite_chart")) == 1
    (spec,) = charts(app)  # its legend and axes in the page's ink, not the chart theme's light grey (issue 36.10)
    assert {spec["config"][part][ink] for part in ("legend", "axis") for ink in ("labelColor", "titleColor")} == {"#111"}
    assert f"Agreement: the {len(ALGORITHMS)} algorithms made the same 12 merges" in app.success[0].value
    record = app.session_state["race"]
    assert record.status == "finished" and [len(r.merges) for r in record.results] == [12] * len(ALGORITHMS)
    phases, work = table_with(app, "merge loop"), table_with(app, "work per merge")
    assert list(phases["algorithm"]) == list(ALGORITHMS)  # naive, positions, parent_set, heap, and heap_c where the core is built
    if "heap_c" in ALGORITHMS:  # the interpreter's cost, the algorithm held fixed
        said = [i.value for i in app.info if i.value.startswith("heap_c is heap compiled to C")]
        assert said and "the same merges and the same work, counter for counter" in said[0], [i.value for i in app.info]
    assert set(phases["status"]) == {"finished"}
    assert not app.dataframe  # tables whose type size the app sets (a dataframe is a canvas at 15.75 px)
    assert work.set_index("work per merge").loc["heap pops", "heap"] == "1.0"  # one pop per merge


def test_a_server_lacking_a_trainer_its_workers_have_races_and_draws_the_trainers_it_knows(app, monkeypatch):
    # a core built into the checkout mid-run once gave the pool's new workers heap_c, which the server lacked, and
    # drawing their race raised KeyError 'heap_c': the page now asks for the trainers it knows, and knows the others by name
    monkeypatch.delitem(ALGORITHMS, "heap_c", raising=False)
    monkeypatch.setitem(ABSENT, "heap_c", HeapC)
    app.sidebar.number_input(key="vocab_size").set_value(256 + 10 + 1).run()  # a race no other test ran (none to replay)
    app.button(key="race_start").click().run()
    finish(app)
    assert not app.exception
    assert [r.algorithm for r in app.session_state["race"].results] == list(ALGORITHMS)
    assert colour("heap_c") == HeapC.colour  # a race raced elsewhere (a replica's, a replay) may hold it


def test_the_complexity_table_names_each_cost_in_the_work_counters_words(app):
    table = table_with(app, "algorithm")
    assert list(table.index) == list(ALGORITHMS)
    assert "O(pairs scanned)" in table.loc["parent_set", "finding the best pair"]
    app.button(key="race_start").click().run()
    finish(app)
    table = table_with(app, "measured per merge")
    assert table.loc["heap", "measured per merge"].endswith("words checked")
    assert table.loc["heap", "finding the best pair"] == ALGORITHMS["heap"].complexity[0]


def test_results_and_settings_are_kept_when_switching_pages_and_back(app):
    app.number_input(key="w_race_budget").set_value(7.0).run()
    app.button(key="race_start").click().run()
    finish(app)
    record = app.session_state["race"]
    app.switch_page("pages/step.py").run()
    app.switch_page("pages/race.py").run()
    assert app.session_state["race"] is record  # not rerun
    assert len(app.get("vega_lite_chart")) == 1 and app.success
    assert record.budget_s == app.number_input(key="w_race_budget").value == 7.0


def test_the_same_race_asked_again_is_answered_from_the_finished_run(app):
    app.button(key="race_start").click().run()
    finish(app)
    first = app.session_state["race"]
    assert not [i for i in app.info if "A replay" in i.value]  # this session watched it run
    app.button(key="race_start").click().run()
    assert "race" not in app.session_state["watching"]  # done at once: the result was kept
    assert app.session_state["race"] is first
    # and the page says so: a replay, when it ran, and a way to run it live (issue 28.1)
    said = next(i.value for i in app.info if "A replay" in i.value)
    assert time.strftime("%H:%M:%S", time.localtime(first.started_at)) in said and "before you pressed Start" in said
    app.button(key="race_live").click().run()
    assert "race" in app.session_state["watching"]  # a new run, live
    finish(app)
    assert app.session_state["race"] is not first and app.session_state["race"].started_at > first.finished_at
    assert not [i for i in app.info if "A replay" in i.value]
    student = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()  # the same server: its caches kept
    student.switch_page("pages/race.py").run()
    student.button(key="race_start").click().run()  # a session pressing Start now gets the live run
    finish(student)
    assert student.session_state["race"].started_at == app.session_state["race"].started_at


def test_a_planted_difference_is_shown_with_both_candidates(app):
    app.button(key="race_start").click().run()
    finish(app)
    record = app.session_state["race"]
    heap = record.results[3]
    wrong = replace(heap, merges=heap.merges[:2] + ((b"<b>", b"x"),) + heap.merges[3:])
    app.session_state["race"] = replace(record, results=record.results[:3] + (wrong,))
    app.run()
    assert "first differ at merge 3" in app.error[0].value
    table = table_with(app, "count")
    assert table.loc[table["algorithm"] == "heap", "merge"].item() == "<b> + x"  # shown as text in a table, never as HTML
    assert table.loc[table["algorithm"] == "naive", "count"].item() == f"{heap.counts[2]:,}"


def wait_for_results(at) -> None:
    def merged() -> bool:
        progress = running(at).progress
        return bool(progress and progress.results and progress.results[0].merges)

    until(merged, 120, "the race's first merges")


def test_stop_keeps_what_the_race_had_done_and_frees_the_worker(app):
    slow_corpus(app)
    app.button(key="race_start").click().run()
    key = app.session_state["watching"]["race"]
    wait_for_results(app)
    app.button(key="race_stop").click().run()
    assert not app.exception
    record = app.session_state["race"]
    assert record.status == "stopped" and record.results[0].merges
    assert any("stopped" in w.value for w in app.warning)
    assert len(app.get("vega_lite_chart")) == 1
    until(lambda: ui.work.pool().status(key).state == "cancelled", 10, "the stopped race to end (nobody else watched it)")


def test_any_interruption_leaves_the_race_running_and_every_section_drawn(app):
    """Streamlit's own stop, another click or a page change end a script run, not the race: it runs in a worker."""
    slow_corpus(app, merges=60)
    app.button(key="race_start").click().run()
    wait_for_results(app)
    app.run()  # what any click, or the toolbar's stop and a rerun, leaves behind
    assert running(app).state == "running"
    assert [h.value for h in app.main.header] == SECTIONS  # the Scaling and Parallel sections never vanish
    app.switch_page("pages/threshold.py").run()
    app.switch_page("pages/race.py").run()
    finish(app)
    assert app.session_state["race"].status == "finished"
    assert [h.value for h in app.main.header] == SECTIONS


def test_two_sessions_pressing_start_together_share_one_race(monkeypatch):
    who = {"id": "alice"}
    monkeypatch.setattr(ui.work, "session_id", lambda: who["id"])
    alice = open_app("pages/race.py", source="textbook")
    who["id"] = "bob"
    bob = open_app("pages/race.py", source="textbook")
    slow_corpus(bob, merges=60)
    who["id"] = "alice"
    slow_corpus(alice, merges=60)
    alice.button(key="race_start").click().run()
    who["id"] = "bob"
    bob.button(key="race_start").click().run()
    assert alice.session_state["watching"]["race"] == bob.session_state["watching"]["race"]
    assert running(bob).watchers == 2
    wait_for_results(bob)
    who["id"] = "alice"
    alice.button(key="race_stop").click().run()  # one student's Stop does not stop the class's race
    assert running(bob).state == "running" and running(bob).watchers == 1
    who["id"] = "bob"
    finish(bob)
    assert bob.session_state["race"].status == "finished"
    assert alice.session_state["race"].status == "stopped"


def test_a_crashed_worker_is_reported_and_the_next_race_works(app):
    slow_corpus(app, merges=60)
    app.button(key="race_start").click().run()
    wait_for_results(app)
    process = ui.work.pool()._jobs[app.session_state["watching"]["race"]].process  # the worker, as the kernel's OOM killer finds it
    os.kill(process.pid, signal.SIGKILL)
    finish(app)
    assert "The worker process stopped before finishing (killed by signal 9" in app.error[0].value
    app.button(key="race_start").click().run()
    assert not app.error  # the sentence is gone with the next run
    finish(app)
    assert app.session_state["race"].status == "finished"


def test_sweep_over_the_sidebar_corpus_draws_log_log_charts(app):
    app.radio(key="w_sweep_source").set_value("current").run()
    app.number_input(key="w_sweep_merges").set_value(10).run()
    app.button(key="sweep_start").click().run()
    finish(app, "sweep")
    sweep = app.session_state["sweep"]
    assert sweep.status == "finished" and len(sweep.points) == 6 * len(ALGORITHMS)
    specs = charts(app)
    scales = [layer["encoding"]["x"].get("scale", {}).get("type") for spec in specs for layer in spec.get("layer", [spec])]
    assert "log" in scales
    legend = specs[0]["layer"][0]["encoding"]["color"]["scale"]["domain"]
    assert all("slope" in name for name in legend)  # every trainer finished at every size: each has a fitted slope
    sizes = app.table[-1].value
    assert len(sizes) == 6 and set(sizes.columns) >= set(ALGORITHMS)


def test_fitted_slopes_read_the_growth_off_the_log_log_points():
    def point(n_bytes: int, seconds: float, algorithm: str = "heap", cut_off: bool = False) -> sweeps.ScalingPoint:
        result = R.RaceResult(algorithm, (), (), (), {"initial count": 0.0, "merge loop": seconds}, cut_off=cut_off)
        return sweeps.ScalingPoint(n_bytes, 0.0, result)

    points = (point(1_000, 1.0), point(4_000, 4.0), point(16_000, 16.0), point(1_000, 2.0, "naive"), point(4_000, 32.0, "naive"))
    points += (point(16_000, 40.0, "naive", cut_off=True), point(1_000, 1.0, "positions"))
    from serve.jobs import SweepRecord

    found = slopes(SweepRecord("test", (1_000, 4_000, 16_000), 10, 1.0, points, "finished"))
    assert found == pytest.approx({"heap": 1.0, "naive": 2.0})  # a cut-off point is not fitted; one point gives no slope


def test_parallel_timing_runs_in_a_worker(app, monkeypatch):
    monkeypatch.setattr(sweeps, "SPEEDUP_BYTES", 1)  # one copy of the stdlib prose: a quick test
    app.button(key="speedup_start").click().run()
    finish(app, "speedup", timeout=300)
    record = app.session_state["speedup"]
    assert record.status == "finished" and [p.workers for p in record.points] == list(range(1, (os.cpu_count() or 1) + 1))
    assert len({p.unique for p in record.points}) == 1


@pytest.mark.skipif(not (refs.hf_available() and refs.rustbpe_available()), reason="HuggingFace tokenizers or rustbpe is not installed")
def test_hf_and_rustbpe_agree_merge_for_merge_under_their_own_rule_and_the_first_cs336_tie_is_shown(app):
    app.sidebar.selectbox(key="pretokenizer").set_value("gpt2").run()
    app.button(key="race_start").click().run()
    finish(app)
    record = app.session_state["race"]
    optional = [(refs.GIGATOKEN, "huggingface", True)] * refs.gigatoken_available() + [(refs.FFBPE, "cs336", True)] * refs.ffbpe_available()
    assert [(c.result.algorithm, c.rule, c.agrees) for c in record.references] == [
        (refs.HF, "huggingface", True),
        (refs.RUSTBPE, "rustbpe", True),
        *optional,
    ]
    assert all(len(c.result.merges) == 12 for c in record.references)
    said = [s.value for s in app.success]
    assert 'HuggingFace tokenizers made the same 12 merges as ours under its rule, tie_break="huggingface", merge for merge.' in said
    assert 'rustbpe made the same 12 merges as ours under its rule, tie_break="rustbpe", merge for merge.' in said
    assert any("first parts from HuggingFace tokenizers at merge 1: a tie at 9" in c.value for c in app.caption)
    table = table_with(app, "run")  # the tokens of that tie, in a table
    assert list(table["merge"]) == ["s + t", "e + s"] and list(table["count"]) == ["9", "9"]
    spec = json.loads(app.get("vega_lite_chart")[0].proto.spec)
    assert "HF tokenizers (Rust" in str(spec) and "rustbpe (Rust" in str(spec)  # a mark each in the race chart
    assert spec["layer"][0]["encoding"]["y"]["scale"]["type"] == "log"  # heap and the Rust tools told apart
    phases = table_with(app, "all phases").set_index("algorithm")  # their times beside ours in "Where the time goes"
    assert {"HF tokenizers", "rustbpe", "heap"} <= set(phases.index)
    for check in record.references:  # like with like (issue 28.6): processor time of the same phases, wall-clock beside it
        row = phases.loc[REFERENCE_LINES[check.result.algorithm].split(" (")[0]]
        if check.result.algorithm == refs.FFBPE:  # given our pre-tokens: no 'all phases' to set beside ours
            assert row["all phases"] == "" and row["merge loop"] == f"{check.result.total:,.3f} s with its count"
        else:
            assert row["all phases"] == f"{check.result.total:,.3f} s" and row["status"] == "reference: Rust, all phases"
        assert row["wall-clock"] == f"{check.result.wall_s:,.3f} s"
    heap = phases.loc["heap"]
    prep = record.prep_seconds["pre-tokenize"]
    assert heap["all phases"] == f"{prep + record.results[3].total:,.3f} s" and heap["pre-tokenize"] == f"{prep:,.3f} s"
    assert any("Every time here is processor time" in c.value for c in app.caption)


def test_the_time_axis_spans_the_fastest_and_the_slowest():
    low, high = time_domain([0.02, 0.5, 8.0])
    assert low < 0.02 and high > 8.0 and high / low > 400  # a log axis: 0.02 s and 8 s both a readable distance from the edge


def test_the_race_follows_the_sidebars_tie_break_rule(app):
    app.sidebar.selectbox(key="tie_break").set_value("rustbpe").run()
    app.toggle(key="w_race_hf").set_value(False).run()
    app.button(key="race_start").click().run()
    finish(app)
    record = app.session_state["race"]
    assert all(r.merges[0] == (b"e", b"s") for r in record.results)  # rustbpe's rule: ids (101, 115) < (115, 116)
    assert "ties broken by the rustbpe rule" in app.success[0].value
    app.sidebar.selectbox(key="tie_break").set_value("cs336").run()
    assert any("from earlier settings" in c.value for c in app.caption)


def test_references_need_the_gpt2_pre_tokenizer_and_say_so(app):
    app.button(key="race_start").click().run()
    finish(app)
    assert app.session_state["race"].references == ()
    assert any("use GPT-2's pre-tokenizer" in c.value for c in app.caption)
