#!/usr/bin/env bash
# Executes the notebooks that fit a run directory and exports RUN_DIR/report/ (.ipynb, HTML, PNG):
#   scripts/report.sh RUN_DIR [--band FILE]
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/report.py" "$@"
