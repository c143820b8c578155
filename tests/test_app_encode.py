"""The Encode page (the encoder's steps, a token's ancestry), driven through AppTest."""

from __future__ import annotations

import re

import pytest
from conftest import open_app
from streamlit.testing.v1 import AppTest

from ui import encoding, real

PAGE = "pages/encode.py"


def open_page(source: str = "textbook", **sidebar: str) -> AppTest:
    return open_app(PAGE, source=source, **sidebar)


def chips_of(html: str) -> list[str]:
    return re.findall(r'<span class="tok[^"]*"[^>]*>([^<]*)</span>', html)


def rows(at: AppTest) -> str:
    return next(h.value for h in at.html if 'class="enc-rows"' in h.value)


def said(at: AppTest) -> str:
    return next(h.value for h in at.html if h.value.startswith("<p class='caption' style='color:#111'>"))


def test_next_walks_the_encoder_through_lowest_by_merge_number():
    at = open_page()
    at.text_input(key="w_enc_text").set_value("lowest").run()
    assert chips_of(rows(at)) == list("lowest")  # the bytes, and the first step's pairs
    first = re.search(r'class="rank hit">(?:<a [^>]*>)?#(\d+)', rows(at)).group(1)
    ranks = [int(r) for r in re.findall(r'class="rank(?: hit)?">(?:<a [^>]*>)?#(\d+)', rows(at))]
    assert int(first) == min(ranks)  # the lowest merge number is the one lit
    n_steps = 0
    while not at.button(key="enc_next").disabled:
        at.button(key="enc_next").click().run()
        n_steps += 1
    assert n_steps >= 3
    assert "encodes as" in said(at)
    final = rows(at).split('<div class="what now">tokens</div>')[1]
    assert "".join(chips_of(final)) == "lowest" and len(chips_of(final)) < 6


def test_ranks_of_our_run_link_to_the_step_page_and_say_their_count():
    at = open_page()
    at.text_input(key="w_enc_text").set_value("newest").run()
    assert re.search(r'href="\./\?corpus=textbook&amp;merge=\d+"', rows(at))
    assert re.search(r"In training this was merge \d+, made when the pair occurred \d+ times\.", said(at))


def test_the_step_page_button_opens_that_merge():
    at = open_page()
    at.text_input(key="w_enc_text").set_value("newest").run()
    merge = int(re.search(r"this was merge (\d+)", said(at)).group(1))
    at.button(key="enc_to_step").click().run()
    assert at.session_state["step"] == merge
    assert any("Step through" in t.value for t in at.title)


def test_the_step_page_button_keeps_the_sidebars_run_and_presenter_mode():
    """A page switch made by the server (st.switch_page) sends no widget values, and Streamlit dropped the keyed ones:
    the sidebar's run and presenter mode are kept (ui.state.widget: persist_state="session")."""
    at = open_page(tie_break="rustbpe", algorithm="naive")
    at.sidebar.toggle(key="presenter").set_value(True).run()
    at.text_input(key="w_enc_text").set_value("newest").run()
    at.button(key="enc_to_step").click().run()
    assert any("Merge <b>" in h.value for h in at.html)  # the step page, drawn
    kept = {key: at.session_state[key] for key in ("source", "tie_break", "algorithm", "presenter")}
    assert kept == {"source": "textbook", "tie_break": "rustbpe", "algorithm": "naive", "presenter": True}
    assert at.sidebar.selectbox(key="tie_break").value == "rustbpe"


def test_previous_and_play_move_through_the_walk():
    at = open_page()
    at.text_input(key="w_enc_text").set_value("lowest newest").run()
    at.button(key="enc_next").click().run()
    at.button(key="enc_next").click().run()
    assert at.session_state["enc_pos"] == 2
    at.button(key="enc_previous").click().run()
    assert at.session_state["enc_pos"] == 1
    at.button(key="enc_play").click().run()
    assert at.session_state["enc_playing"] and at.button(key="enc_pause")
    at.button(key="enc_pause").click().run()
    assert not at.session_state["enc_playing"]
    paused = at.session_state["enc_pos"]  # where the clock had got to (it may have moved on while this test ran)
    at.run()
    assert at.session_state["enc_pos"] == paused  # stopped: a run later it has not moved
    at.button(key="enc_next").click().run()
    assert at.session_state["enc_pos"] == paused + 1


def test_gpt4_walks_a_word_with_its_own_ranks(tiktoken_files):
    at = open_page()
    at.text_input(key="w_enc_text").set_value(" tokenization").run()
    at.selectbox(key="w_enc_tokenizer").set_value("cl100k").run()
    assert not at.exception and not at.error
    tok = real.get("cl100k", spinner=False).tokenizer
    steps = encoding.steps(tok, b" tokenization")
    assert f"#{steps[0].rank + 1:,}" in rows(at) and 'href="' not in rows(at)  # a real tokenizer's merges link nowhere
    while not at.button(key="enc_next").disabled:
        at.button(key="enc_next").click().run()
    final = rows(at).split('<div class="what now">tokens</div>')[1]
    assert [t.replace("␣", " ") for t in chips_of(final)] == [tok.vocab[i].decode() for i in tok.encode(" tokenization")]


def test_the_steps_view_shows_every_token_of_the_text_with_its_id_in_order():
    # the sequence a model is given, repeats too (a pill row listed the 3 different tokens of "lowest lowest newest")
    at = open_page()
    at.text_input(key="w_enc_text").set_value("lowest lowest newest").run()
    tok = real_run(at)
    shown = next(h.value for h in at.html if 'class="enc-ids"' in h.value)
    ids = tok.encode("lowest lowest newest")
    assert [int(i) for i in re.findall(r'<span class="tid">(\d+)</span>', shown)] == ids
    assert f"The {len(ids)} tokens and their ids:" in shown
    assert not [b for b in at.button_group if b.key == "enc_pick"]  # the ancestry view's buttons: not this view's


def test_a_tokens_ancestry_opens_from_its_pill():
    at = open_page()
    at.text_input(key="w_enc_text").set_value("lowest").run()
    at.button_group(key="w_enc_view").set_value("ancestry").run()
    pick = max(encoding.final(real_run(at), b"lowest"), key=len)
    at.button_group(key="enc_pick").set_value(pick).run()
    assert at.session_state["enc_view"] == "ancestry" and at.session_state["enc_token"] == pick
    tree = next(h.value for h in at.html if 'class="tree"' in h.value)
    assert tree.count('class="tnode byte"') == len(pick)  # down to its bytes
    assert re.search(r"#\d+(?:</a>)? · ×\d+", tree)  # our run: the merge (a link to it) and its count


def real_run(at: AppTest):
    from ui import runs

    return runs.tokenizer_for(at.session_state["settings"])


def test_a_typed_token_that_is_not_one_says_what_it_is():
    at = open_page()
    at.session_state["enc_view"] = "ancestry"
    at.run()
    at.text_input(key="w_enc_typed").set_value("zzz").run()
    assert (
        at.warning[0].value.replace("\\", "")
        == "zzz is not one token of the run trained here: it encodes as 3 tokens, z  ·  z  ·  z. Pick one of those."
    )


def test_hostile_text_is_shown_escaped():
    at = open_page("ties", pretokenizer="gpt2")
    at.text_input(key="w_enc_text").set_value("<script>alert(1)</script>").run()
    for h in at.html:
        assert "<script>" not in h.value or h.value.startswith("<style>")
    assert not at.exception


def test_gpt4o_missing_says_so_in_one_sentence(monkeypatch, tmp_path):
    monkeypatch.setattr(real, "SHARED", tmp_path)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(real, "DOWNLOAD", False)
    at = open_page()
    at.selectbox(key="w_enc_tokenizer").set_value("o200k").run()
    assert at.info[0].value.startswith("GPT-4o (o200k_base) is not on this machine and downloading is turned off")
    assert not at.exception


@pytest.mark.parametrize("k", [0, 3])
def test_k_limits_the_runs_merges(k):
    at = open_page()
    at.text_input(key="w_enc_text").set_value("lowest").run()
    at.slider(key="w_real_k").set_value(k).run()
    ranks = [int(r) for r in re.findall(r'class="rank(?: hit)?">(?:<a [^>]*>)?#(\d+)', rows(at))]
    assert all(r <= k for r in ranks)


def test_a_special_tokens_ancestry_says_what_it_is():
    at = open_page()
    at.session_state["enc_view"] = "ancestry"
    at.run()
    at.text_input(key="w_enc_typed").set_value("<|endoftext|>").run()
    said_ = [h.value for h in at.html if "special token" in h.value]
    assert said_ and "is a special token of the run trained here: added whole, never made by a merge." in said_[0]


def test_the_play_row_is_the_step_pages():
    """One module (ui.play) draws both rows: the same buttons, the same speeds, each page's unit.

    The step page draws Play and the speed outside its fragment, before it in the page's elements; the browser test
    (test_step_browser.assert_one_row_of_controls) checks that they read in the Encode page's order on screen.
    """
    from ui.play import SPEEDS

    def row(at, keys: str) -> list[str]:
        shown = [b.key for b in at.button if b.key in {keys + k for k in ("previous", "next", "play", "pause")}]
        return [key.removeprefix(keys) for key in shown]

    at = open_page()
    encode = at.selectbox(key="w_enc_speed")
    assert row(at, "enc_") == ["previous", "next", "play"] and encode.options == [f"{s:g} step/s" for s in SPEEDS]
    at.switch_page("pages/step.py").run()
    step = at.selectbox(key="w_speed")
    assert row(at, "") == ["play", "previous", "next"] and step.options == [f"{s:g} merge/s" for s in SPEEDS]


def test_a_link_opens_the_page_on_its_text_and_tokenizer(tiktoken_files):
    at = open_page()
    at.query_params.update(text="strawberry", tokenizer="o200k")
    at.run()
    assert not at.exception and not at.warning
    assert at.text_input(key="w_enc_text").value == "strawberry"
    assert at.selectbox(key="w_enc_tokenizer").value == "o200k"
    tok = real.get("o200k", spinner=False).tokenizer
    assert f"#{encoding.steps(tok, b'strawberry')[0].rank + 1:,}" in rows(at)  # GPT-4o's own first merge is lit
    at.text_input(key="w_enc_text").set_value("lowest").run()  # the student goes on: the link is not applied again
    assert at.text_input(key="w_enc_text").value == "lowest"
    assert at.query_params["text"] == "lowest" and at.query_params["tokenizer"] == "o200k"


def test_the_url_says_the_run_and_its_preset_so_a_copied_link_shows_the_same_walk():
    teacher = open_page()
    teacher.text_input(key="w_enc_text").set_value("newest").run()
    link = dict(teacher.query_params)
    assert link == {"text": "newest", "tokenizer": "run", "corpus": "textbook"}
    student = open_page(source="wikipedia")  # another corpus picked in the student's sidebar
    student.query_params.update(link)
    student.run()
    assert student.session_state["source"] == "textbook"  # the link's preset: the teacher's run
    assert rows(student) == rows(teacher)


@pytest.mark.parametrize(
    ("params", "warning"),
    [
        ({"tokenizer": "<script>alert(1)</script>"}, "is not one of run, gpt2, cl100k, o200k"),
        ({"text": "x" * 500}, "has 500 characters and this page walks at most 200"),
    ],
)
def test_a_bad_link_gets_one_sentence(params, warning):
    at = open_page()
    at.query_params.update(params)
    at.run()
    assert not at.exception
    assert [w.value for w in at.warning if warning in w.value], [w.value for w in at.warning]
    assert "<script>" not in " ".join(w.value for w in at.warning)
    if "text" in params:
        assert at.text_input(key="w_enc_text").value == "x" * 200


def test_all_the_merges_of_one_preset_become_all_of_the_next_ones():
    at = open_page(source="wikipedia")
    assert at.slider(key="w_real_k").value == at.slider(key="w_real_k").max  # all of its merges
    at.sidebar.selectbox(key="source").set_value("textbook").run()
    assert at.slider(key="w_real_k").value == at.slider(key="w_real_k").max == 12  # all of these, not the first 5
    at.slider(key="w_real_k").set_value(3).run()
    at.sidebar.selectbox(key="source").set_value("wikipedia").run()
    assert at.slider(key="w_real_k").value == 3  # a k the student picked stays
    assert at.query_params["k"] == "3"  # and the link says it


# ---------------------------------------------------------------------------
# BPE-dropout: a word's other segmentations


def drop_rows(at: AppTest) -> str:
    return next(h.value for h in at.html if 'class="drop-rows"' in h.value)


def shares(html: str) -> list[float]:
    return [float(x) for x in re.findall(r'<div class="drop-n">([\d.]+) %', html)]


def test_the_dropout_view_shows_a_words_segmentations_and_how_often_each_came():
    at = open_page()
    at.text_input(key="w_enc_text").set_value("lowest").run()
    at.button_group(key="w_enc_view").set_value("dropout").run()
    html = drop_rows(at)
    tok = real_run(at)
    found = tok.segmentations(b"lowest", 0.1, 1000, 0)  # the page's defaults: p 0.1, 1,000 samples, seed 0
    assert shares(html) == [round(100 * n / 1000, 1) for _, n in found[:12]] + ([] if len(found) <= 12 else shares(html)[-1:])
    first = html.split('<div class="drop-bar">')[0]
    assert "".join(chips_of(first)) == "lowest"
    plain = tuple(tok.vocab[i] for i in tok.encode("lowest"))
    marked = html.split('<span class="drop-plain">')[0].rsplit('<div class="epair">', 1)[1]
    assert tuple(c.encode() for c in chips_of(marked)) == plain  # the one encode() gives without dropout, marked
    assert re.search(r"lowest, encoded 1,000 times with each merge skipped with probability 0\.10 .* \d+ different segmentations", said(at))


def test_dropout_zero_is_one_segmentation_and_one_leaves_the_bytes():
    at = open_page()
    at.text_input(key="w_enc_text").set_value("lowest").run()
    at.button_group(key="w_enc_view").set_value("dropout").run()
    at.slider(key="w_enc_dropout").set_value(0.0).run()
    assert shares(drop_rows(at)) == [100.0] and "without dropout" in drop_rows(at)
    at.slider(key="w_enc_dropout").set_value(1.0).run()
    assert shares(drop_rows(at)) == [100.0] and chips_of(drop_rows(at)) == list("lowest")


def test_the_same_seed_gives_the_same_samples_and_another_seed_others():
    at = open_page()
    at.text_input(key="w_enc_text").set_value("lowest newest").run()
    at.button_group(key="w_enc_view").set_value("dropout").run()
    at.selectbox(key="w_enc_dropout_piece").set_value(b"newest").run()
    at.slider(key="w_enc_dropout").set_value(0.5).run()
    first = drop_rows(at)
    at.number_input(key="w_enc_dropout_seed").set_value(1).run()
    assert drop_rows(at) != first
    at.number_input(key="w_enc_dropout_seed").set_value(0).run()
    assert drop_rows(at) == first
    assert said(at).startswith("<p class='caption' style='color:#111'>newest, encoded")


# the open models: Llama 2 and Mistral (SentencePiece), Llama 3 (byte-level, ignore_merges)


def ids_drawn(at: AppTest) -> list[int]:
    """The ids under the text's tokens, in order (the row beside the view switch)."""
    drawn = next(h.value for h in at.html if 'class="enc-ids"' in h.value)
    return [int(i) for ids in re.findall(r'<span class="tid">([\d ]+)</span>', drawn) for i in ids.split()]


def hf_ids(key: str, text: str) -> list[int]:
    tokenizers = pytest.importorskip("tokenizers")
    return tokenizers.Tokenizer.from_file(str(real.OPEN_MODELS[key].path)).encode(text, add_special_tokens=False).ids


@pytest.mark.parametrize("key", ["llama2", "mistral"])
def test_a_sentencepiece_tokenizer_walks_the_whole_text_as_one_piece(key):
    at = open_page()
    at.selectbox(key="w_enc_tokenizer").set_value(key).run()
    at.text_input(key="w_enc_text").set_value("lowest newest 2024").run()
    assert not at.exception
    assert ids_drawn(at) == hf_ids(key, "lowest newest 2024")  # HuggingFace's ids, without the <s> it puts first
    assert chips_of(rows(at))[:3] == ["▁", "l", "o"]  # characters, a ▁ first: one piece, no regex
    assert any("is SentencePiece BPE" in c.value for c in at.caption)
    while not at.button(key="enc_next").disabled:
        at.button(key="enc_next").click().run()
    final = rows(at).split('<div class="what now">tokens</div>')[1]
    assert "".join(chips_of(final)) == "▁lowest▁newest▁2024" and chips_of(final)[-4:] == list("2024")  # every digit alone


def test_llama_2_falls_back_to_bytes_for_an_emoji_and_builds_a_token_from_its_characters():
    at = open_page()
    at.selectbox(key="w_enc_tokenizer").set_value("llama2").run()
    at.text_input(key="w_enc_text").set_value("a 🦙").run()
    assert ids_drawn(at) == hf_ids("llama2", "a 🦙")
    assert ids_drawn(at)[-4:] == [243, 162, 169, 156]  # <0xF0> <0x9F> <0xA6> <0x99>
    at.text_input(key="w_enc_text").set_value("lowest").run()
    at.segmented_control(key="w_enc_view").set_value("ancestry").run()
    tree = next(h.value for h in at.html if 'class="tree"' in h.value)
    assert "▁lowest" in tree and "▁low" in tree and not at.exception


def test_llama_3_takes_a_pre_token_of_its_vocabulary_whole():
    at = open_page()
    at.selectbox(key="w_enc_tokenizer").set_value("llama3").run()
    at.text_input(key="w_enc_text").set_value("Tôi làm việc").run()  # ' việc' is a token its merges do not build
    assert ids_drawn(at) == hf_ids("llama3", "Tôi làm việc")
    while not at.button(key="enc_next").disabled:
        at.button(key="enc_next").click().run()
    assert "is itself a token of Llama 3, so it is taken whole, with no merge" in said(at) and "ignore_merges" in said(at)
