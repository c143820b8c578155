"""Encoding with the SentencePiece family: this tool against HuggingFace tokenizers and sentencepiece, one core.

    python benchmarks/make_mixed_corpus.py --mb 2 --out benchmarks/data/mixed2.txt
    taskset -c 0 python benchmarks/sentencepiece_encode.py benchmarks/data/mixed2.txt --rounds 5

Two races on the same text, line by line (as a dataset is encoded: each line a document):
- Llama 2's tokenizer.json (../shared/llama2): bpe.sentencepiece.HFTokenizer against tokenizers.Tokenizer.encode;
- a SentencePiece .model (sentencepiece trains one on the text first, 8,000 pieces with byte fallback):
  bpe.sentencepiece.Encoder against SentencePieceProcessor.encode.
Each round times ours and theirs alternately (theirs first in odd rounds), in this one process with
RAYON_NUM_THREADS=1 (tokenizers' threads: `encode` of one text uses one anyway), and prints MB/s; then the medians,
whether every id agreed, and the machine's load before and after.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LLAMA2 = ROOT.parent / "shared" / "llama2" / "tokenizer.json"


def race(name: str, ours, theirs, lines: list[str], rounds: int) -> None:
    size = sum(len(line.encode()) for line in lines) / 1e6
    speed: dict[str, list[float]] = {"ours": [], "theirs": []}
    for r in range(rounds):
        for who in ("theirs", "ours") if r % 2 == 0 else ("ours", "theirs"):
            encode = ours if who == "ours" else theirs
            start = time.perf_counter()
            for line in lines:
                encode(line)
            speed[who].append(size / (time.perf_counter() - start))
        print(f"  round {r + 1}: ours {speed['ours'][-1]:.2f} MB/s, theirs {speed['theirs'][-1]:.2f} MB/s", flush=True)
    same = all(ours(line) == theirs(line) for line in lines)
    ours_median, theirs_median = statistics.median(speed["ours"]), statistics.median(speed["theirs"])
    print(
        f"{name}: ours {ours_median:.2f} MB/s, theirs {theirs_median:.2f} MB/s (median of {rounds}): {ours_median / theirs_median:.2f}x; same ids: {same}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("text", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import sentencepiece as spm
    import tokenizers

    from bpe.sentencepiece import Encoder, HFTokenizer, parse_model

    lines = args.text.read_text(encoding="utf-8").splitlines()
    load = os.getloadavg()[0]
    hf, ours = tokenizers.Tokenizer.from_file(str(LLAMA2)), HFTokenizer.load(LLAMA2)
    race("Llama 2 tokenizer.json", ours.encode, lambda line: hf.encode(line).ids, lines, args.rounds)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=model, vocab_size=8000, model_type="bpe", byte_fallback=True, minloglevel=2
    )
    processor, encoder = spm.SentencePieceProcessor(model_proto=model.getvalue()), Encoder(parse_model(model.getvalue()))
    race("sentencepiece .model (8,000 pieces)", encoder.encode, processor.encode, lines, args.rounds)
    print(f"load {load:.1f} before, {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
