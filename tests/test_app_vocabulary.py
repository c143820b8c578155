"""The Vocabulary page, driven through AppTest: every token of the sidebar's run, searched, sorted, charted."""

from __future__ import annotations

import json
import re

from conftest import open_app, rerun_until

from bpe import Tokenizer, pretokenize, train
from ui.corpus import SOURCES

PAGE = "pages/vocabulary.py"


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label))


def table_tokens(at) -> list[str]:
    """The tokens of the token table, as a student reads them (the first table on the page)."""
    table = next(h.value for h in at.html if 'class="vocab"' in h.value and "<th>bytes</th>" in h.value)
    return re.findall(r'<span class="vt">(.*?)</span>', table)


def textbook() -> Tokenizer:
    s = SOURCES["textbook"]
    corpus = pretokenize(s.text, pretokenizer=s.pretokenizer, special_tokens=s.special_tokens)
    return Tokenizer.from_training(train(corpus, s.merges, special_tokens=s.special_tokens), s.pretokenizer)


def test_the_page_counts_every_token_and_the_ones_never_used():
    at = open_app(PAGE, source="textbook")
    assert at.title[0].value == "Vocabulary"
    tok = textbook()
    assert metric(at, "Vocabulary size") == f"{len(tok.vocab):,}" == "269"
    assert metric(at, "Made by merges") == "12"
    used = set(tok.pieces(SOURCES["textbook"].text))  # the textbook preset has no held-out text: its own text is encoded
    never = [a + b for a, b in tok.merges if a + b not in used]
    assert metric(at, "Made but never used") == str(len(never)) and never  # 'es' is absorbed by 'est'
    assert len(at.get("vega_lite_chart")) == 3


def test_search_and_sort_pick_the_rows():
    at = open_app(PAGE, source="textbook")
    at.text_input(key="w_vocab_query").set_value("est").run()
    tokens = table_tokens(at)
    assert tokens and all("est" in t for t in tokens)
    at.radio(key="w_vocab_sort").set_value("length").run()
    lengths = [len(t) for t in table_tokens(at)]
    assert lengths == sorted(lengths, reverse=True)
    at.text_input(key="w_vocab_query").set_value("<script>").run()
    assert not at.exception and any("No token contains" in m.value for m in at.markdown)
    assert "<script>" not in "".join(m.value for m in at.markdown)  # escaped


def test_merge_order_lists_the_merges_first_and_control_bytes_are_readable():
    at = open_app(PAGE, source="textbook")
    tokens = table_tokens(at)
    tok = textbook()
    assert tokens[:12] == [(a + b).decode().replace(" ", "␣") for a, b in tok.merges]
    at.text_input(key="w_vocab_query").set_value("\\x0").run()
    assert "\\x00" in table_tokens(at)  # byte 0 is written out, not an invisible control character


def test_merge_numbers_link_to_the_step_page_and_charts_carry_the_data():
    at = open_app(PAGE, source="textbook")
    at.radio(key="w_vocab_sort").set_value("made").run()
    table = next(h.value for h in at.html if "<th>bytes</th>" in h.value)
    assert 'href="./?corpus=textbook&amp;merge=1"' in table  # the first merge made the most-counted token
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    titles = [s["encoding"]["x"].get("title") for s in specs if "encoding" in s]
    assert "rank of use (1 = most used)" in titles and "token length in bytes" in titles


def test_zipfs_line_is_drawn_dashed_as_its_caption_says():
    # its 200 points filled the gaps of the dashes, and the caption's "dashed" line read as solid (issue 36.10)
    at = open_app(PAGE, source="textbook")
    zipf = next(s for s in (json.loads(c.proto.spec) for c in at.get("vega_lite_chart")) if "layer" in s and len(s["layer"]) == 2)
    marks = {layer["transform"][0]["filter"]["equal"]: layer["mark"] for layer in zipf["layer"]}
    line = marks["Zipf: uses ∝ 1 / rank"]
    assert line.get("strokeDash") and "point" not in line
    assert "Grey, dashed: Zipf's law" in next(c.value for c in at.caption if "Zipf's law" in c.value)


def test_gpt2s_vocabulary_shows_solidgoldmagikarp_made_and_never_used(gpt2):
    at = open_app(PAGE, source="textbook")
    at.radio(key="w_vocab_of").set_value("gpt2").run()
    rerun_until(at, lambda a: len(a.metric) > 0, what="GPT-2's rows, counted in a worker process")
    assert metric(at, "Vocabulary size") == "50,257" and metric(at, "Made by merges") == "50,000"
    at.text_input(key="w_vocab_query").set_value("SolidGoldMagikarp").run()
    table = next(h.value for h in at.html if "<th>bytes</th>" in h.value)
    assert table_tokens(at) == ["␣SolidGoldMagikarp"] and '<td class="num">43,453</td>' in table
    assert 'class="unused"' in table  # never used on the held-out docstrings
    assert "href=" not in table  # GPT-2's merges are not on the step page
    assert len(at.get("vega_lite_chart")) == 2  # no compression curve: GPT-2 is not a run of this app


def test_used_at_most_widens_never_used_to_almost_never():
    at = open_app(PAGE, source="textbook")
    notes = lambda: next(h.value for h in at.html if 'class="vocab-note"' in h.value)  # noqa: E731
    assert "<b>8</b> of the 12 merged tokens are never used" in notes()
    at.select_slider(key="w_vocab_at_most").set_value(2).run()
    tok = textbook()
    uses = {t: n for t, n in tok.token_counts(pretokenize(SOURCES["textbook"].text, pretokenizer="whitespace").counts).items()}
    rare = [a + b for a, b in tok.merges if uses.get(a + b, 0) <= 2]
    assert f"<b>{len(rare)}</b> of the 12 merged tokens are used at most 2 times" in notes()


def test_the_key_to_the_red_rows_stands_above_the_table():
    at = open_app(PAGE, source="textbook")
    table = next(h.value for h in at.html if "<th>bytes</th>" in h.value)
    red = table.count('<tr class="unused">')
    assert red == 8  # the eight merged tokens never used (the metric's count), all among the first 30 rows in merge order
    key = re.search(r'<p class="vocab-legend">.*?</p>', table).group(0)
    assert table.index(key) < table.index("<table")  # seen before the rows, on the first screen
    # the key names the page's one count (the metric's), not the rows on screen (issue 28.5: "42,769" beside "1 of these")
    assert "Red rows: made but never used on the training text (8 in this vocabulary, as counted above)." in re.sub("<[^>]+>", "", key)
    at.text_input(key="w_vocab_query").set_value("lower").run()
    table = next(h.value for h in at.html if "<th>bytes</th>" in h.value)
    assert "lower" in table and '<tr class="unused">' not in table and '<p class="vocab-legend">' not in table  # no red row, no key
