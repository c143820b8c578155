#!/usr/bin/env bash
# Installs what the app needs, then runs it: bash scripts/app.sh [streamlit options]
# One app process behind HAProxy, which answers Streamlit's browser files from its cache on the machine's other core
# (serve/replicas.py; HAProxy is installed from Debian when it can be without a password, else the app runs alone and
# says so). With --replicas N: N app processes behind HAProxy, sticky on a cookie, sharing one worker pool.
# It listens on this machine only (127.0.0.1) unless given an address: --server.address 0.0.0.0 opens it to a class.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh requirements.txt
case " $* " in
  *" --server.address"*) ;;
  *) if [ -z "${STREAMLIT_SERVER_ADDRESS:-}" ]; then set -- "$@" --server.address 127.0.0.1; fi ;;
esac
replicas=""
for arg in "$@"; do
  case "$arg" in --replicas | --replicas=*) replicas=yes ;; esac
done
have_haproxy() { command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ]; }
if ! have_haproxy; then
  if [ -n "$replicas" ]; then  # a lecture hall needs it: asked for, with sudo's password if need be
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq haproxy >/dev/null
  elif command -v apt-get >/dev/null && { [ "$(id -u)" -eq 0 ] || sudo -n true 2>/dev/null; }; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo -n"
    { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq haproxy >/dev/null; } || true
  fi
fi
if have_haproxy; then
  exec .venv/bin/python -m serve.replicas "$@"
fi
echo "scripts/app.sh: HAProxy is not installed (sudo apt-get install haproxy), so the app's own process answers Streamlit's browser files too: a class opening a link together waits longer for it." >&2
# web.py: app.py behind a cache of Streamlit's own browser files (serve/assets.py)
exec .venv/bin/streamlit run web.py --browser.gatherUsageStats false "$@"
