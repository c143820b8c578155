"""Loading other tools' files: HuggingFace tokenizer.json as `tokenizers` writes it, tiktoken rank files,
GPT-2 files in any id order -- each encodes as the tool that wrote it, and each bad file is one sentence
that names the file.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from bpe import PRETOKENIZERS, Tokenizer, pretokenize, train
from bpe.files import formats, load
from bpe.text.gpt2_bytes import to_unicode
from bpe.text.pretokenizers import pretokenizer_of

SPECIAL = "<|endoftext|>"
CORPUS = (
    "The quick brown fox jumps over the lazy dog. It's the dog's day; they'll say we've won.\n"
    "Numbers: 12345, 3.14159 and 1,000,000.   Multiple   spaces\tand tabs.\n\n"
    "naïve café — 日本語 🙂 ünïcödé.\ndef f(x):\n    return x ** 2  # code\n"
) * 20
SAMPLES = ["Hello world", "The dog's owner said they'll've gone.", "  spaces   and\ttabs\n\n", "naïve 日本語 🙂", "", "x" * 300]


def hf_trained(**options):
    """A tokenizers BPE trained on CORPUS with a byte-level pre-tokenizer, as a student would make one."""
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer(tokenizers.models.BPE())
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=400, show_progress=False, **options)
    hf.train_from_iterator([CORPUS], trainer=trainer)
    return hf


def ours(pretokenizer: str = "gpt2") -> Tokenizer:
    corpus = pretokenize(CORPUS, pretokenizer=pretokenizer, special_tokens=[SPECIAL])
    return Tokenizer.from_training(train(corpus, 120, special_tokens=[SPECIAL]), pretokenizer)


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def tiktoken_text(ranks: dict[bytes, int]) -> str:
    return "".join(f"{base64.b64encode(token).decode()} {rank}\n" for token, rank in ranks.items())


# ---------------------------------------------------------------------------
# HuggingFace tokenizer.json, as tokenizers writes it


def test_a_tokenizer_json_trained_by_huggingface_encodes_as_huggingface(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    hf = hf_trained(special_tokens=[SPECIAL], initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet())
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = Tokenizer.load(tmp_path / "tokenizer.json")
    assert tok.special_tokens == (SPECIAL,) and tok.ids[SPECIAL.encode()] == 0  # its ids: special tokens first
    assert tok.ids[b"!"] == 1 and tok.ids[b"\x00"] == 189  # then the bytes in GPT-2 character order
    for text in SAMPLES + [CORPUS, f"a{SPECIAL}b"]:
        assert tok.encode(text) == hf.encode(text).ids, text
        assert tok.decode(tok.encode(text)) == text


def test_a_byte_level_bpe_tokenizer_file_loads(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.ByteLevelBPETokenizer()  # the ready-made class: empty-string prefix and suffix options
    hf.train_from_iterator([CORPUS], vocab_size=400, special_tokens=[SPECIAL], show_progress=False)
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = Tokenizer.load(tmp_path / "tokenizer.json")
    for text in SAMPLES:
        assert tok.encode(text) == hf.encode(text).ids


def test_a_tokenizer_json_without_every_byte_says_which_byte_is_missing(tmp_path):
    hf = hf_trained()  # no initial alphabet: only the characters of CORPUS
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = Tokenizer.load(tmp_path / "tokenizer.json")
    assert tok.encode("The quick fox") == hf.encode("The quick fox").ids
    with pytest.raises(ValueError, match="byte 0x5a .* which this tokenizer's vocabulary lacks"):
        tok.encode("Zebra")  # no 'Z' in CORPUS; HuggingFace would drop it silently


@pytest.mark.parametrize("pretokenizer", list(PRETOKENIZERS))
def test_our_tokenizer_json_loads_back_with_its_pattern(tmp_path, pretokenizer):
    tok = ours(pretokenizer)
    tok.save(tmp_path)
    loaded = Tokenizer.load(tmp_path / "tokenizer.json")
    assert loaded.pretokenizer == pretokenizer_of(pretokenizer) and loaded.vocab == tok.vocab


def test_an_isolated_split_of_one_of_our_regexes_is_understood(tmp_path):
    tok = ours("gpt4")
    tok.save(tmp_path)
    document = json.loads((tmp_path / "tokenizer.json").read_text())
    document["pre_tokenizer"]["pretokenizers"][0].update(behavior="Isolated", invert=False)  # how HF writes GPT-4 style files
    loaded = load.parse_hf(json.dumps(document))
    assert loaded.pretokenizer.spelled == "cl100k"  # the file records the regex; it is read back under its name (gpt4 is an alias)


# ---------------------------------------------------------------------------
# tiktoken rank files


def test_a_tiktoken_file_encodes_as_tiktoken(tmp_path):
    tiktoken = pytest.importorskip("tiktoken")
    tok = ours()
    ranks = {token: i for i, token in tok.vocab.items() if token != SPECIAL.encode()}
    path = write(tmp_path / "ours.tiktoken", tiktoken_text(ranks))
    loaded = Tokenizer.load(path, special_tokens=[SPECIAL])
    assert loaded.merges == tok.merges and loaded.vocab == tok.vocab
    encoding = tiktoken.Encoding("ours", pat_str=PRETOKENIZERS["gpt2"].regex, mergeable_ranks=ranks, special_tokens={SPECIAL: len(ranks)})
    for text in SAMPLES + [CORPUS, f"a{SPECIAL}b"]:
        assert loaded.encode(text) == encoding.encode(text, allowed_special="all")


def test_rustbpe_exported_to_tiktoken_ranks_encodes_as_rustbpe(tmp_path):
    rustbpe = pytest.importorskip("rustbpe")
    trained = rustbpe.Tokenizer()
    trained.train_from_iterator([CORPUS], vocab_size=400, pattern=PRETOKENIZERS["gpt2"].regex)
    ranks = {bytes(token): rank for token, rank in trained.get_mergeable_ranks()}
    loaded = Tokenizer.load(write(tmp_path / "rust.tiktoken", tiktoken_text(ranks)))
    for text in SAMPLES + [CORPUS]:
        assert loaded.encode(text) == trained.encode(text)


def test_merges_are_recovered_from_ranks():
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257, b"bc": 258}
    assert load.merges_from_ranks(ranks) == [(b"a", b"b"), (b"ab", b"c"), (b"b", b"c")]


# ---------------------------------------------------------------------------
# GPT-2 files, this tool's saves, and finding the format


def test_a_tokenizer_in_another_id_order_saves_its_ids(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    hf = hf_trained(special_tokens=[SPECIAL], initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet())
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = Tokenizer.load(tmp_path / "tokenizer.json")
    paths = tok.save(tmp_path / "out")
    names = {p.name for p in paths}
    assert (
        "tokenizer.bpe.json" not in names and {"merges.txt", "tokenizer.json", "vocab.json"} <= names
    )  # no plain JSON: it cannot hold other ids
    for name in ("vocab.json", "tokenizer.json"):
        again = Tokenizer.load(tmp_path / "out" / name)
        assert again.vocab == tok.vocab and again.encode(CORPUS) == tok.encode(CORPUS)


def test_a_folder_with_one_tiktoken_file_or_openais_names_is_found(tmp_path):
    tok = ours()
    ranks = {token: i for i, token in tok.vocab.items() if i < 256 + len(tok.merges)}
    write(tmp_path / "a" / "x.tiktoken", tiktoken_text(ranks))
    assert Tokenizer.load(tmp_path / "a").merges == tok.merges
    tok.save(tmp_path / "b")
    (tmp_path / "b" / "vocab.json").rename(tmp_path / "b" / "encoder.json")
    (tmp_path / "b" / "merges.txt").rename(tmp_path / "b" / "vocab.bpe")
    for name in ("tokenizer.json", "tokenizer.bpe.json", "tokenizer.manifest.json"):  # as OpenAI ships GPT-2: no manifest
        (tmp_path / "b" / name).unlink()
    assert Tokenizer.load(tmp_path / "b").encode(CORPUS) == tok.encode(CORPUS)
    assert Tokenizer.load(tmp_path / "b" / "vocab.bpe").encode(CORPUS) == tok.encode(CORPUS)


def test_uploads_are_told_apart_by_name_and_content(tmp_path):
    tok = ours()
    texts = {name: text.encode() for name, text in tok_files(tok).items()}
    assert formats.read_uploads({"vocab.json": texts["vocab.json"], "merges.txt": texts["merges.txt"]}).format == "gpt2"
    assert formats.read_uploads({"tokenizer.json": texts["tokenizer.json"]}).format == "huggingface"
    assert formats.read_uploads({"t.bpe.json": texts["tokenizer.bpe.json"]}).format == "workbench"
    ranks = tiktoken_text({t: i for i, t in tok.vocab.items() if i < 256 + len(tok.merges)}).encode()
    assert (
        formats.read_uploads({"ranks": ranks}, pretokenizer="gpt4").pretokenizer.name == "cl100k"
    )  # no name to go by: the content decides


def tok_files(tok: Tokenizer) -> dict[str, str]:
    return formats.files(tok.merges, tok.special_tokens, tok.pretokenizer, tok.counts)


# ---------------------------------------------------------------------------
# bad files: one sentence, naming the file


def hf_document(change) -> str:
    tok = ours()
    document = json.loads(tok_files(tok)["tokenizer.json"])
    change(document)
    return json.dumps(document)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(normalizer={"type": "Lowercase"}), "it normalizes text first \\(Lowercase\\)"),
        (lambda d: d["pre_tokenizer"].update(add_prefix_space=True), "its ByteLevel pre-tokenizer adds a space before the text"),
        (lambda d: d["model"].update(byte_fallback=True), "model.byte_fallback is true"),
        (lambda d: d["model"].update(continuing_subword_prefix="##"), "model.continuing_subword_prefix is '##'"),
        (
            lambda d: d["added_tokens"][0].update(lstrip=True),
            "added token '<\\|endoftext\\|>' sets lstrip; this tool matches special tokens exactly",
        ),
        (lambda d: d["model"]["vocab"].pop("Ġt"), "merge \\d+ \\('Ġ' \\+ 't'\\) needs 'Ġt', which its vocab lacks"),
        (
            lambda d: d["model"]["vocab"].update({"zzzq": 9999}),
            "vocab entry 'zzzq' is neither a byte, nor made by a merge, nor an added token",
        ),
        (lambda d: d["pre_tokenizer"].update(type="Whitespace"), "pre_tokenizer .* is not one this tool knows"),
    ],
)
def test_a_hf_file_this_tool_cannot_match_says_why(change, message):
    with pytest.raises(ValueError, match="^tokenizer.json: " + message):
        load.parse_hf(hf_document(change))


def valid_ranks() -> dict[bytes, int]:
    return {bytes([b]): b for b in range(256)} | {b"ab": 256}


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "the file holds no tokens"),
        ("YQ== 0 extra\n", "line 1 should be a base64 token and a rank"),
        ("YQ== zero\n", "line 1 should be a base64 token and a rank"),
        ("@@@ 0\n", "line 1: '@@@' is not base64"),
        ("YQ== 0\nYQ== 1\n", "line 2: token 'a' is listed twice"),
        ("YQ== 0\nYg== 0\n", "line 2: rank 0 is given to two tokens, 'a' and 'b'"),
        (tiktoken_text({b"a": 0}), "byte 0x00 has no rank"),
        (tiktoken_text(valid_ranks() | {b"xyz": 300}), "token 'xyz' \\(rank 300\\) cannot be made by joining two tokens of lower rank"),
    ],
)
def test_a_bad_tiktoken_file_says_what_is_wrong(tmp_path, text, message):
    path = write(tmp_path / "bad.tiktoken", text)
    with pytest.raises(ValueError, match=f"^{path}: {message}"):
        Tokenizer.load(path)


@pytest.mark.parametrize(
    "files, message",
    [
        ({}, "No file given"),
        ({"vocab.json": b"{}"}, "vocab.json: a GPT-2 tokenizer needs merges.txt too"),
        ({"merges.txt": b"#version: 0.2\n"}, "merges.txt: a GPT-2 tokenizer needs vocab.json too"),
        ({"a.json": b"{}", "b.json": b"{}"}, "a.json, b.json: expected one tokenizer file"),
        ({"tokenizer.json": b"\xff\xfe"}, "tokenizer.json: not UTF-8 text"),
        ({"notes.json": b'{"hello": 1}'}, "notes.json: not a tokenizer file this tool knows"),
        ({"picture.png": b"\x89PNG"}, "picture.png: not UTF-8 text"),
    ],
)
def test_bad_uploads_are_one_sentence(files, message):
    with pytest.raises(ValueError, match="^" + message):
        formats.read_uploads(files)


def test_the_same_text_under_a_different_name_is_judged_by_its_content():
    tok = ours()
    text = tok_files(tok)["tokenizer.json"].encode()
    assert formats.read_uploads({"download (3)": text}).format == "huggingface"
    with pytest.raises(ValueError, match="^gpt2-vocab: line 1 should be a base64 token and a rank"):
        formats.read_uploads({"gpt2-vocab": b"Hello there\n"})


def test_vocab_json_tokens_are_written_as_gpt2_does():
    tok = ours()
    table = json.loads(tok_files(tok)["vocab.json"])
    assert table[to_unicode(b" the")] == tok.ids[b" the"] and table[SPECIAL] == tok.ids[SPECIAL.encode()]
