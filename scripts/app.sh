#!/usr/bin/env bash
# Installs what the app needs, then runs it: bash scripts/app.sh [streamlit options]
# With --replicas N: N app processes behind HAProxy (installed from Debian if missing),
# sticky on a cookie, sharing one worker pool (serve/replicas.py): bash scripts/app.sh --replicas 2
# It listens on this machine only (127.0.0.1) unless given an address: --server.address 0.0.0.0 opens it to a class.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh requirements.txt
case " $* " in
  *" --server.address"*) ;;
  *) if [ -z "${STREAMLIT_SERVER_ADDRESS:-}" ]; then set -- "$@" --server.address 127.0.0.1; fi ;;
esac
for arg in "$@"; do
  case "$arg" in
    --replicas | --replicas=*)
      if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ]; then
        sudo=""
        [ "$(id -u)" -ne 0 ] && sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq haproxy >/dev/null
      fi
      exec .venv/bin/python -m serve.replicas "$@"
      ;;
  esac
done
# web.py: app.py behind a cache of Streamlit's own browser files (serve/assets.py)
exec .venv/bin/streamlit run web.py --browser.gatherUsageStats false "$@"
