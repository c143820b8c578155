"""`pip install .` gives a `bpe` command, in a fresh virtual environment; so does the README's setup.

Offline and fast: the project is built from a copy of its files (a build writes
into the source tree) with --no-deps --no-build-isolation --no-index; the new
environment finds the dependencies (and pip and setuptools) in the running
one's site-packages through a .pth file. Deselect with `-m "not install"`.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.install


def fresh_venv(venv: Path) -> Path:
    """A venv without pip of its own that finds the running one's packages (pip and setuptools too) through a .pth file."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True)
    ours = {sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    (Path(purelib.stdout.strip()) / "deps.pth").write_text("\n".join(sorted(ours)) + "\n")
    return python


def install(folder: Path, env: dict[str, str] | None = None) -> Path:
    """`pip install .` of a copy of the project into a fresh venv under folder; env changes the build's environment."""
    source = folder / "src"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md"):
        shutil.copy(ROOT / name, source)
    shutil.copytree(ROOT / "bpe", source / "bpe", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    venv = folder / "venv"
    python = fresh_venv(venv)
    install = subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index", str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )
    assert install.returncode == 0, install.stderr
    return venv


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    return install(tmp_path_factory.mktemp("install"))


def bpe(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([venv / "bin" / "bpe", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_the_bpe_command_exists_and_helps(venv, tmp_path):
    result = bpe(venv, "--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "usage: bpe" in result.stdout and "count" in result.stdout and "train" in result.stdout


def test_the_installed_package_is_the_one_that_runs(venv, tmp_path):
    where = subprocess.run([venv / "bin" / "python", "-c", "import bpe; print(bpe.__file__)"], capture_output=True, text=True, cwd=tmp_path)
    assert where.stdout.strip().startswith(str(venv)), where.stdout


def test_the_bpe_command_trains_and_encodes(venv, tmp_path):
    (tmp_path / "corpus.txt").write_text("low lower lowest newer newest " * 50)
    trained = bpe(venv, "train", "corpus.txt", "--vocab-size", "270", "--out", "tok", "--workers", "1", cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    assert "14 merges" in trained.stdout and (tmp_path / "tok" / "merges.txt").exists()
    encoded = bpe(venv, "encode", "tok", "--text", "lowest", cwd=tmp_path)
    assert encoded.returncode == 0 and len(encoded.stdout.split()) < len("lowest")


def test_a_bad_input_is_one_sentence_from_the_command_too(venv, tmp_path):
    result = bpe(venv, "train", "missing.txt", "--vocab-size", "300", "--out", "tok", cwd=tmp_path)
    assert result.returncode == 2 and result.stderr == "error: No such file: missing.txt.\n"


def test_the_bpe_command_counts_with_gigatoken_and_without_it(venv, tmp_path):
    # the compiled pre-tokenizers are optional: the core's where it is built, else gigatoken (pip install .[fast]) for
    # GPT-2's pattern, else the Python path; each counts the same
    (tmp_path / "corpus.txt").write_text("low lower lowest newer newest " * 50)
    hidden = tmp_path / "hide" / "gigatoken"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError('no gigatoken in this environment')\n")
    no_core = {**os.environ, "BPE_CORE": "0"}
    args = [venv / "bin" / "bpe", "count", "corpus.txt", "--workers", "1", "--out"]
    env = {**no_core, "PYTHONPATH": str(hidden.parent)}
    without = subprocess.run([*args, "without.parquet"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert without.returncode == 0, without.stderr
    assert "pre-tokens counted in Python (the compiled core is absent (BPE_CORE=0 is set); gigatoken is not installed" in without.stdout
    outputs = ["without.parquet"]
    if shutil.which("gcc"):  # pip install built the core
        core = subprocess.run([*args, "core.parquet"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
        assert core.returncode == 0 and "pre-tokens counted by bpe._core (compiled)" in core.stdout, core.stdout + core.stderr
        outputs.append("core.parquet")
    pytest.importorskip("gigatoken")
    with_it = subprocess.run([*args, "with.parquet"], capture_output=True, text=True, cwd=tmp_path, env=no_core, timeout=120)
    assert with_it.returncode == 0, with_it.stderr
    assert "pre-tokens counted by gigatoken 0.10.0 (compiled)" in with_it.stdout
    outputs.append("with.parquet")
    tables = [pq.read_table(tmp_path / name) for name in outputs]
    assert tables[0].num_rows > 0 and all(table.equals(tables[0]) for table in tables)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler here (scripts/setup.sh installs gcc)")
def test_pip_install_builds_the_compiled_core(venv, tmp_path):
    where = bpe(venv, "core", cwd=tmp_path)
    assert where.returncode == 0 and where.stdout.startswith("The compiled core (bpe._core) is built"), where.stdout + where.stderr
    (tmp_path / "corpus.txt").write_text("low lower lowest newer newest " * 50)
    trained = bpe(venv, "train", "corpus.txt", "--vocab-size", "270", "--out", "tok", "--workers", "1", cwd=tmp_path)
    assert trained.returncode == 0 and "merges made by heap_c (compiled)" in trained.stdout, trained.stderr


def test_without_a_compiler_pip_install_still_installs_and_says_why(tmp_path_factory, tmp_path):
    venv = install(tmp_path_factory.mktemp("no-compiler"), env={"CC": "false", "LDSHARED": "false", "BPE_CORE_REQUIRED": "0"})
    where = bpe(venv, "core", cwd=tmp_path)
    said = where.stdout.splitlines()[0]
    assert said.startswith("The compiled core (bpe._core) is absent: it is not built here") and said.endswith(
        "; the trainers run in Python."
    )
    (tmp_path / "corpus.txt").write_text("low lower lowest newer newest " * 50)
    trained = bpe(venv, "train", "corpus.txt", "--vocab-size", "270", "--out", "tok", "--workers", "1", cwd=tmp_path)
    assert trained.returncode == 0 and "14 merges" in trained.stdout, trained.stderr
    assert "merges made by heap (in Python: heap_c cannot run here: it is not built here" in trained.stdout


def test_the_readme_setup_gives_bpe_and_import_bpe_in_any_directory(tmp_path):
    # scripts/setup.sh, which both of the README's commands run, on a copy of the checkout whose .venv has the
    # requirements already (its stamp says so); the core copied built, so the run shows setup.sh leaves it in place
    checkout, elsewhere = tmp_path / "checkout", tmp_path / "elsewhere"
    checkout.mkdir()
    elsewhere.mkdir()
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "requirements.txt"):
        shutil.copy2(ROOT / name, checkout)
    shutil.copytree(ROOT / "scripts", checkout / "scripts")
    shutil.copytree(ROOT / "bpe", checkout / "bpe", ignore=shutil.ignore_patterns("__pycache__"))
    python = fresh_venv(checkout / ".venv")
    (checkout / ".venv" / ".installed-requirements.txt").touch()
    core = sorted((checkout / "bpe").glob("_core*.so"))
    for built in core:  # newer than its sources, as after a build: setup.sh leaves it as it is
        os.utime(built)
    env = {**os.environ, "BPE_CORE_BUILD": "1" if core else "0"}  # no core here: do not try to build one
    setup = subprocess.run(["bash", checkout / "scripts" / "setup.sh"], capture_output=True, text=True, cwd=elsewhere, env=env, timeout=300)
    assert setup.returncode == 0 and setup.stdout == "", setup.stdout + setup.stderr
    assert sorted((checkout / "bpe").glob("_core*.so")) == core and not (checkout / "build").exists()

    # the README: source .venv/bin/activate, then bpe anywhere
    activated = f"source {checkout / '.venv' / 'bin' / 'activate'} && bpe --help && bpe core"
    shown = subprocess.run(["bash", "-c", activated], capture_output=True, text=True, cwd=elsewhere, timeout=120)
    assert shown.returncode == 0 and shown.stdout.startswith("usage: bpe"), shown.stderr
    built = "The compiled core (bpe._core) is built" if core else "The compiled core (bpe._core) is absent"
    assert built in shown.stdout
    where = subprocess.run([python, "-c", "import bpe; print(bpe.__file__)"], capture_output=True, text=True, cwd=elsewhere, timeout=60)
    assert where.stdout.strip() == str(checkout / "bpe" / "__init__.py"), where.stderr  # editable: this checkout's files

    command = (checkout / ".venv" / "bin" / "bpe").stat().st_mtime_ns
    again = subprocess.run(["bash", checkout / "scripts" / "setup.sh"], capture_output=True, text=True, cwd=elsewhere, env=env, timeout=60)
    assert again.returncode == 0 and again.stdout + again.stderr == ""
    assert (checkout / ".venv" / "bin" / "bpe").stat().st_mtime_ns == command  # installed once, not at every start
