"""The work built on a corpus: pre-tokens, traces, trainings, replays, made once and shared by every session.

The work is immutable and shared between sessions, keyed on small values (a
content digest and the TrainSpec, in a serve.jobs.RunKey), never on the text
itself; what a session is looking at lives in its own state. Training runs
happen in the server's worker pool (serve/pool.py, serve/jobs.py), outside the
server's interpreter, except on corpora small enough to fit on a slide; while
one runs, the page shows its progress.

Not here: which corpora there are (ui/corpus.py).
"""

from __future__ import annotations

import heapq
from dataclasses import replace

import streamlit as st

from bpe import ALGORITHMS, PreTokenizer, PreTokens, Training, pretokenize
from bpe.events import StopReason
from bpe.lab.threshold import Replay
from bpe.spec import DEFAULT, TrainSpec
from bpe.tokenizer.tokenizer import Tokenizer
from serve import disk, jobs
from serve.jobs import RunKey, Trace
from serve.pool import Status
from ui import work

TRACE_SECONDS = 30.0  # a trace with detail stops here rather than hold a worker
TRACE_MERGES = 5_000  # and here: each merge keeps ~10 KB of detail, and a class steps through far fewer


# ---------------------------------------------------------------------------
# cached work, shared between sessions (inputs are never mutated)


@st.cache_resource(max_entries=16, show_spinner="Pre-tokenizing…")
def pretokenized(key: str, pretokenizer: PreTokenizer, special_tokens: tuple[str, ...], keep_sequence: bool, _data: bytes) -> PreTokens:
    return pretokenize(_data, pretokenizer=pretokenizer, special_tokens=special_tokens, keep_sequence=keep_sequence)


def pretokenized_for(settings) -> PreTokens:
    """The counts of the sidebar's corpus (a ui.corpus.Settings), for pages that read words, not traces: no sequence kept."""
    return pretokenized(settings.key, settings.pretokenizer, settings.special_tokens, False, settings.corpus.data)


def most_frequent_for(settings, n: int) -> tuple[dict[bytes, int], int]:
    """The n most frequent pre-tokens of the sidebar's corpus and how many different ones there are (the quiz's words)."""
    return most_frequent(settings.key, settings.pretokenizer, settings.special_tokens, n, pretokenized_for(settings).counts)


@st.cache_resource(max_entries=8)
def most_frequent(
    key: str, pretokenizer: PreTokenizer, special_tokens: tuple[str, ...], n: int, _counts: dict[bytes, int]
) -> tuple[dict[bytes, int], int]:
    """Found once per corpus and pre-tokenizer, not per click."""
    return dict(heapq.nlargest(n, _counts.items(), key=lambda wc: wc[1])), len(_counts)


# ---------------------------------------------------------------------------
# training runs, built in the server's worker pool (ui/work.py) and shared by every session

INLINE_BYTES = 10_000  # a corpus this small is trained in the session's own thread: starting a process would cost more
WAIT_S = 0.5  # a page waits this long for a new run to finish before it shows progress instead
ROUND = 250  # runs are built for a multiple of this many merges, so nudging the vocab size up reuses them
POLL_S = 1.0  # how often a page waiting for its run looks again: a class waiting together costs 30 polls a second


def trace_for(settings) -> Trace:
    """The step-through trace (every merge with detail) for a ui.corpus.Settings, built once and shared.

    A trace of more merges serves fewer: the first k merges and their detail do
    not depend on the merges after them, so a smaller vocab size is a prefix of a
    trace already built, and a larger one is built once, rounded up to ROUND.
    When the trace is not ready, this draws its progress (and what to pick to
    get it sooner) and stops the page; the page reruns by itself when it is ready.
    """
    wanted = min(settings.num_merges, TRACE_MERGES)
    family = RunKey("trace", settings.key, settings.spec)
    ready = _covering(family, wanted)
    if ready is None:
        small = _small(settings)
        key, args, kept = trace_job(settings.key, settings.corpus.data, settings.spec, wanted, small)
        ready = _result("trace", key, jobs.trace, *args, small=small, draw=lambda s: _tracing(settings, s, family, key.merges), kept=kept)
    if len(ready.events) < wanted:
        reason = ready.stop_reason  # it stopped early: no pairs left, or the time budget
    elif wanted < settings.num_merges:
        reason = StopReason.SHOWN
    else:
        reason = StopReason.VOCAB_SIZE
    if len(ready.events) <= wanted and reason == ready.stop_reason:
        return ready
    return prefix(family, wanted, reason, len(ready.events), ready)


def trace_job(digest: str, data: bytes, spec: TrainSpec, wanted: int, small: bool = False) -> tuple[RunKey, tuple, tuple]:
    """The pool key, arguments and disk key of the trace a page showing `wanted` merges asks for (ui/warm.py asks too)."""
    build = wanted if small else _rounded(wanted, TRACE_MERGES)
    return (
        RunKey("trace", digest, spec, build),
        (data, spec, build, TRACE_SECONDS),
        ("trace", jobs.trace_kept(digest, spec, build, TRACE_SECONDS)),
    )


def training_job(digest: str, data: bytes, spec: TrainSpec, wanted: int, small: bool = False) -> tuple[RunKey, tuple, tuple]:
    """The same for the plain training run (trained_for)."""
    build = wanted if small else _rounded(wanted)
    spec = training_spec(spec)
    return RunKey("train", digest, spec, build), (data, spec, build), ("training", jobs.training_kept(digest, spec, build))


@st.cache_resource(max_entries=32)
def prefix(family: RunKey, wanted: int, reason: str, built: int, _run):
    """The first `wanted` merges of a longer run, made once: every session gets the same object (pages cache on it)."""
    return replace(_run, events=_run.events[:wanted], stop_reason=reason)


def trained_for(settings) -> Training:
    """The run with no threshold and no detail for a ui.corpus.Settings, built once and shared (a longer one's prefix serves)."""
    wanted = settings.num_merges
    family = RunKey("train", settings.key, training_spec(settings.spec))
    ready = _covering(family, wanted)
    if ready is None:
        small = _small(settings)
        key, args, kept = training_job(settings.key, settings.corpus.data, settings.spec, wanted, small)
        ready = _result("train", key, jobs.training, *args, small=small, draw=lambda s: _training(settings, s, key.merges), kept=kept)
    if len(ready.events) > wanted:
        return prefix(family, wanted, StopReason.VOCAB_SIZE, len(ready.events), ready)
    return ready


def tokenizer_for(settings) -> Tokenizer:
    """The tokenizer trained_for(settings) made, with each merge's count."""
    return tokenizer(RunKey("train", settings.key, training_spec(settings.spec), settings.num_merges), trained_for(settings))


def replays_for(settings, test_name: str, test_data: bytes) -> tuple[Replay, Replay]:
    """The test text and the training text, each encoded once with every merge of trained_for(settings)."""
    merges = tuple(trained_for(settings).merges)
    key = RunKey("replays", settings.key, training_spec(settings.spec), len(merges), (test_name,))
    texts = (test_data, settings.corpus.data)
    small = max(map(len, texts)) <= INLINE_BYTES
    draw = lambda status: _busy(status, "Encoding the texts once with every merge, so the slider needs no re-encoding…")  # noqa: E731
    return _result("replays", key, jobs.replays, merges, key.spec, texts, small=small, draw=draw)


def training_spec(spec: TrainSpec) -> TrainSpec:
    """The spec of the sidebar's plain training run: the default trainer (the compiled heap where it is built; all make
    the same merges), so every algorithm shares it."""
    return spec.but(algorithm=DEFAULT.algorithm)


@st.cache_resource(max_entries=8)
def tokenizer(run: RunKey, _training: Training) -> Tokenizer:
    """The tokenizer of the training run `run` names."""
    return Tokenizer.from_training(_training)  # the run's spec holds its pre-tokenizer


def _small(settings) -> bool:
    return len(settings.corpus.data) <= INLINE_BYTES


def _rounded(n: int, cap: int = 1_000_000) -> int:
    """n rounded up to a multiple of ROUND, at most cap (and never below n): 1,003 -> 1,250."""
    return max(n, min(cap, -(-n // ROUND) * ROUND))


def _family(family: RunKey) -> list:
    """The finished runs of this family (any size)."""
    return [run for key, run in work.pool().find(lambda key: isinstance(key, RunKey) and key.family == family)]


def _covering(family: RunKey, wanted: int):
    """A finished run of this family that holds the first `wanted` merges (or every merge it could make), or None."""
    runs = _family(family)
    covering = [run for run in runs if len(run.events) >= wanted or run.stop_reason != StopReason.VOCAB_SIZE]
    return min(covering, key=lambda run: len(run.events), default=None)


def _result(purpose: str, key: RunKey, fn, *args, small: bool, draw, kept: tuple | None = None):
    """fn's result for key: computed in this thread when small, else in a worker -- or, when an earlier start of the
    server kept it on disk under kept (serve/disk.py), read from there, without a worker, once for every session.

    Waits WAIT_S for a new run; after that, draws its progress with draw(status)
    in a polling fragment and stops the page, which reruns when the run has ended.
    """
    found = None if small or kept is None or work.pool().status(key) is not None else disk.load(*kept)
    if found is not None:
        status = work.ask(purpose, key, jobs.known, found, lane="short", inline=True)
    else:
        status = work.ask(purpose, key, fn, *args, lane="short", inline=small)
    if not status.ended:
        status = work.pool().wait(key, WAIT_S)
    if status.state == "done":
        return status.result
    if status.state == "failed":
        st.error(status.error)
        st.stop()
    work.follow(key, draw, every=POLL_S)
    st.stop()


def _busy(status: Status, doing: str) -> None:
    st.info(work.waiting(status, "This run") or doing)


def _training(settings, status: Status, build: int) -> None:
    done = status.progress.merges if status.progress else 0
    where = f"{settings.corpus.name} ({len(settings.corpus.data) / 1e6:.1f} MB)"
    _busy(
        status,
        f"Training once on {where} in a worker process: {done:,} of {build:,} merges…"
        if done
        else f"Pre-tokenizing {where} in a worker process…",
    )


def _tracing(settings, status: Status, family: RunKey, build: int) -> None:
    """What the step page shows while its trace is built: how far, how fast, and what to pick instead."""
    algorithm = settings.algorithm
    if status.state == "queued":
        st.info(work.waiting(status, "This trace"))
    else:
        built = status.progress or jobs.Built(0, status.seconds)
        rate = built.merges / built.seconds if built.seconds > 0.5 else 0.0
        share = max(built.merges / max(build, 1), built.seconds / TRACE_SECONDS)
        if built.merges:
            text = f"Training `{algorithm}` with detail in a worker process: {built.merges:,} of {build:,} merges ({rate:,.0f} merges/s)…"
        else:
            text = f"Pre-tokenizing and counting pairs for `{algorithm}` in a worker process…"
        st.progress(min(share, 1.0), text=text)
    shorter = _longest(family)
    if shorter:
        vocab = 256 + shorter + len(settings.special_tokens)
        st.info(f"The first {shorter:,} merges are ready: a vocab size of {vocab:,} shows them at once.")
    slow = ALGORITHMS[algorithm].slow
    if slow:
        st.info(
            f"All the algorithms make the same merges; they differ in the work each merge costs. `heap` is the fast one: "
            f"it traces {build:,} merges of this corpus within seconds, while `{algorithm}` {slow} "
            f"A trace stops after {TRACE_SECONDS:.0f} s. **Pick heap in the sidebar to step through every merge now.**"
        )


def _longest(family: RunKey) -> int:
    """The most merges a finished run of this family holds (0 if none)."""
    return max((len(run.events) for run in _family(family)), default=0)


# ---------------------------------------------------------------------------
# the SentencePiece family's run (serve/sp_jobs.py), for the step page


def sp_trace_for(settings):
    """The SentencePiece run of the sidebar (settings.sentencepiece) with detail, built once and shared; like trace_for,
    it draws its progress and stops the page while it is built. Keyed on the exact spec: a class shares one run."""
    from serve import sp_jobs

    spec = settings.sentencepiece
    key = RunKey("sp-trace", settings.key, spec)
    kept = ("sp-trace", sp_jobs.trace_kept(settings.key, spec, TRACE_SECONDS))
    args = (settings.corpus.data, spec, TRACE_SECONDS)
    return _result("trace", key, sp_jobs.trace, *args, small=_small(settings), draw=lambda s: _sp_tracing(settings, s), kept=kept)


def _sp_tracing(settings, status: Status) -> None:
    """What the step page shows while a SentencePiece trace is built."""
    if status.state == "queued":
        st.info(work.waiting(status, "This trace"))
        return
    built = status.progress or jobs.Built(0, status.seconds)
    where = f"{settings.corpus.name} ({len(settings.corpus.data) / 1e6:.1f} MB)"
    if built.merges:
        text = f"Training SentencePiece with detail on {where} in a worker process: {built.merges:,} merges…"
    else:
        text = f"Normalizing {where}, choosing its characters and counting its words in a worker process…"
    st.progress(min(built.seconds / TRACE_SECONDS, 1.0), text=text)
    st.info(
        "Each merge's detail recounts every word of the corpus (the pairs that may not be made, and why): a trace stops "
        f"after {TRACE_SECONDS:.0f} s. A smaller vocab size or a smaller corpus is ready sooner."
    )
