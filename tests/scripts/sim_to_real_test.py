"""scripts/sim_to_real.py --smoke runs every stage end to end (2 ranks, tiny budgets): the fit
runs, both calibrations, training, the prediction, every policy measured through dynamix serve
and replayed, and writes well-formed outputs; run again from those real runs (--fit-logs,
--cluster-calibration, --measured-logs, --policy) it reproduces them. It checks the pipeline,
not the study's targets.

usage: sim_to_real_test.py DYNAMIX PROTO_DIR SOURCE_DIR"""
import csv
import pathlib
import subprocess
import sys
import tempfile

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


def main():
    dynamix, proto, source = map(pathlib.Path, sys.argv[1:4])
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
        check("2 ranks; slowdowns 1,1.5;" in summary, "summary.md does not name the slowdowns")
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
    print("ok")


if __name__ == "__main__":
    main()
