"""Saving and loading: every format round-trips, other tools encode exactly as we do,
and a bad file gives a sentence naming the file and what is wrong.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import PRETOKENIZERS, pretokenize, train
from bpe.files import formats
from bpe.text.gpt2_bytes import byte_to_char, to_unicode, to_unicode_all
from bpe.text.pretokenizers import pretokenizer_of
from bpe.tokenizer.tokenizer import Tokenizer

SPECIAL = "<|endoftext|>"
CORPUS = (
    "The quick brown fox jumps over the lazy dog. It's the dog's day; they'll say we've won, I'm sure.\n"
    "Numbers: 12345, 3.14159, 2024-06-01 and 1,000,000 of them.   Multiple   spaces\tand tabs.\n\n"
    f"{SPECIAL}Naïve café owners — 日本語のテキスト — say 🙂 and ünïcödé.\n"
    "def tokenize(text):\n    return [t for t in text.split()]  # code, too\n"
) * 3
SAMPLES = [
    "Hello world",
    "The dog's owner said they'll've gone; I'D'VE known.",
    "  leading, trailing   and    multiple spaces  \n\n\t\ttabs\r\n",
    "numbers 1234567 3.14 -42 1,000 ٣٤٥ and 2024-06-01",
    "naïve café — 日本語 🙂 ünïcödé façade Ελληνικά",
    f"before{SPECIAL}after {SPECIAL} {SPECIAL}{SPECIAL}",
    "def f(x):\n    return x ** 2  # squares\n",
    "",
]


def trained(pretokenizer: str = "gpt2", num_merges: int = 150) -> Tokenizer:
    corpus = pretokenize(CORPUS, pretokenizer=pretokenizer, special_tokens=[SPECIAL])
    tok = Tokenizer.from_training(train(corpus, num_merges, special_tokens=[SPECIAL]), pretokenizer)
    made = [a + b for a, b in tok.merges]
    assert len(set(made)) == len(made), "the test corpus should give no two merges with the same bytes"
    return tok


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[Tokenizer, Path]:
    tok = trained()
    directory = tmp_path_factory.mktemp("tok")
    tok.save(directory)
    return tok, directory


# ---------------------------------------------------------------------------
# round trips through our own loaders


def test_train_writes_every_format(saved):
    _, directory = saved
    assert sorted(p.name for p in directory.iterdir()) == sorted([*formats.file_names(), formats.MANIFEST])
    assert {"merges.txt", "tokenizer.bpe.json", "tokenizer.json", "vocab.json", "tokenizer.tiktoken"} <= set(formats.file_names())


@pytest.mark.parametrize("name", ["tokenizer.bpe.json", "tokenizer.json", "merges.txt", "vocab.json", "."])
def test_every_format_loads_back_to_the_same_tokenizer(saved, name):
    tok, directory = saved
    loaded = Tokenizer.load(directory / name)
    assert loaded.merges == tok.merges
    assert loaded.special_tokens == tok.special_tokens == (SPECIAL,)
    assert loaded.pretokenizer.spelled == "gpt2"
    for text in SAMPLES:
        assert loaded.encode(text) == tok.encode(text)


def test_only_the_plain_format_keeps_the_counts(saved):
    tok, directory = saved
    assert Tokenizer.load(directory / "tokenizer.bpe.json").counts == tok.counts
    assert set(Tokenizer.load(directory / "tokenizer.json").counts) == {None}


@pytest.mark.parametrize("pretokenizer", list(PRETOKENIZERS))
def test_the_pattern_is_recorded_by_the_json_formats(tmp_path, pretokenizer):
    tok = trained(pretokenizer, num_merges=40)
    tok.save(tmp_path)
    for name in ("tokenizer.bpe.json", "tokenizer.json"):
        assert Tokenizer.load(tmp_path / name).pretokenizer == pretokenizer_of(pretokenizer)


def test_saving_the_first_k_merges(tmp_path):
    tok = trained()
    tok.save(tmp_path, k=10)
    loaded = Tokenizer.load(tmp_path)
    assert loaded.merges == tok.merges[:10] and loaded.counts == tok.counts[:10]
    assert loaded.encode(SAMPLES[1]) == tok.encode(SAMPLES[1], 10)


@settings(max_examples=200, deadline=None)
@given(
    merges=st.lists(st.tuples(st.binary(min_size=1, max_size=4), st.binary(min_size=1, max_size=4)), max_size=20),
    special_tokens=st.lists(st.sampled_from([SPECIAL, 'a"b\\c\n', "\x00vocab\x00", "\x00merges\x00", "é\u2028🙂"]), unique=True),
    counts=st.booleans(),
    pretokenizer=st.sampled_from(sorted(PRETOKENIZERS)),
)
def test_json_files_are_json_dumps_text_exactly(merges, special_tokens, counts, pretokenizer):
    """export writes its long JSON by hand (json's indented writer is slow): the text must be json.dumps's, character for character."""
    from bpe.train import build_vocab

    counts = list(range(len(merges))) if counts else None
    files = formats.files(merges, special_tokens, pretokenizer, counts)
    table = {}
    for i, token in sorted(build_vocab(merges, special_tokens).items()):
        table.setdefault(token.decode() if token in {t.encode() for t in special_tokens} else to_unicode(token), i)
    assert files["vocab.json"] == json.dumps(table, ensure_ascii=False, indent=1)
    document = json.loads(files["tokenizer.json"])
    assert files["tokenizer.json"] == json.dumps(document, ensure_ascii=False, indent=1)
    assert document["model"]["vocab"] == table
    assert document["model"]["merges"] == [[to_unicode(a), to_unicode(b)] for a, b in merges]
    assert [t["content"] for t in document["added_tokens"]] == special_tokens
    plain = json.loads(files["tokenizer.bpe.json"])
    rows = files["tokenizer.bpe.json"].split("\n")[1 : 1 + len(merges)]
    assert [row.rstrip(",") for row in rows] == [json.dumps(m, ensure_ascii=False) for m in plain["merges"]]
    assert [(bytes.fromhex(m["left"]), bytes.fromhex(m["right"]), m["count"]) for m in plain["merges"]] == [
        (a, b, c) for (a, b), c in zip(merges, counts or [None] * len(merges))
    ]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=6), max_size=20))
def test_tokens_converted_together_read_as_each_alone(tokens):
    """to_unicode_all decodes the tokens joined, then cuts them apart: each is GPT-2's table applied byte by byte."""
    assert to_unicode_all(tokens) == [to_unicode(t) for t in tokens] == ["".join(byte_to_char()[b] for b in t) for t in tokens]


def test_hex_or_byte_lists_both_load(tmp_path):
    document = {
        "format": "bpe-workbench",
        "version": 1,
        "pattern": "none",
        "special_tokens": [],
        "merges": [{"left": "61", "right": [98], "count": 3}, {"left": [97, 98], "right": "63", "count": None}],
    }
    path = tmp_path / "t.bpe.json"
    path.write_text(json.dumps(document))
    loaded = Tokenizer.load(path)
    assert loaded.merges == [(b"a", b"b"), (b"ab", b"c")] and loaded.counts == (3, None)


# ---------------------------------------------------------------------------
# other tools encode exactly as we do


@pytest.mark.parametrize("pretokenizer", list(PRETOKENIZERS))
def test_huggingface_loads_our_tokenizer_json_and_encodes_the_same(tmp_path, pretokenizer):
    tokenizers = pytest.importorskip("tokenizers")
    tok = trained(pretokenizer)
    tok.save(tmp_path)
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in SAMPLES + [CORPUS]:
        ids = hf.encode(text).ids
        assert ids == tok.encode(text), text
        if pretokenizer != "whitespace":  # whitespace drops spaces, in both
            assert hf.decode(ids, skip_special_tokens=False) == text


@pytest.mark.parametrize("pretokenizer", ["gpt2", "gpt4", "o200k"])
def test_tiktoken_with_our_merge_ranks_encodes_the_same(pretokenizer):
    tiktoken = pytest.importorskip("tiktoken")
    tok = trained(pretokenizer)
    # subtle: tiktoken ranks a pair by the rank of the token it makes, and a token's rank is its id;
    # so the 256 bytes get ranks 0..255 in byte order and each merge's token the rank 256 + its place
    ranks = {token: i for i, token in tok.vocab.items() if i < 256 + len(tok.merges)}
    encoding = tiktoken.Encoding(
        f"workbench-{pretokenizer}",
        pat_str=pretokenizer_of(pretokenizer).regex,
        mergeable_ranks=ranks,
        special_tokens={SPECIAL: tok.ids[SPECIAL.encode()]},
    )
    for text in SAMPLES + [CORPUS]:
        assert encoding.encode(text, allowed_special="all") == tok.encode(text), text
        assert encoding.decode(tok.encode(text)) == text


# ---------------------------------------------------------------------------
# bad files: one sentence naming the file


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


@pytest.fixture
def plain(saved) -> str:
    return (saved[1] / "tokenizer.bpe.json").read_text()


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "the file is empty"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object, got a list"),
        ('{"format": "other"}', "'format' should be 'bpe-workbench'"),
        ('{"format": "bpe-workbench", "version": 2}', "version 2 is not supported"),
        (
            '{"format": "bpe-workbench", "version": 1, "pattern": "gpt9", "special_tokens": [], "merges": []}',
            "Unknown pre-tokenizer 'gpt9'",
        ),
        (
            '{"format": "bpe-workbench", "version": 1, "pattern": "gpt2", "special_tokens": "<s>", "merges": []}',
            "'special_tokens' should be a list, got a string",
        ),
        (
            '{"format": "bpe-workbench", "version": 1, "pattern": "gpt2", "special_tokens": [], "merges": {}}',
            "'merges' should be a list, got an object",
        ),
        ('{"format": "bpe-workbench", "version": 1, "pattern": "gpt2", "special_tokens": []}', "the 'merges' field is missing"),
        (
            '{"format": "bpe-workbench", "version": 1, "pattern": "gpt2", "special_tokens": [], "merges": [[1, 2]]}',
            "merge 1 should be an object",
        ),
        (
            '{"format": "bpe-workbench", "version": 1, "pattern": "gpt2", "special_tokens": [], "merges": [{"left": "6g", "right": "61"}]}',
            "merge 1 'left' should be non-empty hex",
        ),
        (
            '{"format": "bpe-workbench", "version": 1, "pattern": "gpt2", "special_tokens": [], "merges": [{"left": [300], "right": "61"}]}',
            "merge 1 'left' should be",
        ),
        (
            '{"format": "bpe-workbench", "version": 1, "pattern": "gpt2", "special_tokens": [], "merges": [{"left": "61", "right": "62", "count": -1}]}',
            "merge 1 has count -1",
        ),
        (
            '{"format": "bpe-workbench", "version": 1, "pattern": "gpt2", "special_tokens": [], "merges": [{"left": "61", "right": "62", "count": true}]}',
            "merge 1 has count True",
        ),
        (
            '{"format": "bpe-workbench", "version": 1, "pattern": "gpt2", "special_tokens": [], "merges": [{"left": "6162", "right": "63"}]}',
            "merge 1 .* uses 'ab'",
        ),
    ],
)
def test_a_malformed_plain_file_says_what_is_wrong(tmp_path, content, message):
    path = write(tmp_path / "tokenizer.bpe.json", content)
    with pytest.raises(ValueError, match=message) as info:
        Tokenizer.load(path)
    assert str(info.value).startswith(str(path) + ": ")


@pytest.mark.parametrize("cut", [0.3, 0.7, 0.99])
def test_a_truncated_plain_file_says_so(tmp_path, plain, cut):
    path = write(tmp_path / "tokenizer.bpe.json", plain[: int(len(plain) * cut)])
    with pytest.raises(ValueError, match="not valid JSON .* looks truncated"):
        Tokenizer.load(path)


def test_a_truncated_hf_file_says_so(tmp_path, saved):
    text = (saved[1] / "tokenizer.json").read_text()
    path = write(tmp_path / "tokenizer.json", text[: len(text) // 2])
    with pytest.raises(ValueError, match="tokenizer.json: not valid JSON"):
        Tokenizer.load(path)


def gpt2_dir(tmp_path: Path, saved, merges: str | None = None, vocab: str | None = None) -> Path:
    directory = tmp_path / "gpt2"
    if merges is None:
        merges = (saved[1] / "merges.txt").read_text()
    if merges is not False:
        write(directory / "merges.txt", merges)
    write(directory / "vocab.json", vocab if vocab is not None else (saved[1] / "vocab.json").read_text())
    return directory


def test_missing_merges_txt(tmp_path, saved):
    directory = gpt2_dir(tmp_path, saved, merges=False)
    with pytest.raises(ValueError, match="no merges.txt here"):
        Tokenizer.load(directory)


def test_a_merges_line_with_one_token(tmp_path, saved):
    directory = gpt2_dir(tmp_path, saved, merges="#version: 0.2\nĠ t\nĠt\n")
    with pytest.raises(ValueError, match="merges.txt: line 3 should be two tokens separated by one space, got 'Ġt'"):
        Tokenizer.load(directory)


def test_a_character_outside_the_gpt2_byte_table(tmp_path, saved):
    directory = gpt2_dir(tmp_path, saved, merges="#version: 0.2\nĠ €\n")
    with pytest.raises(ValueError, match="merges.txt: line 2: '€' is not a GPT-2 byte character"):
        Tokenizer.load(directory)


def test_a_truncated_merges_txt(tmp_path, saved):
    text = (saved[1] / "merges.txt").read_text()
    directory = gpt2_dir(tmp_path, saved, merges=text[: len(text) // 2].rstrip("\n"))
    with pytest.raises(ValueError, match="does not end with a newline; the file looks truncated"):
        Tokenizer.load(directory)


def test_an_empty_merges_txt(tmp_path, saved):
    with pytest.raises(ValueError, match="merges.txt: the file is empty"):
        Tokenizer.load(gpt2_dir(tmp_path, saved, merges=""))


def test_merges_txt_from_another_tokenizer_is_refused_naming_the_merge(tmp_path, saved):
    directory = gpt2_dir(tmp_path, saved, merges="#version: 0.2\nq z\n")
    with pytest.raises(
        ValueError, match="vocab.json: merge 1 of .*merges.txt \\('q' \\+ 'z'\\) needs 'qz', which is not in the vocabulary"
    ):
        Tokenizer.load(directory)


def test_a_vocab_json_numbered_like_gpt2s_own_keeps_its_ids(tmp_path, saved):
    tok = saved[0]
    table = {c: i for i, c in enumerate(byte_to_char().values())}  # GPT-2's order: printable bytes first
    table.update({to_unicode(a + b): 256 + n for n, (a, b) in enumerate(tok.merges)})
    table[SPECIAL] = len(table)
    directory = gpt2_dir(tmp_path, saved, vocab=json.dumps(table))
    loaded = Tokenizer.load(directory)
    assert loaded.ids[b"!"] == 0 and loaded.ids[b"\x00"] == 188  # '!' first, as GPT-2 numbers them
    assert loaded.special_tokens == (SPECIAL,) and loaded.ids[SPECIAL.encode()] == len(table) - 1
    for text in SAMPLES:
        assert loaded.pieces(text) == tok.pieces(text)  # the same tokens, under other ids
        assert loaded.decode(loaded.encode(text)) == text


@pytest.mark.parametrize(
    "vocab, message",
    [
        ("[]", "expected a JSON object mapping tokens to ids, got a list"),
        ('{"a": "x"}', "the id of 'a' must be a whole number"),
        ('{"a": -1}', "the id of 'a' must be a whole number from 0 to 2\\*\\*32 - 1"),
        ('{"a": 0, "b": 0}', "id 0 is given to two tokens, 'a' and 'b'"),
    ],
)
def test_a_malformed_vocab_json(tmp_path, saved, vocab, message):
    directory = gpt2_dir(tmp_path, saved, merges="#version: 0.2\n", vocab=vocab)
    with pytest.raises(ValueError, match=message):
        Tokenizer.load(directory)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d["model"].update(type="WordPiece"), "model type is 'WordPiece'"),
        (lambda d: d["model"].update(merges=[["Ġ"]]), "merge 1 should be two tokens"),
        (lambda d: d["model"].update(end_of_word_suffix="</w>"), "plain byte-level BPE only"),
        (lambda d: d.update(pre_tokenizer={"type": "Whitespace"}), "pre_tokenizer .* is not one this tool knows"),
        (lambda d: d.pop("added_tokens"), "the 'added_tokens' field is missing"),
    ],
)
def test_a_malformed_hf_file(tmp_path, saved, change, message):
    document = json.loads((saved[1] / "tokenizer.json").read_text())
    change(document)
    path = write(tmp_path / "tokenizer.json", json.dumps(document))
    with pytest.raises(ValueError, match=message):
        Tokenizer.load(path)


def test_a_directory_without_a_tokenizer(tmp_path):
    with pytest.raises(ValueError, match="no tokenizer here"):
        Tokenizer.load(tmp_path)


def test_a_missing_path(tmp_path):
    with pytest.raises(ValueError, match="no such file or directory"):
        Tokenizer.load(tmp_path / "nope.json")


def test_not_utf8(tmp_path):
    path = write(tmp_path / "tokenizer.bpe.json", b'{"format": "\xff"}')
    with pytest.raises(ValueError, match="not UTF-8 text"):
        Tokenizer.load(path)


def test_loading_never_unpickles(tmp_path):
    import pickle

    path = write(tmp_path / "tokenizer.bpe.json", pickle.dumps({"format": "bpe-workbench"}))
    with pytest.raises(ValueError):
        formats.read(path)
