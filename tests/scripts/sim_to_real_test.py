"""scripts/sim_to_real.py --smoke runs every stage end to end (2 ranks, tiny budgets): the fit
runs, both calibrations, training, the prediction, every policy measured through dynamix serve
and replayed, and writes well-formed outputs, each real run with its quiet-machine record (a run
beside a busy core marked contaminated); batches the job cannot run refused up front; run again from those real runs (--fit-logs,
--cluster-calibration, --measured-logs, --policy) it reproduces them. It checks the pipeline,
not the study's targets.

usage: sim_to_real_test.py DYNAMIX PROTO_DIR SOURCE_DIR"""
import csv
import importlib.util
import json
import pathlib
import subprocess
import sys
import tempfile
import time
import types

POLICIES = ["static:32", "static:256", "goodput:100", "goodput+proportional", "ppo"]
# Rank 1 emulates a device 1.5x slower (the job's --slowdown); the simulator gives it its own.
SLOWDOWN = ["--slowdown", "1,1.5"]
PREDICT_SEEDS = 2
TARGETS = ["0.6", "0.7"]


def check(condition, message):
    if not condition:
        print(f"FAIL: {message}", flush=True)
        sys.exit(1)


def check_reuse(dynamix, proto, source, study, rows):
    """The study again from the first one's real runs and calibration, nothing run on the
    machine: the measured rows are the first study's, and so are the predicted ones (the same
    logs, the same fit, the same seeds)."""
    again = study.with_name("reused")
    done = subprocess.run(
        [sys.executable, str(source / "scripts/sim_to_real.py"), "--smoke", *SLOWDOWN,
         "--out", str(again), "--dynamix", str(dynamix), "--proto", str(proto),
         "--fit-logs", str(study / "fit"),
         "--cluster-calibration", str(study / "cluster/calibrated.yaml"),
         "--measured-logs", str(study / "measure"), "--policy", str(study / "train/policy.pt")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    check(done.returncode == 0, f"reuse: exit {done.returncode}:\n{done.stdout[-3000:]}")
    check("reused the measured runs of" in done.stdout, "reuse: the measurement stage ran jobs")
    check(not (again / "measure" / "static32_s10.serve").exists(), "reuse: a serve log was made")
    with open(again / "results.csv", newline="") as results:
        check(list(csv.DictReader(results)) == rows,
              "reuse: results.csv differs from the study whose runs it reused")
    check("Reused, not run again: fit runs" in (again / "summary.md").read_text(),
          "reuse: summary.md does not say what was reused")


def check_quiet_machine(source):
    """A process using a core beside a real run marks it contaminated, in the run's record."""
    spec = importlib.util.spec_from_file_location("sim_to_real", source / "scripts/sim_to_real.py")
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    quiet = study.Quiet(types.SimpleNamespace(quiet_cores=0.3, quiet_wait_s=0))
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        with tempfile.TemporaryDirectory() as work:
            record = pathlib.Path(work) / "run.quiet.json"
            check(quiet.run(lambda: time.sleep(1.5) or "done", record) == "done",
                  "Quiet.run did not return the run's result")
            kept = json.loads(record.read_text())
    finally:
        hog.kill()
        hog.wait()
    check(kept["contaminated"] and kept["other_cores_during"] > 0.5,
          f"a run beside a busy core was not marked: {kept}")
    # Batches the job cannot run are refused before any real run, naming its bound.
    done = subprocess.run([sys.executable, str(source / "scripts/sim_to_real.py"), "--out",
                           "never-written", "--ranks", "3", "--fit-batches", "256,4096"],
                          capture_output=True, text=True)
    check(done.returncode == 2 and "--fit-batches: expected global batches in [3, 3072]"
          in done.stderr and done.stderr.count("\n") == 1, f"batch check: {done.stderr!r}")
    check(not pathlib.Path("never-written").exists(), "the refused study wrote its --out")


def main():
    dynamix, proto, source = map(pathlib.Path, sys.argv[1:4])
    check_quiet_machine(source)
    with tempfile.TemporaryDirectory() as work:
        out = pathlib.Path(work) / "study"
        done = subprocess.run(
            [sys.executable, str(source / "scripts/sim_to_real.py"), "--smoke", *SLOWDOWN,
             "--out", str(out), "--dynamix", str(dynamix), "--proto", str(proto)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        check(done.returncode == 0, f"exit {done.returncode}:\n{done.stdout[-3000:]}")
        check(not out.with_name("study.partial").exists(), "the staging folder was left behind")
        for stage in ("fit runs", "cluster calibration", "dynamics fit", "training",
                      "prediction", "measurement"):
            check(f"== {stage}" in done.stdout, f"stage '{stage}' did not run")
        for path in ("fit/runs.csv", "cluster/calibrated.yaml", "dynamics/workload.yaml",
                     "scenario.yaml", "train/policy.pt", "predict_0.6/results.csv",
                     "predict_0.7/results.csv", "summary.md",
                     "sim_to_real.png", "sim_to_real.svg"):
            check((out / path).is_file() and (out / path).stat().st_size > 0, f"no {path}")
        with open(out / "results.csv", newline="") as results:
            rows = list(csv.DictReader(results))
        for policy in POLICIES:
            for target in TARGETS:
                mine = [r for r in rows if r["policy"] == policy and
                        r["target_accuracy"] == target]
                measured = [r for r in mine if r["kind"] == "measured"]
                predicted = [r for r in mine if r["kind"] == "predicted"]
                check(len(measured) == 1, f"{policy} {target}: {len(measured)} measured rows")
                check(len(predicted) == PREDICT_SEEDS,
                      f"{policy} {target}: {len(predicted)} predicted rows")
                for row in measured + predicted:
                    check(row["time_to_target_s"] == "" or float(row["time_to_target_s"]) > 0,
                          f"{policy}: time {row['time_to_target_s']!r}")
            run = policy.replace(":", "").replace("+", "_") + "_s10"
            record = json.loads((out / "measure" / f"{run}.quiet.json").read_text())
            check(set(record) >= {"other_cores_before", "other_cores_during", "contaminated"},
                  f"{run}: quiet record {record}")
            check(all(r["contaminated"] == str(int(record["contaminated"])) for r in rows
                      if r["policy"] == policy and r["kind"] == "measured"),
                  f"{run}: results.csv's contaminated column differs from its record")
            replay = (out / "measure" / f"{run}.replay.txt").read_text()
            check(" decisions match " in replay, f"{run}: replay said {replay!r}")
            check((out / "measure" / f"{run}.serve" / "decisions.jsonl").is_file(),
                  f"{run}: no serve log")
        summary = (out / "summary.md").read_text()
        for target in TARGETS:
            check(f"## Target {target}" in summary, f"summary.md has no section for {target}")
        for policy in POLICIES:
            check(summary.count(f"| {policy} |") == len(TARGETS),
                  f"summary.md lacks a row for {policy}")
        check("; 2 ranks; slowdowns 1,1.5;" in summary, "summary.md does not name the slowdowns")
        check(" measured runs contaminated (other processes above 0.3 cores" in summary,
              "summary.md does not say how many measured runs were contaminated")
        scenario = (out / "scenario.yaml").read_text()
        check("gpu: cpu-rank-x1.5" in scenario and "name: rank-1" in scenario,
              "scenario.yaml does not give the slow rank its own device")
        check_reuse(dynamix, proto, source, out, rows)
        # The scenario the study predicted with is one dynamix accepts as it is.
        simulated = subprocess.run([str(dynamix), "simulate", "--scenario",
                                    str(out / "scenario.yaml"), "--iterations", "5", "--out",
                                    str(pathlib.Path(work) / "simulated")],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        check(simulated.returncode == 0, f"simulate on scenario.yaml: {simulated.stdout}")
        # A second run into the same --out is refused, and leaves the study as it was.
        again = subprocess.run([sys.executable, str(source / "scripts/sim_to_real.py"), "--smoke",
                                "--out", str(out)], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        check(again.returncode == 2 and "expected a new directory" in again.stdout,
              f"a second run into --out: {again.returncode} {again.stdout[-500:]}")
        check((out / "summary.md").read_text() == summary, "the second run touched the study")
        check_resume(source, dynamix, proto, out)
    print("ok")


def check_resume(source, dynamix, proto, out):
    """A study interrupted in its measurement (one run not replayed yet) resumes: the finished
    real runs and the cluster calibration are kept, the unfinished run runs again, and the study
    finishes in OUT."""
    partial = out.with_name(out.name + ".partial")
    out.rename(partial)
    (partial / "measure" / "static32_s10.replay.txt").unlink()
    (partial / "summary.md").unlink()
    command = [sys.executable, str(source / "scripts/sim_to_real.py"), "--smoke", *SLOWDOWN,
               "--out", str(out), "--dynamix", str(dynamix), "--proto", str(proto)]
    other = subprocess.run(command[:-4] + ["--seeds", "11", "--resume"] + command[-4:],
                           capture_output=True, text=True)
    check(other.returncode == 2 and "--resume: expected the options of the study" in other.stderr,
          f"resume with other options: {other.returncode} {other.stderr!r}")
    done = subprocess.run(command + ["--resume"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=600)
    check(done.returncode == 0, f"resume: exit {done.returncode}:\n{done.stdout[-3000:]}")
    kept = [line.split()[1] for line in done.stdout.splitlines() if line.strip().startswith("kept")]
    check(sorted(kept) == sorted(["b64_s0", "b512_s0", "cluster/", "static256_s10",
                                  "goodput100_s10", "goodput_proportional_s10", "ppo_s10"]),
          f"resume kept {kept}")
    check(" decisions match " in (out / "measure" / "static32_s10.replay.txt").read_text(),
          "resume: the unfinished run was not run again")
    check((out / "summary.md").is_file() and not partial.exists(), "resume: the study did not end")


if __name__ == "__main__":
    main()
