"""The tokenize & export page, driven through AppTest."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from conftest import open_app, rerun_until
from streamlit.testing.v1 import AppTest

from benchmarks.classroom import colliding_tiktoken
from bpe import Tokenizer, pretokenize, train
from bpe.files import formats
from ui import runs
from ui.render import text_spans
from ui.views.tokenize import LOAD_ELSEWHERE

PAGE = "pages/tokenize.py"
TEXT = "low low low low low lower lower widest widest widest newest newest newest newest newest newest"
HOSTILE = "<script>alert(1)</script> <img src=x onerror=alert(1)>"


def open_page(source: str = "textbook", pretokenizer: str | None = None) -> AppTest:
    return open_app(PAGE, source=source, **({"pretokenizer": pretokenizer} if pretokenizer else {}))


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_the_page_tokenizes_a_sample_of_the_corpus():
    at = open_page()
    assert not at.exception
    assert at.text_area(key="w_tok_text").value.startswith("low low low")
    assert metric(at, "Merges used") == "12 of 12"
    assert int(metric(at, "Tokens")) < int(metric(at, "Bytes"))
    assert 'title="id ' in at.html[0].value  # ids on hover
    # and under each token, on a projector (issue 28.12): every id of the text, in order
    ids = [int(i) for i in re.findall(r'<span class="tid">(\d+)</span>', at.html[0].value)]
    assert ids and len(ids) == int(metric(at, "Tokens"))
    at.toggle(key="w_tok_ids").set_value(False).run()
    assert 'class="tid"' not in at.html[0].value


def test_hostile_text_is_shown_escaped():
    at = open_page("ties", pretokenizer="gpt2")
    at.text_area(key="w_tok_text").set_value(HOSTILE).run()
    shown = at.html[0].value
    assert "<script>" not in shown and "<img" not in shown
    tokens = re.findall(r'<span class="ttext">([^<]*)</span>', shown)  # each chip's text, over its id
    assert html.unescape("".join(tokens)).replace("␣", " ") == HOSTILE  # every character shown, as text


def test_k_zero_gives_one_token_per_byte():
    at = open_page("ties", pretokenizer="gpt2")
    at.text_area(key="w_tok_text").set_value("abab baba").run()
    at.slider(key="w_tok_k").set_value(0).run()
    assert metric(at, "Tokens") == metric(at, "Bytes") == "9"
    at.slider(key="w_tok_k").set_value(at.slider(key="w_tok_k").max).run()
    assert int(metric(at, "Tokens")) < 9


def test_the_token_count_is_what_the_chips_show():
    # the teacher's text: a llama is 4 tokens early in training, drawn as one dashed chip
    at = open_page("ties", pretokenizer="gpt2")
    at.text_area(key="w_tok_text").set_value("I love 🦙 llamas! 東京は大きい。 naïve café 👩‍👩‍👧").run()
    shown = at.html[0].value
    chips = re.findall(r'<span class="tok[^"]*"(?: data-tokens="(\d+)")?', shown)
    drawn = [int(n) if n else 1 for n in chips]
    assert sum(drawn) == int(metric(at, "Tokens").replace(",", "")) > len(drawn)  # fewer chips than tokens, all counted
    for n in drawn:
        if n > 1:
            assert f'<span class="ntok">×{n}</span>' in shown  # each dashed chip says its count on the chip
    assert any(c.value.startswith(f"{sum(drawn):,} tokens, drawn as {len(drawn):,} chips") for c in at.caption)


def test_the_round_trip_is_checked():
    at = open_page("ties", pretokenizer="gpt2")
    at.text_area(key="w_tok_text").set_value("naïve café 🙂 <|endoftext|> abab\n\tbaba").run()
    assert at.success[0].value.startswith("✓ identical")


def test_the_whitespace_pre_tokenizer_says_why_the_round_trip_differs():
    at = open_page()  # textbook: whitespace pre-tokenizer
    assert "drops whitespace" in at.warning[0].value


def test_every_format_can_be_downloaded_one_by_one_or_zipped():
    at = open_page()
    labels = [d.label for d in at.get("download_button")]
    assert labels == [f"All {len(formats.file_names())} files, zipped", *formats.file_names()]  # in the registry's order
    assert set(labels) >= {
        "vocab.json",
        "merges.txt",
        "tokenizer.json",
        "tokenizer.bpe.json",
        "tokenizer.tiktoken",
        "tokenizer_config.json",
    }
    assert [m.value for m in at.markdown if m.value.startswith("**")][-4:] == [f"**{tool}**" for tool in LOAD_ELSEWHERE]


def test_the_zip_holds_every_file_and_loads_as_the_tokenizer(tmp_path):
    import io
    import zipfile

    from ui.views.tokenize import downloads

    tok = Tokenizer.from_training(train(pretokenize(TEXT, pretokenizer="gpt2"), 12), "gpt2")
    texts, bundle = downloads.__wrapped__(("test", 12), 8, tok)
    with zipfile.ZipFile(io.BytesIO(bundle)) as folder:
        assert {name: folder.read(f"tokenizer/{name}").decode() for name in texts} == texts == tok.files(8)
        folder.extractall(tmp_path)
    assert Tokenizer.load(tmp_path / "tokenizer").encode(TEXT) == tok.encode(TEXT, 8)


def test_the_text_and_k_are_kept_across_pages():
    at = open_page()
    at.text_area(key="w_tok_text").set_value("lowest newest").run()
    at.slider(key="w_tok_k").set_value(3).run()
    at.switch_page("pages/threshold.py").run()
    at.switch_page(PAGE).run()
    assert at.text_area(key="w_tok_text").value == "lowest newest"
    assert metric(at, "Merges used") == "3 of 12"


# ---------------------------------------------------------------------------
# next to a real tokenizer


def uploaded(at: AppTest, *files: tuple[str, bytes]) -> AppTest:
    """Upload files as the real tokenizer, and rerun the page (as its polling does) until a worker has read them."""
    at.radio(key="w_tok_ref_source").set_value("upload").run()
    at.file_uploader(key="tok_upload").set_value([(name, data, "application/octet-stream") for name, data in files]).run()
    return rerun_until(at, lambda at: "upload" not in at.session_state["watching"], what="the upload's read")


def gpt2_files(gpt2: Path) -> list[tuple[str, bytes]]:
    return [(name, (gpt2 / name).read_bytes()) for name in ("encoder.json", "vocab.bpe")]


def test_gpt2_is_shown_next_to_the_trained_tokenizer(gpt2):
    at = open_page("ties", pretokenizer="gpt2")
    at.text_area(key="w_tok_text").set_value("Hello world, this is GPT-2.").run()
    expected = Tokenizer.from_files(gpt2 / "encoder.json", gpt2 / "vocab.bpe", ["<|endoftext|>"]).encode("Hello world, this is GPT-2.")
    assert metric(at, "Tokens (GPT-2)") == str(len(expected))
    assert metric(at, "Tokens (trained here)") == metric(at, "Tokens")
    gpt2_html = at.html[2].value
    assert [int(i) for i in re.findall(r'title="id (\d+)"', gpt2_html)] == expected
    assert at.caption[1].value.startswith("GPT-2 files: 50,257 tokens, 50,000 merges")


def test_uploaded_gpt2_files_load_and_survive_a_page_change(gpt2):
    at = uploaded(open_page(), *gpt2_files(gpt2))
    assert not at.error
    label = "Tokens (encoder.json, vocab.bpe)"
    tokens = metric(at, label)
    at.switch_page("pages/threshold.py").run()
    at.switch_page(PAGE).run()
    assert at.radio(key="w_tok_ref_source").value == "upload"
    assert metric(at, label) == tokens  # the uploader is empty again, the choice is kept


def test_an_uploaded_tokenizer_bpe_json_shows_its_counts(tmp_path):
    tok = Tokenizer.from_training(train(pretokenize(TEXT, pretokenizer="whitespace"), 12), "whitespace")
    tok.save(tmp_path)
    at = uploaded(open_page(), ("tokenizer.bpe.json", (tmp_path / "tokenizer.bpe.json").read_bytes()))
    at = browse_merges(at)
    frame = at.table[0].value
    assert list(frame.columns) == ["rank", "pair", "new token", "id", "count"]
    assert list(frame["count"]) == [f"{c:,}" for c in tok.counts]
    assert not at.dataframe  # a table the app sizes: a dataframe's canvas draws at 15.75 px
    assert not [c for c in at.caption if c.value.startswith("No counts")]


def browse_merges(at: AppTest) -> AppTest:
    """Open the merge browser (drawn only while open: 500 rows the browser would lay out on every run)."""
    assert not at.table and not [t for t in at.text_input if t.key == "w_tok_merge_query"]
    at.session_state["tok_merges_box"] = True
    return at.run()


def test_the_merge_browser_searches_and_says_gpt2_has_no_counts(gpt2):
    at = browse_merges(open_page())
    at.text_input(key="w_tok_merge_query").set_value(" the").run()
    frame = at.table[0].value
    ranks = [int(r.replace(",", "")) for r in frame["rank"]]
    assert "count" not in frame.columns and ranks[0] < ranks[-1] and any("," in r for r in frame["rank"])  # 1,000s separated
    assert all("␣the" in token for token in frame["new token"])
    assert any(c.value.startswith("No counts: GPT-2 files record the merges in order") for c in at.caption)


@pytest.mark.parametrize(
    "files, message",
    [
        ([("notes.json", b'{"hello": 1}')], "notes.json: not a tokenizer file this tool knows"),
        ([("vocab.json", b"{}")], "vocab.json: a GPT-2 tokenizer needs merges.txt too"),
        ([("photo.png", bytes(range(256)))], "photo.png: not UTF-8 text"),
        ([("t.tiktoken", b"YQ== 0\n")], "t.tiktoken: byte 0x00 has no rank"),
    ],
)
def test_a_bad_upload_is_one_sentence(files, message):
    at = uploaded(open_page(), *files)
    assert not at.exception
    assert at.error[0].value.startswith(message)


def test_an_upload_is_read_in_a_worker_and_a_hostile_one_is_one_sentence(monkeypatch):
    """The reviewer's file in small (2,000 tokens built to collide in the core's hash, never made of two others): read in a
    worker process, not in the page's thread, and refused in the sentence the parser says."""

    read = formats.read_uploads

    def in_the_page(files, *args, **kwargs):
        assert "hostile.tiktoken" not in files, "an upload was read in the page's thread"
        return read(files, *args, **kwargs)  # GPT-2's files, which ui/real.py loads for every page

    monkeypatch.setattr(formats, "read_uploads", in_the_page)  # this process's: a worker process has its own
    at = uploaded(open_page(), ("hostile.tiktoken", colliding_tiktoken(2000)))
    at.run()  # a failed read is said again, not read again (the pool would start a failed job anew)
    assert not at.exception and "upload" not in at.session_state["watching"]
    assert [e.value for e in at.error] and at.error[0].value.startswith("hostile.tiktoken: token ")
    assert "cannot be" in at.error[0].value or "two" in at.error[0].value


def test_an_upload_read_past_its_deadline_is_given_up_in_one_sentence(monkeypatch):
    from pool_jobs import stalled_read

    import ui.work
    from ui.views import tokenize as tokenize_views

    monkeypatch.setattr(tokenize_views, "UPLOAD_S", 1.0)
    monkeypatch.setattr(tokenize_views.jobs, "read_upload", stalled_read)  # a read that never ends
    at = open_page()
    at.radio(key="w_tok_ref_source").set_value("upload").run()
    at.file_uploader(key="tok_upload").set_value([("slow.tiktoken", b"x" * 20_000, "application/octet-stream")]).run()
    key = at.session_state["watching"]["upload"]
    assert any(i.value.startswith("Reading slow.tiktoken") for i in at.info)  # the page follows the worker meanwhile
    at = rerun_until(at, lambda at: bool(at.error), what="the deadline")
    assert at.error[0].value.startswith("slow.tiktoken: still being read after 1 s, longer than an upload may take here")
    assert ui.work.pool().wait(key, 30).state == "cancelled"  # nobody else waited for it: its worker was killed


def test_a_read_that_fails_while_the_page_follows_it_is_said_and_not_read_again(tmp_path, monkeypatch):
    from pool_jobs import gated_read, open_gate

    from ui.views import tokenize as tokenize_views

    runs = tmp_path / "runs.txt"
    monkeypatch.setenv("BPE_TEST_GATE", str(runs))
    monkeypatch.setattr(tokenize_views.jobs, "read_upload", gated_read)
    at = open_page()
    at.radio(key="w_tok_ref_source").set_value("upload").run()
    at.file_uploader(key="tok_upload").set_value([("late.tiktoken", b"x" * 20_000, "application/octet-stream")]).run()
    assert any(i.value.startswith("Reading late.tiktoken") for i in at.info)
    open_gate(runs)
    at = rerun_until(at, lambda at: bool(at.error), what="the read's failure")
    at.run()
    assert at.error[0].value == "late.tiktoken: refused after the gate opened."
    assert runs.read_text() == "run\n"  # once: the page read the failure, it did not ask for the read again


def test_only_the_files_own_sentence_is_kept_for_every_session():
    """A session's budget or a crashed worker is that session's, or that run's: never said to another uploading the same files."""
    from ui.views.tokenize import reference_of, said_of

    reference = reference_of("a.json, b.txt", {"a.json": b"{}", "b.txt": b""})
    assert said_of(reference, "a.json: not a tokenizer file this tool knows (...)")
    assert said_of(reference, "a.json, b.txt: expected one tokenizer file, or the files of one together: ...")
    assert not said_of(reference, "This session has used the worker pool for 301 s in the last 10 minutes, ...")
    assert not said_of(reference, "The worker process stopped before finishing (killed by signal 9, ...).")


def test_sessions_uploading_the_same_files_share_one_read(gpt2, monkeypatch):
    import ui.work

    first = uploaded(open_page(), *gpt2_files(gpt2))
    tokens = metric(first, "Tokens (encoder.json, vocab.bpe)")
    asked = []
    ask = ui.work.ask
    monkeypatch.setattr(ui.work, "ask", lambda purpose, *args, **kwargs: asked.append(purpose) or ask(purpose, *args, **kwargs))
    second = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=120).run()  # the caches kept
    second.switch_page(PAGE).run()
    second = uploaded(second, *gpt2_files(gpt2))
    assert metric(second, "Tokens (encoder.json, vocab.bpe)") == tokens and "upload" not in asked


def test_hostile_special_tokens_in_an_upload_are_shown_escaped():
    tok = Tokenizer.from_merges([(b"a", b"b")], ["<script>alert(1)</script>"], "gpt2")
    tokenizer_json = formats.files(tok.merges, tok.special_tokens, tok.pretokenizer)["tokenizer.json"].encode()
    at = uploaded(open_page(), ("tokenizer.json", tokenizer_json))
    at.text_area(key="w_tok_text").set_value("ab <script>alert(1)</script>").run()
    assert not at.error
    assert all("<script>" not in h.value for h in at.html)


def test_without_shared_gpt2_files_the_page_offers_uploads(tmp_path, monkeypatch):
    from ui import real

    # GPT-2 nowhere on this machine: neither in ../shared nor in tiktoken's cache (ui/real.py looks in both)
    monkeypatch.setattr(real, "SHARED", tmp_path / "absent")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    at = open_page()
    assert at.radio(key="w_tok_ref_source").options == ["Upload files"]
    assert at.info[0].value.startswith("Upload a tokenizer")
    assert [d.label for d in at.get("download_button")][1:] == formats.file_names()


def test_a_latin1_corpus_sample_keeps_its_bytes_visible_and_says_why():
    at = open_app("pages/tokenize.py", source="upload")
    at.sidebar.file_uploader[0].set_value(("latin1.txt", "caf\xe9 na\xefve ".encode("latin-1") * 40, "text/plain")).run()
    at.button[0].click().run()  # Use a sample of the corpus
    assert not at.exception and not at.error
    assert at.text_area[0].value.startswith("caf\ufffd na\ufffdve")  # shown, not dropped ("caf nave")
    assert "not UTF-8" in at.info[0].value


def chip_texts(shown: str) -> list[str]:
    """The characters each chip is drawn over (the ×N and the id under it left out)."""
    shown = re.sub(r'<span class="(?:ntok|tid)">[^<]*</span>', "", shown)
    return [
        html.unescape(re.sub(r"<[^>]+>", "", chip))
        for chip in re.findall(r'<span class="tok[^"]*"[^>]*>(.*?)</span>(?=<span class="tok|</div>)', shown)
    ]


def test_each_token_is_drawn_over_exactly_its_characters_as_decode_with_offsets_places_them():
    text = "I love 🦙 llamas! 東京は大きい。 naïve café 👩‍👩‍👧"
    at = open_page("ties", pretokenizer="gpt2")
    at.text_area(key="w_tok_text").set_value(text).run()
    drawn = chip_texts(at.html[0].value)
    assert "".join(drawn).replace("␣", " ") == text  # every character once, in order, none split
    tok = Tokenizer.from_merges([], ["<|endoftext|>"])  # bytes only: every multi-byte character split
    ids = tok.encode(text)
    _, offsets = tok.decode_with_offsets(ids)
    starts = sorted(set(offsets))
    assert len(chip_texts(text_spans([tok.vocab[i] for i in ids], ids))) == len(starts)


def test_gpt2_tokens_that_split_a_character_are_drawn_where_decode_with_offsets_puts_them(gpt2):
    at = open_page("ties", pretokenizer="gpt2")
    at.text_area(key="w_tok_text").set_value(" Ġ除").run()
    tok = Tokenizer.load(gpt2)
    text, offsets = tok.decode_with_offsets(tok.encode(" Ġ除"))
    expected = [text[a:b] for a, b in zip(offsets, [*offsets[1:], len(text)]) if b > a]
    # GPT-2 cuts Ġ (c4 a0) after its first byte, which rides on the space's token: drawn on the token that ends it
    assert [t.replace("␣", " ") for t in chip_texts(at.html[2].value)] == expected == [" ", "Ġ", "除"]


def test_special_token_text_is_said_to_be_encoded_as_special_as_cs336_does():
    at = open_page("ties", pretokenizer="gpt2")
    at.text_area(key="w_tok_text").set_value("low<|endoftext|>lower").run()
    note = next(c.value for c in at.caption if c.value.startswith("The text spells <|endoftext|>"))
    assert "as CS336's Tokenizer does" in note and "tiktoken refuses such text" in note
    at.text_area(key="w_tok_text").set_value("low lower").run()
    assert not [c for c in at.caption if c.value.startswith("The text spells")]


def test_what_a_closed_expander_holds_is_not_sent_with_every_run():
    # a closed expander's content was still sent and laid out by the browser on every run: GPT-2's 500 merges made the
    # page 2-4 s a sidebar click (issue 36.6); the ids and the decoded text, and the merge browser, are drawn when open
    at = open_page()
    python = len(LOAD_ELSEWHERE)  # the code that loads the files elsewhere: always shown
    assert len(at.code) == python and not at.table
    at.session_state["tok_ids_box"] = True
    at.run()
    ids, decoded = (c.value for c in at.code[:2])
    text = at.session_state["tok_text"]
    tok = runs.tokenizer_for(at.session_state["settings"])  # the sidebar's run, as the page has it
    assert len(at.code) == python + 2 and ids.split() == [str(i) for i in tok.encode(text)] and decoded == tok.decode(tok.encode(text))
