"""GPT-2's, GPT-4's (cl100k) and GPT-4o's (o200k) pre-tokenizers at compiled speed: the candidates, measured. Figures printed, not asserted.

    python benchmarks/pretokenizers.py                          # 48 MB corpus (made by make_corpus.py when missing)
    python benchmarks/pretokenizers.py --corpus FILE --patterns cl100k o200k --rounds 3

For each pattern, file -> counts of unique pre-tokens (documents cut at <|endoftext|>), one
process, one core, processor seconds (the median of --rounds), and whether the counts are
exactly the Python path's (the `regex` module, bpe/text/pretokenize.py):

- ours compiled: bpe/c/pretokenize.c through Tally (bpe/text/pretokenize_c.py);
- Python: the regex module (Tally with compiled=False), the reference;
- gigatoken 0.10.0: gpt2 only (its cl100k and o200k splitters run only inside its encoder);
- ffbpe 0.1.10: PreTokenizer(pat_str=the pattern's regex), a str in, counts of str out;
- PCRE2 (Debian's libpcre2-8, JIT, UTF + UCP): a small C loop over pcre2_jit_match, compiled here with
  gcc against the runtime library (no -dev headers needed); also, how many code points its Unicode
  tables class differently from regex's (\\p{L}, \\p{N}, \\s), the check bpe/text/gigatoken.py makes for gigatoken.

The load average is printed beside every figure. Nothing here is a dependency of the project.
"""

from __future__ import annotations

import argparse
import ctypes.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bpe.text.pretokenizers import PRETOKENIZERS  # noqa: E402
from bpe.text.tally import Tally  # noqa: E402

SPECIAL = "<|endoftext|>"
CORPUS = ROOT / "benchmarks" / "data" / "corpus48.txt"

PCRE2_C = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
typedef struct code code;
extern code *pcre2_compile_8(const uint8_t *, size_t, uint32_t, int *, size_t *, void *);
extern int pcre2_jit_compile_8(code *, uint32_t);
extern void *pcre2_match_data_create_from_pattern_8(const code *, void *);
extern int pcre2_jit_match_8(const code *, const uint8_t *, size_t, size_t, uint32_t, void *, void *);
extern size_t *pcre2_get_ovector_pointer_8(void *);
#define UTF 0x00080000u
#define UCP 0x00020000u
/* pcre2 PATTERN_FILE TEXT_FILE OUT_FILE: every match of the pattern in each document (cut at <|endoftext|>),
   written as 4-byte length + bytes; prints the processor seconds of the matching alone */
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "rb"); static uint8_t pattern[1 << 16]; size_t plen = fread(pattern, 1, sizeof pattern, f); fclose(f);
    f = fopen(argv[2], "rb"); fseek(f, 0, SEEK_END); size_t n = (size_t)ftell(f); fseek(f, 0, SEEK_SET);
    uint8_t *text = malloc(n + 1); n = fread(text, 1, n, f); fclose(f);
    int error; size_t offset;
    code *re = pcre2_compile_8(pattern, plen, UTF | UCP, &error, &offset, NULL);
    if (!re || pcre2_jit_compile_8(re, 1) != 0) { fprintf(stderr, "compile failed %d at %zu\n", error, offset); return 2; }
    void *md = pcre2_match_data_create_from_pattern_8(re, NULL);
    size_t *ov = pcre2_get_ovector_pointer_8(md);
    size_t cap = 1 << 20, used = 0; size_t *spans = malloc(cap * sizeof(size_t));
    clock_t start = clock();
    const char *eot = "<|endoftext|>"; size_t eot_len = strlen(eot), doc = 0;
    while (doc <= n) {
        uint8_t *hit = memmem(text + doc, n - doc, eot, eot_len);
        size_t end = hit ? (size_t)(hit - text) : n, pos = doc;
        while (pos < end) {
            int rc = pcre2_jit_match_8(re, text, end, pos, 0, md, NULL);
            if (rc < 0) { if (rc == -1) break; fprintf(stderr, "match error %d at %zu\n", rc, pos); return 3; }
            if (used + 2 > cap) { cap *= 2; spans = realloc(spans, cap * sizeof(size_t)); }
            spans[used++] = ov[0]; spans[used++] = ov[1];
            pos = ov[1] > ov[0] ? ov[1] : ov[1] + 1;
        }
        if (!hit) break;
        doc = end + eot_len;
    }
    printf("%.3f\n", (double)(clock() - start) / CLOCKS_PER_SEC);
    FILE *out = fopen(argv[3], "wb");
    for (size_t k = 0; k < used; k += 2) { uint32_t len = (uint32_t)(spans[k + 1] - spans[k]); fwrite(&len, 4, 1, out); fwrite(text + spans[k], 1, len, out); }
    fclose(out);
    return 0;
}
"""


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def python_counts(data: bytes, pretokenizer: str, compiled: bool) -> tuple[dict[bytes, int], float, str]:
    tally = Tally(pretokenizer, compiled=compiled)
    cpu = time.process_time()
    tally.add([data], [SPECIAL])
    counts = tally.counts()
    return counts, time.process_time() - cpu, tally_how(tally)


def tally_how(tally: Tally) -> str:
    return "compiled" if tally.compiled_bytes else f"Python ({'; '.join(sorted(tally.python_why))})"


def ffbpe_counts(data: bytes, pretokenizer: str) -> tuple[dict[bytes, int], float]:
    import ffbpe

    text = data.decode("utf-8", "replace")
    tokenizer = ffbpe.PreTokenizer([SPECIAL], pat_str=PRETOKENIZERS[pretokenizer].regex)
    cpu = time.process_time()
    words = tokenizer.get_words(text)
    seconds = time.process_time() - cpu
    return {w.encode(): n for w, n in words.items()}, seconds


def gigatoken_counts(data: bytes) -> tuple[dict[bytes, int], float]:
    os.environ["RAYON_NUM_THREADS"] = "1"
    import gigatoken.gigatoken_rs as rs

    cpu = time.process_time()
    counts = dict(rs.pretokenized_counts(data, SPECIAL.encode()))
    return counts, time.process_time() - cpu


def pcre2_binary(folder: Path) -> Path | None:
    library = ctypes.util.find_library("pcre2-8")
    if library is None:
        return None
    source, binary = folder / "pcre2.c", folder / "pcre2"
    source.write_text(PCRE2_C)
    linked = subprocess.run(
        ["gcc", "-O2", "-D_GNU_SOURCE", str(source), "-o", str(binary), f"-l:{library}"], capture_output=True, text=True
    )
    return binary if linked.returncode == 0 else None


def pcre2_counts(binary: Path, corpus: Path, pretokenizer: str, folder: Path) -> tuple[dict[bytes, int], float]:
    (folder / "pattern").write_text(PRETOKENIZERS[pretokenizer].regex)
    out = folder / "tokens"
    done = subprocess.run([str(binary), str(folder / "pattern"), str(corpus), str(out)], capture_output=True, text=True, check=True)
    data, counts, pos = out.read_bytes(), {}, 0
    while pos < len(data):
        n = int.from_bytes(data[pos : pos + 4], "little")
        token = data[pos + 4 : pos + 4 + n]
        counts[token] = counts.get(token, 0) + 1
        pos += 4 + n
    return counts, float(done.stdout)


def pcre2_unicode_differences(binary: Path, folder: Path) -> int:
    """Code points whose class (\\p{L}, \\p{N}, \\s, other) PCRE2's tables and regex's differ on: each on its own line, split by a probe."""
    import regex

    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and c not in (0x0A, 0x0D)]
    text = "\n".join(chr(c) for c in points).encode()
    corpus = folder / "points"
    corpus.write_bytes(text)
    differences = 0
    for probe in (r"\p{L}", r"\p{N}", r"[^\S\n]"):
        (folder / "pattern").write_text(probe)
        out = folder / "tokens"
        subprocess.run([str(binary), str(folder / "pattern"), str(corpus), str(out)], capture_output=True, check=True)
        data, found, pos = out.read_bytes(), set(), 0
        while pos < len(data):
            n = int.from_bytes(data[pos : pos + 4], "little")
            found.add(data[pos + 4 : pos + 4 + n].decode())
            pos += 4 + n
        ours = {m.group() for m in regex.finditer(probe, text.decode())}
        differences += len(found ^ ours)
    return differences


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--mb", type=int, default=48, help="size of the corpus made when --corpus is missing")
    parser.add_argument("--patterns", nargs="+", default=["gpt2", "cl100k", "o200k"])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not args.corpus.exists():
        subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "make_corpus.py"), "--mb", str(args.mb), "--out", str(args.corpus)], check=True
        )
    data = args.corpus.read_bytes()
    mb = len(data) / 1e6
    print(f"# {args.corpus.name}: {mb:.1f} MB; processor seconds, median of {args.rounds}; load {load()}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        binary = pcre2_binary(folder)
        if binary is not None:
            print(
                f"PCRE2: {pcre2_unicode_differences(binary, folder)} code points classed differently from regex (\\p{{L}}, \\p{{N}}, \\s)"
            )
        for pattern in args.patterns:
            reference, python_seconds, _ = python_counts(data, pattern, compiled=False)
            rows = [("Python (regex), the reference", [python_seconds], True, "")]
            engines = [("ours compiled (bpe._core)", lambda p=pattern: python_counts(data, p, compiled=True)[:2])]
            if pattern == "gpt2":
                engines.append(("gigatoken 0.10.0", lambda: gigatoken_counts(data)))
            engines.append(("ffbpe 0.1.10", lambda p=pattern: ffbpe_counts(data, p)))
            if binary is not None:
                engines.append(("PCRE2 JIT", lambda p=pattern: pcre2_counts(binary, args.corpus, p, folder)))
            for label, run in engines:
                try:
                    results = [run() for _ in range(args.rounds)]
                except (ImportError, subprocess.CalledProcessError) as e:
                    rows.append((label, [], False, f"not run: {e}"))
                    continue
                rows.append((label, [seconds for _, seconds in results], results[0][0] == reference, ""))
            print(f"\n## {pattern}: {len(reference):,} unique pre-tokens; load {load()}")
            for label, seconds, exact, note in rows:
                if not seconds:
                    print(f"  {label:<32} {note}")
                    continue
                median = statistics.median(seconds)
                print(f"  {label:<32} {median:6.2f} s  {mb / median:6.1f} MB/s  exact: {'yes' if exact else 'NO'}")


if __name__ == "__main__":
    main()
