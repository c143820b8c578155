"""Server processor time of the Real tokenizers page's work: seven tokenizers on 2,000 characters, and the Encode page's walk.

    .venv/bin/python benchmarks/compare.py            # needs ../shared/gpt2, ../shared/tiktoken, llama2, mistral, llama3
    .venv/bin/python benchmarks/compare.py --chars 2000 --repeats 20

What one comparison costs the server when nobody has asked for this text before
(ui/views/compare.py comparison: encode with GPT-2, GPT-4, GPT-4o, Llama 2, Mistral,
Llama 3 and a run of this tool, the span diff, the HTML), on windows of real text that do not repeat, so no
tokenizer's word cache has seen them: each window is new English prose, code, and
other languages. Also each tokenizer's load (once per server), the encoder's steps
of a 30-byte pre-token with o200k_base (Tokenizer.encode_steps) and the Encode
page's walk of a 200-character sentence. process_time (this process's processor
time), median and worst of the repeats.

Targets (issue 16): the comparison <= 300 ms of server processor; encode_steps of
a 30-byte pre-token with o200k_base <= 5 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bpe import (  # noqa: E402
    Tokenizer,
    pretokenize,
    train,
)
from bpe.data.corpora import stdlib_prose  # noqa: E402
from ui import encoding, real  # noqa: E402
from ui.lessons import quirks  # noqa: E402
from ui.views import compare as compare_views  # noqa: E402


def cpu(fn) -> tuple[float, object]:
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def windows(n: int, size: int) -> list[str]:
    """n texts of `size` characters that do not repeat: stdlib prose, a code line, and a language of the token tax paragraph."""
    prose = stdlib_prose(200_000 + n * size)
    languages = list(quirks.LANGUAGES.values())
    out = []
    for i in range(n):
        head = prose[100_000 + i * size : 100_000 + (i + 1) * size]
        extra = f"\n    def f_{i}(x):\n        return x * {i}.5  # {i}\n" + languages[i % len(languages)]
        out.append((extra + head)[:size])
    return out


def ms(xs: list[float]) -> str:
    return f"median {statistics.median(xs) * 1e3:.1f} ms, worst {max(xs) * 1e3:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    print(f"# {os.cpu_count()} cores; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {time.strftime('%Y-%m-%d %H:%M')}")

    loaded = {}
    for key in [*real.ENCODINGS, *real.OPEN_MODELS]:
        seconds, found = cpu(lambda key=key: real.get(key, spinner=False))
        if found.tokenizer is None:
            sys.exit(found.error)
        loaded[key] = found
        print(f"load {found.label} ({found.encoding.name}): {seconds:.2f} s of processor, once per server")
    run = Tokenizer.from_training(train(pretokenize(stdlib_prose(1_000_000), pretokenizer="gpt2"), 1000), "gpt2")
    entries = [real.real_entry(r) for r in loaded.values()] + [real.run_entry(run, len(run.merges))]

    texts = windows(args.repeats, args.chars)
    encode_times, whole_times = [], []
    for text in texts:
        t_encode, rows = cpu(lambda text=text: [compare_views.row(e.label, e.tokenizer, text, e.k, e.detail) for e in entries])
        t_html, _ = cpu(lambda text=text, rows=rows: compare_views.comparison(text, rows))
        encode_times.append(t_encode)
        whole_times.append(t_encode + t_html)
    print(f"compare {len(entries)} tokenizers on {args.chars:,} new characters, {args.repeats} texts:")
    print(f"  encoding only: {ms(encode_times)}")
    print(f"  whole comparison (encode + span diff + HTML): {ms(whole_times)}   target <= 300 ms")
    again, _ = cpu(lambda: [compare_views.row(e.label, e.tokenizer, texts[0], e.k, e.detail) for e in entries])
    print(f"  the same text again (word caches warm): {again * 1e3:.1f} ms of encoding")

    o200k = loaded["o200k"].tokenizer
    word = b" antidisestablishmentarianisms"  # 30 bytes, one pre-token
    assert len(word) == 30
    steps = []
    for _ in range(args.repeats):
        seconds, _ = cpu(lambda: o200k.encode_steps(word))
        steps.append(seconds)
    print(f"encode_steps of a 30-byte pre-token with o200k_base ({len(o200k.encode_steps(word)) - 1} steps): {ms(steps)}   target <= 5 ms")

    sentence = texts[1][:200]
    walks = []
    walked = ("gpt2", "cl100k", "o200k", *real.OPEN_MODELS)
    for key in walked:
        tok = loaded[key].tokenizer
        seconds, _ = cpu(lambda tok=tok: [encoding.steps(tok, p.data) for p in encoding.pieces(tok, sentence) if not p.special])
        walks.append(seconds)
    print(
        f"the Encode page's walk of 200 characters (every pre-token's steps), {' / '.join(real.label_of(k) for k in walked)}: "
        f"{' / '.join(f'{w * 1e3:.1f}' for w in walks)} ms"
    )


if __name__ == "__main__":
    main()
