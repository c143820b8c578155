#!/usr/bin/env bash
# Installs everything the tests need (pip requirements; from Debian: chromium and fonts for the
# browser tests, HAProxy for the replicas' tests, iproute2 for the several-hosts test), then runs the
# whole suite: bash scripts/test.sh [pytest options]
set -euo pipefail
cd "$(dirname "$0")/.."
# the fonts draw the scripts the app shows (CJK, emoji; Devanagari, Thai, Arabic… in fonts-noto-core): without them
# the screenshots show boxes (tests/e2e/test_pages_browser.py checks the token tax's languages draw glyphs)
packages=(chromium haproxy iproute2 fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
bash scripts/setup.sh requirements-dev.txt
exec .venv/bin/python -m pytest "$@"
