#!/usr/bin/env bash
# Installs everything the tests need (pip requirements, Debian's chromium for the
# browser tests and HAProxy for the replicas' test), then runs the whole suite: bash scripts/test.sh [pytest options]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/sbin/haproxy ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium haproxy >/dev/null
fi
bash scripts/setup.sh requirements-dev.txt
exec .venv/bin/python -m pytest "$@"
