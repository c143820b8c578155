"""Encoding speed, next to tiktoken on the same text. Figures printed, not asserted.

    python benchmarks/encode.py                   # everything
    python benchmarks/encode.py --only speed      # one section: speed, stream, fresh, load
    python benchmarks/encode.py --only fresh --rounds 5 --encodings gpt2 cl100k_base o200k_base
    python benchmarks/encode.py --only load --rounds 5

speed:  MB/s of Tokenizer.encode on English prose (the standard library's docstrings, 2 MB,
        and the CS336 corpus.en) -- cold (a fresh tokenizer, nothing cached) and warm (the same
        text again) -- and of tiktoken's gpt2 encoding (Rust, one thread) on the same text.
stream: encode_iterable over a 50 MB file, line by line: MB/s and the peak memory of the process.
fresh:  the issue 23 target: Tokenizer.encode against tiktoken's encode on 10 MB of prose
        (make_corpus.py --mb 10, made when missing; --file another), each run a fresh process on one
        core (taskset), ours and tiktoken's alternated for --rounds rounds; medians of the encode
        time, processor time beside it, and whether the ids are identical (their sha256).
        --no-compiled times ours with BPE_CORE=0 (the Python path).
peers:  issue 34's table: Tokenizer.encode (a list) and encode_to_numpy beside gigatoken's Tokenizer.encode (a NumPy
        array), quicktok's and tiktoken's encode (lists), allowed_special="all", on 10 MB of prose: a fresh process per
        tool and round on one core, load time out, one cold encode (the caches empty) then the best of 3 warm ones,
        tools alternated for --rounds rounds, medians; ids compared (sha256) with tiktoken's.
        python benchmarks/encode.py --only peers --rounds 3 --encodings gpt2 cl100k_base o200k_base
        --before DIR: a checkout of another commit (its core built) timed beside as "before" and "before-numpy", in the same
        rounds: `git archive COMMIT | tar -x -C DIR`, then `python setup.py build_ext --inplace` there, and ../shared beside it.
load:   seconds to load cl100k_base and o200k_base in a fresh process: Tokenizer.load of OpenAI's
        rank file (its merges recovered, and read back from the cache an earlier load kept: BPE_CACHE)
        against tiktoken.get_encoding, alternated, medians.

Needs ../shared/gpt2 (GPT-2's encoder.json and vocab.bpe) and ../shared/tiktoken (the rank files);
tiktoken is given the same files offline. The load average is printed beside every figure.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import best_of  # noqa: E402  (benchmarks/ is on the path when this runs as a script)

from bpe import Tokenizer  # noqa: E402
from bpe.data.corpora import stdlib_prose  # noqa: E402

SHARED = ROOT.parent / "shared"
GPT2 = SHARED / "gpt2"
EOT = "<|endoftext|>"
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/"


def gpt2() -> Tokenizer:
    return Tokenizer.from_files(GPT2 / "encoder.json", GPT2 / "vocab.bpe", [EOT])


def tiktoken_gpt2():
    """tiktoken's gpt2 encoding from GPT-2's files, offline; None when tiktoken is not installed."""
    try:
        import tiktoken
    except ImportError:
        return None
    cache = Path(tempfile.mkdtemp(prefix="tiktoken-"))
    for name in ("vocab.bpe", "encoder.json"):
        shutil.copy(GPT2 / name, cache / hashlib.sha1((TIKTOKEN_URL + name).encode()).hexdigest())
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    return tiktoken.get_encoding("gpt2")


def cold_run(text: str) -> float:
    """Seconds to encode text with a freshly loaded tokenizer: every unique word is merged for the first time."""
    tok = gpt2()
    t = time.perf_counter()
    tok.encode(text)
    return time.perf_counter() - t


def speed() -> None:
    texts = {"stdlib prose 2 MB": stdlib_prose(2_000_000)}
    if (SHARED / "cs336" / "corpus.en").exists():
        texts["corpus.en"] = (SHARED / "cs336" / "corpus.en").read_text(encoding="utf-8")
    t = time.perf_counter()
    gpt2()
    print(f"## loading GPT-2's files: {time.perf_counter() - t:.2f} s")
    enc = tiktoken_gpt2()
    print("## encode MB/s, GPT-2's 50k merges (best of 3)")
    print(f"{'text':<20} {'MB':>5} {'ours cold':>10} {'ours warm':>10} {'tiktoken':>9}  same ids")
    for name, text in texts.items():
        mb = len(text.encode()) / 1e6
        cold = min(cold_run(text) for _ in range(3))
        tok = gpt2()
        ids = tok.encode(text)
        warm = best_of(3, lambda tok=tok, text=text: tok.encode(text))
        theirs = best_of(3, lambda text=text: enc.encode(text, allowed_special="all")) if enc else float("nan")
        same = ids == enc.encode(text, allowed_special="all") if enc else "no tiktoken"
        print(f"{name:<20} {mb:5.2f} {mb / cold:10.2f} {mb / warm:10.2f} {mb / theirs:9.2f}  {same}")


def peak_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024


def stream(mb: int = 50) -> None:
    tok = gpt2()
    block = (stdlib_prose(2_000_000) + "\n").encode()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.txt"
        path.write_bytes(block * (mb * 1_000_000 // len(block) + 1))
        size = path.stat().st_size / 1e6
        before = peak_mb()
        t = time.perf_counter()
        with open(path, encoding="utf-8") as f:
            n = sum(1 for _ in tok.encode_iterable(f))
        seconds = time.perf_counter() - t
        print(f"## encode_iterable over {size:.0f} MB, line by line: {seconds:.1f} s ({size / seconds:.1f} MB/s), {n:,} ids")
        print(
            f"peak memory: {before:.0f} MB before, {peak_mb():.0f} MB after (the ids of the whole file, kept, would be ~{n * 36 / 1e6:.0f} MB)"
        )


# ---------------------------------------------------------------------------
# fresh processes: the issue 23 targets

PROSE = ROOT / "benchmarks" / "data" / "prose10.txt"
OPENAI_URL = "https://openaipublic.blob.core.windows.net/encodings/"
TIKTOKEN_FILES = SHARED / "tiktoken"


def tiktoken_cache() -> Path:
    """A tiktoken cache holding GPT-2's files and OpenAI's rank files from ../shared (tiktoken names each by its URL's sha1)."""
    cache = Path(tempfile.mkdtemp(prefix="tiktoken-"))
    for name in ("vocab.bpe", "encoder.json"):
        shutil.copy(GPT2 / name, cache / hashlib.sha1((TIKTOKEN_URL + name).encode()).hexdigest())
    for name in ("cl100k_base", "o200k_base"):
        if (TIKTOKEN_FILES / f"{name}.tiktoken").exists():
            url = OPENAI_URL + name + ".tiktoken"
            shutil.copy(TIKTOKEN_FILES / f"{name}.tiktoken", cache / hashlib.sha1(url.encode()).hexdigest())
    return cache


def child(tool: str, encoding: str, path: str, encode: bool) -> None:
    """One measurement in this fresh process: load the tokenizer, then encode the file; JSON on stdout."""
    started, cpu = time.perf_counter(), time.process_time()
    if tool == "tiktoken":
        import tiktoken

        enc = tiktoken.get_encoding(encoding)
        run = lambda text: enc.encode(text, allowed_special="all")  # noqa: E731
    else:
        tok = gpt2() if encoding == "gpt2" else Tokenizer.load(TIKTOKEN_FILES / f"{encoding}.tiktoken")
        run = lambda text: tok.encode(text, allowed_special="all")  # noqa: E731  (as tiktoken is called)
    loaded, loaded_cpu = time.perf_counter() - started, time.process_time() - cpu
    out = {"load": loaded, "load_cpu": loaded_cpu}
    if encode:
        text = Path(path).read_text(encoding="utf-8")
        started, cpu = time.perf_counter(), time.process_time()
        ids = run(text)
        out |= {"encode": time.perf_counter() - started, "cpu": time.process_time() - cpu, "ids": len(ids)}
        out["sha"] = hashlib.sha256(b"".join(i.to_bytes(4, "little") for i in ids)).hexdigest()[:16]
    print(json.dumps(out))


def measure(tool: str, encoding: str, path: Path, encode: bool, compiled: bool, cache: Path, ours_cache: str = "off") -> dict:
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache), "BPE_CACHE": ours_cache}
    if not compiled:
        env["BPE_CORE"] = "0"
    command = [sys.executable, __file__, "--child", tool, encoding, str(path)] + ([] if encode else ["--load-only"])
    if shutil.which("taskset"):
        command = ["taskset", "-c", str(os.sched_getaffinity(0).pop()), *command]  # one core
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)


def load_average() -> str:
    return "load " + "/".join(f"{x:.1f}" for x in os.getloadavg())


def fresh(rounds: int = 5, encodings: tuple[str, ...] = ("gpt2", "cl100k_base"), path: Path | None = None, compiled: bool = True) -> None:
    path = path or PROSE
    if not path.exists():
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_corpus.py"), "--mb", "10", "--out", str(path)], check=True)
    mb = path.stat().st_size / 1e6
    cache = tiktoken_cache()
    print(f"## Tokenizer.encode against tiktoken, {path.name} ({mb:.1f} MB), a fresh process per run, one core, {rounds} rounds alternated")
    print(f"{'encoding':<12} {'ours s':>8} {'cpu':>6} {'tiktoken s':>10} {'cpu':>6} {'ours/tiktoken':>13}  same ids   load before/after")
    for encoding in encodings:
        runs: dict[str, list[dict]] = {"ours": [], "tiktoken": []}
        before = load_average()
        for _ in range(rounds):
            for tool in runs:
                runs[tool].append(measure(tool, encoding, path, True, compiled, cache))
        ours, theirs = (statistics.median(r["encode"] for r in runs[t]) for t in ("ours", "tiktoken"))
        cpu_ours, cpu_theirs = (statistics.median(r["cpu"] for r in runs[t]) for t in ("ours", "tiktoken"))
        same = {r["sha"] for r in runs["ours"]} == {r["sha"] for r in runs["tiktoken"]}
        print(
            f"{encoding:<12} {ours:8.3f} {cpu_ours:6.3f} {theirs:10.3f} {cpu_theirs:6.3f} {ours / theirs:12.2f}x  {str(same):8}   {before} / {load_average()}"
        )
    shutil.rmtree(cache)


def load(rounds: int = 5) -> None:
    """ours: the merges recovered from the ranks (no cache), and read back from the cache of an earlier load (BPE_CACHE)."""
    cache, kept = tiktoken_cache(), Path(tempfile.mkdtemp(prefix="bpe-cache-"))
    print(f"## loading OpenAI's encodings in a fresh process, {rounds} rounds alternated (median wall s, processor s)")
    for encoding in ("cl100k_base", "o200k_base"):
        runs: dict[str, list[dict]] = {"ours, recovered": [], "ours, cached": [], "tiktoken": []}
        before = load_average()
        measure("ours", encoding, PROSE, False, True, cache, str(kept))  # fills the cache
        for _ in range(rounds):
            for tool in runs:
                where = str(kept) if tool == "ours, cached" else "off"
                runs[tool].append(measure(tool.split(",")[0], encoding, PROSE, False, True, cache, where))
        figures = "  ".join(
            f"{tool} {statistics.median(r['load'] for r in runs[tool]):.3f} s ({statistics.median(r['load_cpu'] for r in runs[tool]):.3f} cpu)"
            for tool in runs
        )
        print(f"{encoding:<12} {figures}   {before} / {load_average()}")
    shutil.rmtree(cache)
    shutil.rmtree(kept)


# ---------------------------------------------------------------------------
# peers: ours beside gigatoken, quicktok and tiktoken, in one sitting (issue 34)

PEER_TOOLS = ("ours", "ours-numpy", "gigatoken", "quicktok", "tiktoken")


def peer_child(tool: str, encoding: str, path: str, rounds: int) -> None:
    """One tool in this fresh process: load it (kept out of the figures), then encode the file once cold and `rounds`
    more times (each result dropped outside the timing); JSON on stdout with the sha256 of the ids as uint32."""
    import numpy as np

    text = Path(path).read_text(encoding="utf-8")
    if tool.startswith("ours"):
        tok = gpt2() if encoding == "gpt2" else Tokenizer.load(TIKTOKEN_FILES / f"{encoding}.tiktoken")
        run = tok.encode if tool == "ours" else tok.encode_to_numpy
        call = lambda text: run(text, allowed_special="all")  # noqa: E731  (as tiktoken is called)
    elif tool == "gigatoken":
        import gigatoken

        if encoding == "gpt2":  # GPT-2's ranks are r50k_base's, which gigatoken knows by the file's name
            import base64

            import tiktoken

            ranks = tiktoken.get_encoding("gpt2")._mergeable_ranks
            folder = Path(tempfile.mkdtemp(prefix="r50k-"))
            (folder / "r50k_base.tiktoken").write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()))
            call = gigatoken.Tokenizer.from_tiktoken(str(folder / "r50k_base.tiktoken")).encode
        else:
            call = gigatoken.Tokenizer.from_tiktoken(str(TIKTOKEN_FILES / f"{encoding}.tiktoken")).encode
    elif tool == "quicktok":
        import quicktok

        enc = quicktok.get_encoding(encoding)
        call = lambda text: enc.encode(text, allowed_special="all")  # noqa: E731
    else:
        import tiktoken

        enc = tiktoken.get_encoding(encoding)
        call = lambda text: enc.encode(text, allowed_special="all")  # noqa: E731
    times = []
    for _ in range(rounds + 1):
        started, cpu = time.perf_counter(), time.process_time()
        ids = call(text)
        times.append((time.perf_counter() - started, time.process_time() - cpu))
        sha = hashlib.sha256(np.asarray(ids, dtype=np.uint32).tobytes()).hexdigest()[:16]
        del ids
    first, rest = times[0], times[1:]
    print(
        json.dumps(
            {"first": first[0], "first_cpu": first[1], "best": min(t for t, _ in rest), "best_cpu": min(c for _, c in rest), "sha": sha}
        )
    )


def peers(
    rounds: int = 3,
    encodings: tuple[str, ...] = ("gpt2", "cl100k_base", "o200k_base"),
    path: Path | None = None,
    baseline: Path | None = None,
) -> None:
    path = path or PROSE
    if not path.exists():
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_corpus.py"), "--mb", "10", "--out", str(path)], check=True)
    mb = path.stat().st_size / 1e6
    cache = tiktoken_cache()
    print(
        f"## encode {path.name} ({mb:.1f} MB) in a fresh process per tool and round, one core (taskset), load time out, "
        f"{rounds} rounds alternated; in each process one cold encode, then best of 3 warm (medians over the rounds)"
    )
    print(f"{'encoding':<12} {'tool':<11} {'cold s':>7} {'warm s':>7} {'warm MB/s':>9} {'cpu':>6} {'ours/it':>7}  ids        load")
    for encoding in encodings:
        tools = [t for t in PEER_TOOLS if not (t == "quicktok" and encoding == "gpt2")]  # quicktok has no GPT-2
        if baseline:
            tools[2:2] = ["before", "before-numpy"]
        runs: dict[str, list[dict]] = {tool: [] for tool in tools}
        before = load_average()
        for _ in range(rounds):
            for tool in tools:
                env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache), "BPE_CACHE": "off"}
                script = baseline / "benchmarks" / "encode.py" if tool.startswith("before") else Path(__file__)
                command = [sys.executable, str(script), "--peer-child", tool.replace("before", "ours"), encoding, str(path)]
                if shutil.which("taskset"):
                    command = ["taskset", "-c", str(os.sched_getaffinity(0).pop()), *command]
                done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
                runs[tool].append(json.loads(done.stdout.strip().splitlines()[-1]))
        reference = runs["tiktoken"][0]["sha"]
        ours = statistics.median(r["best"] for r in runs["ours"])
        for tool, measured in runs.items():
            cold, warm = (statistics.median(r[k] for r in measured) for k in ("first", "best"))
            cpu = statistics.median(r["best_cpu"] for r in measured)
            same = "equal" if {r["sha"] for r in measured} == {reference} else "DIFFERENT"
            print(
                f"{encoding:<12} {tool:<11} {cold:7.3f} {warm:7.3f} {mb / warm:9.0f} {cpu:6.3f} {ours / warm:6.2f}x  {same:10} {before} / {load_average()}"
            )
    shutil.rmtree(cache)


SECTIONS = {"speed": speed, "stream": stream, "fresh": fresh, "load": load, "peers": peers}

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=list(SECTIONS), action="append")
    parser.add_argument("--rounds", type=int, default=5, help="fresh, load: rounds of alternated runs (default 5)")
    parser.add_argument("--encodings", nargs="+", default=["gpt2", "cl100k_base"], help="fresh: gpt2, cl100k_base, o200k_base")
    parser.add_argument("--file", type=Path, help="fresh: the text to encode (default: 10 MB of prose, made when missing)")
    parser.add_argument("--no-compiled", dest="compiled", action="store_false", help="fresh: ours with BPE_CORE=0 (the Python path)")
    parser.add_argument("--child", nargs=3, metavar=("TOOL", "ENCODING", "FILE"), help=argparse.SUPPRESS)
    parser.add_argument("--peer-child", nargs=3, metavar=("TOOL", "ENCODING", "FILE"), help=argparse.SUPPRESS)
    parser.add_argument("--before", type=Path, help="peers: a checkout of another commit, its core built, timed beside ours")
    parser.add_argument("--load-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child, encode=not args.load_only)
        sys.exit(0)
    if args.peer_child:
        peer_child(*args.peer_child, rounds=3)
        sys.exit(0)
    if not (GPT2 / "encoder.json").exists():
        sys.exit("../shared/gpt2 not found: this benchmark needs GPT-2's encoder.json and vocab.bpe")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    for name in args.only or list(SECTIONS):
        if name == "fresh":
            fresh(args.rounds, tuple(args.encodings), args.file, args.compiled)
        elif name == "peers":
            peers(args.rounds, tuple(args.encodings), args.file, args.before)
        elif name == "load":
            load(args.rounds)
        else:
            SECTIONS[name]()
