#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every suite.
set -euo pipefail
source "$(dirname "$0")/setup.sh"
meson test -C build --print-errorlogs "$@"
