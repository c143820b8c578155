#!/usr/bin/env bash
# Creates .venv (once), installs the pinned requirements into it, and builds the compiled core in place.
# Usage: scripts/setup.sh [requirements file]
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=${1:-requirements.txt}
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=".venv/.installed-$(basename "$requirements")"
if [ ! -f "$stamp" ] || [ "$requirements" -nt "$stamp" ] || [ requirements.txt -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$requirements"
  touch "$stamp"
fi

# The project itself, editable: .venv/bin/bpe, and `import bpe` from any directory with the venv's python, both this
# checkout's files as they are now. Installed once, and again when the venv's bpe is another checkout's (a copied venv).
# The core is not built by it (BPE_CORE_IN_PLACE=1: setup.py leaves it out) but in place below, where the tests find it too.
ours="import importlib.util, os, sys; s = importlib.util.find_spec('bpe'); print(bool(s) and os.path.samefile(s.origin, sys.argv[1]))"
found=$(cd / && "$OLDPWD/.venv/bin/python" -c "$ours" "$OLDPWD/bpe/__init__.py" 2>/dev/null || true)
if [ ! -x .venv/bin/bpe ] || [ "$found" != True ]; then
  if ! BPE_CORE_IN_PLACE=1 .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e . >/dev/null; then
    echo "setup.sh: the project was not installed into .venv (see the pip error above), so there is no .venv/bin/bpe: python -m bpe from the checkout is the same." >&2
  fi
fi

# The compiled core (bpe._core, C: bpe/c/*.c, setup.py), built in place when it is missing or a source is newer.
# gcc and the Python headers come from Debian when missing; where they cannot be had, everything runs in Python
# and this says why in one sentence (so does `python -m bpe.core`). BPE_CORE_REQUIRED=1 (CI) makes a failed build fatal.
# BPE_CORE_BUILD=0 leaves the core as it is: the tests set it for the scripts/app.sh they start, since a build in the
# checkout halfway through a run gives the processes started after it a core that those already running lack.
core="bpe/_core$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"
if [ "${BPE_CORE_BUILD:-1}" != 0 ] && { [ ! -f "$core" ] || [ -n "$(find bpe/c setup.py bpe/core/__init__.py -newer "$core" 2>/dev/null | head -1)" ]; }; then
  headers=$(.venv/bin/python -c 'import os, sysconfig; print(os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))')
  needed=()
  command -v gcc >/dev/null || needed+=(gcc libc6-dev)
  [ "$headers" = True ] || needed+=("python3-dev")
  if [ ${#needed[@]} -gt 0 ]; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo -n"; fi
    if command -v apt-get >/dev/null && { [ -z "$sudo" ] || sudo -n true 2>/dev/null; }; then
      $sudo apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${needed[@]}" >/dev/null || true
    fi
  fi
  log=$(mktemp)
  if BPE_CORE_REQUIRED=1 .venv/bin/python setup.py --quiet build_ext --inplace >"$log" 2>&1 && [ -f "$core" ]; then
    rm -rf build
  else
    # the compiler's own first error ("fatal error: Python.h: No such file or directory"), else setuptools' last line
    reason=$(grep -m1 -oE "(fatal )?error: [^[]{1,160}" "$log" || true)
    if [ -z "$reason" ] || [ "$reason" = "error: Command '" ]; then  # a compiler that failed without a word
      compiler=$(sed -n "s/.*Command '\['\([^']*\)'.*/\1/p" "$log" | head -1)
      reason=${compiler:+the compiler $compiler failed}
      reason=${reason:-$(tail -1 "$log" | cut -c1-160)}
    fi
    echo "setup.sh: the compiled core was not built (${reason:-see python setup.py build_ext --inplace}), so the trainers run in Python (install gcc and python3-dev to build it)." >&2
    if [ "${BPE_CORE_REQUIRED:-0}" = 1 ]; then cat "$log" >&2; rm -f "$log"; exit 1; fi
  fi
  rm -f "$log"
fi
