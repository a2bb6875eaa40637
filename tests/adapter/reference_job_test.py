"""adapter/examples/reference_job.py with 2 gloo ranks and a tiny budget writes a well-formed
window log (exact header, monotone rows, finite positive norms, validations), and a killed run
leaves no log file, only FILE.partial.

usage: reference_job_test.py SOURCE_DIR
Exit 77 (skip) only where gloo cannot start."""
import csv
import math
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
WORKERS, GLOBAL_BATCH, INTERVAL, REFERENCE_BATCH = 2, 96, 5, 64
BUDGET_S, VALIDATE_EVERY = 6.0, 4000
JOB_TIMEOUT_S = 90
HEADER = ("run,window,iteration,samples,time_s,global_batch,local_batch,lr_factor,train_loss,"
          "validation_accuracy,local_norm_sq,global_norm_sq")


def fail(message):
    print(f"FAIL: {message}", flush=True)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def start(source: pathlib.Path, log: pathlib.Path, budget_s: float) -> subprocess.Popen:
    """The launcher and its ranks in a process group of their own (killed whole on failure)."""
    from dynamix_worker.launch import rendezvous_args  # main() put the package on the path
    env = dict(os.environ, PYTHONPATH=str(source / "adapter" / "python"))
    return subprocess.Popen(
        [sys.executable, "-m", "torch.distributed.run", "--redirects", "1", "--tee", "1",
         *rendezvous_args("ci"), "--nproc_per_node", str(WORKERS),
         str(source / "adapter" / "examples" / "reference_job.py"),
         "--global-batch", str(GLOBAL_BATCH), "--reference-batch", str(REFERENCE_BATCH),
         "--interval", str(INTERVAL), "--dataset-size", "6000", "--validation-size", "500",
         "--validate-every-samples", str(VALIDATE_EVERY), "--target-accuracy", "1",
         "--time-budget-s", str(budget_s), "--run", "ci", "--log", str(log)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)


def kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def check_log(log: pathlib.Path) -> int:
    with open(log, newline="") as file:
        lines = file.read().splitlines()
    check(lines and lines[0] == HEADER, f"header {lines[:1]}, expected {HEADER}")
    rows = list(csv.DictReader(lines))
    check(len(rows) >= 4, f"{len(rows)} windows logged in {BUDGET_S} s")
    validations = 0
    previous = None
    for index, row in enumerate(rows):
        where = f"window {index}"
        check(row["run"] == "ci" and int(row["window"]) == index, f"{where}: {row}")
        check(int(row["iteration"]) == INTERVAL * (index + 1), f"{where}: iteration {row}")
        check(float(row["global_batch"]) == GLOBAL_BATCH, f"{where}: global_batch {row}")
        check(float(row["local_batch"]) == GLOBAL_BATCH / WORKERS, f"{where}: local_batch {row}")
        check(int(row["samples"]) == GLOBAL_BATCH * int(row["iteration"]), f"{where}: {row}")
        check(math.isclose(float(row["lr_factor"]), GLOBAL_BATCH / REFERENCE_BATCH),
              f"{where}: lr_factor {row['lr_factor']}")
        for name in ("train_loss", "local_norm_sq", "global_norm_sq"):
            value = float(row[name])
            check(math.isfinite(value) and value > 0, f"{where}: {name} {row[name]}")
        # The local gradient averages half the samples the global one does: the larger norm.
        check(float(row["local_norm_sq"]) > float(row["global_norm_sq"]) * 0.5,
              f"{where}: local {row['local_norm_sq']} against global {row['global_norm_sq']}")
        if row["validation_accuracy"]:
            validations += 1
            check(0 <= float(row["validation_accuracy"]) <= 1, f"{where}: {row}")
        if previous:
            check(float(row["time_s"]) >= float(previous["time_s"]), f"{where}: time_s falls")
        previous = row
    due = int(rows[-1]["samples"]) // VALIDATE_EVERY
    check(validations == due, f"{validations} validations, expected one per {VALIDATE_EVERY} "
          f"samples: {due}")
    check(float(rows[-1]["time_s"]) >= BUDGET_S, f"stopped at {rows[-1]['time_s']} s, "
          f"before the {BUDGET_S} s budget")
    first = [float(r["train_loss"]) for r in rows[:2]]
    last = [float(r["train_loss"]) for r in rows[-2:]]
    check(sum(last) < sum(first), f"training loss did not fall: {first} -> {last}")
    return len(rows)


def main():
    source = pathlib.Path(sys.argv[1]).resolve()
    sys.path.insert(0, str(source / "adapter" / "python"))
    import torch.distributed as dist
    if not dist.is_available() or not dist.is_gloo_available():
        print("SKIP: this torch has no gloo backend")
        sys.exit(SKIP)
    with tempfile.TemporaryDirectory() as work:
        log = pathlib.Path(work) / "run.csv"
        job = start(source, log, BUDGET_S)
        try:
            output, _ = job.communicate(timeout=JOB_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            kill(job)
            fail(f"the job ran past {JOB_TIMEOUT_S} s")
        check(job.returncode == 0, f"exit {job.returncode}:\n{output}")
        check(output.strip().splitlines()[-1].endswith("missed"),
              f"last line not 'missed' (target 1):\n{output[-2000:]}")
        check(not log.with_name("run.csv.partial").exists(), "FILE.partial left after the end")
        windows = check_log(log)

        killed = pathlib.Path(work) / "killed.csv"
        partial = killed.with_name("killed.csv.partial")
        job = start(source, killed, 600)
        try:
            deadline = time.monotonic() + JOB_TIMEOUT_S
            while time.monotonic() < deadline and (
                    not partial.exists() or partial.read_text().count("\n") < 3):
                check(job.poll() is None, f"the job ended early, exit {job.returncode}")
                time.sleep(0.2)
            check(partial.exists(), f"no {partial.name} within {JOB_TIMEOUT_S} s")
        finally:
            kill(job)
            job.stdout.close()
        check(not killed.exists(), "a killed run left its log file")
        check(partial.read_text().startswith(HEADER + "\n"), "the partial log lacks the header")
    print(f"PASS: {windows} windows well formed; a killed run left only FILE.partial")


if __name__ == "__main__":
    main()
