"""Where the heap trainer's memory goes: bytes per unique pre-token, by structure.

    python benchmarks/memory.py                                  # the 50 MB corpus, vocab 10,000
    python benchmarks/memory.py --corpus FILE --vocab 32000
    python benchmarks/memory.py --counts counts.parquet          # from a `bpe count` file

What it does: count the pre-tokens, build the heap trainer, and size each of its
structures (words, counts, keys, pair_counts, the index `where`, the heap)
object by object with sys.getsizeof -- each object counted once, in the first
structure that reaches it; small ints (-5..256) are shared by Python and cost
nothing -- right after the initial count and again after the merges. The
process's resident memory (RSS) before and after is printed as a cross-check.

What it does not do: change the trainer. The figures are for whoever does.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bpe.data.count import count_inputs  # noqa: E402
from bpe.heap import Heap  # noqa: E402
from bpe.memory import peak_rss  # noqa: E402

SPECIAL = "<|endoftext|>"


def rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def deep_size(root, seen: set[int]) -> tuple[int, int]:
    """(bytes, objects) reachable from root through lists, tuples, sets and dicts, each object once."""
    total = objects = 0
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or (type(obj) is int and -5 <= obj <= 256):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        objects += 1
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
    return total, objects


def sizes(trainer: Heap) -> dict[str, tuple[int, int]]:
    """Bytes and objects of each structure; shared objects go to the first one listed."""
    seen: set[int] = set()
    parts = {
        "pair keys (tuples shared by pair_counts and where)": list(trainer.pair_counts),
        "words (one str per word, a character per token)": trainer.words,
        "counts (one int per word)": trainer.counts,
        "pair_counts (dict pair -> count)": trainer.pair_counts,
        "where (dict pair -> array of word numbers)": trainer.where,
        "heap (list of 5-tuples)": trainer.heap,
        "keys + vocab (per token)": [trainer.keys, trainer.vocab],
    }
    result = {name: deep_size(value, seen) for name, value in parts.items()}
    # the list made to hold the keys is not the trainer's: take its own size back out
    keys_bytes, keys_objects = result["pair keys (tuples shared by pair_counts and where)"]
    result["pair keys (tuples shared by pair_counts and where)"] = (
        keys_bytes - sys.getsizeof(parts["pair keys (tuples shared by pair_counts and where)"]),
        keys_objects - 1,
    )
    return result


def table(title: str, parts: dict[str, tuple[int, int]], unique: int) -> None:
    print(f"\n{title}")
    print(f"{'structure':<52}{'MB':>9}{'objects':>13}{'B/pre-token':>13}")
    total = 0
    for name, (n, objects) in parts.items():
        total += n
        print(f"{name:<52}{n / 1e6:>9,.1f}{objects:>13,}{n / unique:>13,.0f}")
    print(f"{'total':<52}{total / 1e6:>9,.1f}{'':>13}{total / unique:>13,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT / "benchmarks" / "data" / "corpus50.txt")
    parser.add_argument("--counts", type=Path, help="a counts file from `bpe count` instead of --corpus")
    parser.add_argument("--vocab", type=int, default=10_000)
    args = parser.parse_args()
    gc.disable()
    base = rss()
    if args.counts:
        from bpe.data.counts_file import load_counts

        counts, _ = load_counts(args.counts)
        source = args.counts.name
    else:
        counts = count_inputs(args.corpus, special_tokens=[SPECIAL], workers=2).counts
        source = args.corpus.name
    unique = len(counts)
    seen: set[int] = set()
    input_bytes, _ = deep_size(counts, seen)
    after_counts = rss()
    print(f"# {source}: {unique:,} unique pre-tokens; vocab {args.vocab:,}; python {sys.version.split()[0]}")
    print(
        f"input counts (dict bytes -> int, held by the caller): {input_bytes / 1e6:,.1f} MB = {input_bytes / unique:,.0f} B per pre-token"
    )
    print(f"  of which the bytes objects: {sum(sys.getsizeof(t) for t in counts) / 1e6:,.1f} MB")

    start = time.perf_counter()
    trainer = Heap(counts)
    built = time.perf_counter() - start
    after_init = rss()
    print(
        f"words kept (longer than one byte): {len(trainer.words):,}; distinct pairs: {len(trainer.pair_counts):,}; heap entries: {len(trainer.heap):,}"
    )
    print(
        f"RSS: start {base / 1e6:,.0f} MB, with the counts {after_counts / 1e6:,.0f} MB, after the initial count ({built:.1f} s) {after_init / 1e6:,.0f} MB"
    )
    table("after the initial count", sizes(trainer), unique)

    for _ in trainer.merges(args.vocab - 256 - 1):
        pass
    after_merges = rss()
    print(f"\nRSS after {trainer.work['merges']:,} merges: {after_merges / 1e6:,.0f} MB (peak {peak_rss() / 1e6:,.0f} MB)")
    print(f"index entries: {sum(len(s) for s in trainer.where.values()):,} word numbers in {len(trainer.where):,} arrays")
    table("after the merges", sizes(trainer), unique)


if __name__ == "__main__":
    main()
