"""The code beside the step: the few lines of the algorithm that just ran, read from the library's own source.

An `Excerpt` is one function of bpe/ as its source says it now (inspect.getsourcelines, the docstring left out),
with a few lines marked; each `Mark` is found by an `ast` query -- "the call to heappop in Heap.choose" -- never by
a line number written here, so the excerpt follows the source as it changes, and a mark whose call is gone raises.
tests/test_code_views.py runs a real merge and a real encoding under a profiler and checks that each marked line is
the line that makes that call: if the marked line stops being the one that does it, a test fails.

`step_code` is the step page's (built once per (trace, merge) with the merge's views, ui/step_data.py), `encode_code`
the Encode page's. Escaped HTML; the CSS is in ui/style.py.
"""

from __future__ import annotations

import ast
import functools
import html
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bpe.events import MergeEvent
from bpe.heap import Heap
from bpe.naive import Naive
from bpe.tokenizer.encoder import Encoder
from bpe.train import ALGORITHMS
from bpe.trainer import Trainer
from ui.render import show

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Mark:
    """A line to mark: the nth call (0-based, in source order) of `call` (a function's or method's name) in the function."""

    name: str  # how the marks are told apart: 'pop'
    call: str  # the called function's or method's name; with assign, the target an assignment writes ('ids[i:i + 2]')
    nth: int = 0
    test: Callable[[ast.Call], bool] | None = None  # and only a call that passes this
    assign: bool = False  # the line is the nth assignment to `call`, not a call


@dataclass(frozen=True)
class Excerpt:
    """A function's source without its docstring, and the file's line number of each mark."""

    where: str  # 'bpe/heap.py · Heap.choose'
    numbers: tuple[int, ...]  # each line's number in its file
    lines: tuple[str, ...]
    marks: dict[str, int]  # mark name -> line number
    folds: tuple[tuple[int, int], ...] = ()  # (first, last) line numbers of each `if detail:` block: shown as one line


def _detail_blocks(function_node: ast.AST) -> list[tuple[int, int]]:
    """(first, last) line of each `if detail:` block (no else): bookkeeping for the pages, not the algorithm's steps."""
    return sorted(
        (node.lineno, node.end_lineno)
        for node in ast.walk(function_node)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "detail" and not node.orelse
    )


def _calls(function_node: ast.AST, mark: Mark) -> list[ast.AST]:
    found = []
    if mark.assign:
        found = [n for n in ast.walk(function_node) if isinstance(n, ast.Assign) and any(ast.unparse(t) == mark.call for t in n.targets)]
        return sorted(found, key=lambda n: (n.lineno, n.col_offset))
    for node in ast.walk(function_node):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name == mark.call and (mark.test is None or mark.test(node)):
                found.append(node)
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


@functools.cache
def excerpt(function: Callable, marks: tuple[Mark, ...]) -> Excerpt:
    """function's source, docstring left out, with the line of each mark; raises LookupError when a mark's call is not there."""
    source, first = inspect.getsourcelines(function)
    tree = ast.parse(textwrap.dedent("".join(source)))
    node = tree.body[0]
    skip: set[int] = set()
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        skip = set(range(body[0].lineno, body[0].end_lineno + 1))
    found = {}
    for mark in marks:
        calls = _calls(node, mark)
        if len(calls) <= mark.nth:
            raise LookupError(
                f"{function.__qualname__} no longer calls {mark.call} (call {mark.nth + 1}): the excerpt's mark '{mark.name}'."
            )
        found[mark.name] = first + calls[mark.nth].lineno - 1
    folds = tuple((first + a - 1, first + b - 1) for a, b in _detail_blocks(node))
    for name, line in found.items():
        if any(a <= line <= b for a, b in folds):
            raise LookupError(f"{function.__qualname__}: the excerpt's mark '{name}' is in an `if detail:` block, which is folded away.")
    dedented = textwrap.dedent("".join(source)).splitlines()
    kept = [(first + i, line) for i, line in enumerate(dedented) if i + 1 not in skip]
    path = Path(inspect.getsourcefile(function)).resolve()
    where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name} · {function.__qualname__}"
    return Excerpt(where, tuple(n for n, _ in kept), tuple(line for _, line in kept), found, folds)


def render(part: Excerpt, said: dict[str, str]) -> str:
    """The excerpt as a numbered listing; each mark in `said` lit, with what it did here written beside it.

    An `if detail:` block (what the trainer records for these pages, when asked) is one line saying so, set apart:
    the lines shown are the algorithm's. A line too long for the page wraps under itself, four columns in (the
    indentation of a continued line in Python), never back at column 0 where it would read as other code.
    """
    lit = {part.marks[name]: text for name, text in said.items() if name in part.marks}
    folded = {a: b for a, b in part.folds}
    rows, skip_to = [], 0
    for number, line in zip(part.numbers, part.lines):
        if number <= skip_to:
            continue
        if number in folded:
            skip_to = folded[number]
            lines = f"lines {number}–{skip_to}" if skip_to > number else f"line {number}"
            rows.append(
                f'<div class="fold"><span class="ln">⋮</span><span>{lines} left out: if detail, they record what this page draws</span></div>'
            )
            continue
        note = lit.get(number)
        css = ' class="lit"' if note is not None else ""
        tail = f'<span class="what">◀ {html.escape(note)}</span>' if note else ""
        text = line.lstrip(" ")
        indent = f' style="--i:{len(line) - len(text)}"' if len(line) > len(text) else ""
        rows.append(f'<div{css}><span class="ln">{number}</span><code{indent}>{html.escape(text) or " "}</code>{tail}</div>')
    return f'<div class="code-excerpt"><div class="where">{html.escape(part.where)}</div>{"".join(rows)}</div>'


# ---------------------------------------------------------------------------
# the step page: what choosing and merging did at this merge

NAIVE_CHOOSE = (Mark("recount", "count_pairs"), Mark("scan", "choose"))
NAIVE_MERGE = (Mark("rewrite", "merge_word"),)
SCAN = (Mark("scan", "best_two"),)
HEAP_CHOOSE = (Mark("stale", "_clean_top", 0), Mark("pop", "heappop"), Mark("runner", "_clean_top", 1))
HEAP_APPLY = (Mark("push", "heappush"),)


# the lines each shown method lights: by the class that defines the method (a trainer says which it shows: Trainer.shown)
MARKS: dict[tuple[type, str], tuple[Mark, ...]] = {
    (Naive, "choose"): NAIVE_CHOOSE,
    (Naive, "merge"): NAIVE_MERGE,
    (Trainer, "choose"): SCAN,
    (Heap, "choose"): HEAP_CHOOSE,
    (Heap, "apply"): HEAP_APPLY,
}


def trainer_excerpts(algorithm: str) -> list[tuple[Excerpt, str]]:
    """The functions the step page shows for a trainer (its `shown` methods), each with what its marks are for.

    A compiled trainer shows its reference's: the Python it compiles (heap_c runs Heap's steps in C, bpe/c/heap.c).
    """
    trainer = ALGORITHMS[algorithm]
    shown = trainer.reference or trainer
    out = []
    for method in shown.shown:
        owner = next(c for c in shown.__mro__ if method in vars(c))
        out.append((excerpt(getattr(owner, method), MARKS[(owner, method)]), method))
    return out


def step_code(event: MergeEvent, algorithm: str) -> str:
    """The code that made this merge, its lines lit with what they did here (this merge's work counters and pair)."""
    done = dict(event.work)
    pair = f"{show(event.left)} + {show(event.right)}"
    said = {
        "recount": f"counted {done.get('pairs_counted', 0):,} pairs, every pair of every word",
        "scan": f"the highest count: {pair}, {event.count:,}",
        "rewrite": f"checked {done.get('words_checked', 0):,} words, rewrote {done.get('words_touched', 0):,}",
        "stale": _stale(event, winner=True),
        "pop": f"popped the winner: {pair}, {event.count:,}",
        "runner": _stale(event, winner=False),
        "push": f"{done.get('heap_pushes', 0):,} entries pushed: the pairs whose count went up",
    }
    parts = "".join(render(part, said) for part, _ in trainer_excerpts(algorithm))
    trainer = ALGORITHMS[algorithm]
    note = f"{trainer.name} runs these same steps compiled to C; this is the Python it compiles. " if trainer.reference else ""
    return (
        f"{parts}<p class='caption'>{html.escape(note)}Read from the library's source as it is now; the lit lines made "
        "what this page shows for this merge.</p>"
    )


def _stale(event: MergeEvent, winner: bool) -> str:
    heap = event.detail.heap if event.detail is not None else None
    if heap is None:
        return ""
    n = heap.winner_pops if winner else heap.stale_popped_total - heap.winner_pops
    entries = f"{n:,} stale entr{'y' if n == 1 else 'ies'}"
    if not winner and event.runner_up is None:  # the pops emptied the heap: no runner-up for them to be above
        return f"popped {entries} looking for a runner-up; none was left" if n else "no pair left for a runner-up"
    whom = "the winner" if winner else "the runner-up"
    return f"popped {entries} above {whom}" if n else f"no stale entry above {whom}"


# ---------------------------------------------------------------------------
# the Encode page: the encoder's loop, the lowest merge number and the merge it makes

ENCODE_STEPS = (Mark("lowest", "min"), Mark("merge", "ids[i:i + 2]", assign=True))


def encode_excerpt() -> Excerpt:
    """The encoder's own loop (encoder.py's Encoder.rounds): what encode() runs where the core is absent, and what
    the Encode page's steps are recorded from (steps.py)."""
    return excerpt(Encoder.rounds, ENCODE_STEPS)


def encode_code(lowest: str | None, made: str | None) -> str:
    """Encoder.rounds with its choice lit: `lowest` what min() found ('#5: e + s'; None: no pair is a merge),
    `made` what the merge made ('es, in 1 place'; None at the end)."""
    said = {"lowest": f"the lowest merge number: {lowest}" if lowest else "no pair is a merge: rank is None, so the loop stops"}
    if made:
        said["merge"] = made
    return render(encode_excerpt(), said)
