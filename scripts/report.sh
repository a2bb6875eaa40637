#!/usr/bin/env bash
# Executes the notebooks that fit a run directory and exports RUN_DIR/report/ (.ipynb, HTML, and
# figures as PNG, PDF and SVG); the same as dynamix report:
#   scripts/report.sh RUN_DIR [--x KEY] [--band FILE] [--formats png,pdf,svg]
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/report.py" "$@"
