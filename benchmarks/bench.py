"""Core benchmarks: figures printed, not asserted. Results go in BENCHMARKS.md.

    python benchmarks/bench.py                     # everything
    python benchmarks/bench.py --only cs336        # one section: cs336, pretokenize, big, hf, rustbpe

cs336:       each algorithm, train_bpe(corpus.en, 500, ['<|endoftext|>']) end to end (best of 3)
pretokenize: MB/s with 1..N workers on the big corpus
big:         heap trainer end to end on the big corpus to vocab 10,000 with N workers
hf:          HuggingFace tokenizers trained the same way on the same file (if installed)
rustbpe:     rustbpe (karpathy) on the same file, cut at <|endoftext|>, GPT-2 regex (if installed)
rules:       training time under each tie-break rule (heap trainer), next to the real trainer each
             rule reproduces, on corpus.en (vocab 500) and 2 MB of stdlib prose (vocab 5,000)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bpe import (  # noqa: E402
    ALGORITHMS,
    TIE_BREAKS,
    pretokenize,
    pretokenize_file,
    train,
    train_bpe,
)
from bpe.data.corpora import stdlib_prose  # noqa: E402
from bpe.lab import references as refs  # noqa: E402

CS336 = ROOT.parent / "shared" / "cs336" / "corpus.en"
BIG = ROOT / "benchmarks" / "data" / "corpus50.txt"
SPECIAL = ["<|endoftext|>"]


def best_of(n: int, f) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def ensure_big(mb: int) -> Path:
    if not BIG.exists():
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_corpus.py"), "--mb", str(mb), "--out", str(BIG)], check=True)
    return BIG


def cs336() -> None:
    if not CS336.exists():
        print("cs336: ../shared/cs336/corpus.en not found; skipped")
        return
    print("## corpus.en, vocab 500, <|endoftext|> (end to end, best of 3)")
    for name in ALGORITHMS:
        runs = 1 if name == "naive" else 3
        s = best_of(runs, lambda name=name: train_bpe(CS336, 500, SPECIAL, algorithm=name))
        print(f"{name:<11} {s:7.3f} s")


def pretokenize_speed() -> None:
    path = ensure_big(50)
    mb = path.stat().st_size / 1e6
    print(f"## pre-tokenization of {path.name} ({mb:.1f} MB), gpt2 pattern, special <|endoftext|>")
    base = None
    for w in range(1, (os.cpu_count() or 1) + 1):
        s = best_of(2, lambda w=w: pretokenize_file(path, special_tokens=SPECIAL, workers=w))
        base = base or s
        print(f"workers={w}: {s:6.2f} s  {mb / s:6.1f} MB/s  ({mb / s / w:.1f} MB/s per worker)  speed-up {base / s:.2f}x")


def big(vocab_size: int = 10_000) -> None:
    path = ensure_big(50)
    workers = os.cpu_count() or 1
    print(f"## heap trainer end to end: {path.name}, vocab {vocab_size:,}, {workers} workers")
    t0 = time.perf_counter()
    corpus = pretokenize_file(path, special_tokens=SPECIAL, workers=workers)
    t1 = time.perf_counter()
    result = train(corpus, vocab_size - 256 - len(SPECIAL), special_tokens=SPECIAL)
    t2 = time.perf_counter()
    print(
        f"pre-tokenize {t1 - t0:.2f} s, initial count {result.seconds['initial count']:.2f} s, "
        f"merge loop {result.seconds['merge loop']:.2f} s, total {t2 - t0:.2f} s; "
        f"{len(corpus.counts):,} unique pre-tokens, {len(result.events):,} merges"
    )
    print(f"load average {os.getloadavg()[0]:.2f}")


def hf(vocab_size: int = 10_000) -> None:
    try:
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    except ImportError:
        print("hf: tokenizers is not installed; skipped (pip install tokenizers)")
        return
    path = ensure_big(50)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    threads = os.environ.get("RAYON_NUM_THREADS", "all cores")
    t = time.perf_counter()
    tok.train([str(path)], trainer)
    print(
        f"## HuggingFace tokenizers BpeTrainer (ByteLevel), {path.name}, vocab {vocab_size:,} ({threads}): {time.perf_counter() - t:.2f} s"
    )


def rustbpe(vocab_size: int = 10_000) -> None:
    try:
        import rustbpe as rb
    except ImportError:
        print("rustbpe: not installed; skipped (pip install rustbpe)")
        return
    from bpe.text.pretokenizers import PRETOKENIZERS

    path = ensure_big(50)
    t = time.perf_counter()
    documents = path.read_text(encoding="utf-8", errors="replace").split(SPECIAL[0])
    tok = rb.Tokenizer()
    tok.train_from_iterator(iter(documents), vocab_size, pattern=PRETOKENIZERS["gpt2"].regex)
    print(f"## rustbpe 0.1.0, GPT-2 regex, {path.name}, vocab {vocab_size:,} (both cores): {time.perf_counter() - t:.2f} s")


def rules() -> None:
    texts = {"stdlib prose 2 MB": (stdlib_prose(2_000_000), 5_000)}
    if CS336.exists():
        texts = {"corpus.en": (CS336.read_text(encoding="utf-8"), 500), **texts}
    references = {  # rule -> the real trainers that make its merges: (name, is it installed, train it)
        "cs336": [("ffbpe largest_content", refs.ffbpe_available, partial(refs.ffbpe_reference, tie_break="largest_content"))],
        "huggingface": [
            ("tokenizers", refs.hf_available, refs.hf_reference),
            ("gigatoken huggingface", refs.gigatoken_available, partial(refs.gigatoken_reference, tie_breaking="huggingface")),
            (
                "ffbpe smallest_pair_id byte_level",
                refs.ffbpe_available,
                partial(refs.ffbpe_reference, tie_break="smallest_pair_id", initial_alphabet="byte_level"),
            ),
        ],
        "rustbpe": [
            ("rustbpe", refs.rustbpe_available, refs.rustbpe_reference),
            ("gigatoken raw_token_ids", refs.gigatoken_available, partial(refs.gigatoken_reference, tie_breaking="raw_token_ids")),
            ("ffbpe smallest_pair_id raw", refs.ffbpe_available, partial(refs.ffbpe_reference, tie_break="smallest_pair_id")),
        ],
    }
    print(f"## training under each tie-break rule (load {os.getloadavg()[0]:.1f}): heap trainer, best of 3; the real trainer, best of 3")
    for name, (text, vocab_size) in texts.items():
        seconds = best_of(3, partial(pretokenize, text, special_tokens=SPECIAL))
        corpus = pretokenize(text, special_tokens=SPECIAL)
        num_merges = vocab_size - 256 - len(SPECIAL)
        print(f"{name}: pre-tokenizing takes {seconds:.2f} s, then {num_merges:,} merges")
        for rule in TIE_BREAKS:
            run = partial(train, corpus, num_merges, special_tokens=SPECIAL, tie_break=rule)
            ours, merges = best_of(3, run), run().merges
            print(f"{name:<18} {rule:<12} ours {ours:6.2f} s")
            for tool, available, reference in references.get(rule, []):
                if available():
                    run = partial(reference, text, num_merges, SPECIAL)
                    theirs, same = best_of(3, run), list(run().merges) == merges
                    print(f"{'':<31} {tool:<34} {theirs:6.2f} s (all phases, all cores)   same merges: {same}")


SECTIONS = {"cs336": cs336, "pretokenize": pretokenize_speed, "big": big, "hf": hf, "rustbpe": rustbpe, "rules": rules}

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=list(SECTIONS), action="append")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    for name in args.only or list(SECTIONS):
        SECTIONS[name]()
