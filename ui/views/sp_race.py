"""The race page for a SentencePiece run: ours (compiled, and the readable Python) and sentencepiece itself, to the same pieces.

The race runs in the worker pool (serve/sp_jobs.py's race); `start` asks for it (sessions asking for the same corpus,
spec and budget share one run), `live` draws a running one, and the rest draw a finished record: a chart of time
against merges (ours report each merge; sentencepiece only its total, a diamond), a table of both clocks, and
whether each made sentencepiece's pieces, piece, score and type, in id order.

Numbers and fixed names only reach markdown here; the corpus never does.
"""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from bpe.heap import Heap
from bpe.heap_c import HeapC
from serve import sp_jobs
from serve.jobs import RunKey
from serve.pool import Status
from serve.sp_jobs import COMPILED, PYTHON, SENTENCEPIECE, SpRaceRecord, SpRun
from ui import state, work
from ui.chart_style import config
from ui.views.race import FLOOR_S, REFERENCE_COLOURS, thin, time_domain

ABOUT = (
    "The sidebar's SentencePiece run, trained three ways from the same file in a worker process: ours compiled (what "
    "`bpe train --sentencepiece` runs), sentencepiece itself, and ours in Python (the trainer the step page reads). "
    "Below, the byte-level trainers' scaling and parallel pre-tokenization."
)
COLOURS = {COMPILED: HeapC.colour, PYTHON: Heap.colour, SENTENCEPIECE: next(iter(REFERENCE_COLOURS.values()))}  # the references' grey


def race_key(settings, budget_s: float) -> RunKey:
    return RunKey("sp-race", settings.key, settings.sentencepiece, 0, (budget_s,))


def start(settings, budget_s: float) -> None:
    """Ask the pool for this race (or join the same race another session asked for)."""
    key = race_key(settings, budget_s)
    st.session_state["race_asked"] = time.time()
    work.ask("sp_race", key, sp_jobs.race, key, settings.corpus.name, settings.corpus.data, settings.sentencepiece, budget_s)
    st.session_state["failed"].pop("sp_race", None)


def section(settings, running: Status | None) -> None:
    """The race's controls and what it shows (pages/race.py draws it for a SentencePiece run)."""
    c1, c2, c3 = st.columns([2.5, 1.3, 1], vertical_alignment="bottom")
    state.widget(c1.number_input, "Time budget for ours in Python (s)", min_value=1.0, max_value=60.0, step=1.0, key="race_budget")
    running, record = work.section(
        "sp_race",
        running,
        c2,
        c3,
        "Start the race",
        lambda: start(settings, st.session_state["race_budget"]),
        stop_help="Stops the run; what it has done so far is kept.",
    )
    if running:
        work.follow(work.watched("sp_race"), live)
    elif record is None:
        st.info(
            "Press **Start the race** to train the sidebar's SentencePiece run three ways from the same file: ours compiled, "
            "sentencepiece itself, and ours in Python; each is timed to its pieces, and the pieces are held against sentencepiece's."
        )
    else:
        if record.key.corpus != settings.key or record.key.spec != settings.sentencepiece:
            st.caption("These results are from earlier settings: press Start the race to race on the sidebar's current ones.")
        chart(record)
        if record.status == "stopped":
            st.warning("This race was stopped; below is what it had done by then.")
        verdict(record)
        table(record)
        if record.finished_at:
            st.caption(f"This race ran at {time.strftime('%H:%M:%S', time.localtime(record.started_at))}; {caption_of(record)}")


def live(status: Status) -> None:
    record = status.progress
    if status.state == "queued":
        st.info(work.waiting(status, "Your race"))
        return
    st.progress(min(len(record.runs) / 3, 1.0) if record else 0.0, text=(record.doing if record else "") or "Starting a worker process…")
    if record is not None and record.runs:
        chart(record)


def caption_of(record: SpRaceRecord) -> str:
    return (
        f"{record.n_bytes:,} bytes written to one file and read by each trainer. Times are processor seconds (every thread of "
        "the worker, sentencepiece's too) from reading the file to the model's pieces; ours in Python stops at "
        f"{record.budget_s:g} s."
    )


def chart(record: SpRaceRecord) -> None:
    """Processor time against merges made, log time: ours as lines (the start is reading, normalizing and counting), sentencepiece
    as a diamond at its total (it tells no time per merge)."""
    rows = []
    for run in record.runs:
        if run.error or not (run.merges or run.total_s):
            continue
        if run.name == SENTENCEPIECE:
            rows.append(("total", run.name, run.merges, run.total_s))
            continue
        rows.append(("line", run.name, 0, run.prepare_s))
        rows += [("line", run.name, i + 1, run.times[i]) for i in thin(run.times)]
        if run.cut_off:
            rows.append(("end", run.name, run.merges, run.total_s))
        elif run.total_s:
            rows.append(("total", run.name, run.merges, run.total_s))
    if not rows:
        return
    rows = [(kind, name, merges, max(seconds, FLOOR_S)) for kind, name, merges, seconds in rows]
    names = [r.name for r in record.runs if r.name in {name for _, name, _, _ in rows}]
    low, high = time_domain([seconds for *_, seconds in rows])
    encoding = {
        "x": {"field": "merges", "type": "quantitative", "title": "merges made", "scale": {"domainMin": 0}, "axis": {"format": ",d"}},
        "y": {
            "field": "seconds",
            "type": "quantitative",
            "title": "processor seconds (log scale)",
            "scale": {"type": "log", "domain": [low, high], "nice": False},
            "axis": {"format": ",~g"},
        },
        "color": {
            "field": "trainer",
            "type": "nominal",
            "title": None,
            "sort": names,
            "scale": {"domain": names, "range": [COLOURS[n] for n in names]},
            "legend": {"orient": "right", "labelLimit": 300},
        },
        "tooltip": [{"field": "trainer"}, {"field": "merges"}, {"field": "seconds", "format": ".3f"}],
    }

    def layer(kind: str, mark: dict) -> dict:
        return {"transform": [{"filter": f"datum.kind == '{kind}'"}], "mark": mark, "encoding": encoding}

    spec = {
        "height": 380,
        "padding": {"top": 10, "left": 5, "right": 5, "bottom": 5},
        "title": {"text": f"{record.corpus_label}: time to the same {record.pieces:,} pieces"},
        "config": config(),
        "layer": [
            layer("line", {"type": "line", "strokeWidth": 3}),
            layer("end", {"type": "point", "size": 220, "filled": False, "strokeWidth": 3}),
            layer("total", {"type": "point", "shape": "diamond", "size": 260, "filled": True}),
        ],
    }
    st.vega_lite_chart(pd.DataFrame(rows, columns=["kind", "trainer", "merges", "seconds"]), spec, width="stretch")
    st.caption(
        "Lines: ours, merge by merge, starting from the time it took to read, normalize and count the corpus. ◆ each trainer's "
        "total to its pieces (sentencepiece reports no time per merge); ○ where ours in Python was cut off."
    )


def verdict(record: SpRaceRecord) -> None:
    """Whether every trainer made sentencepiece's pieces, and how much time each took to them."""
    theirs = next((r for r in record.runs if r.name == SENTENCEPIECE and not r.error), None)
    checked = [r for r in record.runs if r.same is not None]
    for r in record.runs:
        if r.error:
            st.error(f"{r.name}: {r.error}")
    if checked and all(r.same for r in checked):
        ours = " and ".join(r.name for r in checked if r.name != SENTENCEPIECE)
        against = f"exactly {SENTENCEPIECE}'s" if theirs else f"exactly those of {COMPILED}"
        st.success(f"The same {record.pieces:,} pieces, scores and types, in the same order: {ours} made {against}.")
    elif checked:
        st.error("Disagreement: " + ", ".join(r.name for r in checked if not r.same) + " made other pieces than sentencepiece.")
    compiled = next((r for r in record.runs if r.name == COMPILED and r.total_s and not r.error), None)
    if compiled and theirs and compiled.total_s and theirs.total_s:
        faster, slower = (compiled, theirs) if compiled.total_s <= theirs.total_s else (theirs, compiled)
        st.caption(
            f"To the same pieces: ours compiled {compiled.total_s:.3f} s, sentencepiece {theirs.total_s:.3f} s of processor time: "
            f"{faster.name} in {slower.total_s / faster.total_s:.1f}× less."
        )
    if record.note:
        st.caption(record.note)


def table(record: SpRaceRecord) -> None:
    """Both clocks for each trainer, the merges it made, and whether its pieces are sentencepiece's."""
    rows = [row(r) for r in record.runs]
    st.table(pd.DataFrame(rows), hide_index=True)


def row(r: SpRun) -> dict[str, str]:
    status = "cut off" if r.cut_off else ("failed" if r.error else "finished")
    same = {True: "✓ the same", False: "✗ other pieces", None: ""}[r.same]
    return {
        "trainer": r.name,
        "before the merges": "" if r.name == SENTENCEPIECE else f"{r.prepare_s:,.3f} s",
        "merges": f"{r.merges:,}",
        "to its pieces (processor)": f"{r.total_s:,.3f} s",
        "wall-clock": f"{r.wall_s:,.3f} s",
        "pieces": same,
        "status": status,
    }
