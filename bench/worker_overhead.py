"""What dynamix_worker costs a DDP job: adapter/examples/train_cnn.py as plain DDP (--plain) and
through AdaptiveBatchController (no arbitrator: the comm hook, the per-iteration measurements, the
per-window all_gather and broadcast), alternating runs, fixed batches. Prints each run's median
iteration time and, per mode, the median and spread over runs, and the overhead.

usage: PYTHONPATH=adapter/python DYNAMIX_PROTO_PYTHON=build/adapter/proto \\
       python3 bench/worker_overhead.py [--ranks 2] [--runs 5] [--iterations 150]"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "adapter" / "examples" / "train_cnn.py"


def run(ranks: int, iterations: int, batch: int, plain: bool) -> float:
    """rank 0's median iteration time in ms (the example drops the first fifth)."""
    from dynamix_worker.launch import rendezvous_args  # PYTHONPATH=adapter/python
    command = [sys.executable, "-m", "torch.distributed.run", *rendezvous_args("overhead"),
               "--redirects", "1", "--tee", "1", "--nproc_per_node", str(ranks), str(EXAMPLE),
               "--iterations", str(iterations), "--batch", str(batch), "--validate-every", "0"]
    result = subprocess.run(command + (["--plain"] if plain else []), capture_output=True,
                            text=True, timeout=600)
    found = re.search(r"median iteration ([0-9.]+) ms", result.stdout)
    if result.returncode != 0 or not found:
        sys.exit(f"worker_overhead: {' '.join(command)} failed:\n{result.stdout}{result.stderr}")
    return float(found.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5, help="runs per mode, alternating")
    parser.add_argument("--iterations", type=int, default=150)
    parser.add_argument("--batch", type=int, default=64, help="every rank's batch")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    times = {"plain DDP": [], "dynamix_worker": []}
    for index in range(args.runs):
        for name in (times if index % 2 == 0 else reversed(list(times))):
            times[name].append(run(args.ranks, args.iterations, args.batch, name == "plain DDP"))
            print(f"run {index + 1} {name}: {times[name][-1]:.2f} ms", flush=True)
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, values in times.items():
        print(f"{name}: median {medians[name]:.2f} ms per iteration, runs "
              f"{min(values):.2f}-{max(values):.2f} ms")
    overhead = medians["dynamix_worker"] / medians["plain DDP"] - 1
    # Adjacent runs share the machine's load of the moment: their ratio is the steadier figure.
    paired = [d / p - 1 for d, p in zip(times["dynamix_worker"], times["plain DDP"])]
    print(f"overhead: {100 * overhead:+.1f}% of medians; per adjacent pair, median "
          f"{100 * statistics.median(paired):+.1f}%, range {100 * min(paired):+.1f}% to "
          f"{100 * max(paired):+.1f}% ({args.ranks} gloo ranks, batch {args.batch}, "
          f"{args.runs} alternating runs of {args.iterations} iterations)")


if __name__ == "__main__":
    main()
