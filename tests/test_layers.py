"""The layers hold: the library (bpe/) and the serving machinery (serve/) import no UI library, and bpe/ has no import circle.

A worker process of the pool imports serve/ and bpe/ only, so either importing Streamlit, pandas or
Altair would cost every worker its start-up (Streamlit alone was 195 ms of a worker's 200 ms); and
pages may import bpe, never the other way round. Every module is imported, found by pkgutil, in
one fresh interpreter, so a module added tomorrow is checked too. And no test starts an event loop in the
main thread, where the browser tests' Playwright holds one.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UI_LIBRARIES = ("streamlit", "pandas", "altair")
ON_DEMAND = ("tokenizers",)  # the references' libraries (bpe/references.py) are imported when a race asks for them

# In a fresh interpreter: import every module of the packages, one at a time, and say which one
# brought each forbidden library in (a module run as a script, __main__, is left out: it would run).
WALK = """
import importlib, json, pkgutil, sys
forbidden, found, modules = json.loads(sys.argv[1]), {}, []
for package in ("bpe", "serve"):
    modules += [package] + [m.name for m in pkgutil.walk_packages(importlib.import_module(package).__path__, package + ".")]
for name in modules:
    if name.endswith("__main__"):
        continue
    before = {lib for lib in forbidden.get(name, []) + forbidden["*"] if lib in sys.modules}
    importlib.import_module(name)
    brought = [lib for lib in forbidden.get(name, []) + forbidden["*"] if lib in sys.modules and lib not in before]
    if brought:
        found[name] = brought
print(json.dumps({"modules": modules, "found": found}))
"""


def test_no_module_of_bpe_or_serve_imports_a_ui_library():
    forbidden = {"*": [*UI_LIBRARIES, *ON_DEMAND]}
    result = subprocess.run([sys.executable, "-c", WALK, json.dumps(forbidden)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    walked = json.loads(result.stdout)
    assert {"bpe.heap", "bpe.patterns", "bpe.race", "serve.pool", "serve.jobs", "serve.settings"} <= set(walked["modules"])
    assert walked["found"] == {}, (
        f"importing these brought in a library they must not (directly or through another module): {walked['found']}"
    )


def imports_within(package: str) -> dict[str, set[str]]:
    """Each module of the package -> the modules of the package it imports, anywhere in the file (inside functions too)."""
    names = {p.stem for p in (ROOT / package).glob("*.py")} - {"__init__", "__main__"}
    graph: dict[str, set[str]] = {}
    for name in names:
        found = set()
        for node in ast.walk(ast.parse((ROOT / package / f"{name}.py").read_text())):
            if isinstance(node, ast.ImportFrom) and (node.level == 1 or (node.module or "").startswith(package)):
                module = (node.module or "").removeprefix(package).lstrip(".")
                found |= {module.split(".")[0]} if module else {a.name for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {a.name.split(".")[1] for a in node.names if a.name.startswith(package + ".")}
        graph[name] = found & names - {name}
    return graph


def test_bpe_has_no_import_circle():
    # compiled.py once took names from pretokenize.py, which imported compiled inside Tally: patterns.py is below both now
    graph = imports_within("bpe")
    assert graph["compiled"] >= {"patterns"} and "pretokenize" not in graph["compiled"]
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, f"an import circle: {' -> '.join((*path[path.index(name) :], name))}"
        if name not in done:
            for other in sorted(graph[name]):
                visit(other, (*path, name))
            done.add(name)

    for name in sorted(graph):
        visit(name, ())


def test_compiled_imports_first_in_a_fresh_interpreter():
    result = subprocess.run([sys.executable, "-c", "import bpe.compiled"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]


def test_no_test_runs_an_event_loop_in_the_main_thread():
    # subtle: the browser tests' Playwright (sync API, one per session) keeps an event loop running in the main thread from
    # the first browser test on, and asyncio.run refuses to start inside it: tests/test_assets.py passed alone and failed
    # all 33 of its tests in the whole suite. conftest.run_async runs the coroutine on a thread of its own.
    calls = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith(("asyncio.run", ".run_until_complete")):
                calls.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert calls == [], f"these start an event loop in the main thread; call conftest.run_async instead: {calls}"
