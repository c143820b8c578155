"""The race page's runs, charts and tables, built on bpe.race.

The runs (`live_race`, `live_sweep`, `live_speedup`) draw as they go and keep
what they have found in st.session_state after every step, so a run that is
stopped (any click interrupts the script) leaves its partial results behind.
Heavy runs take a server-wide slot first, so a classroom's sessions queue for
the processor instead of slowing each other's timings down.

Everything here shows numbers, fixed names and show()-rendered tokens in
dataframes; nothing from the corpus reaches HTML or markdown.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

import altair as alt
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from bpe import ALGORITHMS
from bpe import race as R
from bpe.corpora import END_OF_TEXT
from bpe.events import WORK_NAMES

from . import corpus as corpora
from .render import show_pair

# one colour per trainer, the same in every chart; HF is the grey reference
COLOURS = {"naive": "#d62728", "positions": "#ff7f0e", "parent_set": "#2ca02c", "heap": "#1f77b4", R.HF: "#7f7f7f"}
REDRAW_S = 0.2  # how often the live chart is redrawn
CHART_POINTS = 200  # points per line sent to the browser
SLOTS = max(1, (os.cpu_count() or 1) // 2)  # heavy runs at a time on the whole server


def _axes(chart: alt.Chart, **legend) -> alt.Chart:
    """Sizes a projector at the back of a room can read."""
    return (
        chart.configure_axis(labelFontSize=14, titleFontSize=16)
        .configure_legend(labelFontSize=15, titleFontSize=15, symbolStrokeWidth=4, labelLimit=420, **legend)
        .configure_title(fontSize=17)
    )


def _colour(field: str = "algorithm:N") -> alt.Color:
    """The four trainers' colours, the same in every chart."""
    return alt.Color(field, title="algorithm", scale=alt.Scale(domain=list(ALGORITHMS), range=[COLOURS[a] for a in ALGORITHMS]))


# ---------------------------------------------------------------------------
# a server-wide slot for heavy runs


@st.cache_resource
def _slots() -> threading.BoundedSemaphore:
    return threading.BoundedSemaphore(SLOTS)


@contextmanager
def server_slot(message: DeltaGenerator) -> Iterator[None]:
    """Wait, visibly and interruptibly, until fewer than SLOTS heavy runs are going on the server."""
    slots = _slots()
    while not slots.acquire(timeout=0.5):
        message.info("Another session is running a race or a sweep; yours starts as soon as it ends…")
    message.empty()
    try:
        yield
    finally:
        slots.release()


# ---------------------------------------------------------------------------
# the race


@dataclass(frozen=True)
class RaceRecord:
    """A race as the page shows it: kept per session, so coming back does not rerun it."""

    key: tuple  # (corpus digest, pattern, special tokens, merges): what it was run on
    corpus_label: str
    n_bytes: int
    num_merges: int
    budget_s: float
    prep_seconds: dict[str, float]  # "read", "pre-tokenize": once, shared by all
    results: tuple[R.RaceResult, ...]
    status: str  # "running", "finished" or "stopped"
    clock_overhead_s: float = 0.0
    hf: R.RaceResult | None = None
    hf_note: str = ""  # why there is no reference, or whether it agrees (numbers only: shown as markdown)
    hf_rows: tuple = ()  # (trainer, merge, count) of both choices where HF first differs


def race_key(settings) -> tuple:
    return (settings.key, settings.pattern, settings.specials, settings.num_merges)


def live_race(settings, budget_s: float, with_hf: bool, progress_slot, chart_slot) -> RaceRecord:
    """Run the four trainers in turns, redrawing the chart every REDRAW_S; return the finished record."""
    with server_slot(progress_slot):
        progress_slot.progress(0.0, text="Pre-tokenizing once for all four trainers…")
        prepared = R.prepare(settings.corpus.data, pattern=settings.pattern, special_tokens=settings.specials)
        record = RaceRecord(
            key=race_key(settings),
            corpus_label=settings.corpus.name,
            n_bytes=prepared.corpus.n_bytes,
            num_merges=settings.num_merges,
            budget_s=budget_s,
            prep_seconds=prepared.seconds,
            results=(),
            status="running",
            clock_overhead_s=R.clock_overhead(),
        )
        drawn = 0.0
        for results in R.race(prepared.corpus, settings.num_merges, budget_s):
            record = replace(record, results=results)
            st.session_state["race"] = record
            if time.perf_counter() - drawn >= REDRAW_S:  # the trainers' clocks are stopped here
                progress_slot.progress(race_progress(record), text=progress_text(record))
                chart_slot.altair_chart(race_chart(record), width="stretch")
                drawn = time.perf_counter()
        if with_hf:
            progress_slot.progress(1.0, text="Training HuggingFace tokenizers' BPE as a reference…")
        reference = hf_reference(settings, prepared, record.results) if with_hf else {}
        record = replace(record, status="finished", **reference)
    st.session_state["race"] = record
    progress_slot.empty()
    return record


def hf_reference(settings, prepared: R.Prepared, results: tuple[R.RaceResult, ...]) -> dict:
    """The HF reference and what to say about it, or only the sentence saying why there is none.

    Its merges are compared with heap's; where they first differ, the count of
    HF's choice is looked up in our trainer's state to show whether it was a tie.
    """
    if not R.hf_available():
        return {"hf_note": "HuggingFace tokenizers is not installed, so there is no reference line."}
    if settings.pattern != "gpt2":
        return {"hf_note": "The HuggingFace reference uses GPT-2's pre-tokenizer; choose the gpt2 pre-tokenizer to add it."}
    hf = R.hf_reference(settings.corpus.data.decode("utf-8", "replace"), settings.num_merges, settings.specials)
    ours = next(r for r in results if r.algorithm == "heap")
    found = R.first_difference([ours, hf])
    if found is None:
        return {"hf": hf, "hf_note": f"HuggingFace's Rust trainer made the same {R.compared([ours, hf]):,} merges."}
    rank, there = found
    (mine, count), (theirs, _) = there["heap"], there[R.HF]
    their_count = R.pair_count_after(prepared.corpus, ours.merges[:rank], theirs)
    why = (
        "a tie, which it breaks another way."
        if their_count == count
        else "its pair has a different count, so its input differs from ours (invalid UTF-8 is replaced for it)."
    )
    agreed = f"agrees on the first {rank:,} merges and differs at merge {rank + 1:,}" if rank else "differs already at merge 1"
    return {
        "hf": hf,
        "hf_note": f"HuggingFace's Rust trainer {agreed}: {why}",
        "hf_rows": (("ours (heap)", show_pair(*mine), f"{count:,}"), (R.HF, show_pair(*theirs), f"{their_count:,}")),
    }


def hf_table(record: RaceRecord) -> None:
    """The sentence about the HF reference, and where it first differs (tokens in a table, never in markdown)."""
    if record.hf_note:
        st.caption(record.hf_note)
    if record.hf_rows:
        st.dataframe(pd.DataFrame(record.hf_rows, columns=["trainer", "merge", "count"]), hide_index=True)


def race_progress(record: RaceRecord) -> float:
    """Share of the race done: each trainer is done, or as far as its merges or its budget take it."""
    if not record.results:
        return 0.0
    shares = [1.0 if r.done else max(len(r.merges) / max(record.num_merges, 1), r.total / record.budget_s) for r in record.results]
    return min(1.0, sum(shares) / len(shares))


def progress_text(record: RaceRecord) -> str:
    parts = []
    for r in record.results:
        mark = " ✓" if r.done and not r.cut_off else " (cut off)" if r.cut_off else ""
        parts.append(f"{r.algorithm} {len(r.merges):,}{mark}")
    return f"Merges done of {record.num_merges:,}: " + " · ".join(parts)


def thin(times: tuple[float, ...], limit: int = CHART_POINTS) -> list[int]:
    """Indices of at most limit evenly spread samples, always keeping the last."""
    n = len(times)
    if n <= limit:
        return list(range(n))
    step = n / limit
    return sorted({int(i * step) for i in range(limit)} | {n - 1})


def line_name(result: R.RaceResult) -> str:
    """A trainer's name as the legend shows it: how a cut-off run ended is part of its name."""
    if result.algorithm == R.HF:
        return "HF tokenizers (Rust, all phases, wall-clock)"
    return f"{result.algorithm}: cut off at {len(result.merges):,} merges" if result.cut_off else result.algorithm


def race_chart(record: RaceRecord) -> alt.Chart:
    """Cumulative time against merges done, one line per trainer; a ring where one was cut off.

    The legend names the lines (labels on the lines collide where runs end close together).
    """
    runs = list(record.results) + ([record.hf] if record.hf else [])
    names = [line_name(r) for r in runs]
    colour = alt.Color("line:N", title=None, sort=names, scale=alt.Scale(domain=names, range=[COLOURS[r.algorithm] for r in runs]))
    rows, ends, reference = [], [], []
    for r, name in zip(runs, names):
        if r.algorithm == R.HF:  # one total only: a straight dashed line to it
            reference += [{"line": name, "merges": 0, "seconds": 0.0}, {"line": name, "merges": len(r.merges), "seconds": r.total}]
            continue
        if r.done or r.merges:
            rows.append({"line": name, "merges": 0, "seconds": r.seconds["initial count"]})
        rows += [{"line": name, "merges": i + 1, "seconds": r.times[i]} for i in thin(r.times)]
        if r.cut_off:
            ends.append({"line": name, "merges": len(r.merges), "seconds": r.total})
    x = alt.X("merges:Q", title="merges done", scale=alt.Scale(domainMin=0))
    top = max([r.total for r in runs] + [1e-3]) * 1.08  # room above the highest ring
    y = alt.Y("seconds:Q", title="seconds of processor time", scale=alt.Scale(domain=[0, top], nice=False))
    tooltip = [alt.Tooltip("line:N", title="algorithm"), "merges:Q", alt.Tooltip("seconds:Q", format=".3f")]
    frame = pd.DataFrame(rows, columns=["line", "merges", "seconds"])
    layers = [alt.Chart(frame).mark_line(strokeWidth=3).encode(x=x, y=y, color=colour, tooltip=tooltip)]
    if ends:
        layers.append(alt.Chart(pd.DataFrame(ends)).mark_point(size=220, filled=False, strokeWidth=3).encode(x=x, y=y, color=colour))
    if reference:
        layers.append(
            alt.Chart(pd.DataFrame(reference)).mark_line(strokeWidth=2, strokeDash=[6, 4]).encode(x=x, y=y, color=colour, tooltip=tooltip)
        )
    chart = alt.layer(*layers).properties(height=480, title=f"{record.corpus_label}: time to make {record.num_merges:,} merges")
    return _axes(chart, orient="bottom", columns=3)


def verdict(record: RaceRecord) -> None:
    """Do the merge lists agree? If not, where they first differ, with both candidates and counts."""
    results = record.results
    if not results:
        return
    found = R.first_difference(results)
    if found is None:
        longest = max(len(r.merges) for r in results)
        short = [r for r in results if len(r.merges) < longest]
        if not short:
            st.success(f"Agreement: the {len(results)} algorithms made the same {longest:,} merges in the same order.")
            return
        st.success(f"Agreement: the {len(results)} algorithms made the same merges in the same order, as far as each got.")
        names = [f"{r.algorithm} ({len(r.merges):,} merges)" for r in short]
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        why = "cut off by the time budget" if all(r.cut_off for r in short) else "stopped early"
        st.caption(f"{listed} {'was' if len(short) == 1 else 'were'} {why}; every merge they made matches the others'.")
        return
    rank, there = found
    st.error(f"Disagreement: the algorithms first differ at merge {rank + 1:,}.")
    rows = [{"algorithm": name, "merge": show_pair(*m[0]) if m else "(none)", "count": m[1] if m else None} for name, m in there.items()]
    st.dataframe(pd.DataFrame(rows), hide_index=True)


def phase_table(record: RaceRecord) -> None:
    """Seconds per phase per trainer; read and pre-tokenize are done once and shared."""
    rows = []
    for r in record.results:
        status = {"time budget": "cut off", "wall-clock budget": "cut off: server busy"}.get(
            r.stop_reason, "finished" if r.done else record.status
        )
        rows.append(
            {
                "algorithm": r.algorithm,
                "read (shared)": record.prep_seconds["read"],
                "pre-tokenize (shared)": record.prep_seconds["pre-tokenize"],
                "initial count": r.seconds["initial count"],
                "merge loop": r.seconds["merge loop"],
                "trainer total": r.total,
                "merges": len(r.merges),
                "status": status,
            }
        )
    seconds = {c: st.column_config.NumberColumn(c, format="%.3f s") for c in list(rows[0])[1:6]} if rows else {}
    st.dataframe(pd.DataFrame(rows), hide_index=True, column_config=seconds, width="stretch")
    busy = [r.algorithm for r in record.results if r.stop_reason == "wall-clock budget"]
    if busy:
        st.caption(
            f"The server was busy: {', '.join(busy)} got less than half a processor, so it was stopped after "
            f"{R.WALL_FACTOR * record.budget_s:g} s of wall-clock time, before using its {record.budget_s:g} s of processor time."
        )


def work_table(record: RaceRecord) -> None:
    """The trainers' work counters per merge, one row per counter: the numbers behind the complexity."""
    columns = {"work per merge": list(WORK_NAMES.values())}
    for r in record.results:
        merges = max(len(r.merges), 1)
        columns[r.algorithm] = [f"{r.work[key] / merges:,.1f}" if key in r.work else "" for key in WORK_NAMES]
    frame = pd.DataFrame(columns)
    used = frame.drop(columns="work per merge").ne("").any(axis=1)
    st.dataframe(frame[used], hide_index=True, width="stretch")


# ---------------------------------------------------------------------------
# scaling


@dataclass(frozen=True)
class SweepRecord:
    source_label: str
    sizes: tuple[int, ...]
    num_merges: int
    budget_s: float
    points: tuple[R.ScalingPoint, ...]
    status: str  # "running", "finished" or "stopped"


def sweep_data(source: str, settings) -> tuple[str, bytes, str, tuple[str, ...]]:
    """(label, bytes, pattern, special tokens) of the corpus to sweep."""
    if source == "current" and not isinstance(settings, str):
        return settings.corpus.name, settings.corpus.data, settings.pattern, settings.specials
    return "stdlib prose (2 MB)", corpora.stdlib_bytes(), "gpt2", (END_OF_TEXT,)


def live_sweep(label: str, data: bytes, pattern: str, specials, num_merges: int, budget_s: float, progress_slot, chart_slot) -> SweepRecord:
    sizes = tuple(R.sweep_sizes(len(data)))
    record = SweepRecord(label, sizes, num_merges, budget_s, (), "running")
    total = len(sizes) * len(ALGORITHMS)

    def tick(n_bytes: int, result: R.RaceResult) -> None:  # called with every clock stopped
        progress_slot.progress(
            min(1.0, len(record.points) / total),
            text=f"{n_bytes / 1e6:.2f} MB: {result.algorithm}, {len(result.merges):,} of {num_merges:,} merges in {result.total:.2f} s",
        )

    with server_slot(progress_slot):
        progress_slot.progress(0.0, text="Pre-tokenizing the first size…")
        for point in R.scaling_sweep(data, sizes, num_merges, budget_s, pattern=pattern, special_tokens=specials, on_progress=tick):
            record = replace(record, points=record.points + (point,))
            st.session_state["sweep"] = record
            chart_slot.altair_chart(size_chart(record), width="stretch")
        record = replace(record, status="finished")
    st.session_state["sweep"] = record
    progress_slot.empty()
    return record


def size_chart(record: SweepRecord) -> alt.Chart:
    """Trainer time (initial count + merge loop) against corpus size, log-log; cut-off runs are hollow and labelled."""
    frame = pd.DataFrame(
        [
            {
                "algorithm": p.result.algorithm,
                "MB": p.n_bytes / 1e6,
                "seconds": max(p.result.total, 1e-4),
                "merges": len(p.result.merges),
                "label": f"cut off: {len(p.result.merges):,} merges" if p.result.cut_off else "",
            }
            for p in record.points
        ],
        columns=["algorithm", "MB", "seconds", "merges", "label"],
    )
    planned = [n / 1e6 for n in record.sizes]
    x = alt.X("MB:Q", title="corpus size (MB)", scale=alt.Scale(type="log", domain=[min(planned) / 1.3, max(planned) * 1.3], nice=False))
    y = alt.Y("seconds:Q", title="seconds (initial count + merges)", scale=alt.Scale(type="log"))
    base = alt.Chart(frame).encode(
        x=x, y=y, color=_colour(), tooltip=["algorithm:N", "MB:Q", alt.Tooltip("seconds:Q", format=".3f"), "merges:Q"]
    )
    finished = base.transform_filter("datum.label == ''")
    cut = base.transform_filter("datum.label != ''")
    chart = alt.layer(
        finished.mark_line(strokeWidth=3, point=alt.OverlayMarkDef(size=80, filled=True)),
        cut.mark_point(size=200, filled=False, strokeWidth=3),
        cut.mark_text(align="left", dx=12, fontSize=14).encode(text="label"),
    ).properties(height=340, title=f"Time against corpus size, {record.num_merges:,} merges (log-log)")
    return _axes(chart)


def merges_chart(record: SweepRecord) -> alt.Chart:
    """Cumulative time against merges done at the largest size each trainer ran, log-log."""
    last = {}
    for p in record.points:
        last[p.result.algorithm] = p
    rows = []
    for name, p in last.items():
        times = p.result.times
        for i in sorted({round(len(times) ** (k / 60)) - 1 for k in range(61)} if times else ()):
            rows.append({"algorithm": f"{name} ({p.n_bytes / 1e6:.2f} MB)", "key": name, "merges": i + 1, "seconds": max(times[i], 1e-4)})
    frame = pd.DataFrame(rows, columns=["algorithm", "key", "merges", "seconds"])
    chart = (
        alt.Chart(frame)
        .mark_line(strokeWidth=3)
        .encode(
            x=alt.X("merges:Q", title="merges done", scale=alt.Scale(type="log", domain=[1, max(record.num_merges, 2)], nice=False)),
            y=alt.Y("seconds:Q", title="seconds of processor time", scale=alt.Scale(type="log")),
            color=_colour("key:N"),
            detail="algorithm:N",
            tooltip=["algorithm:N", "merges:Q", alt.Tooltip("seconds:Q", format=".3f")],
        )
        .properties(height=340, title="Time against number of merges, at the largest size each ran (log-log)")
    )
    return _axes(chart)


def sweep_table(record: SweepRecord) -> None:
    """The sweep as numbers: seconds per trainer (columns) and size (rows), as in BENCHMARKS.md."""
    table: dict[int, dict[str, object]] = {}
    for p in record.points:
        row = table.setdefault(p.n_bytes, {"size (MB)": p.n_bytes / 1e6, "pre-tokenize (s)": p.pretokenize_s})
        r = p.result
        row[r.algorithm] = f"> {r.total:.2f} (cut off at {len(r.merges):,})" if r.cut_off else f"{r.total:.3f}"
    frame = pd.DataFrame(list(table.values())).fillna("not run: cut off at a smaller size")
    st.dataframe(
        frame,
        hide_index=True,
        column_config={
            "size (MB)": st.column_config.NumberColumn(format="%.3f"),
            "pre-tokenize (s)": st.column_config.NumberColumn(format="%.3f"),
        },
        width="stretch",
    )


# ---------------------------------------------------------------------------
# parallel pre-tokenization


@dataclass(frozen=True)
class SpeedupRecord:
    n_bytes: int
    points: tuple[R.SpeedupPoint, ...]
    status: str


def live_speedup(progress_slot, chart_slot) -> SpeedupRecord:
    """Pre-tokenize a file of R.SPEEDUP_BYTES or a little more (the stdlib prose, repeated) with 1..cpu_count workers.

    Each run is one call into the library, so a Stop takes effect when that run ends.
    """
    workers = list(range(1, (os.cpu_count() or 1) + 1))
    with server_slot(progress_slot), tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "corpus.txt")
        n_bytes = R.write_repeated(path, corpora.stdlib_bytes(), R.SPEEDUP_BYTES)
        record = SpeedupRecord(n_bytes, (), "running")
        progress_slot.progress(0.0, text=f"Pre-tokenizing {n_bytes / 1e6:.0f} MB with 1 worker…")
        for point in R.pretokenize_speedup(path, workers, special_tokens=(END_OF_TEXT,)):
            record = replace(record, points=record.points + (point,))
            st.session_state["speedup"] = record
            chart_slot.altair_chart(speedup_chart(record), width="stretch")
            if point.workers < workers[-1]:
                progress_slot.progress(point.workers / len(workers), text=f"Pre-tokenizing with {point.workers + 1} workers…")
        record = replace(record, status="finished")
    st.session_state["speedup"] = record
    progress_slot.empty()
    return record


def speedup_chart(record: SpeedupRecord) -> alt.Chart:
    base_s = record.points[0].seconds
    frame = pd.DataFrame(
        [
            {"workers": str(p.workers), "speed-up": base_s / p.seconds, "label": f"{base_s / p.seconds:.2f}× ({p.seconds:.2f} s)"}
            for p in record.points
        ]
    )
    base = alt.Chart(frame).encode(
        x=alt.X("workers:N", title="worker processes", axis=alt.Axis(labelAngle=0)), y=alt.Y("speed-up:Q", title="speed-up over 1 worker")
    )
    chart = alt.layer(
        base.mark_bar(color=COLOURS["heap"], size=60),
        base.mark_text(dy=-12, fontSize=15).encode(text="label"),
    ).properties(height=300, title=f"Pre-tokenizing {record.n_bytes / 1e6:.0f} MB in parallel")
    return _axes(chart)
