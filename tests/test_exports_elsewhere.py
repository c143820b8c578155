"""Exports a user loads elsewhere without help: tiktoken (a rank file, its .json and three lines of Python),
HuggingFace `tokenizers`, and `transformers.AutoTokenizer` (tokenizer_config.json, special_tokens_map.json),
each run for real and giving exactly our ids.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_export import CORPUS, SPECIAL  # the same mixed text: prose, numbers, code, CJK, emoji, a special token

from bpe import Tokenizer, pretokenize, train
from bpe.cli import main
from bpe.files import export, formats, openai

SAMPLES = [
    "Hello world",
    "  leading, trailing   and    spaces  \n\n\t\ttabs\r\n",
    "naïve café — 日本語 🙂",
    f"a{SPECIAL}b {SPECIAL}",
    "",
    CORPUS,
]
PRETOKENIZERS = ["gpt2", "cl100k", "o200k", "none", r"\w+|[^\w\s]+"]  # the last: a regex of the user's, whose gaps are pieces too


def trained(pretokenizer: str, merges: int = 120) -> Tokenizer:
    corpus = pretokenize(CORPUS, pretokenizer=pretokenizer, special_tokens=[SPECIAL])
    return Tokenizer.from_training(train(corpus, merges, special_tokens=[SPECIAL]), pretokenizer)


def tiktoken_ids(folder: Path, texts: list[str], tmp_path: Path) -> list[list[int]]:
    """Run the three lines the export gives (export.TIKTOKEN_PYTHON) in the folder, with the real tiktoken, and encode texts."""
    (tmp_path / "texts.json").write_text(json.dumps(texts))
    code = (
        export.TIKTOKEN_PYTHON
        + f"print(json.dumps([enc.encode(t, allowed_special='all') for t in json.load(open({str(tmp_path / 'texts.json')!r}))]))"
    )
    env = os.environ | {"TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken-cache")}
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("pretokenizer", PRETOKENIZERS)
def test_the_three_lines_build_a_tiktoken_encoding_that_gives_our_ids(tmp_path, pretokenizer):
    pytest.importorskip("tiktoken")
    tok = trained(pretokenizer)
    tok.save(tmp_path / "tok")
    assert tiktoken_ids(tmp_path / "tok", SAMPLES, tmp_path) == [tok.encode(t) for t in SAMPLES]


@pytest.mark.parametrize("pretokenizer", PRETOKENIZERS)
def test_huggingface_tokenizers_loads_the_export_with_our_ids(tmp_path, pretokenizer):
    tokenizers = pytest.importorskip("tokenizers")
    tok = trained(pretokenizer)
    tok.save(tmp_path)
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in SAMPLES:
        assert hf.encode(text).ids == tok.encode(text), text


def test_gpt2_exported_to_tiktoken_is_openais_r50k_base_byte_for_byte(gpt2, tmp_path):
    tok = Tokenizer.load(gpt2)
    files = tok.files()
    assert openai.checked(openai.R50K[0], files["tokenizer.tiktoken"].encode()) is None  # OpenAI's own r50k_base.tiktoken
    spec = json.loads(files["tokenizer.tiktoken.json"])
    assert spec["encoding"]["special_tokens"] == {SPECIAL: 50256}
    tok.save(tmp_path / "gpt2")
    assert tiktoken_ids(tmp_path / "gpt2", SAMPLES, tmp_path) == [tok.encode(t) for t in SAMPLES]


def test_a_huggingface_trained_tokenizer_exports_to_tiktoken_in_its_own_ids(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer(tokenizers.models.BPE())
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=400, show_progress=False, special_tokens=[SPECIAL], initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet()
    )
    hf.train_from_iterator([CORPUS], trainer=trainer)
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = Tokenizer.load(tmp_path / "tokenizer.json")
    assert tok.ids[SPECIAL.encode()] == 0  # HuggingFace's ids: special tokens first
    tok.save(tmp_path / "out")
    assert tiktoken_ids(tmp_path / "out", SAMPLES, tmp_path) == [hf.encode(t).ids for t in SAMPLES]


def test_ids_that_cannot_be_ranks_write_no_tiktoken_files_and_the_rest_still(tmp_path):
    tok = trained("gpt2", 3)
    a, b, c = (tok.ids[x + y] for x, y in tok.merges)
    swapped = dict(tok.vocab) | {a: tok.vocab[c], c: tok.vocab[a]}  # the first merge's token after the third's: not rank order
    other = Tokenizer(swapped, tok.merges, [SPECIAL])
    names = [p.name for p in other.save(tmp_path)]
    assert "tokenizer.tiktoken" not in names and "tokenizer.json" in names and "vocab.json" in names


def test_the_tiktoken_export_loads_back_with_its_pattern_and_special_tokens(tmp_path):
    tok = trained("o200k")
    tok.save(tmp_path)
    for where in (tmp_path / "tokenizer.tiktoken", tmp_path / "tokenizer.tiktoken.json"):
        (tmp_path / "only").mkdir(exist_ok=True)
        (tmp_path / "only" / where.name).write_bytes(where.read_bytes())
    back = Tokenizer.load(tmp_path / "only")
    assert (back.pretokenizer.name, back.special_tokens, back.vocab) == ("o200k", (SPECIAL,), tok.vocab)
    uploaded = formats.read_uploads({p.name: p.read_bytes() for p in (tmp_path / "only").iterdir()})
    assert (uploaded.format, uploaded.pretokenizer.name, uploaded.special_tokens) == ("tiktoken", "o200k", (SPECIAL,))
    code = main(["encode", str(tmp_path / "only"), "--pretokenizer", "gpt2", "--text", "hi"])
    assert code == 2  # its .json records the pre-tokenizer: the option is refused, not ignored
    spec = json.loads((tmp_path / "only" / "tokenizer.tiktoken.json").read_text())
    (tmp_path / "only" / "tokenizer.tiktoken.json").write_text(json.dumps(spec | {"sha256": "0" * 64}))
    with pytest.raises(ValueError, match="tokenizer.tiktoken.json: it describes another rank file .* do not belong together"):
        Tokenizer.load(tmp_path / "only")


# ---------------------------------------------------------------------------
# transformers


def test_the_config_files_name_the_end_of_text_as_eos_and_pad(tmp_path):
    tok = trained("gpt2")
    files = tok.files()
    config, roles = json.loads(files["tokenizer_config.json"]), json.loads(files["special_tokens_map.json"])
    assert roles == {"bos_token": SPECIAL, "eos_token": SPECIAL, "unk_token": SPECIAL, "pad_token": SPECIAL}
    assert config["tokenizer_class"] == "PreTrainedTokenizerFast" and config["eos_token"] == config["pad_token"] == SPECIAL
    assert config["added_tokens_decoder"] == {
        str(tok.ids[SPECIAL.encode()]): {
            "content": SPECIAL,
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": True,
        }
    }
    assert config["clean_up_tokenization_spaces"] is False  # else decode would eat the space before punctuation
    assert json.loads(trained("gpt2").files()["special_tokens_map.json"]) == roles


def test_transformers_autotokenizer_has_eos_and_pad_and_gives_our_ids(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    transformers = pytest.importorskip("transformers")
    tok = trained("gpt2")
    tok.save(tmp_path)
    hf = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    eot = tok.ids[SPECIAL.encode()]
    assert (hf.eos_token, hf.eos_token_id, hf.pad_token_id, hf.bos_token_id) == (SPECIAL, eot, eot, eot)
    for text in SAMPLES:
        ids = hf(text)["input_ids"]
        assert ids == tok.encode(text), text
        assert hf.decode(ids) == text
    batch = hf(["a b", "the quick brown fox"], padding=True)["input_ids"]
    assert batch[0][-1] == eot and len(batch[0]) == len(batch[1])


def test_the_docs_give_the_three_lines_the_export_gives():
    # the docs' snippet runs as written (the snippet test): it saves a tokenizer to exported/ first and reads from there
    docs = (Path(__file__).resolve().parents[1] / "docs" / "library.md").read_text()
    lines = [line for line in export.TIKTOKEN_PYTHON.splitlines() if line]
    block = docs[docs.index(lines[0]) :].split("```")[0]
    shown = [line.replace("exported/", "") for line in block.splitlines() if line and not line.startswith("tok.save(")]
    assert shown == lines
