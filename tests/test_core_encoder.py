"""The compiled encoder (bpe/c/encode.c) gives exactly the ids of the Python path, for every tokenizer we load.

Each tokenizer is compared with its Python twin (the same tokenizer with the compiled encoder
taken away: tokenizer.py's own rounds), on text over all of Unicode, invalid UTF-8, special
tokens, empty text, long runs (merged with the heap), the first k merges, and streamed; the
merging itself on made-up merge lists that no trainer makes (a pair listed twice, parts that
are no token, a merge ranked below the merge that makes its part). Skipped where the compiled
core is not built (bpe/core/ says why); a process without it is shown to encode the same.
"""

from __future__ import annotations

import base64
import copy
import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_core_pretokenize import BAD_BYTES, PIECES, any_bytes, unicode_text

from bpe import Tokenizer, pretokenize, train
from bpe.core import core, missing
from bpe.text import pretokenize_c
from bpe.tokenizer.encoder import Encoder

needs_core = pytest.mark.skipif(core is None, reason=f"the compiled core is absent: {missing}")
ROOT = Path(__file__).resolve().parents[1]
EOT = "<|endoftext|>"
TEXT = "the lowest lower newest widest, it's 12 naïve cafés — 日本 🙂\n\tindented line\n" * 8


def python_twin(tok: Tokenizer) -> Tokenizer:
    """The same tokenizer encoding with the Python path only (the reference), its caches its own."""
    twin = copy.copy(tok)
    twin._compiled, twin._python = None, Encoder(tok.ids, tok.merges, tok.inert, tok.pretokenizer)
    return twin


def same_ids(tok: Tokenizer, twin: Tokenizer, text: str | bytes, k: int | None = None) -> None:
    """encode, encode_ordinary and encode_iterable give the twin's ids (or raise its sentence), every special token allowed or not."""
    assert tok._compiled is not None
    calls = {
        "all": lambda t, text: t.encode(text, k, allowed_special="all"),
        "default": lambda t, text: t.encode(text, k),
        "ordinary": lambda t, text: t.encode_ordinary(text, k),
        "streamed": lambda t, text: list(
            t.encode_iterable([text[i : i + 7] for i in range(0, len(text), 7)] or [text], k, allowed_special="all")
        ),
    }
    for name, call in calls.items():
        try:
            expected = call(twin, text)
        except ValueError as e:  # a byte the vocabulary lacks, a disallowed special token: the same sentence
            with pytest.raises(ValueError) as raised:
                call(tok, text)
            assert str(raised.value) == str(e), name
            continue
        assert call(tok, text) == expected, name


def ours(pretokenizer: str = "gpt2", specials=(EOT,)) -> Tokenizer:
    corpus = pretokenize(TEXT + "".join(PIECES), pretokenizer=pretokenizer, special_tokens=list(specials))
    return Tokenizer.from_training(train(corpus, 400, special_tokens=list(specials)), pretokenizer=pretokenizer)


@pytest.fixture(scope="module")
def tokenizers(gpt2, openai_tokenizers, tmp_path_factory) -> dict[str, tuple[Tokenizer, Tokenizer]]:
    """(compiled, Python twin) for GPT-2's files, OpenAI's rank files, HuggingFace's tokenizer.json, a rank file of ours, ours."""
    folder = tmp_path_factory.mktemp("saved")
    trained = ours("o200k")
    trained.save(folder)
    rank_file = tmp_path_factory.mktemp("ranks") / "ours.tiktoken"
    rank_file.write_text("".join(f"{base64.b64encode(t).decode()} {i}\n" for i, t in trained.vocab.items() if t != EOT.encode()))
    made = {
        "gpt2": Tokenizer.from_files(gpt2 / "encoder.json", gpt2 / "vocab.bpe", [EOT]),
        "gpt2-no-specials": Tokenizer.from_files(gpt2 / "encoder.json", gpt2 / "vocab.bpe"),
        **openai_tokenizers,
        "huggingface": Tokenizer.load(folder / "tokenizer.json"),
        "tiktoken-ours": Tokenizer.load(rank_file, pretokenizer="cl100k", special_tokens=[EOT]),
        "ours-gpt2": ours("gpt2", (EOT, "<|s|>", "aa")),
        "ours-whitespace": ours("whitespace"),
        "ours-none": ours("none"),
        "ours-regex": ours(r"\w+|\W"),
    }
    return {name: (tok, python_twin(tok)) for name, tok in made.items()}


NAMES = ["gpt2", "gpt2-no-specials", "cl100k_base", "o200k_base", "huggingface", "tiktoken-ours", "ours-gpt2", "ours-whitespace", "ours-none", "ours-regex"]  # fmt: skip
STR_TEXTS = st.one_of(unicode_text(), st.lists(st.sampled_from([*PIECES, EOT, "<|s|>", "aa", EOT + EOT]), max_size=30).map("".join))
TEXTS = st.one_of(STR_TEXTS, any_bytes())


@needs_core
@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=TEXTS)
def test_ids_equal_the_python_paths(tokenizers, name, text):
    same_ids(*tokenizers[name], text)


@needs_core
@pytest.mark.parametrize("name", ["gpt2", "o200k_base", "ours-gpt2", "ours-regex"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS, k=st.integers(0, 500) | st.sampled_from([0, 1, 10**6]))
def test_the_first_k_merges_give_the_python_paths_ids(tokenizers, name, text, k):
    same_ids(*tokenizers[name], text, k)


@needs_core
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base", "ours-none"])
@pytest.mark.parametrize(
    "text",
    ["", EOT, "a" * 3000, "ab" * 2000, " " * 3000 + "x", "1" * 3000, "🙂" * 500, "\u0301" * 600, "x" + "é" * 2000, "\xff" * 40],
)
def test_empty_text_and_long_runs(tokenizers, name, text):
    same_ids(*tokenizers[name], text)  # pre-tokens past 128 bytes are merged with the heap
    same_ids(*tokenizers[name], text.encode("utf-8", "surrogateescape") + b"\xff\xc3")


@needs_core
def test_real_prose_encodes_the_same(tokenizers):
    from bpe.data.corpora import stdlib_prose

    text = stdlib_prose(200_000)
    for name in ("gpt2", "cl100k_base", "o200k_base"):
        tok, twin = tokenizers[name]
        assert tok.encode(text, allowed_special="all") == twin.encode(text, allowed_special="all"), name


@needs_core
def test_a_pickled_tokenizer_builds_its_compiled_encoder_again(tokenizers):
    tok, _ = tokenizers["ours-gpt2"]
    tok.encode(TEXT)  # something in the caches
    again = pickle.loads(pickle.dumps(tok))
    assert again._compiled is not None and again._compiled is not tok._compiled and again._python.words == {}
    assert again.encode(TEXT + EOT) == tok.encode(TEXT + EOT)


@needs_core
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base", "ours-gpt2"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=unicode_text())
def test_encode_to_numpy_is_the_array_the_core_makes_of_encodes_ids(tokenizers, name, text):
    tok, twin = tokenizers[name]
    array = tok.encode_to_numpy(text * 3, allowed_special="all")  # the core's bytes as uint32, no list between
    assert array.dtype.name == "uint32" and array.tolist() == twin.encode(text * 3, allowed_special="all")


@needs_core
def test_threads_encode_at_once_each_with_its_own_cache(tokenizers):
    """Texts past 8 KB are encoded without the GIL, each call with a state of its own: encode_batch's threads give
    the ids one thread gives, in order."""
    from bpe.data.corpora import stdlib_prose

    prose = stdlib_prose(400_000)
    texts = [prose[i : i + 20_000 + 997 * i % 7000] + EOT for i in range(0, 380_000, 19_000)]
    for name in ("cl100k_base", "o200k_base"):
        tok, twin = tokenizers[name]
        expected = [twin.encode(t, allowed_special="all") for t in texts]
        assert tok.encode_batch(texts, num_threads=4, allowed_special="all") == expected
        assert tok.encode_batch(texts, num_threads=1, allowed_special="all") == expected


@needs_core
@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(texts=st.lists(STR_TEXTS, max_size=12), threads=st.sampled_from([1, 3]))
def test_a_batch_in_one_call_to_the_core_is_each_texts_python_ids(tokenizers, name, texts, threads):
    """encode_many encodes a run of str texts in one call (lone surrogates and missing bytes left to Python as None):
    the batch is each text's ids from the Python path, in order, special tokens allowed or not."""
    tok, twin = tokenizers[name]
    expected = []
    for text in texts:
        try:
            expected.append(twin.encode(text, allowed_special="all"))
        except ValueError as e:  # a byte the vocabulary lacks: the batch says the same
            with pytest.raises(ValueError) as raised:
                tok.encode_batch(texts, allowed_special="all", num_threads=threads)
            assert str(raised.value) == str(e)
            return
    assert tok.encode_batch(texts, allowed_special="all", num_threads=threads) == expected
    try:
        ordinary = [twin.encode_ordinary(text) for text in texts]
    except ValueError:
        return
    assert tok.encode_ordinary_batch(texts, num_threads=threads) == ordinary


@needs_core
def test_encode_many_leaves_a_lone_surrogate_to_python_and_refuses_what_is_not_text(tokenizers):
    tok, _ = tokenizers["cl100k_base"]
    core, limit = tok._compiled, len(tok.merges)
    assert core.encode_many(["a b", "\ud800", "", "c"], limit) == [tok.encode("a b"), None, [], tok.encode("c")]
    assert core.encode_many((), limit) == []
    with pytest.raises(TypeError, match="str texts, not bytes"):
        core.encode_many(["a", b"b"], limit)
    assert tok.encode_ordinary_batch(["x \ud800 y"] * 3) == [tok.encode_ordinary("x \ud800 y")] * 3  # as tiktoken: U+FFFD


@needs_core
def test_a_list_of_ids_holds_one_reference_per_item(tokenizers):
    """A long list is made of shared int objects whose counts are raised once per id: each still counts every
    item, so dropping the list gives back exactly what it took."""
    tok, _ = tokenizers["gpt2"]
    text = "the the the cat sat on the mat. " * 4000
    first = tok.encode(text)
    the = max(set(first), key=first.count)  # ' the', shared with every list of gpt2's ids
    before = sys.getrefcount(the)
    again = tok.encode(text)
    assert sys.getrefcount(the) - before == again.count(the) > 1000
    del again
    assert sys.getrefcount(the) == before


@needs_core
@pytest.mark.parametrize("texts", [["the cat sat on the mat. " * 50] * 40, ["the", "", "the the", "\ud800 the"] * 300])
def test_a_batchs_lists_hold_one_reference_per_item(tokenizers, texts):
    """A batch's lists take their items with the references counted per id over every list (many ids) or one each
    (few): either way each object counts every item, and dropping the lists gives back exactly what they took."""
    tok, _ = tokenizers["gpt2"]
    first = tok.encode_ordinary_batch(texts, num_threads=1)
    the = tok.encode_ordinary(" the")[0] if len(texts) == 40 else tok.encode_ordinary("the")[0]
    the = next(i for ids in first for i in ids if i == the)  # the shared object itself
    before = sys.getrefcount(the)
    again = tok.encode_ordinary_batch(texts, num_threads=1)
    assert again == first
    assert sys.getrefcount(the) - before == sum(ids.count(the) for ids in again) > 100
    del again
    assert sys.getrefcount(the) == before


@needs_core
def test_a_special_tokens_id_alone_in_its_block_of_ints_is_made_before_the_list():
    """The list is made in one pass from the shared ints of the blocks the cache's ids were noted in: a special token's
    id, in a block no merge or byte reaches, is one of them."""
    vocab = {i: bytes([i]) for i in range(256)} | {1_000_003: b"<|s|>", 300: b"ab"}
    tok = Tokenizer(vocab, [(b"a", b"b")], ["<|s|>"], pretokenizer="gpt2")
    text = "<|s|>" * 130_000 + "ab a"
    ids = tok.encode(text, allowed_special="all")
    assert ids == python_twin(tok).encode(text, allowed_special="all")
    assert ids[0] == 1_000_003 and sys.getrefcount(ids[0]) > 130_000


@needs_core
def test_ids_past_the_shared_int_objects_are_made_one_by_one():
    """Ids of 2**20 and more (a vocabulary's ids may be any below 2**32) are made as ints of their own."""
    base = {i: bytes([i]) for i in range(256)}
    vocab = {i + 3_000_000_000: t for i, t in base.items()} | {7: b"ab", 2**20 + 5: b"abc"}
    tok = Tokenizer(vocab, [(b"a", b"b"), (b"ab", b"c")], pretokenizer="gpt2")
    text = "abc ab a " * 2000
    assert tok.encode(text) == python_twin(tok).encode(text)
    assert set(tok.encode(text)) == {7, 2**20 + 5, 3_000_000_000 + ord(" "), 3_000_000_000 + ord("a")}


@needs_core
@pytest.mark.parametrize("text", ["<" * 20_000, "<|" * 20_000 + EOT, ("<|endoftext" * 3000 + "|>") * 2, "x<" * 9000 + "<|s|>"])
def test_text_dense_with_a_special_tokens_first_byte_is_cut_as_the_python_path_cuts_it(tokenizers, text):
    """The search for special tokens skips from one place of their first byte to the next; where that byte is
    everywhere it hands over to the two-way search (linear however repetitive): the same ids either way."""
    same_ids(*tokenizers["ours-gpt2"], text)
    same_ids(*tokenizers["cl100k_base"], text)


# ---------------------------------------------------------------------------
# the merging itself, on merge lists no trainer makes

ALPHABET = [b"a", b"b", b"c"]


@st.composite
def odd_merges(draw):
    """Merges over a, b, c made in any order: pairs listed twice, parts that are no token yet (inert), a merge of
    (x, xy) ranked below the x + y that makes its part, and tokens equal to what a later merge makes."""
    tokens = list(ALPHABET)
    merges = []
    for _ in range(draw(st.integers(0, 12))):
        left, right = draw(st.sampled_from(tokens)), draw(st.sampled_from(tokens))
        merges.append((left, right))
        tokens.append(left + right)
    if merges and draw(st.booleans()):
        merges.insert(draw(st.integers(0, len(merges))), merges[-1])  # listed twice, at another rank
    if len(tokens) > 3 and draw(st.booleans()):  # ranked below the merge that makes its part: (ab, a) before (a, b)
        made = draw(st.integers(3, len(tokens) - 1))
        other = draw(st.sampled_from(ALPHABET))
        merges.insert(draw(st.integers(0, made - 3)), (tokens[made], other) if draw(st.booleans()) else (other, tokens[made]))
    if draw(st.booleans()):
        merges.insert(draw(st.integers(0, len(merges))), (b"zz", b"a"))  # a part that is no token: it never applies
    vocab = {i: bytes([i]) for i in range(256)}
    for token in tokens[3:]:
        if token not in vocab.values():
            vocab[len(vocab)] = token
    for left, right in merges:
        if left + right not in vocab.values() and left in vocab.values() and right in vocab.values():
            vocab[len(vocab)] = left + right
    return vocab, merges


@needs_core
@settings(max_examples=300, deadline=None)
@given(made=odd_merges(), word=st.lists(st.sampled_from(ALPHABET), max_size=300).map(b"".join), k=st.none() | st.integers(0, 14))
def test_merging_follows_the_python_rounds_on_any_merge_list(made, word, k):
    vocab, merges = made
    tok = Tokenizer(vocab, merges, pretokenizer="none")
    twin = python_twin(tok)
    assert tok.bpe(word, k) == twin.bpe(word, k)
    same_ids(tok, twin, word, k)


@needs_core
@pytest.mark.parametrize("word", [b"abab", b"ab" * 200])
def test_a_merge_ranked_below_the_one_that_makes_its_part_waits_for_the_next_round(word):
    """(ab, a) ranked before (a, b): the round of a+b merges every a b first, so ab + a never meets an a."""
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: b"aba"}
    tok = Tokenizer(vocab, [(b"ab", b"a"), (b"a", b"b")], pretokenizer="none")
    assert tok.bpe(word) == python_twin(tok).bpe(word) == (b"ab",) * (len(word) // 2)


# ---------------------------------------------------------------------------
# where the Python path encodes, and the same sentences


@needs_core
def test_a_lone_surrogate_and_a_missing_byte_say_the_same_sentence(tokenizers):
    tok, twin = tokenizers["gpt2"]
    same_ids(tok, twin, "ok \ud800 no")  # a str that UTF-8 cannot hold
    same_ids(tok, twin, "ok \udcff kept")  # surrogateescape's: the Python path encodes it
    small = Tokenizer({i: bytes([i]) for i in range(97, 123)}, [], pretokenizer="o200k")
    same_ids(small, python_twin(small), "hello world")  # the space is not in the vocabulary


@needs_core
def test_another_regex_version_pre_tokenizes_in_python_and_merges_compiled(monkeypatch, gpt2):
    monkeypatch.setattr(pretokenize_c.regex, "__version__", "2020.1.1")
    tok = Tokenizer.from_files(gpt2 / "encoder.json", gpt2 / "vocab.bpe", [EOT])
    assert tok._compiled is not None and tok._compiled.kind == -1
    same_ids(tok, python_twin(tok), TEXT + EOT + "".join(PIECES))


def test_without_the_core_the_python_path_gives_the_same_ids(gpt2):
    """BPE_CORE=0: the process has no compiled encoder and encodes every text the same."""
    texts = [TEXT, "".join(PIECES) + EOT, (b"".join(BAD_BYTES) + TEXT.encode()).decode("utf-8", "surrogateescape")]
    script = (
        "import json, sys\n"
        "from bpe import Tokenizer\n"
        "from bpe.core import missing\n"
        f"tok = Tokenizer.from_files({str(gpt2 / 'encoder.json')!r}, {str(gpt2 / 'vocab.bpe')!r}, [{EOT!r}])\n"
        "assert tok._compiled is None, 'compiled'\n"
        "texts = json.loads(sys.stdin.read())\n"
        "print(json.dumps([missing, [tok.encode(t.encode('utf-8', 'surrogateescape')) for t in texts]]))\n"
    )
    env = {"BPE_CORE": "0", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(texts, ensure_ascii=True),
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    why, ids = json.loads(done.stdout)
    assert why == "BPE_CORE=0 is set"
    tok = Tokenizer.from_files(gpt2 / "encoder.json", gpt2 / "vocab.bpe", [EOT])
    assert ids == [tok.encode(t.encode("utf-8", "surrogateescape")) for t in texts]
