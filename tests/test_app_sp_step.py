"""The step page stepping through a SentencePiece run (the sidebar's family), driven by Streamlit's AppTest.

What the page says is checked against what it must be: the pieces it lists against sentencepiece's own training
of the same text (spm_train), the rule's tie against the trainer's candidates, the pairs it may not make against
bpe.sentencepiece.why_invalid.
"""

from __future__ import annotations

import io

import pytest
from conftest import open_app

from bpe.sentencepiece import SentencePieceSpec, why_invalid
from serve.sp_jobs import trace_of
from ui.corpus import SOURCES


def sentencepiece(source: str = "textbook", **sidebar):
    """The app on the step page, the sidebar's family SentencePiece on a preset, with options set by session key."""
    at = open_app(source=source)
    at.sidebar.selectbox(key="family").set_value("sentencepiece").run()
    for key, value in sidebar.items():
        widget = at.sidebar.toggle(key=key) if isinstance(value, bool) else at.sidebar.number_input(key=key)
        widget.set_value(value).run()
    assert not at.exception, at.exception
    return at


def html_of(at, marker: str) -> str:
    return next(h.value for h in at.html if marker in h.value)


def card(at) -> str:
    return html_of(at, 'class="merge-card"')


def click(at, key: str):
    return at.button(key=key).click().run()


def go_to(at, k: int):
    return at.slider(key="w_step").set_value(k).run()


def pieces_of(source: str, spec: SentencePieceSpec) -> list[tuple[str, float]]:
    return [(p.piece, p.score) for p in trace_of(SOURCES[source].text.encode(), spec, 30.0, lambda _: None).pieces]


# ---------------------------------------------------------------------------


def test_the_first_merge_of_textbook_is_e_s_by_the_smaller_bytes():
    at = sentencepiece()
    # 3 meta pieces + 11 characters + 20 merges: e + s and s + t both occur 9 times and are 2 characters long
    assert "Merge <b>1</b> of 20" in card(at)
    assert '<span class="pill">e</span> + <span class="pill">s</span> → <span class="pill">es</span>' in card(at)
    assert "smaller UTF-8 bytes" in card(at) and "piece id <b>3</b>" in card(at) and "score <b>−0</b>" in card(at)
    table = html_of(at, 'class="pairs sp-pairs"')
    assert '<tr class="chosen"><td class="pair">e + s</td><td class="n">9</td>' in table
    assert '<tr class="tie"><td class="pair">s + t</td><td class="n">9</td><td class="n">2</td><td>runner-up</td>' in table


def test_the_pieces_and_scores_are_sentencepieces_own():
    pytest.importorskip("sentencepiece")
    import sentencepiece as spm

    text = SOURCES["scripts"].text
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter([text]), model_writer=model, model_type="bpe", vocab_size=80, character_coverage=0.98, minloglevel=2
    )
    theirs = spm.SentencePieceProcessor(model_proto=model.getvalue())
    ours = pieces_of("scripts", SentencePieceSpec(vocab_size=80, character_coverage=0.98))
    assert ours == [(theirs.id_to_piece(i), theirs.get_score(i)) for i in range(theirs.get_piece_size())]


def test_the_pieces_table_lights_merge_k_with_its_id_and_score():
    at = go_to(sentencepiece(), 5)
    table = html_of(at, 'class="pairs sp-pieces"')
    # meta pieces at 0-2, merge k's piece at id 2 + k with score -(k - 1)
    assert '<td class="n">0</td><td class="pair">&lt;unk&gt;</td>' in table
    assert '<tr class="chosen"><td class="n">7</td><td class="pair">▁low</td><td class="n">−4</td><td>merge 5</td>' in table
    assert "merge 6 (to come)" in table


def test_a_frequent_pair_of_two_scripts_is_shown_as_no_candidate():
    at = go_to(sentencepiece("scripts"), 2)
    assert '<span class="pill">▁</span> + <span class="pill">F</span> → <span class="pill">▁F</span>' in card(at)
    assert "As frequent or more, but no candidate" in card(at) and "two scripts" in card(at)
    table = html_of(at, 'class="pairs sp-pairs"')
    assert '<tr class="refused"><td class="pair">F + 1</td><td class="n">6</td><td class="n">–</td><td>refused: two scripts</td>' in table
    assert why_invalid("F1", SentencePieceSpec()) == "two scripts"


def test_split_digits_refuses_every_digit_with_another_character():
    at = go_to(sentencepiece("scripts", sp_split_digits=True), 2)
    table = html_of(at, 'class="pairs sp-pairs"')
    assert "refused: a digit (split digits)" in table
    assert "refused: two scripts" not in table  # F + 1 is refused for its digit first


def test_without_split_by_whitespace_a_pair_across_a_space_is_no_candidate():
    at = go_to(sentencepiece("textbook", sp_split_by_whitespace=False), 3)
    assert "refused: ▁ inside" in html_of(at, 'class="pairs sp-pairs"')


def test_the_characters_outside_the_coverage_are_listed():
    at = sentencepiece("scripts")
    panel = html_of(at, 'class="sp-chars"')
    assert "4 fell outside it and became &lt;unk&gt;" in panel and "98.15%" in panel
    dropped = panel.split('class="toks sp-dropped"')[1].split("</div>")[0]
    assert [c for c in "ßïΩ🦙" if c in dropped] == list("ßïΩ🦙")


def test_the_last_merges_of_textbook_are_frequency_0_candidates():
    at = go_to(sentencepiece(), 16)
    assert "frequency-0 candidate" in card(at) and "× 0" in card(at)
    assert "Merges 16 to 20 (5) are frequency-0 candidates" in html_of(at, 'class="sp-chars"')
    click(at, "previous")
    assert "frequency-0 candidate" not in card(at) and "Merge <b>15</b>" in card(at)


def test_next_and_the_url_follow_the_merge_and_name_the_family():
    at = sentencepiece("scripts", sp_byte_fallback=True, sp_vocab_size=400)
    click(at, "next")
    assert "Merge <b>2</b>" in card(at)
    params = at.query_params
    assert params["family"] == "sentencepiece" and params["merge"] == "2" and params["byte_fallback"] == "1"
    assert params["vocab_size"] == "400" and "coverage" not in params  # the preset's coverage is not named
    # the byte pieces sit at 3-258, before the merges
    assert "piece id <b>260</b>" in card(at) and "&lt;0x00&gt; … &lt;0xFF&gt;" in html_of(at, "sp-pieces")


def test_a_link_opens_the_sentencepiece_run_at_its_merge():
    at = open_app()
    at.query_params.update({"corpus": "scripts", "family": "sentencepiece", "split_digits": "1", "merge": "3"})
    at.run()
    assert not at.exception and not at.warning, at.warning
    assert at.session_state["family"] == "sentencepiece" and at.session_state["sp_split_digits"] is True
    assert "Merge <b>3</b>" in card(at) and "a digit (split digits)" in html_of(at, 'class="pairs sp-pairs"')


def test_a_bad_part_of_a_link_is_one_sentence_and_the_default_stays():
    at = open_app()
    at.query_params.update({"corpus": "textbook", "family": "sentencepiece", "coverage": "nan", "split_digits": "yes"})
    at.run()
    said = " ".join(w.value for w in at.warning)
    assert "coverage 'nan' is not a number from 0.98 to 1" in said and "split_digits 'yes' is not 1 or 0" in said
    assert at.session_state["sp_coverage"] == SOURCES["textbook"].sp_coverage and "Merge <b>1</b>" in card(at)


def test_a_vocab_size_too_small_for_the_characters_is_one_sentence():
    at = sentencepiece("textbook", sp_vocab_size=10)
    assert not at.exception
    assert any("vocab_size 10 is smaller than the 11 characters" in e.value for e in at.error)


def test_back_to_byte_level_the_step_page_is_as_it_was():
    at = sentencepiece()
    at.sidebar.selectbox(key="family").set_value("byte-level").run()
    assert "Merge <b>1</b> of 12" in card(at) and '<span class="pill">s</span> + <span class="pill">t</span>' in card(at)
    assert "family" not in at.query_params


def test_a_page_of_byte_level_runs_says_which_run_it_shows():
    at = sentencepiece()
    at.switch_page("pages/threshold.py").run()
    assert any("shows the byte-level run of this corpus" in i.value for i in at.info)
    at.switch_page("pages/race.py").run()
    assert not any("shows the byte-level run" in i.value for i in at.info)


def test_presenter_mode_keeps_the_card_and_the_tables_and_folds_the_notes():
    at = sentencepiece("scripts")
    at.sidebar.toggle(key="presenter").set_value(True).run()
    assert not at.exception and not at.title  # a projector's first screen is for the merge
    assert "Merge <b>1</b>" in card(at) and 'class="pairs sp-pairs"' in html_of(at, "sp-pairs")
    assert 'class="caption view-note"' in html_of(at, "sp-pairs")  # drawn, and hidden by presenter mode's CSS
    assert ".stHtml p.caption.view-note{display:none}" in html_of(at, "<style>")


def test_a_vocab_size_the_corpus_cannot_fill_says_what_sentencepiece_would_say_and_shows_the_merges():
    at = sentencepiece("textbook", sp_vocab_size=60)
    said = " ".join(i.value for i in at.info)
    assert "Vocabulary size too high (60)" in said and "Below, the merges it can make." in said
    assert "Merge <b>1</b>" in card(at)
