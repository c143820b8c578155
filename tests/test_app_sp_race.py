"""The race page for a SentencePiece run: ours compiled, sentencepiece itself and ours in Python, to the same pieces.

The race runs in the worker pool, in a real worker process; the test reruns the page until it has ended, as the
page's polling fragment does. Whether the pieces are the same is checked by the page against sentencepiece's own
model; here it is checked again against a model sentencepiece trains in the test.
"""

from __future__ import annotations

import io

import pytest
from conftest import finish, open_app

from serve.sp_jobs import COMPILED, PYTHON, SENTENCEPIECE, SpRun, spm_options
from ui.corpus import SOURCES
from ui.views.sp_race import row


def sentencepiece_race(source: str = "scripts"):
    at = open_app(source=source)
    at.sidebar.selectbox(key="family").set_value("sentencepiece").run()
    at.switch_page("pages/race.py").run()
    assert not at.exception, at.exception
    return at


def test_the_race_of_a_sentencepiece_run_holds_every_trainer_to_sentencepieces_pieces():
    pytest.importorskip("sentencepiece")
    at = sentencepiece_race()
    assert not [b for b in at.button if b.key == "race_start"]  # the byte-level race is not drawn for this run
    at.button(key="sp_race_start").click().run()
    finish(at, "sp_race")
    record = at.session_state["sp_race"]
    assert [r.name for r in record.runs] == [COMPILED, SENTENCEPIECE, PYTHON]
    assert all(r.same for r in record.runs) and record.pieces == 80
    assert all(r.merges == 39 for r in record.runs)  # 80 pieces = 3 meta + 38 characters + 39 merges
    said = " ".join(s.value for s in at.success)
    assert "The same 80 pieces, scores and types, in the same order" in said and "sentencepiece 0.2.3's" in said
    table = next(t.value for t in at.table if "trainer" in t.value.columns)
    assert list(table["pieces"]) == ["✓ the same"] * 3
    assert any("time to the same 80 pieces" in c.proto.spec for c in at.get("vega_lite_chart"))


def test_the_options_sentencepiece_is_given_are_the_sidebars():
    pytest.importorskip("sentencepiece")
    import sentencepiece as spm

    from bpe.sentencepiece import SentencePieceSpec, train

    spec = SentencePieceSpec(vocab_size=340, character_coverage=0.98, byte_fallback=True, split_digits=True)
    assert spm_options(spec) == {"vocab_size": 340, "character_coverage": 0.98, "byte_fallback": True, "split_digits": True}
    out = io.BytesIO()
    text = SOURCES["scripts"].text
    spm.SentencePieceTrainer.train(sentence_iterator=iter([text]), model_writer=out, model_type="bpe", minloglevel=2, **spm_options(spec))
    theirs = spm.SentencePieceProcessor(model_proto=out.getvalue())
    ours = train(sentences=[text], spec=spec)
    assert [p.piece for p in ours.pieces] == [theirs.id_to_piece(i) for i in range(theirs.get_piece_size())]


def test_a_cut_off_python_run_has_no_verdict_and_says_so():
    assert row(SpRun(PYTHON, 12, (0.1,) * 12, 0.05, 2.0, 2.1, cut_off=True)) == {
        "trainer": PYTHON,
        "before the merges": "0.050 s",
        "merges": "12",
        "to its pieces (processor)": "2.000 s",
        "wall-clock": "2.100 s",
        "pieces": "",
        "status": "cut off",
    }


def test_back_to_byte_level_the_race_is_the_algorithms_again():
    at = sentencepiece_race()
    at.sidebar.selectbox(key="family").set_value("byte-level").run()
    assert at.button(key="race_start") and not [b for b in at.button if b.key == "sp_race_start"]
