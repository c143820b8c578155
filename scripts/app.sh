#!/usr/bin/env bash
# Installs what the app needs, then runs it: bash scripts/app.sh [streamlit options]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh requirements.txt
exec .venv/bin/streamlit run app.py --browser.gatherUsageStats false "$@"
