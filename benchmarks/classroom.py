"""A classroom on one server: N simulated students speak Streamlit's own websocket protocol to `streamlit run app.py`.

    .venv/bin/python benchmarks/classroom.py                       # every scenario: 30 students, 5 of them racing
    .venv/bin/python benchmarks/classroom.py --scenario stepping --sessions 10 --seconds 30
    .venv/bin/python benchmarks/classroom.py --app /work/main/app.py   # another checkout (run read-only: no .pyc written)
    .venv/bin/python benchmarks/classroom.py --replicas 2 --sessions 300 --scenario stepping   # through HAProxy (serve/replicas.py)
    .venv/bin/python benchmarks/classroom.py --scenario pages --rounds 5   # each page's warm click, server and Chromium

Results go in BENCHMARKS.md. No browsers (but for the pages scenario's second half): a student is one websocket to
/_stcore/stream sending what Chromium sends (captured once with Playwright's
websocket events): a `rerun_script` BackMsg with the page, every widget's value
(as drawn, or as the student set it) and, for a click, the button's trigger and
its fragment id; the
server answers with ForwardMsgs, and a click counts as done at its
`script_finished`, when the browser would show the updated page. Fragments that
rerun by themselves (`auto_rerun`, a page polling its worker) are rerun on their
interval, as the browser does.

The server is what `bash scripts/app.sh` runs: one app process behind HAProxy, whose
cache answers Streamlit's browser files (`python -m serve.replicas`); --direct runs
`streamlit run web.py` alone, as a machine without HAProxy does (and this project did
before issue 37). With --replicas N the server is `python -m serve.replicas --replicas N` (what
`scripts/app.sh --replicas N` runs): N app processes behind HAProxy, sticky on
a cookie. A student then first loads the page over HTTP, as a browser does,
and keeps the proxy's cookie for its websocket; each replica's processor and
memory are sampled apart (and the shared worker pool's, and the proxy's).

Scenarios, each on a fresh server (the server is visited once first: start-up):

- cold: N students open the app at the same moment (the step page, the textbook
  preset); how long until each sees it.
- stepping: N students open the app and pick the 2 MB "Python's own docs" preset
  (1,000 merges) together, then each clicks Next every ~INTERVAL s (uniform
  +-25 %) for SECONDS; latency per click, clicks per second the server answered.
- racing: one student races alone on a server of its own (the race's figures and
  its wall time from Start to the verdict); then, on another server, N students
  pick the 2 MB preset, and N - K step while K press Start the race together;
  stepping latency, each race's wall time and trainer times against the race
  alone, and whether any trainer was cut off for lack of processor.

- upload: N students step on the 2 MB preset, alone, then while one more
  uploads slow-to-read .tiktoken files on Tokenize & export (tokens built to
  collide in the core's hash); stepping latency both times, each upload's wait.
- pages: one student clicks from page to page in the sidebar on a warm server: each page's first visit and its warm
  click, as the server answers it and as Chromium draws it (issue 36.6: Tokenize & export took 2-4 s a click).

- compare: one student opens the Real tokenizers page on a fresh server (GPT-2,
  GPT-4 and GPT-4o load in the background from start-up), then N students open
  it together; how long until each sees the comparison.

Server memory (RSS of the server process, and of its worker processes together)
is sampled every second and printed as a timeline; the racing scenario compares
the server's RSS with everyone on the step page just before the races and 15 s
after the races end.

Targets (issue 8; figures on a 2-core machine, not tests): stepping p95 <= 0.5 s;
with 5 racing, stepping p95 <= 1 s and every race uncut within 1.5x its time
alone; cold start p95 <= 5 s; RSS after the races within 100 MB of idle.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: benchmarks/ is a package of the checkout
from benchmarks.students import Server, Student, browser_fetches, descendants  # noqa: E402

STDLIB = "Python's own docs"  # the 2 MB preset: how its option in the Corpus box starts
DONE = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
MERGE_CARD = re.compile(r"Merge <b>(\d+)</b> of")


# ---------------------------------------------------------------------------
# figures


def summary(seconds: list[float], what: str = "clicks") -> str:
    """'median 0.21 s, p95 0.40 s, max 0.52 s (412 clicks)'"""
    if not seconds:
        return f"no {what}"
    ordered = sorted(seconds)
    return f"median {statistics.median(ordered):.2f} s, p95 {p95(ordered):.2f} s, max {ordered[-1]:.2f} s ({len(ordered)} {what})"


def p95(seconds: list[float]) -> float:
    """The nearest-rank 95th percentile."""
    ordered = sorted(seconds)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)] if ordered else float("nan")


def profile(server: Server, path: Path, seconds: float) -> subprocess.Popen:
    """py-spy sampling the server (with replicas: r1) for the stepping's duration, as collapsed stacks in path.

    --gil: only the thread holding the interpreter lock, so the samples are the processor time the pages
    compete for (a thread waiting for the lock, or in a hash that released it, is not counted).
    """
    pid = server.app_pid()
    spy = str(Path(sys.executable).parent / "py-spy")
    command = [spy, "record", "--pid", str(pid), "--duration", str(int(seconds)), "--rate", "200", "--format", "raw", "--gil"]
    return subprocess.Popen([*command, "--output", str(path), "--nonblocking"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def hot_spots(path: Path, clicks: int, top: int = 30) -> str:
    """Where the server's samples went: per function, the share of samples in it or below it (inclusive), busiest first."""
    inclusive: dict[str, int] = {}
    total = 0
    for line in Path(path).read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():  # a stack read while it changed (--nonblocking): garbage, skipped
            continue
        total += int(count)
        names = set()
        for frame in stack.split(";"):
            function, _, where = frame.partition(" (")
            names.add(f"{function} ({where.split(':')[0].rsplit('/', 1)[-1]})")
        for name in names:
            inclusive[name] = inclusive.get(name, 0) + int(count)
    lines = [f"py-spy: {total} samples at 200/s while {clicks} clicks were answered; the functions holding most of them:"]
    for name, count in sorted(inclusive.items(), key=lambda x: -x[1])[:top]:
        lines.append(f"  {count / max(total, 1) * 100:5.1f} %  {name}")
    return "\n".join(lines)


def spread(students: list[Student]) -> str:
    """How many students each replica holds, from their cookies: 'r1 150, r2 150'."""
    counts: dict[str, int] = {}
    for s in students:
        replica = next((c.split("=", 1)[1] for c in s.cookie.split("; ") if c.startswith("BPE_REPLICA=")), "?")
        counts[replica] = counts.get(replica, 0) + 1
    return ", ".join(f"{r} {c}" for r, c in sorted(counts.items()))


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


@dataclass
class Race:
    wall_s: float
    totals: dict[str, float]  # algorithm -> trainer total (s)
    status: dict[str, str]  # algorithm -> status ("finished", "cut off", "cut off: server busy", ...)


def race_of(student: Student, wall_s: float) -> Race:
    table = student.table("algorithm")
    names = table.get("algorithm", [])
    totals = [seconds_of(t) for t in table.get("trainer total", [])]
    return Race(wall_s, dict(zip(names, totals)), dict(zip(names, table.get("status", []))))


def seconds_of(value) -> float:
    """A table's time as a number: 1.5, or the text the race page's st.table shows ("1.50 s", "1,234.5 s")."""
    if isinstance(value, int | float):
        return float(value)
    found = re.search(r"[\d,]+(?:\.\d+)?", str(value))
    return float(found.group(0).replace(",", "")) if found else float("nan")


def race_text(race: Race) -> str:
    # a reference (Rust) tool's row has no trainer total of ours: its status says how it was timed
    parts = [f"{a} {t:.2f} s ({race.status.get(a, '?')})" if t == t else f"{a} ({race.status.get(a, '?')})" for a, t in race.totals.items()]
    return f"{race.wall_s:.1f} s from Start to the verdict; " + ", ".join(parts)


# ---------------------------------------------------------------------------
# scenarios


async def open_all(server: Server, n: int) -> tuple[list[Student], list[float]]:
    students = [server.student(f"student {i + 1}") for i in range(n)]
    seconds = await asyncio.gather(*(s.open() for s in students))
    return students, list(seconds)


def stepping_stdlib(student: Student) -> bool:
    """The step page on the 2 MB preset: the sidebar says 1,000 merges and the run drew a Next button."""
    return student.shows("1,000 merges") and student.drew("Next")


async def pick_stdlib(students: list[Student]) -> list[float]:
    """Everyone picks the 2 MB preset at once; seconds until each one's step page shows a merge of it."""

    async def one(s: Student) -> float:
        start = time.perf_counter()
        await s.choose("Corpus", STDLIB)
        await s.until(lambda: stepping_stdlib(s))
        return time.perf_counter() - start

    return list(await asyncio.gather(*(one(s) for s in students)))


WRONG: list[str] = []  # clicks after which a student's page showed another merge than the one after theirs


async def step(students: list[Student], seconds: float, interval: float, rng: random.Random) -> tuple[list[float], float]:
    """Each student clicks Next every ~interval s (uniform +-25 %) for seconds: the latency of every click, and the
    clicks answered per second once every student has started (starts are spread over the first interval).

    After each click the page must show the merge after the one it showed (sessions never cross);
    a click that does not is noted in WRONG.
    """
    latencies: list[float] = []
    start = time.perf_counter()
    stop = start + seconds
    steady = 0  # clicks sent after every student's first, while the whole class is clicking

    async def one(s: Student) -> None:
        nonlocal steady
        await asyncio.sleep(rng.uniform(0, interval))
        while time.perf_counter() < stop:
            before, sent = s.merge_shown(), time.perf_counter()
            took = await s.click("Next")
            latencies.append(took)
            steady += sent >= start + interval
            if before is not None and s.merge_shown() not in (before + 1, before):  # before: at the last merge already
                WRONG.append(f"{s.name}: merge {before} then {s.merge_shown()}")
            await asyncio.sleep(max(0.0, interval * rng.uniform(0.75, 1.25) - took))

    await asyncio.gather(*(one(s) for s in students))
    return latencies, steady / (seconds - interval)


async def race(student: Student) -> Race:
    """Open the race page, press Start, wait for the verdict; what the page shows then."""
    await student.go("Algorithm race")
    start = time.perf_counter()
    await student.click("Start the race", timeout=1800)  # the whole race, where it runs in the page's script
    await student.until(lambda: student.shows("Agreement") or student.shows("Disagreement") or student.shows("stopped"), timeout=1800)
    return race_of(student, time.perf_counter() - start)


@contextlib.asynccontextmanager
async def serving(app: Path, replicas: int = 0, query: str = "", direct: bool = False):
    """A fresh server for app, visited once per replica (start-up imports the app's modules; query: the page's
    query string, whose work is then built); its memory timeline printed at the end. direct: without the proxy."""
    server = Server(app, replicas, direct=direct)
    try:
        for i in range(max(1, replicas)):
            first = server.student("first visit")
            first.cookie = f"BPE_REPLICA=r{i + 1}" if replicas else ""
            first.query = query
            await first.open()
            await first.close()
        server.memory.mark("one visit")
        settled = await server.memory.settle()
        server.memory.mark(f"start-up work done ({settled:.0f} s after the visit)")
        yield server
        print("\nserver memory:\n" + server.memory.timeline())
    finally:
        server.stop()


async def cold(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    n = args.sessions
    print(f"\n## cold start: {n} students open the app at once ({load()})")
    async with serving(app, args.replicas, direct=args.direct) as server:
        began = time.perf_counter() - server.memory.start
        students, seconds = await open_all(server, n)
        server.memory.mark(f"{n} opened")
        print(f"step page shown: {summary(seconds, 'students')}; {load()}")
        await asyncio.sleep(2.5)  # the samples of the last second
        used = server.memory.cpu_seconds(began, time.perf_counter() - server.memory.start)
        print("processor per student opening: " + ", ".join(f"{g} {s / n * 1000:.1f} ms" for g, s in used.items()))
        await asyncio.gather(*(s.close() for s in students))


async def stepping(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    n, interval = args.sessions, args.interval
    print(f"\n## stepping: {n} students click Next every ~{interval:g} s on the 2 MB preset ({load()})")
    async with serving(app, args.replicas, direct=args.direct) as server:
        students, opened = await open_all(server, n)
        print(f"app opened: {summary(opened, 'students')}")
        picked = await pick_stdlib(students)
        server.memory.mark(f"{n} on the 2 MB preset")
        print(f"2 MB preset picked together, until its step page shows: {summary(picked, 'students')}")
        spy = profile(server, args.profile, args.seconds) if args.profile else None
        start, client_cpu = time.perf_counter(), time.process_time()
        began = start - server.memory.start
        latencies, rate = await step(students, args.seconds, interval, rng)
        elapsed = time.perf_counter() - start
        client_cpu = (time.process_time() - client_cpu) / elapsed * 100
        server.memory.mark("stepping ends")
        print(f"Next, until the page is updated: {summary(latencies)}")
        print(f"clicks after which the page showed a merge other than the next one: {len(WRONG)} {WRONG[:3]}")
        print(
            f"clicks answered: {rate:.1f}/s once every student had started (the class asks for {n / interval:.1f}/s), "
            f"{len(latencies):,} in all; {load()}"
        )
        print(f"processor while stepping (100 % = a core): {server.memory.cpu_summary(began + 2, began + elapsed)}")
        used = server.memory.cpu_seconds(began + 2, began + elapsed)
        answered = len(latencies) * (elapsed - 2) / elapsed
        per_click = ", ".join(f"{g} {s / answered * 1000:.1f} ms" for g, s in used.items())
        print(
            f"processor per click answered (each group's processor over all the class's clicks): {per_click}; "
            f"in all {sum(used.values()) / answered * 1000:.1f} ms"
        )
        print(f"the load generator itself (this process, its {n} websockets): {client_cpu:.0f} %")
        if spy is not None:
            spy.wait()
            print(hot_spots(args.profile, len(latencies)))
        if args.replicas:
            print(f"students per replica: {spread(students)}")
        await asyncio.gather(*(s.close() for s in students))


async def racing(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    n, k = args.sessions, args.racers
    print(f"\n## racing: one race alone, then {n - k} stepping while {k} race, on the 2 MB preset ({load()})")
    async with serving(
        app, args.replicas, direct=args.direct
    ) as server:  # a server of its own, so that the race alone leaves nothing behind
        [alone], _ = await open_all(server, 1)
        await pick_stdlib([alone])
        solo = await race(alone)
        print(f"race alone: {race_text(solo)}")
        await alone.close()

    async with serving(app, args.replicas, direct=args.direct) as server:
        students, _ = await open_all(server, n)
        await pick_stdlib(students)
        idle = server.memory.mark("all on the 2 MB step page")
        racers, steppers = students[:k], students[k:]
        if args.replicas:
            print(f"racers per replica: {spread(racers)}; stepping: {spread(steppers)}")
        server.memory.mark(f"{len(steppers)} stepping; {k} press Start together")
        stepping_task = asyncio.create_task(step(steppers, args.seconds, args.interval, rng))
        races = await asyncio.gather(*(race(r) for r in racers))
        server.memory.mark("the races end")
        latencies, _ = await stepping_task
        print(f"stepping while racing, Next until the page is updated: {summary(latencies)}")
        for i, r in enumerate(races, 1):
            print(f"race {i}: {race_text(r)}; {r.wall_s / solo.wall_s:.2f}x the race alone")
        busy = sum(1 for r in races if any("busy" in s for s in r.status.values()))
        print(
            f"races with a trainer cut off for lack of processor ('busy'): {busy} of {k} (alone: {int(any('busy' in s for s in solo.status.values()))})"
        )
        print(f"Start to verdict: {summary([r.wall_s for r in races], 'races')}; alone {solo.wall_s:.1f} s")
        await asyncio.gather(*(s.close() for s in students))
        await asyncio.sleep(15)
        after = server.memory.mark("15 s after the races")
        print(
            f"server RSS: {idle:.0f} MB with everyone on the step page before the races, {after:.0f} MB 15 s after them ({after - idle:+.0f} MB)"
        )


async def compare(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    """The Real tokenizers page (GPT-2, GPT-4, GPT-4o and the run side by side): first one student on a fresh server
    (the tokenizers may still be loading), then the whole class opening it together."""
    n = args.sessions
    print(f"\n## compare: {n} students open the Real tokenizers page together ({load()})")

    def compared(s: Student) -> bool:
        return s.shows("<table class='compare'>") and s.shows("<td>GPT-4o</td>")

    async def one(s: Student) -> float:
        start = time.perf_counter()
        await s.go("Real tokenizers")
        await s.until(lambda: compared(s))
        return time.perf_counter() - start

    async with serving(app, args.replicas, direct=args.direct) as server:
        [first], _ = await open_all(server, 1)
        print(f"first student, on a server started {time.perf_counter() - server.memory.start:.1f} s ago: {await one(first):.2f} s")
        await first.close()
        students, _ = await open_all(server, n)
        seconds = list(await asyncio.gather(*(one(s) for s in students)))
        server.memory.mark(f"{n} on the compare page")
        print(f"the class together, until the comparison is shown: {summary(seconds, 'students')}; {load()}")
        await asyncio.gather(*(s.close() for s in students))


async def open_storm(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    """N students open the same link at the same moment (the start of a lecture), on a server that has served it once
    (--fresh: that has served only the default page, so the link's work is built while they wait)."""
    n, query = args.sessions, args.link
    warm = "" if args.fresh else query
    how = "on a server whose first visit opened the default page" if args.fresh else "on a server that has served it once"
    print(f"\n## open-storm: {n} students open /?{query} at the same moment, {how} ({load()})")
    async with serving(app, args.replicas, warm, args.direct) as server:
        began = time.perf_counter() - server.memory.start
        students = [server.student(f"student {i + 1}") for i in range(n)]
        assets = await asyncio.to_thread(browser_fetches, server.url, query) if not args.no_assets else ()
        if assets:
            print(f"each student first fetches what Chromium fetched opening the page: {len(assets)} requests")
        for s in students:
            s.query, s.assets = query, assets
        spy = profile(server, args.profile, 30) if args.profile else None

        async def one(s: Student) -> float:
            await s.open()
            await s.until(lambda: s.merge_shown() is not None)  # a page still building its trace polls until it is ready
            return time.perf_counter() - s.opened

        seconds = list(await asyncio.gather(*(one(s) for s in students)))
        server.memory.mark(f"{n} opened")
        painted = [s.painted for s in students if s.painted is not None]
        print(f"first paint (the merge card arrives): {summary(painted, 'students')}; {load()}")
        print(f"page complete (the run finished): {summary(seconds, 'students')}")
        merges = sorted({s.merge_shown() for s in students}, key=str)
        print(f"merge shown: {merges}; students without a merge card: {n - len(painted)}")
        await asyncio.sleep(2.5)  # the samples of the last second
        used = server.memory.cpu_seconds(began, time.perf_counter() - server.memory.start)
        print("processor per student opening: " + ", ".join(f"{g} {s / n * 1000:.1f} ms" for g, s in used.items()))
        if spy is not None:
            spy.wait()
            print(hot_spots(args.profile, n))
        await asyncio.gather(*(s.close() for s in students))


def colliding_tiktoken(count: int, size: int = 128, seed: int = 0) -> bytes:
    """A .tiktoken of the 256 bytes and `count` tokens of `size` bytes with one bpe_hash for every seed (issue 37.1).

    bpe_hash (bpe/c/encode.h) takes each 8-byte block as h = (h ^ w) * K; h ^= h >> 29: flipping bit 63 of a
    block changes the state by bits 63 and 34 whatever came before, and flipping those in the next block
    cancels it. So each of the size / 8 - 1 places to do so doubles the tokens with one hash: the core's
    tables hold them in one chain, and reading the file is quadratic in count (27,981 tokens, 5 MB: 4-10 s).
    Its tokens cannot be made of two lower-ranked ones, so the file is refused, after that time.
    """
    import base64
    import struct

    base = random.Random(seed).randbytes(size)
    tokens = [bytes([b]) for b in range(256)]
    for variant in range(count):
        token = bytearray(base)
        for i in range(size // 8 - 1):
            if variant >> i & 1:
                for block, mask in ((i, 1 << 63), (i + 1, 1 << 63 | 1 << 34)):
                    struct.pack_into("<Q", token, 8 * block, struct.unpack_from("<Q", token, 8 * block)[0] ^ mask)
        tokens.append(bytes(token))
    return "".join(f"{base64.b64encode(t).decode()} {rank}\n" for rank, t in enumerate(tokens)).encode()


# where a hostile student pastes: (page, its text box's label, the corpus to pick first, or None)
BOXES = (
    ("Tokenize & export", "Text to tokenize", None),
    ("Step through", "Your own sentence", None),
    ("Real tokenizers", "Text to compare", None),
    ("Encode, step by step", "A word or a sentence", None),
    ("Step through", "Text", "Paste your own text"),  # the sidebar's paste box
)


async def honest_reruns(student: Student, stop: asyncio.Event, every: float = 0.5) -> list[float]:
    """The honest student reruns the default page every `every` s until stop is set: each run's seconds."""
    seconds = []
    while not stop.is_set():
        seconds.append(await student.rerun(timeout=120))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)
    return seconds


async def paste_everywhere(student: Student, size: int) -> list[tuple[str, float, str]]:
    """One hostile student pastes `size` characters into each text box in turn: (box, seconds until that run ended,
    what became of it: "refused", "taken", or "connection closed" when the server hung up, after which the student
    opens a new session)."""
    junk = ("lorem ipsum dolor sit amet " * (size // 27 + 1))[:size]
    done = []
    for page, label, corpus in BOXES:
        await student.go(page, timeout=120)
        if corpus is not None:
            await student.choose("Corpus", corpus, timeout=120)
        start = time.perf_counter()
        try:
            await student.type(label, junk, timeout=900)
            what = "refused" if student.shows("so it was not taken") else "taken"
        except ConnectionError:
            what = "connection closed"
            with contextlib.suppress(Exception):
                await student.close()
            student.values.clear()
            await student.open(timeout=900)
        done.append((f"{page}: {label}", time.perf_counter() - start, what))
        if corpus is not None and what != "connection closed":
            await student.choose("Corpus", "low / lower", timeout=120)
    return done


async def hostile(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    """One student reruns the default page while another pastes 15 MB into every text box; then four paste at once.

    Targets (issue 27): the honest student's slowest run <= 1.0 s, the server's growth <= 300 MB, each paste refused
    (or done) within 30 s; with four hostile students at once, the honest student's slowest run <= 2 s.
    """
    size = int(args.paste_mb * 1_000_000)
    print(f"\n## hostile: one student reruns the default page while others paste {args.paste_mb:g} MB into every text box ({load()})")
    async with serving(app, args.replicas, direct=args.direct) as server:
        [honest], _ = await open_all(server, 1)
        alone = [await honest.rerun() for _ in range(10)]
        print(f"the honest student alone, rerunning the default page: {summary(alone, 'runs')}")
        for n in (1, 4):
            hostiles, _ = await open_all(server, n)
            before = server.memory.mark(f"{n} hostile student{'s' * (n > 1)} start pasting")
            began = time.perf_counter() - server.memory.start
            stop = asyncio.Event()
            honest_task = asyncio.create_task(honest_reruns(honest, stop))
            pasted = await asyncio.gather(*(paste_everywhere(h, size) for h in hostiles))
            stop.set()
            runs = await honest_task
            apps = [g for g in server.memory.groups if g == "server" or g.startswith("r")]
            peak = max((sum(g.get(a, (0, 0))[0] for a in apps) for t, g in server.memory.samples if t >= began), default=0.0)
            after = server.memory.mark(f"{n} hostile done")
            print(f"{n} hostile: the honest student's reruns meanwhile: {summary(runs, 'runs')}; {load()}")
            for box, took, what in pasted[0]:
                print(f"  {box}: {took:.2f} s until that run ended: {what}")
            slowest = max(took for p in pasted for _, took, _ in p)
            print(f"  slowest paste of the {n}: {slowest:.2f} s; server RSS {before:.0f} MB before, peak {peak:.0f}, {after:.0f} after")
            await asyncio.gather(*(h.close() for h in hostiles))
        await honest.close()


async def upload(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    """N students step on the 2 MB preset, first alone, then while one more uploads on Tokenize & export, again and again,
    a .tiktoken that is slow to read (colliding_tiktoken: the reviewer's 27,981 tokens built to collide in the core's hash,
    5 MB; a new file each time, so no read is shared), each until the page says what became of it.

    Targets (issue 37.1): while the uploads go on, the stepping students' p95 <= 0.5 s and slowest <= 1 s.
    """
    n = args.sessions
    count = max(2, min(12, math.ceil(args.seconds / 4)))
    print(
        f"\n## upload: {n} students step, alone and then while one uploads {args.upload_tokens:,}-token colliding .tiktoken files ({load()})"
    )
    files = [colliding_tiktoken(args.upload_tokens, seed=i) for i in range(count)]  # made before: this process's time is the clicks'
    print(f"the files: {count} of {len(files[0]) / 1e6:.1f} MB, each {args.upload_tokens:,} tokens of 128 bytes with one bpe_hash")
    async with serving(app, args.replicas, direct=args.direct) as server:
        students, _ = await open_all(server, n)
        await pick_stdlib(students)
        [uploader], _ = await open_all(server, 1)
        await uploader.go("Tokenize & export")
        await uploader.choose("Real tokenizer", "Upload")
        server.memory.mark(f"{n} on the 2 MB preset")
        alone, _ = await step(students, args.seconds, args.interval, rng)
        print(f"stepping alone, Next until the page is updated: {summary(alone)}; {load()}")
        server.memory.mark("uploads start")
        began = time.perf_counter() - server.memory.start
        stop, took, said = asyncio.Event(), [], []

        async def uploads() -> None:
            for i, data in enumerate(files):
                if stop.is_set():
                    return
                name, start = f"hostile-{i}.tiktoken", time.perf_counter()
                await uploader.upload("A tokenizer's files", name, data, timeout=300)
                await uploader.until(lambda name=name: uploader.shows(f"{name}:") or uploader.shows(f"Tokens ({name})"), timeout=300)
                took.append(time.perf_counter() - start)
                said.append(next((t for t in uploader.seen[0] if f"{name}:" in t), "(loaded)")[:120])

        uploading = asyncio.create_task(uploads())
        during, _ = await step(students, args.seconds, args.interval, rng)
        stop.set()
        await uploading
        server.memory.mark("uploads end")
        print(f"stepping while one student uploads, Next until the page is updated: {summary(during)}; {load()}")
        print(f"each upload, until the page said what became of it: {summary(took, 'uploads')}")
        print(f"  the page said: {said[0] if said else '(nothing)'}")
        print(f"processor while uploading (100 % = a core): {server.memory.cpu_summary(began, time.perf_counter() - server.memory.start)}")
        await asyncio.gather(uploader.close(), *(s.close() for s in students))


def pool_server(server: Server) -> int:
    """The pid of the replicas' pool server (python -m serve.shared_pool), as now running."""
    for pid in descendants(server.process.pid):
        with contextlib.suppress(OSError):
            if b"serve.shared_pool" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return pid
    raise LookupError("no pool server: the stall scenario needs --replicas")


async def stall(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    """kill -STOP of the replicas' pool server while N students pick a corpus (a run the pool must find or build).

    Targets (issue 27): every page says the pool is not answering within 10 s, and shows its run from a new pool within 30 s.
    """
    replicas = args.replicas or 2
    n = min(args.sessions, 30)
    print(f"\n## stall: kill -STOP of the pool server under --replicas {replicas}, {n} students pick a corpus ({load()})")
    async with serving(app, replicas) as server:
        students, _ = await open_all(server, n)
        stopped = pool_server(server)
        os.kill(stopped, signal.SIGSTOP)
        start = time.perf_counter()
        try:

            async def one(s: Student) -> tuple[float, float]:
                """(seconds until the page said the pool is not answering, until it showed its run); nan: not within args.wait."""
                try:
                    await s.choose("Corpus", "aaaa abab", timeout=args.wait)
                    said = time.perf_counter() - start if s.shows("not answering") else float("nan")
                    await s.until(lambda: "Merge <b>1</b> of 8" in " ".join(s.seen[0]), timeout=args.wait)
                except TimeoutError:
                    return float("nan"), float("nan")
                return said, time.perf_counter() - start

            times = await asyncio.gather(*(one(s) for s in students))
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(stopped, signal.SIGKILL)
        said = [t for t, _ in times if t == t]
        print(f"the page says the pool is not answering: {summary(said, 'students')} after the stop ({n - len(said)} never said it)")
        served = [t for _, t in times if t == t]
        print(
            f"the page shows its run from a new pool: {summary(served, 'students')} after the stop ({n - len(served)} not within {args.wait:.0f} s); {load()}"
        )
        log = Path(server.log).read_text(errors="replace")
        print("supervisor: " + "; ".join(line for line in log.splitlines() if "pool server" in line or line.startswith("pool: pid")))
        await asyncio.gather(*(s.close() for s in students))


async def first_visits(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    """What the first visitors of a fresh server wait for: the first page, the first /?corpus=stdlib&merge=37, the first
    GPT-4o vocabulary; on a first start (an empty disk cache, BPE_CACHE) and on a restart (the cache kept)."""
    print(f"\n## first visits: a fresh server's first page, first stdlib merge 37, first GPT-4o vocabulary ({load()})")
    with tempfile.TemporaryDirectory(prefix="bpe-cache-") as cache:
        os.chmod(cache, 0o700)
        for start in ("first start (empty disk cache)", "restart (disk cache kept)"):
            server = Server(app, args.replicas, env={"BPE_CACHE": cache}, direct=args.direct)
            try:
                first = server.student("first")
                page = await first.open()
                second = server.student("second")
                second.query = "corpus=stdlib&merge=37"
                began = time.perf_counter()
                await second.open()
                await second.until(lambda s=second: s.merge_shown() == 37, timeout=600)
                merge = time.perf_counter() - began
                began = time.perf_counter()
                await second.go("Vocabulary")
                await second.choose("Vocabulary of", "GPT-4o")
                await second.until(lambda s=second: s.shows("tokens of GPT-4o's tokenizer"), timeout=600)
                vocabulary = time.perf_counter() - began
                print(
                    f"{start}: first page {page:.1f} s, first stdlib merge 37 {merge:.1f} s, first GPT-4o vocabulary {vocabulary:.1f} s; {load()}"
                )
                await asyncio.gather(first.close(), second.close())
            finally:
                server.stop()


async def pages(app: Path, args: argparse.Namespace, rng: random.Random) -> None:
    """One student on a warm server clicks from page to page in the sidebar, every page in turn, --rounds times: each
    page's first visit and its warm click (the median of the later rounds), as the server answers it (until its script
    has finished) and what it sent; then the same clicks in Chromium, until the page is drawn (every run asked has
    ended and no element is still a grey placeholder), which counts the browser's own work on what was sent."""
    print(f"\n## pages: one student clicks through the pages of the sidebar, {args.rounds} rounds after each first visit ({load()})")
    async with serving(app, args.replicas, direct=args.direct) as server:
        student = server.student("pages")
        await student.open()
        titles = list(student.pages)  # as the server lists them: the sidebar's order
        seconds: dict[str, list[float]] = {title: [] for title in titles}
        sent: dict[str, list[int]] = {title: [] for title in titles}
        for _ in range(args.rounds + 1):
            for title in titles:
                before = student.received
                seconds[title].append(await student.go(title))
                sent[title].append(student.received - before)
        await student.close()
        browser = await asyncio.to_thread(browser_clicks, server.port, titles, args.rounds) if args.browser else {}
    print(
        "| page | server: first visit | server: warm click (median) | sent (warm) | Chromium: first visit | Chromium: warm click (median) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for title in titles:
        shown = browser.get(title)
        in_browser = f"{shown[0]:.2f} s | {statistics.median(shown[1:]):.2f} s" if shown else "– | –"
        warm = statistics.median(seconds[title][1:])
        print(
            f"| {title} | {seconds[title][0]:.2f} s | {warm * 1000:.0f} ms | {statistics.median(sent[title][1:]) / 1000:.0f} KB | {in_browser} |"
        )
    print(load())


def browser_clicks(port: int, titles: list[str], rounds: int) -> dict[str, list[float]]:
    """Chromium on the server at port clicks each sidebar link in turn, rounds + 1 times: seconds until each page is drawn."""
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "tests"))
    from e2e.conftest import ARGS, CHROMIUM, NO_SKELETON_JS, RUNS_JS, open_from_sidebar, wait_idle

    seconds: dict[str, list[float]] = {title: [] for title in titles}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        context.add_init_script(RUNS_JS)  # counts the runs asked and answered: the wait the browser tests use
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        wait_idle(page, 180_000)
        for _ in range(rounds + 1):
            for title in titles:
                start = time.perf_counter()
                open_from_sidebar(page, title, None, 180_000)
                page.wait_for_function(NO_SKELETON_JS, timeout=180_000)
                seconds[title].append(time.perf_counter() - start)
        browser.close()
    return seconds


SCENARIOS = {
    "cold": cold,
    "stepping": stepping,
    "racing": racing,
    "compare": compare,
    "open-storm": open_storm,
    "hostile": hostile,
    "upload": upload,
    "stall": stall,
    "first-visits": first_visits,
    "pages": pages,
}


# ---------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", type=Path, default=ROOT / "app.py", help="the app to serve (default: this checkout's)")
    parser.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    parser.add_argument("--sessions", type=int, default=30, help="students (default 30)")
    parser.add_argument("--racers", type=int, default=5, help="of them racing in the racing scenario (default 5)")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long students step (default 60)")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between one student's clicks (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--no-assets",
        action="store_true",
        help="open-storm: students open only the websocket (by default each first fetches the files Chromium fetched opening the page)",
    )
    parser.add_argument("--wait", type=float, default=120.0, help="stall: how long a student waits for its page (default 120 s)")
    parser.add_argument("--paste-mb", type=float, default=15.0, help="hostile: how much each hostile student pastes (default 15 MB)")
    parser.add_argument(
        "--upload-tokens", type=int, default=27_981, help="upload: tokens of each colliding .tiktoken (default 27,981: 5 MB)"
    )
    parser.add_argument("--fresh", action="store_true", help="open-storm: the link is opened first by the storm, not by a visit before it")
    parser.add_argument(
        "--link", default="corpus=stdlib&merge=37", help="open-storm: the query string every student opens (default corpus=stdlib&merge=37)"
    )
    parser.add_argument(
        "--profile", type=Path, help="stepping, open-storm: py-spy the server (r1) into this file and print where its time went"
    )
    parser.add_argument(
        "--rounds", type=int, default=5, help="pages: how many times each page is clicked after its first visit (default 5)"
    )
    parser.add_argument(
        "--browser", action=argparse.BooleanOptionalAction, default=True, help="pages: the same clicks in Chromium too (default: yes)"
    )
    parser.add_argument(
        "--replicas", type=int, default=0, help="serve through HAProxy with N app processes (serve/replicas.py); 0: one app process"
    )
    parser.add_argument(
        "--direct",
        action="store_true",
        help="one `streamlit run web.py` without HAProxy in front (a machine without it; this project before issue 37)",
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    app = args.app.resolve()
    served = (
        f"{args.replicas} replicas behind HAProxy" if args.replicas else "one streamlit run" if args.direct else "one app behind HAProxy"
    )
    print(f"# {app}, {served}, on {os.cpu_count()} cores; {load()}; {time.strftime('%Y-%m-%d %H:%M')}")
    for name in list(SCENARIOS) if args.scenario == "all" else [args.scenario]:
        asyncio.run(SCENARIOS[name](app, args, rng))
    print(f"\n# done; {load()}")


if __name__ == "__main__":
    main()
