"""The Rust trainers ours is checked against, when they happen to be installed: one adapter each.

What it does: train HuggingFace `tokenizers`, karpathy's `rustbpe`, `gigatoken`
and `ffbpe` on the same text ours trains on (the text cut at special tokens,
GPT-2's regex) and return their merges as bytes in a bpe.lab.race.RaceResult, so the
race compares them with ours by `first_difference`. Ours makes the same merges
under each tool's own tie-break rule (`REFERENCE_RULES`).

An adapter is three things: a name (its line on the chart), `<tool>_available()`
(an import check, nothing imported) and `<tool>_reference(text, num_merges,
special_tokens) -> RaceResult`; serve/jobs.py lists them in REFERENCES.

What it does not do: time ours (race.py), or install anything.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from time import perf_counter, process_time

from ..events import StopReason
from ..files.load import merges_from_ranks
from ..text.gpt2_bytes import from_unicode
from ..text.pretokenizers import GPT2, split_on_special
from ..text.tally import pretokenize
from .race import RaceResult

PRETOKENIZER = GPT2  # what the Rust references pre-tokenize with (their GPT-2 regex): ours must be it to compare

# ---------------------------------------------------------------------------
# reference trainers in Rust, when they happen to be installed

HF = "hf tokenizers"
RUSTBPE = "rustbpe"
GIGATOKEN = "gigatoken"
FFBPE = "ffbpe"
# the tie-break rule under which ours makes the same merges as each, as the race page trains them
REFERENCE_RULES = {HF: "huggingface", RUSTBPE: "rustbpe", GIGATOKEN: "huggingface", FFBPE: "cs336"}
# their own names for the rules: which of ours each one is (None: no rule of ours; see gigatoken_reference)
GIGATOKEN_RULES = {"huggingface": "huggingface", "raw_token_ids": "rustbpe", "assembled_bytes": None}
FFBPE_RULES = {
    ("largest_content", "raw"): "cs336",
    ("smallest_pair_id", "raw"): "rustbpe",
    ("smallest_pair_id", "byte_level"): "huggingface",
}


def hf_available() -> bool:
    return importlib.util.find_spec("tokenizers") is not None


def rustbpe_available() -> bool:
    return importlib.util.find_spec("rustbpe") is not None


def gigatoken_available() -> bool:
    return importlib.util.find_spec("gigatoken") is not None


def ffbpe_available() -> bool:
    return importlib.util.find_spec("ffbpe") is not None


@contextmanager
def clocks() -> Iterator[dict[str, float]]:
    """Both clocks of a reference tool's training: "processor", the seconds of processor this process spent (its
    threads too: the clock ours are timed on, so the race compares like with like), and "wall", wall-clock seconds
    (a tool that uses several cores spends more processor than wall-clock time)."""
    measured: dict[str, float] = {}
    wall, processor = perf_counter(), process_time()
    yield measured
    measured["processor"], measured["wall"] = process_time() - processor, perf_counter() - wall


def timed_result(tool: str, merges: tuple, measured: dict[str, float]) -> RaceResult:
    return RaceResult(
        tool, merges, (), (), {"train (all phases)": measured["processor"]}, {}, False, StopReason.VOCAB_SIZE, wall_s=measured["wall"]
    )


def hf_reference(text: str, num_merges: int, special_tokens: Sequence[str] = ()) -> RaceResult:
    """Train HuggingFace's Rust BPE (byte-level, GPT-2 regex) on the same text; its merges as bytes.

    It gets the pre-tokens ours gets: the text is cut at special tokens first
    (its trainer does not), each piece is one sequence, and ByteLevel splits it
    with GPT-2's regex. Its vocab_size counts the special tokens and the 256
    bytes, so num_merges new tokens are asked for. The text must be valid
    Unicode (no lone surrogates): decode bytes with 'replace' for both. Its time
    is processor time (of every core it uses; wall_s says wall-clock) and includes its own pre-tokenization; it
    records no per-merge times or counts. Ours makes the same merges with
    tie_break="huggingface". subtle: it trains with train_from_iterator over the
    documents, as the README says, so ours needs no split_lines; its
    Tokenizer.train(files) would read each line as a sequence (split_lines=True).
    """
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    with clocks() as measured:
        tokenizer = Tokenizer(models.BPE())
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        trainer = trainers.BpeTrainer(
            vocab_size=256 + len(special_tokens) + num_merges,
            special_tokens=list(special_tokens),
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        tokenizer.train_from_iterator(split_on_special(text, special_tokens), trainer=trainer)
    merges = []
    for merge in json.loads(tokenizer.to_str())["model"]["merges"]:
        left, right = merge.split(" ") if isinstance(merge, str) else merge
        merges.append((from_unicode(left), from_unicode(right)))
    return timed_result(HF, tuple(merges), measured)


def rustbpe_reference(text: str, num_merges: int, special_tokens: Sequence[str] = ()) -> RaceResult:
    """Train karpathy's rustbpe on the same text with GPT-2's regex; its merges as bytes.

    As for hf_reference, the text is cut at special tokens and each piece is one
    sequence (rustbpe knows no special tokens: its vocab_size is 256 + merges).
    It reports tokens and ranks, not pairs, so each merge is recovered the way
    tiktoken would build its token (load.merges_from_ranks). Ours makes the same
    merges with tie_break="rustbpe".
    """
    import rustbpe

    with clocks() as measured:
        tokenizer = rustbpe.Tokenizer()
        tokenizer.train_from_iterator(split_on_special(text, special_tokens), vocab_size=256 + num_merges, pattern=PRETOKENIZER.regex)
    ranks = {bytes(token): rank for token, rank in tokenizer.get_mergeable_ranks()}
    merges = tuple(merges_from_ranks(ranks))
    return timed_result(RUSTBPE, merges, measured)


def gigatoken_reference(text: str, num_merges: int, special_tokens: Sequence[str] = (), tie_breaking: str = "huggingface") -> RaceResult:
    """Train gigatoken (0.10, Rust, parallel) on the same text; its merges as bytes.

    Its `train_bpe` cuts its input at one separator and splits each document with
    GPT-2's regex; the documents ours sees (the text cut at special tokens) are
    joined with a separator the text does not hold. Its vocab_size counts the 256
    bytes and the special tokens. Its tie_breaking rules: "huggingface" makes the
    merges of ours under tie_break="huggingface", "raw_token_ids" those under
    "rustbpe", and "assembled_bytes" takes the tied pair whose (left, right) bytes
    are the smallest -- the opposite of cs336's greatest, a rule ours does not have.
    """
    import gigatoken

    separator = _separator(text)
    data = separator.join(split_on_special(text, special_tokens)).encode("utf-8", "replace")
    with clocks() as measured, _quiet():  # it prints progress from Rust, and panics when stdout is a closed pipe (a worker's)
        _, merges = gigatoken.train_bpe(
            data, 256 + len(special_tokens) + num_merges, list(special_tokens), tie_breaking, separator.encode()
        )
    merges = tuple((bytes(a), bytes(b)) for a, b in merges)
    return timed_result(GIGATOKEN, merges, measured)


def ffbpe_reference(
    text: str, num_merges: int, special_tokens: Sequence[str] = (), tie_break: str = "largest_content", initial_alphabet: str = "raw"
) -> RaceResult:
    """Train ffbpe (0.1.10, Rust) on ours's own pre-token counts; its merges as bytes.

    Its BpeTrainer takes a word-frequency inventory, so it is given exactly the
    pre-tokens ours trains on (as text: invalid UTF-8 replaced, as for the others).
    Its rules: tie_break="largest_content" makes the merges of ours under "cs336";
    "smallest_pair_id" those under "rustbpe" with initial_alphabet="raw" (bytes
    numbered 0-255) and under "huggingface" with "byte_level" (GPT-2's order of
    the bytes). Its vocab_size counts the 256 bytes and the special tokens.
    """
    import tempfile

    from ffbpe import BpeTrainer

    words: dict[str, int] = {}
    for word, count in pretokenize(text, special_tokens=special_tokens).counts.items():
        key = word.decode("utf-8", "replace")
        words[key] = words.get(key, 0) + count
    with clocks() as measured:
        trainer = BpeTrainer(list(special_tokens), tie_break=tie_break, initial_alphabet=initial_alphabet)
        trainer.add_words(words)
        trainer.train(256 + len(special_tokens) + num_merges)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "merges.txt"
        trainer.validate_model().save_merges_txt(path, format="gpt2")
        lines = path.read_text(encoding="utf-8").splitlines()
    merges = []
    for n, line in enumerate(lines):  # 'Ġ t => 2940': the pair in GPT-2's byte-to-unicode form, then its count
        pair = line.split(" => ")[0].split(" ")
        if len(pair) == 2 and not (n == 0 and line.startswith("#version")):  # subtle: '# # => 12' is a merge of '#' and '#'
            merges.append((from_unicode(pair[0]), from_unicode(pair[1])))
    return timed_result(FFBPE, tuple(merges), measured)


def _separator(text: str) -> str:
    """A document separator that does not occur in text."""
    n = 0
    while f"<|doc{n}|>" in text:
        n += 1
    return f"<|doc{n}|>"


@contextmanager
def _quiet() -> Iterator[None]:
    """The process's stdout and stderr (file descriptors 1 and 2) sent to /dev/null for the block."""
    import sys

    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)
