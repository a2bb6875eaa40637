#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every suite. With
# DYNAMIX_SANITIZERS=1 (as CI sets it) it also builds build-asan without LibTorch, under
# AddressSanitizer and UndefinedBehaviorSanitizer, and runs the fast suites and the fuzz corpus
# there; any sanitizer report fails its suite. A `meson setup` with every optional part disabled
# checks that a machine with only the simulator's dependencies can configure dynamix.
set -euo pipefail
source "$(dirname "$0")/setup.sh"
log=$(mktemp)
sim_only=$(mktemp -d)
trap 'rm -rf "$log" "$sim_only"' EXIT
status=0
if ! output=$(meson setup "$sim_only" -Dppo=disabled -Dtests=disabled -Dbenchmarks=disabled \
  -Dadapter=disabled -Dpython=disabled -Dmpi=disabled 2>&1); then
  echo "$output" >&2
  echo "dynamix: meson setup with only the simulator's dependencies failed (output above)" >&2
  status=1
fi
meson test -C build --print-errorlogs "$@" | tee "$log" || status=$?

if [[ ${DYNAMIX_SANITIZERS:-0} == 1 ]]; then
  sanitizer_flags='-fsanitize=float-cast-overflow -fno-sanitize-recover=all'
  if [[ ! -f build-asan/build.ninja ]]; then
    # -O1 without debug info: the sanitized build compiles in a few minutes and still runs fast.
    meson setup build-asan --buildtype=plain -Db_ndebug=false -Db_sanitize=address,undefined \
      -Dcpp_args="-O1 $sanitizer_flags" -Dcpp_link_args="$sanitizer_flags" \
      -Dppo=disabled -Dpython=disabled -Dbenchmarks=disabled -Dmpi=disabled >/dev/null
  fi
  build_quietly build-asan
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    meson test -C build-asan --print-errorlogs --suite sim --suite calibration --suite gym \
    --suite policies --suite studies --suite fuzz | tee -a "$log" || status=$?
fi

passed=$(awk '/^Ok:/ {n += $2} END {print n + 0}' "$log")
failed=$(awk '/^(Fail|Timeout|Unexpected Pass):/ {n += $NF} END {print n + 0}' "$log")
echo "suites: ${passed} passed, ${failed} failed"
exit "$status"
