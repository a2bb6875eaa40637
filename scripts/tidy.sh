#!/usr/bin/env bash
# clang-tidy (.clang-tidy) on the C++ sources a change touches: the .cpp files that differ from
# BASE (DYNAMIX_TIDY_BASE; default HEAD~1, the last commit) and that BUILD compiles (its
# compile_commands.json; default build). Prints each finding, then a count per check; exits 1
# when there is any. Usage: scripts/tidy.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
base=${DYNAMIX_TIDY_BASE:-HEAD~1}
if ! command -v clang-tidy >/dev/null; then
  echo "tidy: clang-tidy not found (Debian: apt-get install clang-tidy)" >&2
  exit 1
fi
if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
  echo "tidy: no commit $base to compare with; nothing checked"
  exit 0
fi
mapfile -t files < <(git diff --name-only --diff-filter=d "$base" -- '*.cpp' |
  /usr/bin/python3 -c '
import json, os, sys
compiled = {os.path.normpath(os.path.join(e["directory"], e["file"]))
            for e in json.load(open(sys.argv[1]))}
for line in sys.stdin:
    if os.path.abspath(line.strip()) in compiled: print(line.strip())' "$build/compile_commands.json")
if ((${#files[@]} == 0)); then
  echo "tidy: no compiled .cpp file changed since $base"
  exit 0
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
printf '%s\n' "${files[@]}" |
  xargs -P "$(nproc)" -n 1 clang-tidy -p "$build" --quiet 2>/dev/null >"$log" || true
grep -E '(warning|error): .* \[[a-z0-9.,-]+\]$' "$log" | sed "s|$PWD/$build/../||; s|$PWD/||" |
  sort -u >"$log.findings" || true
cat "$log.findings"
count=$(wc -l <"$log.findings")
echo "tidy: ${#files[@]} files changed since $base, $count findings"
if ((count > 0)); then
  grep -oE '\[[a-z0-9-]+' "$log.findings" | tr -d '[' | sort | uniq -c | sort -rn
fi
rm -f "$log.findings"
((count == 0))
