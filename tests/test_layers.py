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
ON_DEMAND = ("tokenizers",)  # the references' libraries (bpe/lab/references.py) are imported when a race asks for them

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
    assert {"bpe.heap", "bpe.text.pretokenizers", "bpe.lab.race", "serve.pool", "serve.jobs", "serve.settings"} <= set(walked["modules"])
    assert walked["found"] == {}, (
        f"importing these brought in a library they must not (directly or through another module): {walked['found']}"
    )


# bpe/'s rooms, lowest first: a module imports only from its own room and the rooms before it (inside functions
# too), so that every arrow runs down. A compiled version sits in its Python original's room (heap_c beside heap,
# pretokenize_c beside pretokenize), since it imports its original. The package itself (bpe/__init__) is the top.
LAYERS = (
    (
        "base",
        ("bpe.renamed", "bpe.atomic", "bpe.memory", "bpe.progress", "bpe.core", "bpe._core"),
    ),  # helpers every room uses; the compiled core's loader
    ("text", ("bpe.text",)),  # text -> pre-tokens: the pre-tokenizers, special tokens, the scanners
    ("data", ("bpe.data",)),  # inputs of every format, counting at scale, counts files, the built-in corpus
    (
        "training",
        (
            "bpe.rule",
            "bpe.events",
            "bpe.spec",
            "bpe.trainer",
            "bpe.naive",
            "bpe.positions",
            "bpe.parent_set",
            "bpe.heap",
            "bpe.heap_c",
            "bpe.train",
        ),
    ),
    # the SentencePiece family: its trainer, model, .model files, encoders (it needs the training core's events, no file
    # format and no Tokenizer), below files/ so that the format registry reads its files
    ("sentencepiece", ("bpe.sentencepiece",)),
    ("files", ("bpe.files",)),  # tokenizer files: every format, read and written; arrays of ids
    # using a tokenizer: the byte-level encoder, the Tokenizer, tiktoken's interface, datasets; the SentencePiece family's
    # tokenizer (it saves through files/formats.py, so it sits here, not in bpe/sentencepiece/)
    ("tokenizer", ("bpe.tokenizer",)),
    ("lab", ("bpe.lab",)),  # measuring and explaining: races, thresholds, the vocabulary, diagnosing a student's merges
    ("cli", ("bpe.cli", "bpe.__main__", "bpe")),
)


def layer_of(module: str) -> int:
    """The room of a module of bpe: 'bpe.text.pretokenize' -> 1; 'bpe' -> the top."""
    best, found = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), i
    assert found >= 0, f"{module} is in no room of LAYERS: add it to one (tests/test_layers.py)"
    return found


def module_names(package: str = "bpe") -> dict[str, Path]:
    """Every module of the package by its dotted name: {'bpe.text.pretokenize': path, ...}."""
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    out["bpe._core"] = ROOT / "bpe" / "c" / "module.c"  # the compiled core, a module built from C: it imports nothing of bpe
    return out


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of the package a module imports, anywhere in the file (inside functions too), as dotted names."""
    if path.suffix != ".py":
        return set()
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if not module.startswith("bpe"):
                continue
            for alias in node.names:  # `from . import heap` names a module; `from .spec import TrainSpec` a name
                found.add(f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("bpe.")}
    return {m for m in found if m in known} - {name}


def test_every_import_in_bpe_runs_down_its_rooms():
    modules = module_names()
    known = set(modules)
    upward = []
    for name, path in modules.items():
        for other in sorted(imports_of(name, path, known)):
            if layer_of(other) > layer_of(name):
                upward.append(f"{name} ({LAYERS[layer_of(name)][0]}) imports {other} ({LAYERS[layer_of(other)][0]})")
    assert upward == [], "imports that run back up:\n" + "\n".join(upward)


def test_bpe_has_no_import_circle():
    modules = module_names()
    graph = {name: imports_of(name, path, set(modules)) for name, path in modules.items()}
    # a package's __init__ is imported with any of its modules, so a module importing its own package's __init__ is no circle
    graph = {name: {m for m in deps if not name.startswith(m + ".")} for name, deps in graph.items()}
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
    result = subprocess.run([sys.executable, "-c", "import bpe.text.gigatoken"], cwd=ROOT, capture_output=True, text=True, timeout=60)
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


def test_no_test_module_imports_a_fixture():
    # subtle: `from .conftest import browser` made a second, module-level copy of the session's Playwright fixture, whose
    # event loop stayed running: every browser test after that module failed to start its own (83 errors in one run).
    # A fixture of a conftest is found by pytest without an import.
    fixtures = set()
    for conftest in sorted((ROOT / "tests").rglob("conftest.py")):
        for node in ast.walk(ast.parse(conftest.read_text())):
            if isinstance(node, ast.FunctionDef) and any("fixture" in ast.unparse(d) for d in node.decorator_list):
                fixtures.add(node.name)
    imported = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("conftest"):
                imported += [f"{path.relative_to(ROOT)}: {a.name}" for a in node.names if a.name in fixtures]
    assert imported == [], f"these import a conftest's fixture (pytest finds it by name; an import makes a second one): {imported}"
