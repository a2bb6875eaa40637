#!/usr/bin/env bash
# Performance figures (Google Benchmark): installs what is missing, builds, runs the benchmarks.
set -euo pipefail
source "$(dirname "$0")/setup.sh"
./build/bench/dynamix_bench "$@"
