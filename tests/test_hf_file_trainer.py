"""HuggingFace's trainer on text that holds special tokens (issue 26.9), checked against the real `tokenizers`.

Its BpeTrainer never looks for special tokens in what it trains on (Tokenizer.train feeds each
sequence to the normalizer and pre-tokenizer only): `<|endoftext|>` between stories is counted as
the pre-tokens '<|', 'endoftext', '|>'. Ours cuts the text at special tokens, so the two part within
a few merges. The README's recipe reproduces it: special_tokens=[] (their text counted as text) and
vocab_size less their number, with tie_break="huggingface" (and split_lines=True for train(files)).
"""

from __future__ import annotations

import json
import random

import pytest

from bpe import ALGORITHMS, Tokenizer, train_bpe, train_bpe_text
from bpe.cli import main
from bpe.text.gpt2_bytes import from_unicode
from bpe.text.pretokenizers import split_on_special

tokenizers = pytest.importorskip("tokenizers")

SPECIAL = "<|endoftext|>"
NUM_MERGES = 100
STORY = (
    "once upon a time a little fox found a red ball in the garden and she ran to her mother to show her what "
    "she had found; they played until the sun went down and then they slept under the old oak tree"
)
WORDS = STORY.split(" ")


def stories(n: int = 160, seed: int = 26) -> str:
    """Short stories separated by <|endoftext|>, on a line of its own or inline, as TinyStories and OpenWebText dumps are."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        lines = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 10))) + rng.choice([".", "!", ""]) for _ in range(rng.randint(1, 4))
        ]
        out.append("\n".join(lines) + rng.choice(["\n" + SPECIAL + "\n", " " + SPECIAL + " ", SPECIAL]))
    return "".join(out)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("stories") / "stories.txt"
    path.write_text(stories(), encoding="utf-8")
    return path


def huggingface(special_tokens: list[str]):
    tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE())
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=256 + len(special_tokens) + NUM_MERGES,
        special_tokens=special_tokens,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    return tokenizer, trainer


def merges_of(tokenizer) -> list[tuple[bytes, bytes]]:
    merges = json.loads(tokenizer.to_str())["model"]["merges"]
    return [tuple(from_unicode(p) for p in (m.split(" ") if isinstance(m, str) else m)) for m in merges]


@pytest.fixture(scope="module")
def hf_file_merges(corpus):
    """Tokenizer.train([file]) with BpeTrainer(special_tokens=['<|endoftext|>']): what a user of tokenizers runs."""
    tokenizer, trainer = huggingface([SPECIAL])
    tokenizer.train([str(corpus)], trainer)
    assert tokenizer.token_to_id(SPECIAL) == 0  # it is a special token there, at id 0
    return merges_of(tokenizer)


def first_difference(a, b) -> int | None:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None if len(a) == len(b) else min(len(a), len(b)))


def test_cutting_at_special_tokens_parts_from_huggingfaces_file_trainer_within_a_few_merges(corpus, hf_file_merges):
    assert len(hf_file_merges) == NUM_MERGES
    _, cut = train_bpe(corpus, 256 + 1 + NUM_MERGES, [SPECIAL], tie_break="huggingface", split_lines=True, workers=1)
    first = first_difference(cut, hf_file_merges)
    assert first is not None and first < 20
    assert hf_file_merges[first] == (b"<", b"|")  # the special token's text, merged as text


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_the_recipe_reproduces_huggingfaces_file_trainer_merge_for_merge(corpus, hf_file_merges, algorithm):
    vocab, merges = train_bpe(corpus, 256 + NUM_MERGES, [], algorithm=algorithm, tie_break="huggingface", split_lines=True, workers=1)
    assert first_difference(merges, hf_file_merges) is None
    tok = Tokenizer(vocab, merges, special_tokens=[SPECIAL])  # the special token, at the next id
    assert tok.encode(f"the fox{SPECIAL}") == [*tok.encode("the fox"), 256 + NUM_MERGES]


def test_train_from_iterator_counts_special_text_too_and_cut_documents_are_ours_with_special_tokens(corpus):
    text = corpus.read_text(encoding="utf-8")
    whole, trainer = huggingface([SPECIAL])
    whole.train_from_iterator([text], trainer)
    _, recipe = train_bpe_text(text, 256 + NUM_MERGES, [], tie_break="huggingface")
    assert first_difference(recipe, merges_of(whole)) is None
    cut, trainer = huggingface([SPECIAL])
    cut.train_from_iterator(split_on_special(text, [SPECIAL]), trainer)  # as bpe.lab.references.hf_reference gives it the text
    _, ours = train_bpe_text(text, 256 + 1 + NUM_MERGES, [SPECIAL], tie_break="huggingface")
    assert first_difference(ours, merges_of(cut)) is None


def test_the_recipe_on_the_command_line(corpus, hf_file_merges, tmp_path, capsys):
    out = tmp_path / "hf"
    code = main(
        ["train", str(corpus), "--vocab-size", str(256 + NUM_MERGES), "--tie-break", "huggingface", "--split-lines", "--out", str(out)]
    )
    assert code == 0, capsys.readouterr().err
    assert first_difference(Tokenizer.load(out).merges, hf_file_merges) is None
    capsys.readouterr()
    assert main(["encode", str(out), "--special-token", SPECIAL, "--text", f"the fox{SPECIAL}"]) == 0
    assert capsys.readouterr().out.split()[-1] == str(256 + NUM_MERGES)
