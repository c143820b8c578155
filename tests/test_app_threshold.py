"""The threshold explorer page, driven through AppTest: the slider answers from one run."""

from __future__ import annotations

import json
import re

import pytest
from conftest import open_app
from streamlit.testing.v1 import AppTest

import serve.jobs
from bpe import pretokenize, train
from ui.corpus import SOURCES
from ui.views.threshold import PRESETS, corpus_presets, versus

PAGE = "pages/threshold.py"


def open_page(source: str = "textbook") -> AppTest:
    return open_app(PAGE, source=source)


def metric(at: AppTest, label: str) -> str:
    """The value of the metric whose label starts with label ('Merges kept' finds 'Merges kept at t = 5')."""
    return next(m.value for m in at.metric if m.label.startswith(label))


def kept_label(at: AppTest) -> str:
    return next(m.label for m in at.metric if m.label.startswith("Merges kept"))


def options(at: AppTest) -> list[int]:
    return [int(o.replace(",", "")) for o in at.select_slider(key="w_threshold").options]


def retrained(source: str, t: int) -> int:
    """Merges a real run with min_pair_frequency=t makes, on the preset's own settings."""
    s = SOURCES[source]
    corpus = pretokenize(s.text, pretokenizer=s.pretokenizer, special_tokens=s.special_tokens)
    return len(train(corpus, s.merges, special_tokens=s.special_tokens, min_pair_frequency=t).events)


def test_the_page_opens_with_every_merge_kept():
    at = open_page()
    assert not at.exception
    assert at.title[0].value == "Threshold explorer"
    assert metric(at, "Merges kept") == "12" and kept_label(at) == "Merges kept at t = 1"
    assert metric(at, "Vocabulary") == "269"


@pytest.mark.parametrize("source", ["textbook", "ties"])
def test_every_slider_value_matches_retraining_with_that_threshold(source):
    at = open_page(source)
    for t in options(at):
        at.select_slider(key="w_threshold").set_value(t).run()
        assert not at.exception
        assert metric(at, "Merges kept") == str(retrained(source, t)), t


def test_moving_the_slider_neither_retrains_nor_re_encodes(monkeypatch):
    at = open_page()
    calls = []
    monkeypatch.setattr(serve.jobs, "train", lambda *a, **k: calls.append("train"))
    monkeypatch.setattr(serve.jobs, "replay", lambda *a, **k: calls.append("replay"))
    before = metric(at, "Bytes per token")
    at.select_slider(key="w_threshold").set_value(5).run()
    assert not at.exception and calls == []
    assert metric(at, "Merges kept") == "7"
    assert metric(at, "Bytes per token") != before


def test_a_preset_button_sets_the_slider():
    at = open_page()
    button = next(b for b in at.button if b.label.endswith("simple early-exit BPE"))
    button.click().run()
    assert at.session_state["threshold"] == 5
    assert at.select_slider(key="w_threshold").value == 5
    assert metric(at, "Merges kept") == "7"
    labels = [b.label for b in at.button]
    assert "t = 0 · HuggingFace BpeTrainer" in labels and "t = 2 · subword-nmt learn-bpe" in labels  # the value first: never cut off


def test_the_chart_draws_the_threshold_across_the_counts():
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    at = open_page()
    at.select_slider(key="w_threshold").set_value(3).run()
    chart = at.get("vega_lite_chart")[0]
    spec = json.loads(chart.proto.spec)
    assert spec["layer"][1]["mark"]["type"] == "rule" and spec["layer"][1]["encoding"]["y"]["field"] == "t"
    data = convert_arrow_bytes_to_pandas_df(chart.proto.data.data)
    assert set(data["t"]) == {3} and set(data["label"]) == {"t = 3"}
    assert list(data["status"]) == ["kept"] * 10 + ["dropped"] * 2


def test_a_token_threshold_is_shown_to_differ_from_a_pair_threshold():
    at = open_page()
    at.select_slider(key="w_threshold").set_value(5).run()
    text = " ".join(h.value for h in at.html)
    assert "<b>st</b> made ×9, used ×0" in text  # 'e' + 'st' used up every 'st'
    assert "Token threshold" in " ".join(m.value for m in at.markdown)


def test_the_threshold_is_kept_across_pages():
    at = open_page()
    at.select_slider(key="w_threshold").set_value(5).run()
    at.switch_page("pages/tokenize.py").run()
    at.switch_page(PAGE).run()
    assert metric(at, "Merges kept") == "7"
    assert at.select_slider(key="w_threshold").value == 5


def test_unusable_settings_show_the_reason():
    at = open_page()
    at.sidebar.number_input(key="vocab_size").set_value(10).run()
    assert not at.exception
    assert "too small" in at.error[0].value


def test_every_number_is_for_the_slider_value_of_its_own_run():
    """Fast moves: each run's numbers are computed from, and labelled with, the value the slider shows in that run."""
    at = open_page("ties")
    values = options(at)
    for t in values[::-1] + values:
        at.select_slider(key="w_threshold").set_value(t).run()
        shown = at.select_slider(key="w_threshold").value
        assert shown == t and kept_label(at) == f"Merges kept at t = {t:,}"
        assert metric(at, "Merges kept") == str(retrained("ties", t))
        assert at.subheader[2].value == f"Where t = {t:,} cuts"


def test_a_difference_that_shows_as_zero_is_no_change():
    at = open_page()
    deltas = {m.label: m.delta for m in at.metric}
    assert deltas["Bytes per token"] == deltas["Tokens per word"] == "same as with no threshold"  # t = 1 keeps every merge
    assert versus(2.3141, 2.3119, "normal")["delta"] == "same as with no threshold"  # both show as 2.31
    assert versus(2.10, 2.31, "normal") == {"delta": "-0.21 vs no threshold", "delta_color": "normal"}


def test_the_browser_is_told_the_slider_value_only_when_it_cannot_know_it():
    """A slider move never sends the slider a value back (a late run would undo a newer move); another corpus does."""
    at = open_page()
    at.select_slider(key="w_threshold").set_value(5).run()
    assert not at.select_slider(key="w_threshold").proto.set_value
    at.sidebar.selectbox(key="source").set_value("ties").run()  # other options: the browser would reset the slider
    slider = at.select_slider(key="w_threshold")
    assert slider.proto.set_value and list(slider.proto.raw_value) == [f"{slider.value:,}"]
    assert kept_label(at) == f"Merges kept at t = {slider.value:,}"


def test_the_page_says_which_tie_break_rule_its_run_used():
    at = open_page()
    at.sidebar.selectbox(key="tie_break").set_value("huggingface").run()
    assert not at.exception
    assert "ties broken by the huggingface rule" in at.caption[0].value


def test_corpus_presets_keep_about_three_quarters_half_and_a_quarter():
    counts = [9, 9, 7, 5, 2, 2, 1, 1]
    assert corpus_presets(counts) == [(2, 6), (5, 4), (9, 2)]
    assert corpus_presets(counts, {2, 5}) == [(9, 2)]  # the tools' values are buttons already
    assert corpus_presets([1, 1, 1]) == corpus_presets([40, 40, 40]) == []  # nothing cuts this run


def test_when_the_tools_defaults_keep_everything_the_page_says_so_and_offers_thresholds_that_cut():
    # every winning count here is 12 or more, far above 5 (as on the 2 MB corpus, where the lowest is 173)
    at = open_page()
    at.sidebar.selectbox(key="source").set_value("paste").run()
    at.sidebar.text_area(key="pasted").set_value("the quick brown fox " * 40 + "jumps over the lazy dog " * 12).run()
    at.sidebar.number_input(key="vocab_size").set_value(256 + 30 + 1).run()
    for tool in PRESETS:
        next(b for b in at.button if b.label.startswith(f"t = {tool.t} ·")).click().run()
        assert metric(at, "Merges kept") == "30"
    note = next(c.value for c in at.caption if "keep all" in c.value)
    assert "every winning count is at least 12" in note and "(t = 0, 2, 5) keep all 30 merges" in note
    ours = [b for b in at.button if b.key and b.key.startswith("corpus_t_")]
    assert len(ours) >= 1
    for button in ours:
        button.click().run()
        t, k = (int(v.replace(",", "")) for v in re.match(r"t = ([\d,]+) · keeps ([\d,]+) of", button.label).groups())
        assert kept_label(at) == f"Merges kept at t = {t:,}" and metric(at, "Merges kept") == f"{k:,}" and k < 30


@pytest.mark.parametrize("typed", [4, 6, 9, 10])
def test_a_typed_t_moves_the_slider_to_the_value_that_keeps_the_same_merges(typed):
    """The number box beside the slider (issue 28.10): any t, snapped up to the slider's next value, answers as retraining would."""
    at = open_page()
    at.number_input(key="w_threshold_typed").set_value(typed).run()
    snapped = min(o for o in options(at) if o >= typed)
    assert at.session_state["threshold"] == snapped and at.select_slider(key="w_threshold").value == snapped
    assert kept_label(at) == f"Merges kept at t = {snapped:,}" and metric(at, "Merges kept") == str(retrained("textbook", typed))
    assert at.number_input(key="w_threshold_typed").value == snapped  # the box says the t the numbers are for
    at.select_slider(key="w_threshold").set_value(1).run()  # and the slider moves the box
    assert at.number_input(key="w_threshold_typed").value == 1


def test_an_old_t_the_box_sends_along_with_a_slider_move_is_not_typing():
    """A run cut short leaves the browser's box at an older t, sent with the next slider move: the slider's t stands."""
    at = open_page()
    at.select_slider(key="w_threshold").set_value(9)
    at.number_input(key="w_threshold_typed").set_value(3)  # the box's old value, in the same message
    at.run()
    assert at.session_state["threshold"] == 9 and kept_label(at) == "Merges kept at t = 9"
    assert at.number_input(key="w_threshold_typed").value == 9


@pytest.mark.parametrize("used", [{}, None])
def test_a_threshold_in_the_thousands_is_written_with_its_separator(monkeypatch, used):
    # "threshold of 1010" stood beside the slider's "1,010" (issue 36.10)
    import ui.views.threshold as views

    said = []
    monkeypatch.setattr(views.st, "html", said.append)
    monkeypatch.setattr(views.st, "markdown", said.append)
    s = SOURCES["textbook"]
    events = tuple(train(pretokenize(s.text, pretokenizer=s.pretokenizer), s.merges).events)
    usage = {e.token: 5_000 for e in events} if used is None else used  # all used 5,000 times: none dropped; or none used
    views.rare_tokens(events, 1_010, len(events), usage)
    (text,) = said
    assert "threshold of 1,010 would drop" in text and "1010" not in text
