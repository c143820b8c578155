"""The check-your-merges page, driven through AppTest: the example, the reference's own list, a real student's bug on the
server's own corpus file (opened by the link bpe diff prints), and bad uploads."""

from __future__ import annotations

import pickle
import re
from urllib.parse import parse_qsl, urlparse

import student_bpe as student
from conftest import open_app, rerun_until
from streamlit.testing.v1 import AppTest

from bpe import TrainSpec, train_bpe_text
from bpe.cli import step_hint
from bpe.data.corpora import stdlib_prose
from bpe.text.gpt2_bytes import to_unicode
from ui.corpus import SOURCES

PAGE = "pages/diff.py"
TEXTBOOK = SOURCES["textbook"].text
SPECIAL = "<|endoftext|>"


def open_page(**sidebar) -> AppTest:
    return open_app(PAGE, **sidebar)


def checked(at: AppTest) -> AppTest:
    """Rerun until the check has ended (a worker's, or this thread's) and the page drew it, or said why not."""
    return rerun_until(at, lambda at: any('class="diff-head' in h.value for h in at.html) or at.error, what="the check")


def html_of(at: AppTest) -> str:
    return "".join(h.value for h in at.html)


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.file_uploader(key="diff_files").set_value((name, data, "text/plain")).run()
    return checked(at)


def merges_txt(merges) -> bytes:
    return "".join(f"{to_unicode(a)} {to_unicode(b)}\n" for a, b in merges).encode()


def test_before_anything_is_uploaded_the_page_says_what_to_do():
    at = open_page()
    assert not at.exception
    assert at.info[0].value.startswith("Upload the merges your trainer made")


def test_the_example_is_a_tie_mistake_found_at_merge_1_of_the_textbook_run():
    at = open_page()
    at.button[0].click().run()
    page = html_of(checked(at))
    assert "at merge 1 of 12: a tie broken another way" in page
    assert "Likely cause: <b>ties to the smaller bytes</b>: a trainer with it makes all of your 12 merges." in page
    assert "tie:smaller" not in page  # words on the page, ids in the JSON
    assert '<tr class="first"><td class="n">1</td><td>e + s</td><td class="ref">s + t</td></tr>' in page
    assert '<tr class="yours"><td class="pair">e + s</td><td class="n">9</td><td>yours</td></tr>' in page
    assert '<tr class="chosen"><td class="pair">s + t</td><td class="n">9</td><td>reference</td></tr>' in page
    assert at.success[0].value.startswith("Fix\\: Among pairs with the same count take the greater")
    assert at.markdown[-1].value == "[Open merge 1 on the step page](./?corpus=textbook&merge=1)"
    # the result stays with the session: another page and back shows it without asking the pool again
    at.switch_page("pages/step.py").run()
    at.switch_page(PAGE).run()
    assert "at merge 1 of 12" in html_of(at)


def test_the_reference_itself_is_the_same():
    _, merges = train_bpe_text(TEXTBOOK, 256 + 12 + 1, ["<|endoftext|>"], pretokenizer="whitespace")
    at = upload(open_page(), "merges.txt", merges_txt(merges))
    page = html_of(at)
    assert "Your 12 merges are the reference&#x27;s, merge for merge." in page and 'class="diff-head same"' in page
    assert not at.success  # nothing to fix


def test_a_list_trained_under_huggingfaces_rule_names_both_rules_that_make_it():
    """The textbook run asks for CS336's rule; HuggingFace's and rustbpe's both make all 12 merges of this list."""
    _, merges = train_bpe_text(TEXTBOOK, 256 + 12 + 1, [SPECIAL], pretokenizer="whitespace", tie_break="huggingface")
    page = html_of(upload(open_page(), "merges.txt", merges_txt(merges)))
    assert (
        "Likely cause: <b>ties to the smaller token ids (rustbpe&#x27;s rule)</b> or <b>ties as HuggingFace breaks them</b>: "
        "a trainer with either makes all of your 12 merges." in page
    )


def test_a_pasted_corpus_is_checked_in_a_worker():
    text = stdlib_prose(20_000)  # past the size a session checks in its own thread
    at = open_page(source="paste", pretokenizer="gpt2")
    at.sidebar.text_area(key="pasted").set_value(text).run()
    at.sidebar.number_input(key="vocab_size").set_value(256 + 60 + 1).run()
    _, merges = train_bpe_text(text, 256 + 60 + 1, ["<|endoftext|>"])
    wrong = merges[:20] + [merges[21], merges[20]] + merges[22:]  # two merges swapped: the first is made too early
    at = upload(at, "pairs.txt", "".join(f"{pair!r}\n" for pair in wrong).encode())
    page = html_of(at)
    assert "at merge 21 of 60: a pair below the highest count" in page, page[:400]
    assert "Likely cause: <b>a pair taken below the highest count</b>: at every other merge yours is the most frequent pair." in page
    assert at.session_state["watching"]["check"].spec == TrainSpec(
        special_tokens=("<|endoftext|>",), pretokenizer="gpt2", algorithm=at.session_state["algorithm"]
    )


def test_bad_uploads_are_one_sentence_and_html_in_a_file_is_text():
    at = open_page()
    for name, data, says in [
        ("merges.pkl", pickle.dumps([(b"a", b"b")]), "looks like a pickle"),
        ("binary.txt", bytes(range(256)), "not a text file"),
        ("pairs.txt", b"(b'a', 'b')\n", "is text, not bytes"),
        ("pairs.txt", b"[(b'a', b'b')", "not closed"),
    ]:
        at = upload(at, name, data)
        assert len(at.error) == 1 and says in at.error[0].value and "\n" not in at.error[0].value, at.error
        assert not at.exception
    at = upload(at, "mine.txt", b"(b'<script>alert(1)</script>', b'[x](javascript:alert(1))')\n")
    page = html_of(at)
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "a merge that cannot be made there" in page
    assert not re.search(r"\]\(javascript", "".join(m.value for m in at.markdown))


def test_a_real_bug_on_the_servers_corpus_file_is_named_in_words(tmp_path, monkeypatch, cs336):
    """Two mistakes at once (characters, not bytes, and special tokens left in the text) on the corpus file the server
    was started with: the link bpe diff prints opens the step page at the first difference on that run, and the page
    names both mistakes in words."""
    lines = (cs336 / "corpus.en").read_text(encoding="utf-8").splitlines(keepends=True)[-300:]
    text = SPECIAL.join("".join(lines[i : i + 5]) for i in range(0, len(lines), 5))
    path = tmp_path / "documents.txt"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("BPE_CORPUS", str(path))
    theirs = student.train(text, 180, (SPECIAL,), "characters_not_bytes+special_tokens_not_split", incremental=True)
    reference = student.train(text, 180, (SPECIAL,), incremental=True)
    k = next(i for i, (a, b) in enumerate(zip(theirs, reference)) if a != b) + 1
    hint = step_hint([str(path)], TrainSpec(special_tokens=(SPECIAL,)), 256 + 180 + 1, k)
    assert f"BPE_CORPUS={path}" in hint
    at = open_app()
    at.query_params.update(dict(parse_qsl(urlparse(hint.split("then open ")[1]).query)))  # the student opens the link
    at.run()
    assert not at.exception and not at.warning
    said = {key: at.session_state[key] for key in ("source", "pretokenizer", "vocab_size", "special_tokens_text", "tie_break", "step")}
    assert said == {
        "source": "file",
        "pretokenizer": "gpt2",
        "vocab_size": 437,
        "special_tokens_text": SPECIAL,
        "tie_break": "cs336",
        "step": k,
    }
    at.switch_page(PAGE).run()
    at = upload(at, "merges.txt", "".join(f"{pair!r}\n" for pair in theirs).encode())
    page = html_of(at)
    assert f"at merge {k} of 180: a difference in counts" in page, page[:600]
    assert "Likely cause: two mistakes at once, <b>special tokens left in the text</b> and <b>characters, not bytes</b>" in page
    assert "a trainer with both makes all of your 180 merges" in page
    assert not re.search(r"characters_not_bytes|special_tokens_not_split|tie:", page)  # words, not ids
    assert at.markdown[-1].value.startswith("[Open merge") and "corpus=file" in at.markdown[-1].value


def test_the_servers_corpus_file_is_offered_only_when_there_is_one(tmp_path, monkeypatch):
    at = open_app()
    assert "Server's file" not in at.sidebar.selectbox(key="source").options
    at.query_params.update(corpus="file", merge="3")  # a link made for a server started with a file
    at.run()
    assert len(at.warning) == 1 and "not one of the presets" in at.warning[0].value and at.session_state["source"] == "textbook"
    path = tmp_path / "big.txt"
    path.write_bytes(b"ab " * 2_000_000)  # 6 MB
    monkeypatch.setenv("BPE_CORPUS", str(path))
    at = open_app(source="file")
    assert "Server's file" in at.sidebar.selectbox(key="source").options
    assert [e.value for e in at.error] == [
        "big.txt is 6.0 MB; the app takes up to 5 MB. Train on bigger files with the CLI: python -m bpe train FILE …"
    ]
    monkeypatch.setenv("BPE_CORPUS", str(tmp_path / "gone.txt"))
    at = open_app(source="file")
    assert "cannot be read (No such file or directory)" in at.error[0].value
