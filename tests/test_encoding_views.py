"""What the Encode, Real tokenizers and Quirks pages compute: the encoder's steps, a token's ancestry, the span diff, the real tokenizers' files."""

from __future__ import annotations

import hashlib
import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import Tokenizer, pretokenize, train
from ui import encoding, real
from ui.lessons import quirks
from ui.views import compare as cv
from ui.views import encode as ev

TEXT = "low low low low low lower lower widest widest widest newest newest newest newest newest newest"
HOSTILE = "<script>alert(1)</script> <img src=x onerror=alert(1)>"
TEXTS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)  # what a user can type
BUDGET = settings(max_examples=60, deadline=None)


@pytest.fixture(scope="module")
def textbook() -> Tokenizer:
    return Tokenizer.from_training(train(pretokenize(TEXT, pretokenizer="gpt2"), 30), "gpt2")


def _tokenizer(which: str) -> Tokenizer:
    """The tokenizer the pages show: our run, or a real one as ui/real.py loads it (once per process); skips without ../shared."""
    if which == "textbook":
        return Tokenizer.from_training(train(pretokenize(TEXT, pretokenizer="gpt2"), 30), "gpt2")
    found = real.get(which, spinner=False)
    if found.tokenizer is None:
        pytest.skip(found.error)
    return found.tokenizer


# ---------------------------------------------------------------------------
# the encoder's steps


def test_steps_of_lower_apply_the_lowest_rank_first():
    tok = Tokenizer.from_merges([(b"e", b"r"), (b"l", b"o"), (b"lo", b"w")])
    steps = encoding.steps(tok, b"lower")
    assert [s.rank for s in steps] == [0, 1, 2]  # e+r is learned first, so it goes first, though it is to the right
    assert steps[0].before == (b"l", b"o", b"w", b"e", b"r") and steps[0].ranks == (1, None, None, 0)
    assert steps[0].pair == (b"e", b"r") and steps[-1].parts == (b"low", b"er")


def test_one_step_merges_every_place_of_its_pair():
    tok = Tokenizer.from_merges([(b"a", b"b")])
    (step,) = encoding.steps(tok, b"ababab")
    assert step.parts == (b"ab", b"ab", b"ab")


def test_k_limits_the_merges_and_their_ranks():
    tok = Tokenizer.from_merges([(b"e", b"r"), (b"l", b"o"), (b"lo", b"w")])
    steps = encoding.steps(tok, b"lower", 1)
    assert [s.rank for s in steps] == [0] and steps[0].ranks == (None, None, None, 0)  # l+o is merge 1: beyond k


@pytest.mark.parametrize("which", ["textbook", "gpt2", "cl100k", "o200k"])
def test_the_last_steps_are_encodes_tokens_and_ranks_increase(which):
    tok = _tokenizer(which)
    check = given(text=TEXTS)(lambda text: _steps_end_in_encode(tok, text))
    BUDGET(check)()


def _steps_end_in_encode(tok: Tokenizer, text: str) -> None:
    tokens = []
    for piece in encoding.pieces(tok, text):
        steps = encoding.steps(tok, piece.data) if not piece.special else []
        ranks = [s.rank for s in steps]
        assert ranks == sorted(set(ranks))  # strictly increasing within a piece
        for before, after in zip(steps, steps[1:]):
            assert after.before == before.parts
        tokens += [piece.data] if piece.special else list(encoding.final(tok, piece.data))
    assert tokens == tok.pieces(text)


def test_the_rows_highlight_the_chosen_pair_and_escape_the_text():
    tok = Tokenizer.from_merges([(b"<", b"s"), (b"<s", b"c")])
    steps = encoding.steps(tok, b"<scr")
    shown = ev.step_rows(b"<scr", steps, 0, lambda rank: None)
    assert "<s" not in re.sub(r"<(/?)(div|span|a)\b", "", shown)  # the token '<s' only as &lt;s
    assert shown.count('class="tok hit"') == 2 and shown.count('class="rank hit"') == 1
    assert re.search(r'class="rank hit">#1<', shown)


def test_rank_links_go_to_the_step_page_at_that_merge():
    tok = Tokenizer.from_merges([(b"l", b"o")])
    steps = encoding.steps(tok, b"lo")
    shown = ev.step_rows(b"lo", steps, 0, lambda rank: f"./?corpus=textbook&merge={rank + 1}")
    assert 'href="./?corpus=textbook&amp;merge=1"' in shown


# ---------------------------------------------------------------------------
# ancestry


def test_ancestry_of_low():
    tok = Tokenizer.from_merges([(b"l", b"o"), (b"lo", b"w")], counts=[7, 5])
    node = encoding.ancestry(tok, b"low")
    assert (node.rank, node.count, node.left.token, node.right.token) == (1, 5, b"lo", b"w")
    assert (node.left.rank, node.left.count, node.left.left.token, node.left.right.token) == (0, 7, b"l", b"o")
    assert node.leaves == 3 and node.depth == 3
    assert encoding.ancestry(tok, b"low", k=1) is None  # not a token of the first merge alone
    assert encoding.ancestry(tok, b"xyz") is None
    assert encoding.ancestry(tok, b"l").rank is None  # a byte: nothing built it


def _leaves(node) -> bytes:
    return node.token if node.rank is None else _leaves(node.left) + _leaves(node.right)


def _ranks_below(node) -> bool:
    if node.rank is None:
        return True
    return (
        all(c.rank is None or c.rank < node.rank for c in (node.left, node.right)) and _ranks_below(node.left) and _ranks_below(node.right)
    )


@pytest.mark.parametrize("which", ["gpt2", "cl100k", "o200k"])
def test_every_token_of_a_real_text_has_a_tree_down_to_its_bytes(which):
    tok = _tokenizer(which)
    for token in set(tok.pieces(quirks.LANGUAGES["German"] + " 👩‍💻 def f():\n        return 3.14159")):
        node = encoding.ancestry(tok, token)
        assert node is not None and _leaves(node) == token and _ranks_below(node)
        assert all(len(leaf) == 1 for leaf in _bytes_of(node))


def _bytes_of(node):
    return [node.token] if node.rank is None else _bytes_of(node.left) + _bytes_of(node.right)


def test_the_tree_says_its_numbers_and_escapes():
    tok = Tokenizer.from_merges([(b"<", b"b"), (b"<b", b">")], counts=[3, 2])
    shown = ev.tree(encoding.ancestry(tok, b"<b>"), lambda rank: None)
    assert "<b>" not in shown.replace('<b">', "") and "&lt;b&gt;" in shown
    assert "#2 · ×2" in shown and "#1 · ×3" in shown and shown.count("tnode byte") == 3


# ---------------------------------------------------------------------------
# the span diff


def _row(label: str, tokens: list[bytes]) -> cv.Row:
    return cv.Row(label, tuple(tokens), tuple(range(len(tokens))), True, "", sum(map(len, tokens)))


def test_segments_mark_where_tokenizers_split_differently():
    a = _row("a", [b"low", b"er", b" is"])
    b = _row("b", [b"lo", b"wer", b" is"])
    assert cv.segments(b"lower is", [a, b]) == [(0, 5, True), (5, 8, False)]
    assert cv.segments(b"lower is", [a, a]) == [(0, 3, False), (3, 5, False), (5, 8, False)]


def test_a_cut_all_make_inside_a_character_is_not_a_border():
    one = "器".encode()
    a = _row("a", [one[:2], one[2:]])
    b = _row("b", [one[:2], one[2:]])
    assert cv.segments(one, [a, b]) == [(0, 3, False)]


@BUDGET
@given(text=st.text(st.sampled_from("ab é器\n1"), max_size=30), cuts_a=st.sets(st.integers(1, 60)), cuts_b=st.sets(st.integers(1, 60)))
def test_segments_cover_the_text_and_differ_exactly_where_a_cut_is_not_shared(text, cuts_a, cuts_b):
    data = text.encode()
    rows = [_row(n, _cut(data, c)) for n, c in (("a", cuts_a), ("b", cuts_b))]
    segs = cv.segments(data, rows)
    assert [s for s, _, _ in segs] + [len(data)] == [0] + [e for _, e, _ in segs] or not data  # contiguous, whole text
    every = [cv.cuts(r.tokens) for r in rows]
    for start, end, differs in segs:
        inside = [{c for c in cs if start < c < end} for cs in every]
        assert differs == (inside[0] != inside[1])


def _cut(data: bytes, at: set[int]) -> list[bytes]:
    edges = [0] + sorted(c for c in at if c < len(data)) + [len(data)]
    return [data[s:e] for s, e in zip(edges, edges[1:]) if e > s]


def test_the_comparison_escapes_hostile_text_and_counts_what_it_draws(textbook):
    rows = [cv.row("Trained here", textbook, HOSTILE)]
    table, diff, chips = cv.comparison(HOSTILE, rows)
    for shown in (table, diff, chips):
        assert "<script>" not in shown and "<img" not in shown
    drawn = re.findall(r'<span class="tok[^"]*"[^>]*><span class="ttext">([^<]*)</span><span class="tid">(\d+)</span>', chips)
    assert len(drawn) == len(rows[0].tokens) and f"{len(rows[0].tokens):,} tokens" in chips
    assert html.unescape("".join(text for text, _ in drawn)).replace("␣", " ") == HOSTILE
    assert [int(i) for _, i in drawn] == list(rows[0].ids)  # each chip's id under it


def test_a_lossy_tokenizer_is_left_out_of_the_diff_and_says_so():
    tok = Tokenizer.from_training(train(pretokenize(TEXT, pretokenizer="whitespace"), 5), "whitespace")
    rows = [cv.row("Trained here", tok, "low lower"), _row("bytes", [bytes([b]) for b in b"low lower"])]
    assert not rows[0].lossless
    assert "Not in the diff: Trained here" in cv.comparison("low lower", rows)[1]


# ---------------------------------------------------------------------------
# the real tokenizers' files


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """No ../shared, an empty tiktoken cache, no download: a user's machine without the files."""
    monkeypatch.setattr(real, "SHARED", tmp_path / "no-shared")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(real, "DOWNLOAD", False)
    return tmp_path / "cache"


def test_without_the_files_one_sentence_says_so(offline):
    found = real.get("cl100k", spinner=False)
    assert found.tokenizer is None
    assert found.error == (
        "GPT-4 (cl100k_base) is not on this machine and downloading is turned off: upload OpenAI's cl100k_base.tiktoken to add it."
    )


def test_a_download_runs_in_the_background_and_a_failure_is_said_once(offline, monkeypatch):
    """A page never waits for the network: the download runs in a thread; its failure is the next sentence."""
    import threading

    def no_network(url, timeout):
        raise OSError("no network")

    monkeypatch.setattr(real, "DOWNLOAD", True)
    monkeypatch.setattr(real.urllib.request, "urlopen", no_network)
    monkeypatch.setattr(real, "_failed", {})
    first = real.get("o200k", spinner=False)
    assert first.error == (
        "GPT-4o (o200k_base) is not on this machine yet and is being downloaded from OpenAI now (reload the page in a minute); "
        "or upload OpenAI's o200k_base.tiktoken."
    )
    for thread in threading.enumerate():
        if thread.name == "download-o200k":
            thread.join(timeout=30)
    assert real.get("o200k", spinner=False).error == (
        "GPT-4o (o200k_base) is not on this machine and downloading it failed (no network): upload OpenAI's o200k_base.tiktoken to add it."
    )


def test_a_file_that_is_not_openais_is_refused(offline):
    class Upload:
        name, getvalue = "cl100k_base.tiktoken", staticmethod(lambda: b"aGVsbG8= 0\n")

    assert real.upload(real.ENCODINGS["cl100k"], [Upload()]) == "cl100k_base.tiktoken: not OpenAI's file (its sha256 differs)."
    assert real.locate(real.ENCODINGS["cl100k"]) is None


def test_gpt2_needs_both_files(offline):
    assert real.upload(real.ENCODINGS["gpt2"], []) == "GPT-2 needs encoder.json and vocab.bpe; encoder.json is missing."


def test_tiktokens_cache_is_where_tiktoken_keeps_it(offline, gpt2):
    """A file in tiktoken's cache under the sha1 of its URL is found, and is exactly what tiktoken itself would read."""
    for name in ("encoder.json", "vocab.bpe"):
        data = (gpt2 / name).read_bytes()
        file = next(f for f in real.ENCODINGS["gpt2"].files if f.name == name)
        assert hashlib.sha256(data).hexdigest() == file.sha256
        assert real.store(file, data) is None
        assert (offline / hashlib.sha1(file.url.encode()).hexdigest()).read_bytes() == data
    paths, where = real.locate(real.ENCODINGS["gpt2"])
    assert where == "tiktoken's cache" and all(p.parent == offline for p in paths)
    loaded = real.get("gpt2", spinner=False)
    assert loaded.tokenizer is not None and loaded.tokenizer.encode("Hello world") == [15496, 995]


def test_real_tokenizers_encode_as_tiktoken_does(openai_encodings, tiktoken_gpt2):
    """The tokenizers the pages show, on the quirks' texts and the token tax paragraph, against tiktoken itself."""
    texts = [t for q in quirks.QUIRKS for t in q.texts] + list(quirks.LANGUAGES.values()) + [cv.SAMPLE]
    theirs = {"gpt2": tiktoken_gpt2, "cl100k": openai_encodings["cl100k_base"], "o200k": openai_encodings["o200k_base"]}
    for key, enc in theirs.items():
        tok = real.get(key, spinner=False).tokenizer
        for text in texts:
            assert tok.encode(text) == enc.encode(text, disallowed_special=()), (key, text)


def test_the_sample_says_gpt4os_merges_as_the_table_counts_them(openai_encodings):
    """The comparison's default text states GPT-4o's merges; the table under it counts them: a class sees both numbers."""
    tok = real.get("o200k", spinner=False).tokenizer
    assert f"GPT-4o had {len(tok.merges):,} merges" in cv.SAMPLE
