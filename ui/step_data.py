"""What the step page builds once and shares between sessions: per trace, and per (trace, merge).

A class steps through the same trace, so the first click on merge k builds its
views (ui.views.step.merge_view) and the sentence tokenized at k, and every later
click on it, from any session, is a dictionary lookup. The trace's views are
found by one lookup per click, keyed on a short string (`trace_id`) that names
the RunKey and the trace's length n (a time limit can end a trace early).

Kept here, in a module, rather than in the page: a page script's globals are
made anew on every run, a module's live as long as the server.
"""

from __future__ import annotations

import gc
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from bpe.events import MergeEvent
from bpe.tokenizer.tokenizer import Tokenizer
from serve.jobs import RunKey
from ui.views import step as views

MERGES_KEPT = 3000  # merge views kept per trace (a class steps through far fewer)
SENTENCES_KEPT = 2000  # sentences kept per trace: the corpus's own at each merge, and students' own


class Shelf:
    """A thread-safe dictionary that builds a missing value once and keeps the last `size` used.

    Once: sessions asking for the same missing value together (a class on merge 1) wait for the
    first one's build instead of each building it.
    """

    def __init__(self, size: int) -> None:
        self.size, self._items, self._lock = size, OrderedDict(), threading.Lock()
        self._building: dict[Hashable, threading.Lock] = {}

    def get(self, key: Hashable, build: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            building = self._building.setdefault(key, threading.Lock())
        with building:
            with self._lock:
                if key in self._items:  # built while this session waited
                    return self._items[key]
            value = build()
            with self._lock:
                self._items[key] = value
                self._building.pop(key, None)
                while len(self._items) > self.size:
                    self._items.popitem(last=False)
        return value


@dataclass(frozen=True, eq=False)
class TraceViews:
    """What the page draws from one trace: the count chart, and each merge's views and sentences, built on first use."""

    key: RunKey
    events: tuple[MergeEvent, ...]
    tokenizer: Tokenizer
    spec: dict
    counts: bytes  # every merge's winning count, as Arrow (views.counts_arrow)
    counts_heading: str  # the count chart's heading, which says its scale
    merges: Shelf = field(default_factory=lambda: Shelf(MERGES_KEPT))
    sentences: Shelf = field(default_factory=lambda: Shelf(SENTENCES_KEPT))

    def merge(self, k: int) -> views.MergeView:
        """Merge k's views (1-based).

        A tied merge's table of what each rule would take needs the merges before it
        (they give the tokens their ids): an O(k) step, done here once, not per click.
        """
        return self.merges.get(k, lambda: self._merge(k))

    def _merge(self, k: int) -> views.MergeView:
        spec, n = self.key.spec, len(self.events)
        n_special = len(spec.special_tokens)
        event = self.events[k - 1]
        before = [(e.left, e.right) for e in self.events[: k - 1]] if event.tie else ()
        return views.merge_view(
            event, k, n, 256 + k + n_special, spec.algorithm, tie_break=spec.tie_break, before=before, n_special=n_special
        )

    def sentence(self, k: int, data: bytes) -> str:
        """data tokenized with the first k merges, as HTML with its heading and caption."""
        return self.sentences.get((k, data), lambda: self._sentence(k, data))

    def _sentence(self, k: int, data: bytes) -> str:
        html, note = views.sentence(self.tokenizer, data, k, self.events[k - 1].token)
        heading = "the first merge" if k == 1 else f"the first {k:,} merges"
        return f"<h3>A sentence tokenized with {heading}</h3>{html}{views.caption(note)}"


def trace_id(key: RunKey, n: int) -> str:
    """A short string naming a trace of n merges: what the cache hashes on every click."""
    return hashlib.blake2b(f"{key!r} {n}".encode(), digest_size=16).hexdigest()


TRACES_KEPT = 8  # traces whose views are kept: a class steps through one or two


_traces = Shelf(TRACES_KEPT)


def trace_views(trace_id: str, key: RunKey, events: tuple[MergeEvent, ...]) -> TraceViews:
    """The views of the trace named trace_id (which names key and len(events)), built once per server and shared.

    A Shelf, not st.cache_resource: this is called on every click, and Streamlit's cache wrapper (hashing the
    arguments, recording the call for replay) cost ~0.15 ms of it; the Shelf is a dictionary lookup.
    """
    return _traces.get(trace_id, lambda: _build(key, events))


def _build(key: RunKey, events: tuple[MergeEvent, ...]) -> TraceViews:
    pretokenizer, special_tokens = key.spec.pretokenizer, key.spec.special_tokens
    counts = [e.count for e in events]
    # subtle: a trace is a quarter of a million objects that live as long as the class steps through it, and
    # each of Python's full collections walked them all (up to 85 ms, in the middle of a click). gc.freeze moves
    # every object alive now out of the collector's sight, so it walks only what is newer; nothing leaks: a trace
    # has no reference cycles, so reference counting frees it when it is evicted, frozen or not.
    gc.freeze()
    return TraceViews(
        key=key,
        events=events,
        tokenizer=Tokenizer.from_merges([(e.left, e.right) for e in events], special_tokens, pretokenizer),
        spec=views.counts_spec(counts),
        counts_heading=views.counts_heading(counts),
        counts=views.counts_arrow(counts),
    )
