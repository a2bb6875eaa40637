#!/bin/sh
# Static-batch runs of adapter/examples/reference_job.py (4 gloo ranks), configurations
# alternated within each seed, logs into OUT (default calibration/sim_to_real).
# usage: calibration/sim_to_real/measure.sh "128 512 2048" "0 1 2" [extra reference_job options]
set -eu
batches=$1 seeds=$2
shift 2
out=${OUT:-calibration/sim_to_real}
for seed in $seeds; do
  for batch in $batches; do
    PYTHONPATH=adapter/python /usr/bin/python3 -m torch.distributed.run --redirects 1 --tee 1 \
      --nproc_per_node 4 adapter/examples/reference_job.py --global-batch "$batch" \
      --seed "$seed" --run "b${batch}_s${seed}" --log "$out/b${batch}_s${seed}.csv" "$@" \
      2>&1 | grep -E 'time_to_target_s|missed' | sed "s/^/b${batch} s${seed} /"
  done
done
