#!/usr/bin/env bash
# Creates .venv (once) and installs the pinned requirements into it.
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
