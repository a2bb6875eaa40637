#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every suite.
set -euo pipefail
source "$(dirname "$0")/setup.sh"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
meson test -C build --print-errorlogs "$@" | tee "$log" || status=$?
passed=$(awk '/^Ok:/ {print $2}' "$log")
failed=$(awk '/^(Fail|Timeout|Unexpected Pass):/ {n += $NF} END {print n + 0}' "$log")
echo "suites: ${passed:-0} passed, ${failed} failed"
exit "$status"
