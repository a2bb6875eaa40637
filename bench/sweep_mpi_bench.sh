#!/usr/bin/env bash
# Sweep throughput on 2 cores: episodes per second of `dynamix sweep` as one process with one
# thread (--jobs 1), as one process with two (--jobs 2), and as `mpirun -n 2` (--jobs 1 per
# rank). Whole commands are timed (start-up and outputs included), alternating for ROUNDS rounds
# (default 3); prints each round, the medians and their ratios to one thread (target >= 1.8),
# and checks that all three wrote the same results.csv. The sweep is bench/sweep_bench.cpp's,
# hetero32 with its budgets raised, 2 cells x 2 policies x SEEDS seeds (default 256: 1,024
# episodes, a minute of one core, long enough that start-up, about 1 s for mpirun and 0.8 s per
# dynamix process, weighs a few percent).
#   usage: bench/sweep_mpi_bench.sh [PATH/TO/dynamix (default build/apps/dynamix)]
set -euo pipefail
dynamix=$(realpath "${1:-build/apps/dynamix}")
rounds=${ROUNDS:-3}
seeds=${SEEDS:-256}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sweep=(sweep --scenario hetero32 --set training.budget_time_s=1200 --set training.budget_epochs=1000
       --grid sync.architecture=ring,ps --policies static:128,goodput+proportional --seeds "$seeds"
       --quiet)
episodes=$((4 * seeds))
seconds() {  # runs "$@" and prints its wall time in seconds
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
one=() threads=() ranks=()
for round in $(seq "$rounds"); do
  rm -rf "$work"/{one,threads,ranks}
  load=$(cut -d' ' -f1 /proc/loadavg)
  one+=("$(seconds "$dynamix" "${sweep[@]}" --jobs 1 --out "$work/one")")
  threads+=("$(seconds "$dynamix" "${sweep[@]}" --jobs 2 --out "$work/threads")")
  ranks+=("$(seconds mpirun --allow-run-as-root --oversubscribe -n 2 "$dynamix" "${sweep[@]}" \
    --jobs 1 --out "$work/ranks")")
  for other in threads ranks; do
    cmp -s "$work/one/results.csv" "$work/$other/results.csv" || { echo "$other: results.csv differ"; exit 1; }
  done
  echo "round $round (load $load): 1 thread ${one[-1]} s, 2 threads ${threads[-1]} s," \
    "2 ranks ${ranks[-1]} s"
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
m1=$(median "${one[@]}") mt=$(median "${threads[@]}") mr=$(median "${ranks[@]}")
rate() { echo "$episodes / $1" | bc -l | cut -c1-5; }
echo "median episodes/s ($episodes episodes): 1 thread $(rate "$m1"), 2 threads $(rate "$mt")" \
  "($(echo "$m1 / $mt" | bc -l | cut -c1-4)x), 2 ranks $(rate "$mr") ($(echo "$m1 / $mr" | bc -l | cut -c1-4)x)"
