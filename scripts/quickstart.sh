#!/usr/bin/env bash
# The main job on the embedded default scenario: installs what is missing and builds, trains a
# PPO batch-size policy on the quick-start cluster's randomized family (4-256 workers), keeps the
# snapshot that did best on the six validation clusters, exports policy.pt, and evaluates it
# against the baselines and the oracle schedule on the five shipped scenarios, then against the
# baselines on the validation clusters (which selected it: read those as optimistic). Extra
# arguments go to `dynamix train` (e.g. --steps 50000 for a shorter run).
set -euo pipefail
# Only what this script runs: the tests and benchmarks are scripts/test.sh's to build.
build_targets=(apps/dynamix apps/dynamix-torch)
source "$(dirname "$0")/setup.sh"
runs=runs/quickstart
dynamix=./build/apps/dynamix
"$dynamix" train --randomize --select-on validation --out "$runs/train" "$@"
scenarios=()
for name in quickstart hetero32 lossy8 background8 ps16_incast; do
  scenarios+=(--scenario "embedded:/scenarios/$name.yaml")
done
"$dynamix" evaluate "${scenarios[@]}" --seeds 5 --oracle --out "$runs/evaluate" \
  --policies "static:32,static:64,static:128,static:256,goodput,proportional,gns,goodput+proportional,goodput:100,ppo=ppo:$runs/train/policy.pt"
validation=()
while read -r path; do validation+=(--scenario "$path"); done < <("$dynamix" scenarios --validation)
"$dynamix" evaluate "${validation[@]}" --seeds 5 --out "$runs/validation" \
  --policies "static:32,static:64,static:128,static:256,goodput,proportional,gns,goodput+proportional,goodput:100,ppo=ppo:$runs/train/policy.pt"
# The report: the training curve and the evaluation as figures (notebooks_export/).
scripts/report.sh "$runs/train"
scripts/report.sh "$runs/evaluate"
