"""The tokenize & export page, driven through AppTest."""

from __future__ import annotations

import html
import re

from conftest import open_app
from streamlit.testing.v1 import AppTest

PAGE = "pages/tokenize.py"
HOSTILE = "<script>alert(1)</script> <img src=x onerror=alert(1)>"


def open_page(source: str = "textbook", pattern: str | None = None) -> AppTest:
    return open_app(PAGE, source=source, **({"pattern": pattern} if pattern else {}))


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_the_page_tokenizes_a_sample_of_the_corpus():
    at = open_page()
    assert not at.exception
    assert at.text_area(key="w_tok_text").value.startswith("low low low")
    assert metric(at, "Merges used") == "12 of 12"
    assert int(metric(at, "Tokens")) < int(metric(at, "Bytes"))
    assert 'title="id ' in at.html[0].value  # ids on hover


def test_hostile_text_is_shown_escaped():
    at = open_page("ties", pattern="gpt2")
    at.text_area(key="w_tok_text").set_value(HOSTILE).run()
    shown = at.html[0].value
    assert "<script>" not in shown and "<img" not in shown
    tokens = re.findall(r'<span class="tok"[^>]*>([^<]*)</span>', shown)
    assert html.unescape("".join(tokens)).replace("␣", " ") == HOSTILE  # every character shown, as text


def test_k_zero_gives_one_token_per_byte():
    at = open_page("ties", pattern="gpt2")
    at.text_area(key="w_tok_text").set_value("abab baba").run()
    at.slider(key="w_tok_k").set_value(0).run()
    assert metric(at, "Tokens") == metric(at, "Bytes") == "9"
    at.slider(key="w_tok_k").set_value(at.slider(key="w_tok_k").max).run()
    assert int(metric(at, "Tokens")) < 9


def test_the_round_trip_is_checked():
    at = open_page("ties", pattern="gpt2")
    at.text_area(key="w_tok_text").set_value("naïve café 🙂 <|endoftext|> abab\n\tbaba").run()
    assert at.success[0].value.startswith("✓ identical")


def test_the_whitespace_pre_tokenizer_says_why_the_round_trip_differs():
    at = open_page()  # textbook: whitespace pre-tokenizer
    assert "drops whitespace" in at.warning[0].value


def test_every_format_can_be_downloaded():
    at = open_page()
    labels = [d.label for d in at.get("download_button")]
    assert labels == ["vocab.json", "merges.txt", "tokenizer.json", "tokenizer.bpe.json"]


def test_the_text_and_k_are_kept_across_pages():
    at = open_page()
    at.text_area(key="w_tok_text").set_value("lowest newest").run()
    at.slider(key="w_tok_k").set_value(3).run()
    at.switch_page("pages/threshold.py").run()
    at.switch_page(PAGE).run()
    assert at.text_area(key="w_tok_text").value == "lowest newest"
    assert metric(at, "Merges used") == "3 of 12"
