#!/usr/bin/env bash
# Sweep throughput over MPI: episodes per second of `dynamix sweep` as one process (--jobs 1) and
# as `mpirun -n 2` (--jobs 1 per rank), whole commands timed (MPI start-up and the outputs
# included), alternating for ROUNDS rounds (default 5); prints each round, the medians and their
# ratio (target >= 1.8 on 2 cores), and checks that both wrote the same results.csv. The sweep is
# bench/sweep_bench.cpp's, hetero32 with its budgets raised, 2 cells x 2 policies x SEEDS seeds
# (default 128: 512 episodes, long enough that mpirun's start-up, 1-2 s, does not dominate).
#   usage: bench/sweep_mpi_bench.sh [PATH/TO/dynamix (default build/apps/dynamix)]
set -euo pipefail
dynamix=$(realpath "${1:-build/apps/dynamix}")
rounds=${ROUNDS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sweep=(sweep --scenario hetero32 --set training.budget_time_s=1200 --set training.budget_epochs=1000
       --grid sync.architecture=ring,ps --policies static:128,goodput+proportional --seeds "${SEEDS:-128}"
       --jobs 1 --quiet)
episodes=$((4 * ${SEEDS:-128}))
seconds() {  # runs "$@" and prints its wall time in seconds
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
one=() two=()
for round in $(seq "$rounds"); do
  rm -rf "$work/one" "$work/two"
  load=$(cut -d' ' -f1 /proc/loadavg)
  one+=("$(seconds "$dynamix" "${sweep[@]}" --out "$work/one")")
  two+=("$(seconds mpirun --allow-run-as-root --oversubscribe -n 2 "$dynamix" "${sweep[@]}" \
    --out "$work/two")")
  cmp -s "$work/one/results.csv" "$work/two/results.csv" || { echo "results.csv differ"; exit 1; }
  echo "round $round (load $load): 1 process ${one[-1]} s, 2 ranks ${two[-1]} s"
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
m1=$(median "${one[@]}") m2=$(median "${two[@]}")
echo "median: 1 process $(echo "$episodes / $m1" | bc -l | cut -c1-5) episodes/s," \
  "2 ranks $(echo "$episodes / $m2" | bc -l | cut -c1-5) episodes/s: $(echo "$m1 / $m2" | bc -l | cut -c1-4)x"
