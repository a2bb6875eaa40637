#!/usr/bin/env bash
# The main job on the embedded default scenario: installs what is missing, builds, runs.
set -euo pipefail
source "$(dirname "$0")/setup.sh"
./build/apps/dynamix simulate --out runs/quickstart "$@"
