"""The quirks gallery, driven through AppTest: every example opens, with every tokenizer's tokens."""

from __future__ import annotations

import re

import pytest
from conftest import open_app

from ui.lessons import quirks

PAGE = "pages/quirks.py"
LINEUP = ["GPT-2", "GPT-4", "GPT-4o", "Llama 2", "Mistral", "Llama 3", "Trained here"]


def blocks(at) -> list[str]:
    return [h.value for h in at.html if h.value.startswith("<div class='quirk'>")]


@pytest.fixture(scope="module")
def page(tiktoken_files):
    return open_app(PAGE, source="textbook")


@pytest.mark.parametrize("quirk", [q for q in quirks.QUIRKS if q.key != "tax"], ids=lambda q: q.key)
def test_every_quirk_shows_each_text_with_every_tokenizer(page, quirk):
    page.button_group(key="w_quirk").set_value(quirk.key).run()
    assert not page.exception
    assert page.subheader[0].value == quirk.title
    shown = blocks(page)
    assert len(shown) == len(quirk.texts)
    for block in shown:
        assert re.findall(r"<div class='qname'>([^<]+)</div>", block) == LINEUP


def test_clicking_the_example_shown_keeps_it(page):
    page.button_group(key="w_quirk").set_value("numbers").run()
    page.button_group(key="w_quirk").set_value(None).run()  # what a click on the selected pill sends
    assert page.subheader[0].value == quirks.BY_KEY["numbers"].title
    page.run()
    assert page.button_group(key="w_quirk").value == "numbers"


def test_digits_come_in_threes_in_gpt4(page):
    page.button_group(key="w_quirk").set_value("numbers").run()
    block = next(b for b in blocks(page) if "<div class='qtext'>1234567</div>" in b)
    gpt4 = block.split("<div class='qname'>GPT-4</div>")[1].split("<div class='qname'>")[0]
    assert re.findall(r'<span class="tok[^"]*"[^>]*>([^<]*)</span>', gpt4) == ["123", "456", "7"]


def test_the_five_spellings_of_the_are_five_ids(page):
    page.button_group(key="w_quirk").set_value("the").run()
    gpt2_ids = [
        re.search(r"GPT-2</div><div class='qcount'>1 token</div>.*?<span class='ids'>id (\d+)</span>", b).group(1) for b in blocks(page)
    ]
    assert len(set(gpt2_ids)) == 5


def test_the_token_tax_table_has_every_language_and_english_costs_least(page):
    page.button_group(key="w_quirk").set_value("tax").run()
    table = next(h.value for h in page.html if "compare tax" in h.value)
    languages = re.findall(r"<tr><td>([^<]+)<br>", table)
    assert languages == list(quirks.LANGUAGES) and len(languages) >= 10
    scripts = {script for _, script, _ in quirks.PARAGRAPH}
    assert len(scripts) >= 10
    ratios = re.findall(r"tok · ([\d.]+)×", table)
    assert ratios[: len(LINEUP)] == ["1.0"] * len(LINEUP)  # English against itself
    page.selectbox(key="w_tax_language").set_value("Thai").run()
    assert quirks.LANGUAGES["Thai"].split()[0] in blocks(page)[0]


def tokens_of(block: str, label: str) -> list[str]:
    line = block.split(f"<div class='qname'>{label}</div>")[1].split("<div class='qname'>")[0]
    return re.findall(r'<span class="tok[^"]*"[^>]*>([^<]*)</span>', line)


def test_llama_2_writes_every_digit_alone_and_llama_3_cuts_threes(page):
    page.button_group(key="w_quirk").set_value("numbers").run()
    block = next(b for b in blocks(page) if "<div class='qtext'>1234567</div>" in b)
    assert tokens_of(block, "Llama 2") == ["▁", *"1234567"] and tokens_of(block, "Mistral") == ["▁", *"1234567"]
    assert tokens_of(block, "Llama 3") == ["123", "456", "7"]


def test_llama_2_writes_the_space_as_a_character_and_falls_back_to_bytes_for_an_emoji(page):
    page.button_group(key="w_quirk").set_value("the").run()
    spaced = next(b for b in blocks(page) if "<div class='qtext'>␣the</div>" in b)
    assert tokens_of(spaced, "Llama 2") == ["▁", "▁the"] and tokens_of(spaced, "GPT-4o") == ["␣the"]
    page.button_group(key="w_quirk").set_value("emoji").run()
    woman = blocks(page)[0]
    line = woman.split("<div class='qname'>Llama 2</div>")[1].split("<div class='qname'>")[0]
    assert line.count('class="tok joined"') == 2 and "10 tokens" in line  # 👩 and 💻 each as their 4 bytes, the joiner, a ▁
