#!/usr/bin/env bash
# The sim-to-real study (docs/sim_to_real.md): builds dynamix if needed, then runs
# scripts/sim_to_real.py with Debian's Python (torch, yaml, matplotlib). Options: see --help.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
exec /usr/bin/python3 scripts/sim_to_real.py "$@"
