"""scripts/sim_to_real.py --smoke on the reference job's other workloads (--workload cnn: the
digits CNN; lstm: the generated language): every stage runs, the calibrated scenario trains the
workload the job ran (its name, its parameters counted at the job's width, its LR rule), the
cluster was measured on that workload's network, the fit runs trained on past the target, and
every policy was measured and replayed.
A held-out configuration predicted from the cnn study's fit (--dynamics-from) refits nothing.
The data are checked too: the same seed gives the same tensors, held-out digits come from
images the training never sees, and a label-noise share flips about that share of labels.

usage: sim_to_real_workloads_test.py DYNAMIX PROTO_DIR SOURCE_DIR"""
import csv
import pathlib
import subprocess
import sys
import tempfile

import torch
import yaml

LR_RULES = {"cnn": "sqrt", "lstm": "linear"}
SMOKE_BUDGET_S = 8  # sim_to_real.py --smoke's --time-budget-s


def check(condition, message):
    if not condition:
        print(f"FAIL: {message}", flush=True)
        sys.exit(1)


def check_data():
    import reference_workloads as workloads

    for name, workload in workloads.WORKLOADS.items():
        (train, held), (again, _) = (workload.splits(300, 50, 4, 0.0),
                                     workload.splits(300, 50, 4, 0.0))
        check(torch.equal(train.inputs, again.inputs) and torch.equal(train.labels, again.labels),
              f"{name}: the same seed gave other data")
        other, _ = workload.splits(300, 50, 5, 0.0)
        check(not torch.equal(train.inputs, other.inputs), f"{name}: seeds 4 and 5 gave the same")
        check(len(held.labels) == 50 and set(held.labels.tolist()) <= set(range(10)),
              f"{name}: held-out labels {held.labels[:10]}")
        noisy, _ = workload.splits(4000, 50, 4, 0.3)
        flipped = float((noisy.labels != noisy.clean).float().mean())
        check(0.25 < flipped < 0.35, f"{name}: label noise 0.3 flipped {flipped:.3f}")
        logits = workload.network(workload.hidden)(train.inputs[:7])
        check(tuple(logits.shape) == (7, 10), f"{name}: logits of shape {tuple(logits.shape)}")
    (images, _), (held_images, _) = workloads.digits_images()
    check(len(images) == 1437 and len(held_images) == 360, "digits: not a 1,437/360 split")
    shared = {tuple(image.flatten().tolist()) for image in images} & {
        tuple(image.flatten().tolist()) for image in held_images}
    check(len(shared) <= 2, f"digits: {len(shared)} held-out images are also training images")


def run_studies(dynamix, proto, source, work):
    """Both workloads' smoke studies at once (each job has 2 ranks; the smoke checks the
    pipeline, not times): their transcripts, by workload."""
    studies = {}
    for workload in LR_RULES:
        transcript = open(work / f"{workload}.txt", "w+")
        studies[workload] = (transcript, subprocess.Popen(
            [sys.executable, str(source / "scripts/sim_to_real.py"), "--smoke", "--workload",
             workload, "--out", str(work / workload), "--dynamix", str(dynamix),
             "--proto", str(proto)], stdout=transcript, stderr=subprocess.STDOUT))
    try:
        statuses = {workload: study.wait(timeout=600)
                    for workload, (_, study) in studies.items()}
    finally:  # a study past its time, or the test stopped: every process is reaped
        for _, study in studies.values():
            study.kill()
            study.wait()
    for workload, (transcript, _) in studies.items():
        transcript.seek(0)
        check(statuses[workload] == 0,
              f"{workload}: exit {statuses[workload]}:\n{transcript.read()[-3000:]}")
        transcript.close()


def check_study(workload, work):
    out = work / workload
    name = f"reference-{workload}"
    scenario = yaml.safe_load((out / "scenario.yaml").read_text())
    import reference_workloads as workloads

    network = workloads.WORKLOADS[workload].network(workloads.WORKLOADS[workload].hidden)
    check(list(scenario["workloads"]) == [name] and scenario["training"]["workload"] == name,
          f"{workload}: scenario.yaml trains {scenario['training']['workload']}")
    check(scenario["workloads"][name]["parameters"] == sum(p.numel()
                                                           for p in network.parameters()),
          f"{workload}: parameters {scenario['workloads'][name]['parameters']}")
    check(scenario["training"]["lr_rule"] == LR_RULES[workload],
          f"{workload}: LR rule {scenario['training']['lr_rule']}")
    measured = (out / "cluster" / "measurements.csv").read_text()
    check(f"--model {name} " in measured,
          f"{workload}: the cluster was not measured on the workload's network")
    check(f"Workload {workload} (width" in (out / "summary.md").read_text(),
          f"{workload}: summary.md does not name the workload")
    with open(out / "results.csv", newline="") as results:
        rows = list(csv.DictReader(results))
    policies = {row["policy"] for row in rows if row["kind"] == "measured"}
    check(len(policies) == 5, f"{workload}: measured policies {sorted(policies)}")
    for replay in (out / "measure").glob("*.replay.txt"):
        check(" decisions match " in replay.read_text(), f"{workload}: {replay.name}")
    for log in (out / "fit").glob("b*_s0.csv"):
        with open(log, newline="") as rows:
            rows = list(csv.DictReader(rows))
        samples = [int(row["samples"]) for row in rows
                   if row["validation_accuracy"] and float(row["validation_accuracy"]) >= 0.7]
        out_of_time = float(rows[-1]["time_s"]) >= SMOKE_BUDGET_S
        said = log.with_suffix(".txt").read_text()
        check("time_to_target_s" in said or "missed" in said, f"{workload}: {log.name} said "
              f"{said[-300:]}")
        # A fit run trains on past the target, to twice the samples that reached it.
        last = int(rows[-1]["samples"])
        check(not samples or last >= 2 * samples[0] or out_of_time,
              f"{workload}: {log.name} stopped at {last} samples, first reached 0.7 at "
              f"{samples[:1]}")


def check_held_out(dynamix, proto, source, study):
    """--dynamics-from: the cnn study's fit predicts again as it is (its real runs and cluster
    reused here, so that nothing runs on the machine); another workload's study is refused."""
    again = study.with_name("held_out")
    command = [sys.executable, str(source / "scripts/sim_to_real.py"), "--smoke",
               "--dynamix", str(dynamix), "--proto", str(proto), "--dynamics-from", str(study)]
    done = subprocess.run(
        command + ["--workload", "cnn", "--out", str(again),
                   "--cluster-calibration", str(study / "cluster/calibrated.yaml"),
                   "--measured-logs", str(study / "measure"),
                   "--policy", str(study / "train/policy.pt")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    check(done.returncode == 0, f"held out: exit {done.returncode}:\n{done.stdout[-3000:]}")
    check("== fit runs" not in done.stdout and not (again / "fit").exists(),
          "held out: fit runs ran")
    check((again / "dynamics/catalog.yaml").read_text() ==
          (study / "dynamics/catalog.yaml").read_text(), "held out: the dynamics were refitted")
    overhead = (again / "overhead.txt").read_text()
    check(overhead.splitlines()[0] == (study / "overhead.txt").read_text().splitlines()[0]
          and "not refitted" in overhead, f"held out: overhead.txt {overhead!r}")
    check("dynamics and job overhead (held out: not refitted)" in
          (again / "summary.md").read_text(), "held out: summary.md does not say so")
    other = subprocess.run(command + ["--workload", "lstm", "--out", str(again) + "2"],
                           capture_output=True, text=True)
    check(other.returncode == 2 and "--dynamics-from: expected a study of --workload lstm" in
          other.stderr and other.stderr.count("\n") == 1, f"held out, lstm: {other.stderr!r}")


def main():
    dynamix, proto, source = map(pathlib.Path, sys.argv[1:4])
    sys.path.insert(0, str(source / "adapter/examples"))  # reference_workloads
    check_data()
    with tempfile.TemporaryDirectory() as work:
        run_studies(dynamix, proto, source, pathlib.Path(work))
        for workload in LR_RULES:
            check_study(workload, pathlib.Path(work))
        check_held_out(dynamix, proto, source, pathlib.Path(work) / "cnn")
    print("ok")


if __name__ == "__main__":
    main()
