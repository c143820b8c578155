"""The algorithm race page, driven by Streamlit's AppTest (no browser), on the small textbook corpus."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from conftest import open_app

from bpe import race as R


@pytest.fixture
def app():
    return open_app("pages/race.py", source="textbook")


def charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


def test_page_invites_a_race_before_one_is_run(app):
    assert app.title[0].value == "Algorithm race"
    assert any("Start the race" in i.value for i in app.info)
    assert app.session_state["race"] is None


def test_race_draws_a_chart_and_an_agreement_verdict(app):
    app.button(key="race_start").click().run()
    assert not app.exception
    assert len(app.get("vega_lite_chart")) == 1
    assert "Agreement: the 4 algorithms made the same 12 merges" in app.success[0].value
    record = app.session_state["race"]
    assert record.status == "finished" and [len(r.merges) for r in record.results] == [12] * 4
    phases, work = app.dataframe[0].value, app.dataframe[1].value
    assert list(phases["algorithm"]) == ["naive", "positions", "parent_set", "heap"]
    assert set(phases["status"]) == {"finished"}
    assert work.set_index("work per merge").loc["heap pops", "heap"] == "1.0"  # one pop per merge


def test_results_and_settings_are_kept_when_switching_pages_and_back(app):
    app.number_input(key="w_race_budget").set_value(7.0).run()
    app.button(key="race_start").click().run()
    record = app.session_state["race"]
    app.switch_page("pages/step.py").run()
    app.switch_page("pages/race.py").run()
    assert app.session_state["race"] is record  # not rerun
    assert len(app.get("vega_lite_chart")) == 1 and app.success
    assert record.budget_s == app.number_input(key="w_race_budget").value == 7.0


def test_a_planted_difference_is_shown_with_both_candidates(app):
    app.button(key="race_start").click().run()
    record = app.session_state["race"]
    heap = record.results[3]
    wrong = replace(heap, merges=heap.merges[:2] + ((b"<b>", b"x"),) + heap.merges[3:])
    app.session_state["race"] = replace(record, results=record.results[:3] + (wrong,))
    app.run()
    assert "first differ at merge 3" in app.error[0].value
    table = app.dataframe[0].value
    assert table.loc[table["algorithm"] == "heap", "merge"].item() == "<b> + x"  # shown as text in a table, never as HTML
    assert table.loc[table["algorithm"] == "naive", "count"].item() == heap.counts[2]


def test_a_stopped_race_keeps_what_it_had_done(app, monkeypatch):
    import streamlit as st

    real_race = R.race

    def stopped_after_four_turns(*args, **kwargs):  # as the Stop button does: the script stops mid-race
        for turn, results in enumerate(real_race(*args, **kwargs)):
            yield results
            if turn == 3:
                st.stop()

    monkeypatch.setattr(R, "race", stopped_after_four_turns)
    app.button(key="race_start").click().run()
    partial = app.session_state["race"]
    assert partial.status == "running" and len(partial.results) == 4  # saved after every turn
    app.run()  # the next run (the one a click starts) finds it and shows it as stopped
    assert app.session_state["race"] == replace(partial, status="stopped")
    assert any("stopped" in w.value for w in app.warning)
    assert len(app.get("vega_lite_chart")) == 1


def test_sweep_over_the_sidebar_corpus_draws_log_log_charts(app):
    app.radio(key="w_sweep_source").set_value("current").run()
    app.number_input(key="w_sweep_merges").set_value(10).run()
    app.button(key="sweep_start").click().run()
    assert not app.exception
    sweep = app.session_state["sweep"]
    assert sweep.status == "finished" and len(sweep.points) == 6 * 4
    specs = charts(app)
    scales = [layer["encoding"]["x"].get("scale", {}).get("type") for spec in specs for layer in spec.get("layer", [spec])]
    assert "log" in scales


@pytest.mark.skipif(not R.hf_available(), reason="HuggingFace tokenizers is not installed")
def test_hf_reference_is_reported_with_the_gpt2_pre_tokenizer(app):
    app.sidebar.selectbox(key="pattern").set_value("gpt2").run()
    app.button(key="race_start").click().run()
    assert not app.exception
    record = app.session_state["race"]
    assert record.hf is not None and len(record.hf.merges) == 12
    assert any(c.value == record.hf_note and "HuggingFace" in c.value for c in app.caption)
    assert "HF tokenizers (Rust" in app.get("vega_lite_chart")[0].proto.spec  # a line in the race chart
