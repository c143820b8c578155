"""The step-through page, driven by Streamlit's AppTest (no browser)."""

from __future__ import annotations

import json

import pytest
from apptest import settled
from conftest import finish, open_app

from bpe import ALGORITHMS


@pytest.fixture
def app():
    return open_app()


def html_of(at, marker: str) -> str:
    return next(h.value for h in at.html if marker in h.value)


def card(at) -> str:
    return html_of(at, 'class="merge-card"')


def click(at, key: str):
    return at.button(key=key).click().run()


def test_first_merges_of_textbook_corpus(app):
    assert "Merge <b>1</b> of 12" in card(app)
    assert '<span class="pill">s</span> + <span class="pill">t</span>' in card(app)
    click(app, "next")
    assert "Merge <b>2</b> of 12" in card(app)
    assert '<span class="pill">e</span> + <span class="pill">st</span>' in card(app)


def test_previous_goes_back(app):
    click(app, "next")
    click(app, "next")
    assert "Merge <b>3</b>" in card(app)
    click(app, "previous")
    assert "Merge <b>2</b>" in card(app)


def test_next_and_previous_have_the_arrow_keys(app):
    assert app.button(key="next").proto.shortcut == "right"
    assert app.button(key="previous").proto.shortcut == "left"


def test_tie_is_explained(app):
    # merge 1: 's t' and 'e s' both occur 9 times; the bytes order decides
    assert "Tied at 9" in card(app)


def test_jump_to_merge_k(app):
    app.slider(key="w_step").set_value(12).run()
    assert "Merge <b>12</b> of 12" in card(app)
    assert '<span class="pill">lowe</span> + <span class="pill">r</span>' in card(app)


def test_heap_view_shows_stale_entries(app):
    click(app, "next")  # merge 2: the entry for 'e s' is stale (its count fell to 0)
    heap = html_of(app, 'class="htree"')
    assert 'class="hnode stale"' in heap
    assert "9 → gone" in heap


def test_affected_words_show_before_and_after(app):
    click(app, "next")
    words = html_of(app, 'class="words"')
    assert "× 6" in words and "× 3" in words  # newest x6, widest x3
    assert ">est<" in words


def test_the_pair_table_is_html_not_a_scrolling_dataframe(app):
    html = html_of(app, 'class="pairs"')
    table = html[html.index('<table class="pairs"') :].split("</table>")[0]
    assert table.count("<tr") - 1 == 10  # header + every row drawn
    assert not app.dataframe


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_every_algorithm_steps_without_error(app, algorithm):
    app.sidebar.selectbox(key="algorithm").set_value(algorithm).run()
    assert not app.exception
    assert "Merge <b>1</b> of 12" in card(app)
    click(app, "next")
    assert '<span class="pill">e</span> + <span class="pill">st</span>' in card(app)


# ---------------------------------------------------------------------------
# state that must survive, links, presenter mode


def test_the_merge_shown_survives_a_visit_to_another_page(app):
    for _ in range(3):
        click(app, "next")
    assert "Merge <b>4</b>" in card(app)
    app.switch_page("pages/tokenize.py").run()
    app.switch_page("pages/step.py").run()
    assert "Merge <b>4</b>" in card(app)
    assert app.slider(key="w_step").value == 4


def test_play_and_its_speed_survive_a_visit_to_another_page(app):
    app.selectbox(key="w_speed").set_value(2.0).run()
    click(app, "play")
    assert app.button(key="pause").label == "Pause" and app.get("progress")  # the clock moves the merge, not the slider
    app.switch_page("pages/race.py").run()
    app.switch_page("pages/step.py").run()
    assert app.button(key="pause").label == "Pause"
    assert app.selectbox(key="w_speed").value == 2.0
    click(app, "pause")
    assert app.button(key="play").label == "Play" and app.slider(key="w_step")


def test_a_link_opens_its_preset_at_its_merge():
    app = open_app()
    app.query_params["corpus"] = "ties"
    app.query_params["merge"] = "5"
    app.run()
    assert app.sidebar.selectbox(key="source").value == "ties"
    assert "Merge <b>5</b> of 8" in card(app)


def test_stepping_writes_the_link(app):
    click(app, "next")
    assert app.query_params == {"corpus": "textbook", "merge": "2"}


def test_after_a_link_the_sidebar_can_still_change_the_corpus():
    app = open_app()
    app.query_params.update(corpus="ties", merge="3")
    app.run()
    app.sidebar.selectbox(key="source").set_value("wikipedia").run()
    assert "Merge <b>1</b> of 5" in card(app)
    assert app.query_params == {"corpus": "wikipedia", "merge": "1"}


@pytest.mark.parametrize(
    "params, says",
    [({"corpus": "nope", "merge": "2"}, "not one of the presets"), ({"corpus": "ties", "merge": "two"}, "not a merge number")],
)
def test_a_bad_link_says_what_is_wrong(params, says):
    app = open_app()
    app.query_params.update(params)
    app.run()
    assert not app.exception
    assert says in app.warning[0].value
    assert "Merge <b>" in card(app)


def test_a_link_carries_the_tie_break_rule_the_teacher_saw():
    teacher = open_app()
    teacher.sidebar.selectbox(key="tie_break").set_value("rustbpe").run()
    click(teacher, "next")
    assert teacher.query_params == {"corpus": "textbook", "merge": "2", "rule": "rustbpe"}
    student = open_app()
    student.query_params.update(teacher.query_params)
    student.run()
    assert student.sidebar.selectbox(key="tie_break").value == "rustbpe"
    assert card(student) == card(teacher)  # the same merge under the same rule


def test_a_link_with_an_unknown_rule_says_so_and_keeps_the_sidebars():
    app = open_app()
    app.query_params.update(corpus="textbook", merge="1", rule="greedy")
    app.run()
    assert "tie-break rule 'greedy' is not one of cs336, huggingface, rustbpe" in app.warning[0].value
    assert app.sidebar.selectbox(key="tie_break").value == "cs336"


def test_a_hostile_link_is_quoted_as_text_not_markdown():
    app = open_app()
    app.query_params.update(corpus="[click](javascript:alert(1))", rule="<script>x</script>" * 10)
    app.run()
    assert not app.exception
    rule, corpus = (w.value for w in app.warning)  # the rule is read first
    assert "\\[click\\]\\(javascript" in corpus and "[click](" not in corpus  # no link: Markdown characters escaped
    assert "\\<script\\>" in rule and "<script>" not in rule and "…'" in rule  # escaped, and cut at 40 characters
    assert "Merge <b>1</b>" in card(app)


def test_a_link_past_the_last_merge_shows_the_last():
    app = open_app()
    app.query_params.update(corpus="textbook", merge="99")
    app.run()
    assert "Merge <b>12</b> of 12" in card(app)


def speed_shown(at) -> float:
    """The speed the browser shows: the box's value when it has one, else its default (a new box shows that)."""
    box = at.selectbox(key="w_speed")
    return [0.5, 1.0, 2.0, 4.0][box.proto.default] if not box.proto.set_value else box.value


def test_the_play_speed_survives_the_paths_that_hide_the_speed_box(app):
    app.selectbox(key="w_speed").set_value(2.0).run()
    app.sidebar.selectbox(key="source").set_value("paste").run()  # the empty-text notice: no speed box
    assert not [s for s in app.selectbox if s.key == "w_speed"]
    app.sidebar.text_area(key="pasted").set_value("hello world, hello words " * 5).run()
    assert app.session_state["speed"] == 2.0 and speed_shown(app) == 2.0  # not 0.5, on the server or in the browser
    app.switch_page("pages/threshold.py").run()
    app.switch_page("pages/step.py").run()
    assert app.session_state["speed"] == 2.0 and speed_shown(app) == 2.0
    app.selectbox(key="w_speed").set_value(4.0).run()
    assert app.session_state["speed"] == 4.0 and not app.warning  # no "default value and Session State" warning


def test_the_play_speed_survives_the_building_trace_screen():
    app = open_app()
    app.selectbox(key="w_speed").set_value(2.0).run()
    app.sidebar.selectbox(key="source").set_value("stdlib").run()  # 2 MB: traced in a worker, the page waits without a speed box
    settled(app)
    assert [s for s in app.selectbox if s.key == "w_speed"]  # the trace is ready and the box is back
    assert app.session_state["speed"] == 2.0 and speed_shown(app) == 2.0


def test_presenter_mode_enlarges_type_and_drops_the_extras(app):
    assert len(app.get("vega_lite_chart")) == 1
    app.sidebar.toggle(key="presenter").set_value(True).run()
    assert "zoom:1.25" in "".join(h.value for h in app.html)
    assert not app.title  # the first screen is for the merge
    assert not app.get("vega_lite_chart")  # the chart and the pair-count changes go
    assert not any("How pair counts changed" in h.value for h in app.html)
    assert "Merge <b>1</b>" in card(app) and html_of(app, 'class="htree"')  # the card and the heap stay
    assert app.query_params["present"] == "1"  # the URL says it, so a reload keeps it
    app.sidebar.toggle(key="presenter").set_value(False).run()
    assert "present" not in app.query_params and app.title


def test_a_link_with_present_opens_presenter_mode_and_the_toggle_still_turns_it_off():
    app = open_app()
    app.query_params.update(corpus="textbook", merge="3", present="1")
    app.run()
    assert app.session_state["presenter"] and app.sidebar.toggle(key="presenter").value
    assert "Merge <b>3</b>" in card(app) and not app.title
    app.sidebar.toggle(key="presenter").set_value(False).run()  # the URL said present=1 until now: it does not win again
    assert not app.session_state["presenter"] and "present" not in app.query_params
    app.run()
    assert not app.session_state["presenter"]


# ---------------------------------------------------------------------------
# views that must say the right thing


def test_naive_words_checked_is_the_race_pages_figure():
    # the race page's work table and the step page count the same words: every word of 2+ bytes
    race = open_app("pages/race.py", source="textbook")
    race.button(key="race_start").click().run()
    finish(race)
    work = next(d.value for d in race.table if "work per merge" in d.value.columns)
    per_merge = work.set_index("work per merge").loc["words checked", "naive"]
    app = open_app(algorithm="naive")
    for _ in range(2):
        click(app, "next")
    assert per_merge == "4.0"
    assert "words checked 4 · words rewritten 2" in card(app)  # merge 3, 'o w': low and lower


def test_zero_merges_says_why_in_a_sentence(app):
    app.sidebar.number_input(key="vocab_size").set_value(257).run()
    assert not app.exception
    assert app.info[0].value.startswith("No merges: a vocab size of 257 is filled by the 256 bytes and 1 special token alone")


def test_a_trace_cut_by_its_time_limit_says_so_and_what_to_pick(app, monkeypatch):
    import ui.runs

    monkeypatch.setattr(ui.runs, "TRACE_SECONDS", 0.0)
    app.sidebar.selectbox(key="algorithm").set_value("naive").run()
    message = app.info[0].value
    assert message.startswith("Stopped after 1 merge: it ran out of its time budget")
    assert "Pick heap in the sidebar to see all 12" in message
    assert "Merge <b>1</b> of 1" in card(app)


def test_the_winning_count_chart_keeps_its_spec_while_the_merge_moves(app):
    first = app.get("vega_lite_chart")[0].proto
    click(app, "next")
    second = app.get("vega_lite_chart")[0].proto
    assert first.spec == second.spec  # the browser updates the data instead of redrawing the chart
    assert [d.name for d in second.datasets] == ["counts", "now"]
    assert json.loads(second.spec)["layer"][0]["encoding"]["y"]["scale"] == {"zero": True}  # counts 9..2: linear


def test_the_sentence_shows_pre_tokens_and_dropped_whitespace(app):
    sentence = html_of(app, "A sentence tokenized")
    assert sentence.count('class="pre"') == 16  # the textbook corpus: 16 words
    assert 'class="dropped"' in sentence
    assert "94 bytes (15 of them whitespace the pre-tokenizer drops" in sentence  # the text's bytes, as every page counts them


def test_your_own_sentence_is_tokenized_and_survives_a_page_change(app):
    app.text_input(key="w_sample").input("lowest newest").run()
    sentence = html_of(app, "A sentence tokenized")
    assert sentence.count('class="pre"') == 2 and "found 2 times" in sentence  # 's t' in lowest and newest
    app.switch_page("pages/race.py").run()
    app.switch_page("pages/step.py").run()
    assert app.text_input(key="w_sample").value == "lowest newest"


# ---------------------------------------------------------------------------
# bad input


def test_hostile_text_is_escaped(app):
    app.sidebar.selectbox(key="source").set_value("paste").run()
    app.sidebar.text_area(key="pasted").set_value("<script>alert(1)</script> <img src=x onerror=alert(1)>").run()
    assert not app.exception
    html = "".join(h.value for h in app.html)
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;" in html  # shown as text


def test_empty_text_gives_a_message(app):
    app.sidebar.selectbox(key="source").set_value("paste").run()
    assert "empty" in app.error[0].value
    assert not app.exception


def test_vocab_size_below_minimum_gives_a_message(app):
    app.sidebar.number_input(key="vocab_size").set_value(100).run()
    assert "too small" in app.error[0].value
    assert not app.exception


def test_binary_upload_gives_a_message(app):
    app.sidebar.selectbox(key="source").set_value("upload").run()
    app.sidebar.file_uploader[0].set_value(("x.bin", bytes(range(256)) * 4, "application/octet-stream")).run()
    assert "binary" in app.error[0].value
    assert not app.exception


def test_file_over_the_cap_gives_a_message(app):
    from ui.corpus import MAX_UPLOAD_BYTES

    app.sidebar.selectbox(key="source").set_value("upload").run()
    app.sidebar.file_uploader[0].set_value(("big.txt", b"a " * (MAX_UPLOAD_BYTES // 2 + 10), "text/plain")).run()
    assert "MB" in app.error[0].value and "CLI" in app.error[0].value
    assert not app.exception


def test_a_latin1_upload_shows_its_bytes_as_they_are(app):
    app.sidebar.selectbox(key="source").set_value("upload").run()
    app.sidebar.file_uploader[0].set_value(("latin1.txt", "caf\xe9 caf\xe9 na\xefve ".encode("latin-1") * 20, "text/plain")).run()
    assert not app.exception and not app.error
    assert "Merge <b>1</b>" in card(app)
    sentence = html_of(app, "A sentence tokenized")
    assert "\\xe9" in sentence and "\\xef" in sentence  # é and ï as the Latin-1 bytes they are
    assert "\\xbf" not in sentence and "\ufffd" not in sentence  # not replaced by U+FFFD (ef bf bd)
    assert not app.query_params.get("corpus")  # an uploaded corpus cannot travel in a link


# ---------------------------------------------------------------------------
# tie-break rules: the sidebar picks one; a tied merge shows what each would take


def rule_rows(at) -> dict[str, tuple[str, bool]]:
    """The tie table of the merge card: rule -> (pair it merges, highlighted as the trace's own)."""
    table = card(at).split('<table class="tie-rules">')[1].split("</table>")[0]
    rows = {}
    for row in table.split("<tr")[2:]:
        name = row.split("<b>")[1].split("</b>")[0]
        pair = row.split('<td class="pair">')[1].split("</td>")[0]
        rows[name] = (pair, 'class="mine"' in row)
    return rows


def test_the_sidebar_offers_every_tie_break_rule_with_what_it_prefers(app):
    box = app.sidebar.selectbox(key="tie_break")
    assert box.value == "cs336" and list(box.options) == ["cs336", "huggingface", "rustbpe"]
    assert any(
        c.value == "Ties go to the greater (left bytes, right bytes), as Stanford CS336's reference train_bpe does."
        for c in app.sidebar.caption
    )
    box.set_value("rustbpe").run()
    assert any("Ties go to the smaller pair of ids" in c.value and "rustbpe" in c.value for c in app.sidebar.caption)


@pytest.mark.parametrize("rule", ["huggingface", "rustbpe"])
def test_an_id_rule_in_the_sidebar_makes_e_s_win_the_tie_that_cs336_gives_to_s_t(rule):
    at = open_app(tie_break=rule)
    assert '<span class="pill">e</span> + <span class="pill">s</span>' in card(at)  # ids (101, 115) < (115, 116)
    click(at, "next")
    assert '<span class="pill">es</span> + <span class="pill">t</span>' in card(at)
    assert "Merge <b>2</b> of 12" in card(at)  # still 256 bytes + 12 merges + 1 special: the caption's sum holds
    assert any("269 = 256 bytes + 12 merges + 1 special" in c.value for c in at.sidebar.caption)


def test_a_tied_merge_shows_which_pair_each_rule_would_take_with_the_sidebars_highlighted(app):
    assert rule_rows(app) == {"cs336": ("s + t", True), "huggingface": ("e + s", False), "rustbpe": ("e + s", False)}
    assert "2 pairs tie; what each tool's rule would merge here, at the start, and why" in card(app)
    assert 'Each rule\'s pick: <span class="mine"><b>cs336</b>' in card(app)  # one line; the table opens under it
    assert "takes the greater bytes: comparing the left tokens, &#x27;s&#x27; &gt; &#x27;e&#x27;" in card(app)
    app.sidebar.selectbox(key="tie_break").set_value("rustbpe").run()
    assert rule_rows(app) == {"cs336": ("s + t", False), "huggingface": ("e + s", False), "rustbpe": ("e + s", True)}
    assert "(101, 115) &lt; (115, 116)" in card(app)


def test_a_later_tie_is_explained_with_the_merges_made_before_it(app):
    app.slider(key="w_step").set_value(3).run()  # merge 3: 'o w' and 'l o' both occur 7 times, after s+t and e+st
    assert "after the same 2 merges" in card(app)
    assert rule_rows(app)["cs336"] == ("o + w", True) and rule_rows(app)["rustbpe"] == ("l + o", False)


def test_a_merge_that_was_no_tie_has_no_rule_table(app):
    click(app, "next")
    assert "tie-rules" not in card(app) and "Highest count" in card(app)


@pytest.mark.parametrize(("button", "old", "expected"), [("next", 2, 4), ("previous", 4, 2)])
def test_a_click_that_brings_the_sliders_old_value_along_is_a_click(app, button, old, expected):
    """Next or Previous pressed before the browser took the slider's new merge (3): the slider's old value comes along."""
    app.button(key="next").click().run()
    app.button(key="next").click().run()
    assert app.session_state["step"] == 3
    app.slider(key="w_step").set_value(old)  # the slider as the browser still had it (3 was reached from `old`)
    app.button(key=button).click().run()
    assert app.session_state["step"] == expected and app.slider(key="w_step").value == expected
    app.slider(key="w_step").set_value(7).run()  # a real jump still jumps
    assert app.session_state["step"] == 7


def test_the_code_beside_the_step_is_sent_only_while_its_box_is_open(app):
    """A Next click sends no code to a class that keeps it folded; opened, the heap's lines come lit for this merge."""
    assert not any('class="code-excerpt"' in h.value for h in app.html)
    app.session_state["step_code"] = True
    app.run()
    code = next(h.value for h in app.html if 'class="code-excerpt"' in h.value)
    assert "Heap.choose" in code and "popped the winner: s + t, 9" in code  # (a browser keeps it open on Next: test_lecture_browser)


def test_a_next_click_sends_the_merge_not_the_widgets_around_it(app, monkeypatch):
    """A browser's Next click reruns the page's fragment alone (what benchmarks/step_click.py times): it sends the
    buttons, the slider and merge k's views; not Play, the speed or the sentence box, drawn outside the fragment, and no
    st.columns (ui/style.py's grid lays the page out), so that a lecture hall's clicks cost the server less."""
    from streamlit.testing.v1 import local_script_runner

    fragments = list(app._fragment_storage._fragments)
    assert len(fragments) == 1
    make = local_script_runner.RerunData
    monkeypatch.setattr(local_script_runner, "RerunData", lambda **kwargs: make(**kwargs, fragment_id_queue=fragments))
    sent = []
    parse = local_script_runner.parse_tree_from_messages
    monkeypatch.setattr(local_script_runner, "parse_tree_from_messages", lambda msgs: sent.append(list(msgs)) or parse(msgs))
    app.button(key="next").click().run()
    assert app.session_state["step"] == 2
    deltas = [m.delta for m in sent[-1] if m.WhichOneof("type") == "delta"]
    elements = [d.new_element.WhichOneof("type") for d in deltas if d.WhichOneof("type") == "new_element"]
    blocks = [d.add_block.WhichOneof("type") for d in deltas if d.WhichOneof("type") == "add_block"]
    # the counter of arrow-key presses (ui.play.arrows) is drawn with the buttons, so that a press reruns this fragment
    # alone: its element carries its script, ~1.2 KB of a click's messages
    expected = ["bidi_component", "button", "button", "html", "html", "html", "html", "html", "slider", "vega_lite_chart"]
    assert sorted(elements) == expected, elements
    counter = next(d.new_element.bidi_component for d in deltas if d.new_element.WhichOneof("type") == "bidi_component")
    assert counter.ByteSize() < 1_500, counter.ByteSize()
    assert "column" not in blocks and len(blocks) == 4, blocks  # the fragment, the row of buttons, the code's box, the counts
