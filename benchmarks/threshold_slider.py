"""How long the threshold explorer takes to answer a slider move on the 2 MB stdlib corpus.

    .venv/bin/python benchmarks/threshold_slider.py            # library + AppTest
    .venv/bin/python benchmarks/threshold_slider.py --browser  # also the browser round trip (needs chromium)

Three numbers per slider move, and what retraining would have cost instead:
the library's answer (binary search + sums), the page's whole script run
(AppTest; in the browser a move reruns only the page's fragment, which is less),
and in the browser the time from a key press to the new numbers.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bpe import pretokenize, train  # noqa: E402
from bpe.data.corpora import SEPARATOR, stdlib_prose  # noqa: E402
from bpe.lab.threshold import kept, replay, sample_of, thresholds  # noqa: E402
from bpe.tokenizer.tokenizer import Tokenizer  # noqa: E402

MERGES, SPECIAL = 1000, "<|endoftext|>"  # the "stdlib" preset's settings


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def library() -> None:
    data = stdlib_prose(2_000_000).encode()
    held = stdlib_prose(2_400_000).encode()[len(data) + len(SEPARATOR) :]
    t0 = time.perf_counter()
    corpus = pretokenize(data, special_tokens=[SPECIAL])
    t1 = time.perf_counter()
    run = train(corpus, MERGES, special_tokens=[SPECIAL])
    t2 = time.perf_counter()
    tok = Tokenizer.from_training(run)
    test = replay(tok, sample_of(held, "gpt2", [SPECIAL]))
    t3 = time.perf_counter()
    train_text = replay(tok, sample_of(data, "gpt2", [SPECIAL]))
    t4 = time.perf_counter()
    print(f"corpus {len(data) / 1e6:.1f} MB, held-out {len(held) / 1e3:.0f} KB, {MERGES} merges")
    print(
        f"once: pre-tokenize {t1 - t0:.2f} s, train {t2 - t1:.2f} s, replay held-out {t3 - t2:.2f} s, replay training text {t4 - t3:.2f} s"
    )

    counts = [e.count for e in run.events]
    options = thresholds(counts, [0, 1, 2, 5])
    times = []
    for t in options:
        start = time.perf_counter()
        k = kept(counts, t)
        test.compression(k)
        train_text.usage(k)
        times.append(time.perf_counter() - start)
    print(f"per slider move (library, {len(options)} values of t): median {ms(statistics.median(times))}, max {ms(max(times))}")

    for t in (2, 200, 2000):
        start = time.perf_counter()
        again = train(corpus, MERGES, special_tokens=[SPECIAL], min_pair_frequency=t)
        seconds = time.perf_counter() - start
        start = time.perf_counter()
        Tokenizer.from_training(again).encode(held)
        encode = time.perf_counter() - start
        assert again.merges == run.merges[: kept(counts, t)]
        print(f"instead, retraining with t={t}: {seconds:.2f} s + re-encoding held-out {encode:.2f} s (same merges as the prefix)")


def apptest(moves: int = 30) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from apptest import open_app

    at = open_app("pages/threshold.py")
    start = time.perf_counter()
    at.sidebar.selectbox(key="source").set_value("stdlib").run()
    while not at.get("select_slider"):  # training and replaying happen in a worker; the page polls until they are done
        time.sleep(0.2)
        at.run()
    print(f"AppTest: first visit with the stdlib corpus {time.perf_counter() - start:.1f} s (collect, pre-tokenize, train, replay)")
    options = [int(o.replace(",", "")) for o in at.select_slider(key="w_threshold").options]
    times = []
    for t in options[3 : 3 + moves * 10 : 10]:
        start = time.perf_counter()
        at.select_slider(key="w_threshold").set_value(t).run()
        times.append(time.perf_counter() - start)
        assert not at.exception
    print(f"AppTest: whole page run per slider move ({len(times)} moves): median {ms(statistics.median(times))}, max {ms(max(times))}")


def browser(moves: int = 20) -> None:
    import subprocess
    import urllib.request

    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "tests"))
    from e2e.conftest import ARGS, CHROMIUM, _free_port, pick, wait_idle

    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(url + "/_stcore/health", timeout=2)
                break
            except OSError:
                time.sleep(0.3)
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            page = b.new_page(viewport={"width": 1400, "height": 1600})
            page.goto(url + "/threshold")
            wait_idle(page)
            pick(page, "Corpus", "Python's own docs (stdlib docstrings, 2 MB)")
            page.get_by_text("held-out text").first.wait_for(timeout=120_000)
            read = """() => [...document.querySelectorAll('[data-testid="stMetric"]')]
                .find(e => e.innerText.includes('Merges kept')).querySelector('[data-testid="stMetricValue"]').innerText"""
            slider = page.get_by_role("slider", name="Minimum pair frequency t")
            slider.focus()
            slider.press("PageUp")
            wait_idle(page)
            shown, done = [], []
            for _ in range(moves):
                before = page.evaluate(read)
                start = time.perf_counter()
                slider.press("ArrowRight")
                page.wait_for_function(f"old => ({read})() !== old", arg=before, polling=5)
                shown.append(time.perf_counter() - start)
                page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]')
                done.append(time.perf_counter() - start)
                page.wait_for_timeout(300)
            b.close()
        print(
            f"browser: key press to new numbers ({moves} moves): median {ms(statistics.median(shown))}, max {ms(max(shown))}; "
            f"to the page idle again: median {ms(statistics.median(done))}"
        )
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--browser", action="store_true", help="also time the browser round trip")
    args = parser.parse_args()
    library()
    apptest()
    if args.browser:
        browser()
