"""The race page's runs, charts and tables, built on bpe.lab.race.

The runs -- the race, the scaling sweep, the parallel pre-tokenization timing
-- happen in the server's worker pool (serve/jobs.py does the work, ui/work.py
the bookkeeping): `start_*` asks for one (joining an identical run another
session started), `live_*` draws a running one from what its worker reports,
polling without holding a script thread, and the rest draw a finished record.

Everything here shows numbers, fixed names and show()-rendered tokens in
dataframes; nothing from the corpus reaches HTML or markdown.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import replace

import altair as alt
import pandas as pd
import streamlit as st

from bpe import ALGORITHMS
from bpe.data.corpora import END_OF_TEXT
from bpe.events import StopReason
from bpe.lab import race as R
from bpe.lab import references as refs
from bpe.lab import sweep as sweeps
from bpe.spec import DEFAULT, TrainSpec
from bpe.train import ABSENT, work_names
from bpe.trainer import Trainer
from serve import jobs
from serve.jobs import RaceRecord, RunKey, SpeedupRecord, SweepRecord
from serve.pool import Status
from ui import corpus as corpora
from ui import work
from ui.chart_style import MARK_TEXT, config, styled
from ui.render import show_pair

REFERENCE_COLOURS = {
    refs.HF: "#7f7f7f",
    refs.RUSTBPE: "#8c564b",
    refs.GIGATOKEN: "#9467bd",
    refs.FFBPE: "#e377c2",
}  # HF is the grey reference


def trainer_named(name: str) -> type[Trainer] | None:
    """The trainer class of a name in a race's results; None for a reference tool.

    subtle: a compiled trainer this server cannot run (train.ABSENT) is still known by name: a worker
    started after the core was built, or a pool shared with another replica, may have raced it.
    """
    return ALGORITHMS.get(name) or ABSENT.get(name)


def colour(name: str) -> str:
    """One colour per trainer (its class says it: Trainer.colour) or reference tool, the same in every chart."""
    trainer = trainer_named(name)
    return trainer.colour if trainer else REFERENCE_COLOURS[name]


REFERENCE_LINES = {  # a Rust reference's name in the legend and the tables, and the phases its one time covers
    refs.HF: "HF tokenizers (Rust, all phases)",
    refs.RUSTBPE: "rustbpe (Rust, all phases)",
    refs.GIGATOKEN: "gigatoken (Rust, all phases)",
    refs.FFBPE: "ffbpe (Rust, count + merges)",  # given our pre-tokens
}
CHART_POINTS = 200  # points per line sent to the browser


def _colour(field: str = "algorithm:N") -> alt.Color:
    """The trainers' colours, the same in every chart."""
    return alt.Color(field, title="algorithm", scale=alt.Scale(domain=list(ALGORITHMS), range=[colour(a) for a in ALGORITHMS]))


# ---------------------------------------------------------------------------
# the race


def race_key(settings) -> RunKey:
    """What a race is run on: every trainer races, so the sidebar's algorithm is not part of it."""
    return RunKey("race", settings.key, settings.spec.but(algorithm=DEFAULT.algorithm), settings.num_merges)


def start_race(settings, budget_s: float, with_references: bool, live: bool = False) -> None:
    """Ask the pool for this race; sessions asking for the same corpus, settings and budget share one run.

    A finished race is kept and handed to the next session that asks (the page then says it is a replay, and when it
    ran: `replay_note`). live=True runs it again, as a new run the later askers share: the teacher's rehearsal need not
    spoil the race in class.
    """
    race = race_key(settings)
    asked = (budget_s, with_references)
    if live:
        live_runs()[(race, asked)] = time.time_ns()
    generation = newest(race, asked)
    key = replace(race, extra=(*asked, generation) if generation else asked)
    # the trainers this server knows race, whatever a worker process would find installed (trainer_named)
    args = (race, settings.corpus.name, settings.corpus.data, race.spec, settings.num_merges, budget_s, with_references, tuple(ALGORITHMS))
    st.session_state["race_asked"] = time.time()
    work.ask("race", key, jobs.race, *args)
    st.session_state["failed"].pop("race", None)


@st.cache_resource(show_spinner=False)
def live_runs() -> dict[tuple, int]:
    """(race, (budget, references)) -> the newest run asked for live on this server (time.time_ns(), its key's last part)."""
    return {}


def newest(race: RunKey, asked: tuple) -> int:
    """The newest live run of this race: asked on this server, or finished on the machine's pool (another replica's)."""
    found = [
        key.extra[len(asked)]
        for key, _ in work.pool().find(lambda k: isinstance(k, RunKey) and k.purpose == "race" and replace(k, extra=()) == race)
        if key.extra[: len(asked)] == asked and len(key.extra) == len(asked) + 1
    ]
    return max([live_runs().get((race, asked), 0), *found])


def replay_note(record: RaceRecord, asked: float | None, settings) -> None:
    """When the race shown had finished before this session pressed Start: say it is a replay, when it ran, and offer a live run."""
    if not record.finished_at or asked is None or record.finished_at > asked:
        return
    started = time.localtime(record.started_at)
    when = time.strftime("%H:%M:%S" if started[:3] == time.localtime(asked)[:3] else "%Y-%m-%d %H:%M", started)
    say, press = st.columns([4, 1.3], vertical_alignment="center")
    say.info(
        f"**A replay**: this race ran at {when}, {ago(asked - record.finished_at)} before you pressed Start, and the server "
        "kept it: every session that asks for the same race gets the finished run at once. To watch it happen, run it live."
    )
    budget, references = st.session_state["race_budget"], st.session_state["race_hf"]
    press.button(
        "Run it live again",
        key="race_live",
        icon=":material/replay:",
        type="primary",
        on_click=start_race,
        args=(settings, budget, references, True),
        disabled=isinstance(settings, str),
        width="stretch",
        help="A new run of the same race; sessions that press Start from now on watch this one.",
    )


def ago(seconds: float) -> str:
    """A span of time as a class says it: 40 -> '40 seconds', 150 -> '2 minutes', 7_300 -> '2 hours'."""
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n != 1 else ''}"
    n = max(int(seconds), 1)
    return f"{n} second{'s' if n != 1 else ''}"


def live_race(status: Status) -> None:
    """A running race: its progress, and the chart of time against merges as the worker reports it."""
    record = status.progress
    if status.state == "queued":
        st.info(work.waiting(status, "Your race"))
    elif record is None or not record.results or record.doing:
        st.progress(race_progress(record) if record else 0.0, text=record.doing if record else "Starting a worker process…")
    else:
        st.progress(race_progress(record), text=progress_text(record))
    if record is not None and record.results:
        race_chart(record)
    if status.watchers > 1:
        st.caption(f"{status.watchers} sessions are watching this race: one run, shared.")


def references(record: RaceRecord) -> None:
    """Each Rust reference: agreement with ours under its own rule, and where the cs336 rule first parts from it.

    The notes hold numbers and fixed names only; tokens go in a table, never in markdown.
    """
    if not record.references and not record.reference_note:
        return
    st.subheader("The same merges as the production trainers")
    for check in record.references:
        (st.success if check.agrees else st.warning)(check.note)
        if check.cs336_note:
            st.caption(check.cs336_note)
        if check.rows:
            rows = [(run, show_pair(*pair), f"{count:,}") for run, pair, count in check.rows]
            st.table(pd.DataFrame(rows, columns=["run", "merge", "count"]), hide_index=True)
    if record.reference_note:
        st.caption(record.reference_note)
    if record.references:
        st.caption(
            "Each tool breaks ties between pairs with the same count its own way; ours follows any of the three rules "
            "(tie_break=...), and the sidebar's rule decides the race's. The step page shows, on a tied merge, what each rule takes."
        )
        if any(c.result.algorithm in (refs.GIGATOKEN, refs.FFBPE) for c in record.references):
            st.caption(
                'gigatoken is trained with tie_breaking="huggingface" and ffbpe with tie_break="largest_content" (the cs336 rule). '
                'Their other settings are rules of ours too -- gigatoken "raw_token_ids" and ffbpe "smallest_pair_id" are rustbpe\'s '
                "(huggingface's with ffbpe's byte_level alphabet) -- except gigatoken \"assembled_bytes\": the smaller bytes of a tie, "
                "the opposite of cs336, which first parts from it at the first tie."
            )


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
    if result.algorithm in REFERENCE_LINES:
        return REFERENCE_LINES[result.algorithm]
    return f"{result.algorithm}: cut off at {len(result.merges):,} merges" if result.cut_off else result.algorithm


def race_chart(record: RaceRecord) -> None:
    """Cumulative time against merges done on a log time axis, one line per trainer; a ring where one was cut off,
    a diamond at each Rust reference's total (it reports no per-merge times).

    A plain Vega-Lite spec (no Altair): a running race redraws it every poll, for every
    session watching. The legend names the lines (labels on the lines collide where runs
    end close together).
    """
    runs = list(record.results) + [check.result for check in record.references]
    names = [line_name(r) for r in runs]
    rows = []
    for r, name in zip(runs, names):
        if r.algorithm in REFERENCE_LINES:  # one total only, no per-merge times: a diamond at its total
            rows.append(("reference", name, len(r.merges), r.total))
            continue
        if r.done or r.merges:
            rows.append(("line", name, 0, r.seconds["initial count"]))
        rows += [("line", name, i + 1, r.times[i]) for i in thin(r.times)]
        if r.cut_off:
            rows.append(("end", name, len(r.merges), r.total))
        elif r.done and record.references:  # like with like beside the references' all-phases diamonds: ours plus the shared pre-tokenizing
            rows.append(("all", name, len(r.merges), r.total + record.prep_seconds.get("pre-tokenize", 0.0)))
    rows = [(kind, name, merges, max(seconds, FLOOR_S)) for kind, name, merges, seconds in rows]  # a log axis has no 0
    frame = pd.DataFrame(rows, columns=["kind", "line", "merges", "seconds"])
    low, high = time_domain([seconds for *_, seconds in rows])
    encoding = {
        "x": {
            "field": "merges",
            "type": "quantitative",
            "title": "merges done",
            "scale": {"domainMin": 0},
            "axis": {"format": ",d", "tickMinStep": 1},
        },
        "y": {
            "field": "seconds",
            "type": "quantitative",
            "title": "seconds of processor time (log scale)",
            "scale": {"type": "log", "domain": [low, high], "nice": False},
            "axis": {"format": ",~g"},  # 0.0006, 0.02, 2: seconds as numbers, not SI prefixes (600µ)
        },
        "color": {
            "field": "line",
            "type": "nominal",
            "title": None,
            "sort": names,
            "scale": {"domain": names, "range": [colour(r.algorithm) for r in runs]},
            # at the right, one name a row: on top, nine names took four rows out of the chart's height and left the
            # plot ~110 px tall at 1280x720 once the references joined
            "legend": {"orient": "right", "labelLimit": 300},
        },
        "tooltip": [{"field": "line", "title": "algorithm"}, {"field": "merges"}, {"field": "seconds", "format": ".3f"}],
    }

    def layer(kind: str, mark: dict) -> dict:
        return {"transform": [{"filter": f"datum.kind == '{kind}'"}], "mark": mark, "encoding": encoding}

    spec = {
        "height": 440,  # the whole chart: the plot is what the title and the axis leave (the legend stands at its right)
        "padding": {"top": 10, "left": 5, "right": 5, "bottom": 5},  # the title's top was cut off
        "title": {"text": f"{record.corpus_label}: time to make {record.num_merges:,} merges"},
        "config": config(),
        "layer": [
            layer("line", {"type": "line", "strokeWidth": 3}),
            layer("end", {"type": "point", "size": 220, "filled": False, "strokeWidth": 3}),
            layer("reference", {"type": "point", "shape": "diamond", "size": 260, "filled": True}),
            layer("all", {"type": "point", "shape": "triangle-up", "size": 220, "filled": True}),
        ],
    }
    st.vega_lite_chart(frame, spec, width="stretch")
    if record.references:
        st.caption(
            "Lines: each of ours counting and merging, on one core. ▲ the same with the shared pre-tokenizing added: set "
            "these beside ◆, a Rust tool's whole run from the text (ffbpe's ◆ counts and merges our pre-tokens, as a line "
            "does). Every time is processor time."
        )


FLOOR_S = 1e-4  # the race chart's lowest time: a log axis cannot show 0 s


def time_domain(seconds: list[float]) -> tuple[float, float]:
    """The log time axis's range: a little below the fastest time and above the slowest, so that 0.05 s and 8 s both show.

    On a linear 0-10 s axis the fast trainers (heap, the Rust references) all lay on the x-axis.
    [0.02, 0.5, 8.0] -> (0.01333..., 12.0)
    """
    if not seconds:
        return FLOOR_S, 1.0
    return min(seconds) / 1.5, max(max(seconds) * 1.5, min(seconds) * 10)


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
            st.success(
                f"Agreement: the {len(results)} algorithms made the same {longest:,} merges in the same order "
                f"(ties broken by the {record.tie_break} rule)."
            )
            return
        st.success(
            f"Agreement: the {len(results)} algorithms made the same merges in the same order, as far as each got "
            f"(ties broken by the {record.tie_break} rule)."
        )
        names = [f"{r.algorithm} ({len(r.merges):,} merges)" for r in short]
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        why = "cut off by the time budget" if all(r.cut_off for r in short) else "stopped early"
        st.caption(f"{listed} {'was' if len(short) == 1 else 'were'} {why}; every merge they made matches the others'.")
        return
    rank, there = found
    st.error(f"Disagreement: the algorithms first differ at merge {rank + 1:,}.")
    rows = [
        {"algorithm": name, "merge": show_pair(*m[0]) if m else "(none)", "count": f"{m[1]:,}" if m else ""} for name, m in there.items()
    ]
    st.table(pd.DataFrame(rows), hide_index=True)


def seconds_text(s: float | None) -> str:
    """1234.5 -> '1,234.500 s'; None (a phase the run does not have) -> ''."""
    return "" if s is None else f"{s:,.3f} s"


PHASES = ("pre-tokenize", "initial count", "merge loop", "all phases", "wall-clock")


def phase_rows(record: RaceRecord) -> list[dict]:
    """Seconds per phase per trainer, then each Rust reference: every time on one clock, the processor's.

    Ours share one pre-tokenization (shared: its time is on every row) and each counts and merges on one core; a
    reference's one time covers the phases its status names, and it may use several cores (its processor time is then
    more than its wall-clock time, which is shown beside it). Like with like: "all phases" of ours against theirs.
    """
    prep = record.prep_seconds["pre-tokenize"]
    rows = []
    for r in record.results:
        status = {StopReason.TIME_BUDGET: "cut off", StopReason.WALL_BUDGET: "cut off: machine busy"}.get(
            r.stop_reason, "finished" if r.done else record.status
        )
        rows.append(
            {
                "algorithm": r.algorithm,
                "pre-tokenize": seconds_text(prep),
                "initial count": seconds_text(r.seconds["initial count"]),
                "merge loop": seconds_text(r.seconds["merge loop"]),
                "all phases": seconds_text(prep + r.total),
                "wall-clock": "",
                "merges": f"{len(r.merges):,}",
                "status": status,
            }
        )
    for check in record.references:
        r = check.result
        name, covers = REFERENCE_LINES[r.algorithm].split(" (")[0], REFERENCE_LINES[r.algorithm].split(", ")[1].rstrip(")")
        whole = covers == "all phases"
        rows.append(
            {
                "algorithm": name,
                **dict.fromkeys(PHASES, ""),
                "merge loop": "" if whole else f"{seconds_text(r.total)} with its count",
                "all phases": seconds_text(r.total) if whole else "",
                "wall-clock": seconds_text(r.wall_s),
                "merges": f"{len(r.merges):,}",
                "status": "reference: " + ("Rust, all phases" if whole else "Rust, given our pre-tokens"),
            }
        )
    return rows


def phase_table(record: RaceRecord) -> None:
    """Seconds per phase per trainer (pre-tokenize is done once and shared), the Rust references beside them, one clock."""
    st.table(pd.DataFrame(phase_rows(record)), hide_index=True)
    if record.references:
        st.caption(
            "Every time here is processor time, the clock each trainer is raced on. Ours share one pre-tokenization "
            "(counted by a compiled pre-tokenizer where it gives the same counts: the project's core, or gigatoken where the "
            "core is not built; plus the sequence "
            "positions walks), then each counts and merges on one core. A Rust reference's one time covers its own "
            "pre-tokenizing too (ffbpe's only counting and merging our pre-tokens), on every core it uses: compare its "
            "'all phases' with ours. Its wall-clock time is how long it took with those cores."
        )
    busy = [r.algorithm for r in record.results if r.stop_reason == StopReason.WALL_BUDGET]
    if busy:
        st.caption(
            f"The machine was busy: {', '.join(busy)} got less than half a processor, so it was stopped after "
            f"{R.WALL_FACTOR * record.budget_s:g} s of wall-clock time, before using its {record.budget_s:g} s of processor time."
        )


def interpreter_notes(record: RaceRecord) -> list[str]:
    """For each compiled trainer that raced beside the one it compiles: the same merges and work, and how much less time.

    heap_c vs heap is the interpreter's cost, with the algorithm held fixed; heap vs naive is the algorithm's saving.
    """
    notes = []
    for compiled in record.results:
        trainer = trainer_named(compiled.algorithm)
        reference = trainer.reference if trainer else None
        python = next((r for r in record.results if reference is not None and r.algorithm == reference.name), None)
        n = min(len(compiled.merges), len(python.merges)) if python else 0
        if not n or not compiled.times[n - 1]:
            continue
        same = (
            "the same merges and the same work, counter for counter (the table below)"
            if compiled.work == python.work
            else "the same merges"
        )
        notes.append(
            f"{compiled.algorithm} is {python.algorithm} compiled to C: {same}, in "
            f"{python.times[n - 1] / compiled.times[n - 1]:,.0f}× less time for the first {n:,} merges. That is what the "
            f"interpreter costs; what the algorithm saves is {python.algorithm} against naive."
        )
    return notes


def work_table(record: RaceRecord) -> None:
    """The trainers' work counters per merge, one row per counter: the numbers behind the complexity."""
    names = work_names()
    columns = {"work per merge": list(names.values())}
    for r in record.results:
        merges = max(len(r.merges), 1)
        columns[r.algorithm] = [f"{r.work[key] / merges:,.1f}" if key in r.work else "" for key in names]
    frame = pd.DataFrame(columns)
    used = frame.drop(columns="work per merge").ne("").any(axis=1)
    st.table(frame[used], hide_index=True)


# how each trainer's cost per merge grows: the work counters' own words, so the two tables read together
def complexity_table(record: RaceRecord | None) -> None:
    """Each trainer's cost per merge in big-O, in the work counters' words, with what this race measured."""
    rows = []
    names = work_names()
    for algorithm, trainer in ALGORITHMS.items():
        find, merge = trainer.complexity
        row = {"algorithm": algorithm, "finding the best pair": find, "making the merge": merge}
        result = next((r for r in record.results if r.algorithm == algorithm), None) if record else None
        if result is not None and result.merges:
            per = [result.work.get(key, 0) / len(result.merges) for key in trainer.measured]
            row["measured per merge"] = " · ".join(f"{n:,.1f} {names[key]}" for n, key in zip(per, trainer.measured))
        rows.append(row)
    st.table(pd.DataFrame(rows).set_index("algorithm"))


# ---------------------------------------------------------------------------
# scaling


def sweep_data(source: str, settings) -> tuple[str, bytes, TrainSpec]:
    """(label, bytes, spec) of the corpus to sweep."""
    if source == "current" and not isinstance(settings, str):
        return settings.corpus.name, settings.corpus.data, settings.spec.but(algorithm=DEFAULT.algorithm)
    return "stdlib prose (2 MB)", corpora.stdlib_bytes(), TrainSpec(special_tokens=(END_OF_TEXT,))


def start_sweep(source: str, settings, num_merges: int, budget_s: float) -> None:
    label, data, spec = sweep_data(source, settings)
    key = RunKey("sweep", corpora.digest(data), spec, num_merges, (budget_s,))
    work.ask("sweep", key, jobs.sweep, label, data, spec, num_merges, budget_s)
    st.session_state["failed"].pop("sweep", None)


def live_sweep(status: Status) -> None:
    record = status.progress
    if status.state == "queued":
        st.info(work.waiting(status, "Your sweep"))
        return
    total = len(record.sizes) * len(ALGORITHMS) if record else 1
    st.progress(
        min(1.0, len(record.points) / total) if record else 0.0, text=(record.doing if record else "") or "Starting a worker process…"
    )
    if record is not None and record.points:
        st.altair_chart(size_chart(record), width="stretch")


def slopes(record: SweepRecord) -> dict[str, float]:
    """Each trainer's fitted slope on the log-log size chart (least squares over its uncut points; two at least).

    Time proportional to size**s has slope s: [(1 MB, 1 s), (2 MB, 2 s)] -> 1.0.
    """
    found = {}
    for algorithm in ALGORITHMS:
        xy = [
            (math.log(p.n_bytes), math.log(max(p.result.total, 1e-4)))
            for p in record.points
            if p.result.algorithm == algorithm and not p.result.cut_off
        ]
        if len(xy) < 2:
            continue
        mx, my = sum(x for x, _ in xy) / len(xy), sum(y for _, y in xy) / len(xy)
        spread = sum((x - mx) ** 2 for x, _ in xy)
        if spread > 0:
            found[algorithm] = sum((x - mx) * (y - my) for x, y in xy) / spread
    return found


def size_chart(record: SweepRecord) -> alt.Chart:
    """Trainer time (initial count + merge loop) against corpus size, log-log, each line named with its fitted slope.

    Cut-off runs are hollow rings labelled with the merges they made.
    """
    fitted = slopes(record)
    names = {a: f"{a}: slope {fitted[a]:.2f}" if a in fitted else a for a in ALGORITHMS}
    frame = pd.DataFrame(
        [
            {
                "algorithm": names[p.result.algorithm],
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
    colours = alt.Color(
        "algorithm:N",
        title=None,
        sort=list(names.values()),
        scale=alt.Scale(domain=list(names.values()), range=[colour(a) for a in ALGORITHMS]),
    )
    base = alt.Chart(frame).encode(
        x=x, y=y, color=colours, tooltip=["algorithm:N", "MB:Q", alt.Tooltip("seconds:Q", format=".3f"), "merges:Q"]
    )
    finished = base.transform_filter("datum.label == ''")
    cut = base.transform_filter("datum.label != ''")
    chart = alt.layer(
        finished.mark_line(strokeWidth=3, point=alt.OverlayMarkDef(size=80, filled=True)),
        cut.mark_point(size=200, filled=False, strokeWidth=3),
        cut.mark_text(align="right", dx=-12, dy=-14, fontSize=MARK_TEXT).encode(text="label"),  # left of its ring: clear of the edge
    ).properties(height=360, title=f"Time against corpus size, {record.num_merges:,} merges (log-log)")
    return styled(chart, orient="top", columns=2)


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
    return styled(chart, orient="top")


def sweep_table(record: SweepRecord) -> None:
    """The sweep as numbers: seconds per trainer (columns) and size (rows), as in BENCHMARKS.md; a table that wraps."""
    table: dict[int, dict[str, object]] = {}
    for p in record.points:
        row = table.setdefault(p.n_bytes, {"size (MB)": f"{p.n_bytes / 1e6:.3f}", "pre-tokenize (s)": f"{p.pretokenize_s:.3f}"})
        r = p.result
        row[r.algorithm] = f"> {r.total:.2f} (cut off at {len(r.merges):,} merges)" if r.cut_off else f"{r.total:.3f}"
    frame = pd.DataFrame(list(table.values())).fillna("not run: cut off at a smaller size")
    st.table(frame.set_index("size (MB)"))


# ---------------------------------------------------------------------------
# parallel pre-tokenization


def speedup_bytes(data: bytes) -> int:
    """The size the timing pre-tokenizes: data repeated to sweeps.SPEEDUP_BYTES or a little more (as sweeps.write_repeated writes it)."""
    return len(data) * -(-sweeps.SPEEDUP_BYTES // len(data))


def megabytes(n_bytes: int) -> str:
    """One way to say a size, before the timing and on its chart: 26,000,000 -> '26.0 MB'."""
    return f"{n_bytes / 1e6:,.1f} MB"


IDLE_SPEEDUP = "1.76× with 2 workers on an idle 2-core machine (BENCHMARKS.md, 50 MB)"


def speedup_note(record: SpeedupRecord, cores: int) -> str | None:
    """When the timing could not show a speed-up because no core was free, why, and what more cores would show.

    A class server of 2 cores spends one on the server itself: a second worker then
    shares a core, and 2 workers take as long as 1.
    """
    best = max(record.points[0].seconds / p.seconds for p in record.points)
    free = cores - record.load
    if len(record.points) > 1 and best >= 1.3:
        return None
    if cores <= 1:
        return "This machine has one core: there is nothing to run a second worker on, so only 1 worker was timed."
    return (
        f"No free core for another worker: this machine has {cores} cores and its load average was {record.load:.1f} when the "
        f"timing started (about {max(free, 0):.1f} cores free), so the extra workers shared busy cores and the best speed-up was "
        f"{best:.2f}×. With free cores the file's chunks are counted independently: N workers take about 1/N of one worker's "
        f"time plus the pool's start-up -- measured: {IDLE_SPEEDUP}."
    )


def start_speedup() -> None:
    data = corpora.stdlib_bytes()
    work.ask("speedup", ("speedup", corpora.digest(data), sweeps.SPEEDUP_BYTES), jobs.speedup, data, sweeps.SPEEDUP_BYTES)
    st.session_state["failed"].pop("speedup", None)


def live_speedup(status: Status) -> None:
    record = status.progress
    if status.state == "queued":
        st.info(work.waiting(status, "Your timing"))
        return
    workers = os.cpu_count() or 1
    done = len(record.points) if record else 0
    st.progress(done / workers, text=(record.doing if record else "") or "Starting a worker process…")
    if record is not None and record.points:
        st.altair_chart(speedup_chart(record), width="stretch")


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
        base.mark_bar(color=colour("heap"), size=60),
        base.mark_text(dy=-12, fontSize=MARK_TEXT).encode(text="label"),
    ).properties(height=300, title=f"Pre-tokenizing {megabytes(record.n_bytes)} in parallel")
    return styled(chart)
