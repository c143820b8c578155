"""The second lesson (how a tokenizer encodes) and the encode quiz (which merge applies first?), as data and as pages."""

from __future__ import annotations

import re

import pytest
from conftest import open_app
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import Tokenizer, pretokenize, train
from ui.corpus import SOURCES
from ui.lessons import encode_lesson, encode_quiz


def textbook() -> Tokenizer:
    s = SOURCES["textbook"]
    corpus = pretokenize(s.text, pretokenizer=s.pretokenizer, special_tokens=s.special_tokens)
    return Tokenizer.from_training(train(corpus, s.merges, special_tokens=s.special_tokens), s.pretokenizer)


TOK = textbook()
WORDS = st.lists(st.sampled_from(list("lowernstid")), min_size=1, max_size=10).map("".join)


# ---------------------------------------------------------------------------
# the lesson's screens


def test_lowest_is_walked_in_rank_order_to_low_est():
    screens = encode_lesson.screens(TOK)
    titles = [s.title for s in screens]
    assert titles[2:6] == ["Step 1: s + t", "Step 2: e + st", "Step 3: o + w", "Step 4: l + ow"]
    assert "at the very end of the word" in screens[2].text  # s + t goes first though it comes last
    assert "Waiting: merge 5 (w + est)" in screens[4].text  # o + w and w + est both want the w
    assert "`west`" in screens[-2].text and screens[-2].merges == (5,)  # inside the word, never applied
    assert "`low` `est`" in screens[-1].text


@settings(max_examples=100, deadline=None)
@given(word=WORDS)
def test_every_number_on_the_screens_is_the_encoders(word):
    steps = TOK.encode_steps(word)
    screens = encode_lesson.screens(TOK, word)
    if len(steps) == 1:
        assert screens[-1].title == "No pair is a merge"
        return
    for i, step in enumerate(steps[1:], start=1):
        screen = next(s for s in screens if s.title.startswith(f"Step {i}:"))
        assert screen.step == i and screen.merges == (step.rank + 1,)
        assert f"Merge {step.rank + 1}," in screen.text and f"occurred {step.count:,} times" in screen.text
    assert " ".join(f"`{t.decode()}`" for t in TOK.pieces(word)) in screens[-1].text


# ---------------------------------------------------------------------------
# the quiz's questions


def test_the_answer_is_the_lowest_rank_and_a_left_to_right_reader_has_an_option():
    q = encode_quiz.question("run", TOK, b"widest")
    assert q.answer.pair == (b"s", b"t") and q.answer.rank == 0
    assert {o.pair for o in q.options} == {(b"s", b"t"), (b"w", b"i")}  # w + i is the first pair and a merge (8)
    q = encode_quiz.question("run", TOK, b"lowest")
    assert (b"l", b"o") in {o.pair for o in q.options if o.rank is None}  # the first pair, never merged
    assert q == encode_quiz.question("run", TOK, b"lowest")  # the same letters for everyone


def test_explanations_say_why_and_why_not():
    q = encode_quiz.question("run", TOK, b"lowest")
    lines = encode_quiz.explain(q, (b"l", b"o"))
    assert lines[0].startswith("s + t is merge 1, learned before every other merge") and "o + w is merge 3" in lines[0]
    assert "never merged: the encoder does not read left to right" in lines[1]
    assert "is merge 3: learned later" in encode_quiz.explain(q, (b"o", b"w"))[1]


@settings(max_examples=100, deadline=None)
@given(word=WORDS)
def test_the_answer_is_the_encoders_first_step(word):
    data = word.encode()
    if data not in encode_quiz.askable(TOK, {data: 1}):
        return
    q = encode_quiz.question("run", TOK, data)
    assert q.answer.rank == TOK.encode_steps(data)[1].rank
    assert 2 <= len(q.options) <= 4 and len({o.letter for o in q.options}) == len(q.options)


# ---------------------------------------------------------------------------
# the pages


def text_of(at) -> str:
    return re.sub(r"<[^>]+>", "", " ".join([m.value for m in at.markdown] + [h.value for h in at.html]))


def test_the_lesson_page_walks_to_the_end_and_opens_the_encode_page():
    at = open_app("pages/encode_lesson.py", tie_break="rustbpe")
    assert at.title[0].value == "1. Start from the bytes"
    n = len(encode_lesson.screens(TOK)) + 1  # and the last: the other family, GPT-4o beside Llama 2 (both in ../shared)
    for i in range(2, n + 1):
        at.button(key="enc_lesson_next").click().run()
        assert at.title[0].value.startswith(f"{i}. ")
    assert at.button(key="enc_lesson_next").disabled
    assert at.title[0].value == f"{n}. {encode_lesson.FAMILIES_TITLE}"
    assert "newest" in text_of(at) and any("`<0xF0>`" in m.value for m in at.markdown)
    at.button(key="enc_lesson_open").click().run()
    assert not at.exception
    assert at.session_state["enc_text"] == "lowest" and at.session_state["source"] == "textbook"
    assert at.title[0].value == "Encode, step by step"
    # the page switch (st.switch_page, from the server) kept what the lesson does not set: the sidebar's rule
    assert at.session_state["tie_break"] == "rustbpe" and at.sidebar.selectbox(key="tie_break").value == "rustbpe"


@pytest.mark.parametrize("pick_right", [True, False])
def test_the_quiz_page_marks_an_answer_and_explains_it(pick_right):
    at = open_app("pages/encode_quiz.py", source="textbook")
    assert at.title[0].value == "Which merge applies first?"
    assert "Encoding “newest”" in at.subheader[0].value  # the corpus's most frequent word with two merges in it
    labels = [b.label.replace("\\", "") for b in at.button if (b.key or "").startswith("quiz_option_")]  # labels are Markdown
    right = next(i for i, label in enumerate(labels) if "s + t" in label)
    choice = right if pick_right else next(i for i in range(len(labels)) if i != right)
    at.button(key=f"quiz_option_{choice}").click().run()
    assert not at.exception
    text = text_of(at)
    assert ("Right!" in text) == pick_right and "s + t is merge 1" in text
    assert at.button(key=f"quiz_option_{right}").label.endswith("✔ right")
    assert at.button(key="quiz_option_0").disabled


def test_the_other_familys_screen_is_the_real_tokenizers_tokens(openai_encodings):
    tokenizers = pytest.importorskip("tokenizers")
    from ui import real
    from ui.views.compare import row

    sentence = encode_lesson.FAMILIES_SENTENCE
    gpt = openai_encodings["o200k_base"].encode(sentence)
    llama = tokenizers.Tokenizer.from_file(str(real.OPEN_MODELS["llama2"].path)).encode(sentence, add_special_tokens=False).ids
    screen = encode_lesson.families_screen(
        row("GPT-4o", real.get("o200k", spinner=False).tokenizer, sentence),
        row("Llama 2", real.get("llama2", spinner=False).tokenizer, sentence),
    )
    assert screen.rows[0].ids == tuple(gpt) and screen.rows[1].ids == tuple(llama)
    assert f"{len(gpt)} tokens against {len(llama)}." in screen.text
    # the space, the digits and the emoji, as each family writes them
    assert "`␣newest`" in screen.text and "newest is `▁new` `est`" in screen.text and "`▁The▁newest▁llama" in screen.text
    assert "numbers come in threes: `202` `4`" in screen.text and "Every digit stays alone, `2` `0` `2` `4`" in screen.text
    assert "falls back to its 4 UTF-8 bytes, `<0xF0>` `<0x9F>` `<0xA6>` `<0x99>`" in screen.text
