#!/usr/bin/env bash
# The shipped scaling study: scenarios/studies/scaling.yaml from 8 to 4,096 nodes, ring against
# parameter server, leaf-spine against fat-tree, a static batch against the adaptive baselines,
# 3 seeds; then its report (scaling curves with the alpha-beta closed form) in OUT/report.
#   usage: scripts/scaling_study.sh [OUT (default runs/scaling)] [more dynamix sweep options]
# DYNAMIX names the binary (default build/apps/dynamix) and JOBS the threads (default 2);
# under mpirun, run the sweep line itself (docs/mpi.md). The figure of docs/studies.md is
# OUT/report/sweep_scaling.{png,pdf} copied to docs/figures/scaling_study.{png,pdf}.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/scaling}
"${DYNAMIX:-build/apps/dynamix}" sweep --scenario scenarios/studies/scaling.yaml \
  --grid topology.fabric.nodes=8,32,128,512,4096 --grid sync.architecture=ring,ps \
  --grid topology.fabric.kind=leaf-spine,fat-tree \
  --policies static:64,goodput,proportional,goodput+proportional --seeds 3 \
  --jobs "${JOBS:-2}" --quiet --out "$out" "${@:2}"
scripts/report.sh "$out"
