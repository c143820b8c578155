"""The Real tokenizers page (GPT-2, GPT-4, GPT-4o, Llama 2, Mistral, Llama 3 and the run at merge k side by side), driven through AppTest."""

from __future__ import annotations

import hashlib
import html
import re

import pytest
from conftest import open_app
from streamlit.testing.v1 import AppTest

from ui import real

PAGE = "pages/compare.py"
TEXT = "In 2024, 1234567 people wrote 9.11 > 9.9 and\n        return x  # code 👩‍💻 分词器"
HOSTILE = "<script>alert(1)</script> <img src=x onerror=alert(1)>"


def table_rows(at: AppTest) -> dict[str, tuple[int, str]]:
    """tokenizer -> (tokens, bytes per token) as the summary table says."""
    table = next(h.value for h in at.html if "<table class='compare'>" in h.value)
    found = re.findall(r"<td>([^<]+)</td><td class='n'>([\d,]+)</td><td class='n'>([\d.]+)</td>", table)
    return {label: (int(n.replace(",", "")), per) for label, n, per in found}


def chip_rows(at: AppTest) -> dict[str, list[str]]:
    """tokenizer -> the chips drawn for it."""
    chips = next(h.value for h in at.html if "class='cmp-row'" in h.value)
    out = {}
    for block in chips.split("<div class='cmp-row'>")[1:]:
        label = re.search(r"<b>([^<]+)</b>", block).group(1)
        out[label] = [html.unescape(c) for c in re.findall(r'<span class="tok[^"]*"[^>]*>(?:<span class="ttext">)?([^<]*)</span>', block)]
    return out


def id_rows(at: AppTest) -> dict[str, list[int]]:
    """tokenizer -> the ids drawn under its chips, in order."""
    chips = next(h.value for h in at.html if "class='cmp-row'" in h.value)
    return {
        re.search(r"<b>([^<]+)</b>", block).group(1): [
            int(i) for ids in re.findall(r'<span class="tid">([\d ]+)</span>', block) for i in ids.split()
        ]
        for block in chips.split("<div class='cmp-row'>")[1:]
    }


def test_four_tokenizers_count_as_tiktoken_does_and_draw_what_they_count(openai_encodings, tiktoken_gpt2):
    at = open_app(PAGE, source="textbook")
    at.text_area(key="w_cmp_text").set_value(TEXT).run()
    assert not at.exception and not at.error
    counts = table_rows(at)
    assert list(counts) == ["GPT-2", "GPT-4", "GPT-4o", "Llama 2", "Mistral", "Llama 3", "Trained here"]
    theirs = {"GPT-2": tiktoken_gpt2, "GPT-4": openai_encodings["cl100k_base"], "GPT-4o": openai_encodings["o200k_base"]}
    n_bytes = len(TEXT.encode())
    for label, enc in theirs.items():
        assert counts[label][0] == len(enc.encode(TEXT))
        assert counts[label][1] == f"{n_bytes / counts[label][0]:.2f}"
    drawn = chip_rows(at)
    for label in counts:
        # chips: a character split over several tokens is one dashed chip, so never more chips than tokens
        assert len(drawn[label]) <= counts[label][0]
    assert "".join(drawn["GPT-4"]).replace("␣", " ").replace("↵", "\n").replace("‹ZWJ›", "\u200d") == TEXT  # every character drawn
    ids = id_rows(at)  # and every id under its chip, without hovering (a projector has no hover)
    for label, enc in theirs.items():
        assert ids[label] == enc.encode(TEXT), label
    assert not [c for c in at.caption if "Hover" in c.value]
    at.toggle(key="w_cmp_ids").set_value(False).run()
    assert id_rows(at) == {label: [] for label in counts}  # the teacher can fold them away


def test_the_span_diff_marks_where_they_differ(tiktoken_files):
    at = open_app(PAGE, source="textbook")
    at.text_area(key="w_cmp_text").set_value("1234567 the").run()
    diff = next(h.value for h in at.html if 'class="difftext"' in h.value)
    # GPT-2 learned 123 and 4567, GPT-4, GPT-4o and Llama 3 cut threes (123 456 7), Llama 2 and Mistral every digit alone: they
    # all cut after 123, and differ inside both parts; ' the' one token in all (Llama 2's ▁the stands for ' the')
    assert '<span class="diffspan">123</span><span class="diffspan">4567</span>' in diff
    assert "<span>␣the</span>" in diff
    assert "Not in the diff: Trained here" in diff  # the textbook run drops spaces


def test_the_runs_k_is_used_and_kept_across_pages():
    at = open_app(PAGE, source="textbook")
    at.text_area(key="w_cmp_text").set_value("lowest newest").run()
    at.slider(key="w_real_k").set_value(0).run()
    assert table_rows(at)["Trained here"][0] == len("lowestnewest")  # bytes only; the whitespace pre-tokenizer drops the space
    at.switch_page("pages/quirks.py").run()
    at.switch_page(PAGE).run()
    assert at.slider(key="w_real_k").value == 0


def test_hostile_text_is_shown_escaped():
    at = open_app(PAGE, source="ties", pretokenizer="gpt2")
    at.text_area(key="w_cmp_text").set_value(HOSTILE).run()
    for h in at.html:
        if not h.value.startswith("<style>"):
            assert "<script>" not in h.value and "<img" not in h.value


def test_a_missing_tokenizer_says_so_and_an_upload_adds_it(monkeypatch, tmp_path, tiktoken_files):
    monkeypatch.setattr(real, "SHARED", tmp_path / "none")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(real, "DOWNLOAD", False)
    at = open_app(PAGE, source="textbook")
    infos = [i.value for i in at.info]
    assert any(i.startswith("GPT-4 (cl100k_base) is not on this machine") for i in infos)
    assert "GPT-4" not in table_rows(at)
    data = (tiktoken_files / "cl100k_base.tiktoken").read_bytes()
    at.file_uploader(key="cmp_upload_cl100k").set_value([("cl100k_base.tiktoken", data, "application/octet-stream")]).run()
    at.run()
    assert "GPT-4" in table_rows(at)
    assert (tmp_path / "cache" / hashlib.sha1(real.ENCODINGS["cl100k"].files[0].url.encode()).hexdigest()).read_bytes() == data


def test_the_open_models_count_as_huggingface_does_and_llama_2_writes_its_spaces_as_a_character():
    tokenizers = pytest.importorskip("tokenizers")
    at = open_app(PAGE, source="textbook")
    at.text_area(key="w_cmp_text").set_value(TEXT).run()
    counts, drawn, ids = table_rows(at), chip_rows(at), id_rows(at)
    for key in real.OPEN_MODELS:
        theirs = tokenizers.Tokenizer.from_file(str(real.OPEN_MODELS[key].path)).encode(TEXT, add_special_tokens=False).ids
        label = real.label_of(key)
        assert counts[label][0] == len(theirs) and ids[label] == theirs, label  # without the <s> Llama 2 puts first
    assert drawn["Llama 2"][:2] == ["▁In", "▁"] and drawn["GPT-4o"][:2] == ["In", "␣"]  # a space: ▁, a character of its vocabulary
    assert "👩" in drawn["Llama 2"] and len(drawn["Llama 2"]) < counts["Llama 2"][0]  # byte fallback: one dashed chip, 4 tokens
    # Llama 2's tokens spell the text back (▁ a space, the first one put there), so it takes part in the span diff
    assert "Not in the diff: Llama" not in next(h.value for h in at.html if 'class="difftext"' in h.value)
