"""The step-through page, driven by Streamlit's AppTest (no browser)."""

from __future__ import annotations

import pytest
from conftest import open_app

from bpe import ALGORITHMS


@pytest.fixture
def app():
    return open_app()


def card(at) -> str:
    return next(h.value for h in at.html if 'class="merge-card"' in h.value)


def test_first_merges_of_textbook_corpus(app):
    assert "Merge <b>1</b> of 12" in card(app)
    assert '<span class="pill">s</span> + <span class="pill">t</span>' in card(app)
    app.button[1].click().run()  # Next
    assert "Merge <b>2</b> of 12" in card(app)
    assert '<span class="pill">e</span> + <span class="pill">st</span>' in card(app)


def test_previous_goes_back(app):
    app.button[1].click().run()
    app.button[1].click().run()
    assert "Merge <b>3</b>" in card(app)
    app.button[0].click().run()  # Previous
    assert "Merge <b>2</b>" in card(app)


def test_tie_is_explained(app):
    # merge 1: 's t' and 'e s' both occur 9 times; the bytes order decides
    assert "Tied at 9" in card(app)


def test_jump_to_merge_k(app):
    app.slider(key="step").set_value(12).run()
    assert "Merge <b>12</b> of 12" in card(app)
    assert '<span class="pill">lowe</span> + <span class="pill">r</span>' in card(app)


def test_heap_view_shows_stale_entries(app):
    app.button[1].click().run()  # merge 2: the entry for 'e s' is stale (its count fell to 0)
    tree = next(h.value for h in app.html if 'class="heap-level"' in h.value)
    assert 'class="heap-node stale"' in tree
    assert "<s>9</s> → gone" in tree


def test_affected_words_show_before_and_after(app):
    app.button[1].click().run()
    words = next(h.value for h in app.html if 'class="word-row"' in h.value)
    assert "× 6" in words and "× 3" in words  # newest x6, widest x3
    assert ">est<" in words


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_every_algorithm_steps_without_error(app, algorithm):
    app.sidebar.selectbox(key="algorithm").set_value(algorithm).run()
    assert not app.exception
    assert "Merge <b>1</b> of 12" in card(app)
    app.button[1].click().run()
    assert '<span class="pill">e</span> + <span class="pill">st</span>' in card(app)


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


def test_invalid_utf8_upload_trains(app):
    app.sidebar.selectbox(key="source").set_value("upload").run()
    app.sidebar.file_uploader[0].set_value(("latin1.txt", "caf\xe9 caf\xe9 na\xefve ".encode("latin-1") * 20, "text/plain")).run()
    assert not app.exception and not app.error
    assert "Merge <b>1</b>" in card(app)
