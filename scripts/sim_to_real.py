"""The sim-to-real study: calibrate the simulator on a real job, predict each policy's
time to target with it, then measure the same policies steering the real job through
`dynamix serve`, and compare.

    scripts/sim_to_real.sh --out runs/sim_to_real                 # the study (about 30 min)
    scripts/sim_to_real.sh --smoke --out runs/sim_to_real_smoke    # every stage, tiny (CI)

Stages, each writing into OUT (a new directory; a failed stage leaves OUT.partial):
  fit/       static runs of adapter/examples/reference_job.py (--workload) at --fit-batches x
             --fit-seeds, each trained on past the highest target to --fit-past-target times
             its samples there (or the logs given with --fit-logs), concatenated into
             fit/runs.csv; none with --dynamics-from (the held-out protocol)
  cluster/   dynamix calibrate: measure_cluster.py --model reference-WORKLOAD on this machine,
             the device's time points and the sync knobs fitted (from
             calibration/sim_to_real/reference.yaml, --workload's entry, --ranks ranks); or
             the calibrated.yaml given with --cluster-calibration
  dynamics/  dynamix calibrate --dynamics fit/runs.csv: the workload's statistical model, with
             its plateau term unless --no-plateau
  overhead.txt   the job's own per-iteration cost (worker package, read-backs, indexing), one
             constant an iteration after the synchronization (training.step_overhead_us), fitted to
             the fit runs' iteration times
  scenario.yaml  the calibrated cluster with the fitted workload and that overhead
  train/     dynamix train on scenario.yaml: the learned policy (policy.pt)
  predict/   dynamix evaluate on scenario.yaml, one window of decision lag (as serve has)
  measure/   each policy x --seeds: dynamix serve + the reference job; dynamix replay of the log
             (or the logs given with --measured-logs, steered by the --policy given)
  results.csv, summary.md, sim_to_real.png/.svg   predicted against measured
The policies and seeds measured are held out of the fit: other seeds, and batches or policies
the fit never saw.
"""
import argparse
import copy
import csv
import json
import math
import os
import pathlib
import random
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time

import yaml

SOURCE = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(SOURCE / "adapter" / "python"))
from dynamix_worker.launch import rendezvous_args  # noqa: E402 (the source tree's package)
sys.path.insert(0, str(SOURCE / "adapter" / "examples"))
import reference_workloads  # noqa: E402 (the job's networks: widths, parameters, LR rules)
PYTHON = sys.executable
# The validation accuracies compared, by --workload: below each one's plateau, the higher one
# reached by every fit batch within the default time budget on the 2-core VM.
DEFAULT_TARGETS = {"mlp": "0.8,0.86", "cnn": "0.78,0.82", "lstm": "0.85,0.9"}
JOB_START_TIMEOUT_S = 120


def arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, required=True, help="directory to write")
    parser.add_argument("--dynamix", type=pathlib.Path, default=SOURCE / "build/apps/dynamix",
                        help="the dynamix executable")
    parser.add_argument("--proto", type=pathlib.Path, default=SOURCE / "build/adapter/proto",
                        help="the generated Python protobuf stubs (dynamix_pb2.py)")
    parser.add_argument("--ranks", type=int, default=4, help="ranks of the real job (processes)")
    parser.add_argument("--slowdown", default="",
                        help="per-rank compute slowdown of the real job, e.g. 1,2 (its "
                             "--slowdown: a slow device emulated by sleeping); the simulated "
                             "rank gets the device's time points times its factor")
    parser.add_argument("--fit-batches", default="256,4096", help="global batches fitted")
    parser.add_argument("--fit-seeds", default="0,1,2", help="seeds of the fit runs")
    parser.add_argument("--fit-past-target", type=float, default=2.0,
                        help="the fit runs train on after the highest target until this many "
                             "times the samples that reached it (the job's --past-target), so "
                             "that the dynamics fit sees where the accuracy levels off")
    parser.add_argument("--label-noise", type=float, default=0.0,
                        help="the task's difficulty: the share of training labels the job "
                             "draws at random (its --label-noise)")
    parser.add_argument("--workload", choices=sorted(reference_workloads.WORKLOADS),
                        default="mlp",
                        help="the real job's network and data (the job's --workload): mlp on "
                             "the teacher task, cnn on scikit-learn's digits, lstm on a "
                             "generated language (adapter/examples/reference_workloads.py)")
    parser.add_argument("--hidden", type=int,
                        help="the model's width (the job's --hidden; default the workload's)")
    parser.add_argument("--quiet-cores", type=float, default=0.3,
                        help="other processes' CPU use, in cores, above which a real run counts "
                             "as contaminated (left out of the comparison)")
    parser.add_argument("--quiet-wait-s", type=float, default=300,
                        help="how long to wait before each real run for other processes to "
                             "fall below --quiet-cores (then the run goes ahead, marked)")
    parser.add_argument("--fit-logs", type=pathlib.Path,
                        help="a folder of reference-job logs (bN_sS.csv) to fit instead of "
                             "running the fit runs, e.g. calibration/sim_to_real")
    parser.add_argument("--dynamics-from", type=pathlib.Path,
                        help="the held-out protocol: an earlier study's OUT, of the same "
                             "--workload; its fitted dynamics (dynamics/catalog.yaml) and job "
                             "overhead (scenario.yaml) predict this configuration as they are "
                             "(no fit runs, nothing refitted; the cluster is measured anew)")
    parser.add_argument("--measured-logs", type=pathlib.Path,
                        help="a previous study's measure/ folder: its window logs ({policy}_s{seed}"
                             ".csv) stand for the measured runs, which are not run again; with a "
                             "trained policy, --policy names the one that steered them")
    parser.add_argument("--policy", type=pathlib.Path,
                        help="with --measured-logs: the policy.pt that steered the measured ppo "
                             "runs (training is skipped)")
    parser.add_argument("--cluster-calibration", type=pathlib.Path,
                        help="a previous study's cluster/calibrated.yaml, used instead of "
                             "measuring this machine")
    parser.add_argument("--no-plateau", action="store_true",
                        help="fit the dynamics without the plateau term (one power law)")
    parser.add_argument("--max-lr-change", type=float, default=2.0,
                        help="the LR factor's guard rail in the prediction, as serve's (0: none)")
    parser.add_argument("--static", default="64,256,1024",
                        help="per-worker batches of the static policies compared")
    parser.add_argument("--seeds", default="10,11,12", help="seeds of the measured runs")
    parser.add_argument("--predict-seeds", type=int, default=10,
                        help="simulator seeds per policy")
    parser.add_argument("--targets",
                        help="validation accuracies compared; the real runs stop at the highest "
                             "(default by --workload: " + "; ".join(
                                 f"{name} {targets}" for name, targets in DEFAULT_TARGETS.items())
                        + ")")
    parser.add_argument("--validate-every", type=int, default=50000,
                        help="samples between validations, real and simulated (a divisor of "
                             "the dataset size)")
    parser.add_argument("--time-budget-s", type=float, default=240,
                        help="training seconds after which a real run (and the prediction) stops "
                             "short of the target")
    parser.add_argument("--train-steps", type=int, default=40960,
                        help="dynamix train --steps (0: no trained policy)")
    parser.add_argument("--job-options", default="",
                        help="more reference_job.py options, e.g. '--dataset-size 20000'")
    parser.add_argument("--measure-options", help="scripts/measure_cluster.py options for the "
                        "cluster calibration",
                        default="--batches 64,256,1024 "
                                "--compute-batches 16,64,256,1024 --sizes 65536,262144,1048576 "
                                "--trials 2")
    parser.add_argument("--calibrate-options",
                        default="--fit-batches 64,1024 --fit-sizes 65536,262144,1048576",
                        help="dynamix calibrate options: what is fitted (256 held out)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the interrupted study in OUT.partial, run with the same "
                             "options: its finished real runs (and cluster calibration) are "
                             "kept, the rest is run again")
    parser.add_argument("--smoke", action="store_true",
                        help="2 ranks, tiny budgets, one seed: checks the pipeline, not targets")
    options = parser.parse_args(argv)
    # What --resume compares: the command line as given, less --resume itself.
    options.given = [word for word in argv if word != "--resume"]
    workload = reference_workloads.WORKLOADS[options.workload]
    options.hidden = workload.hidden if options.hidden is None else options.hidden
    options.targets = options.targets or DEFAULT_TARGETS[options.workload]
    options.workload_name = f"reference-{options.workload}"
    if options.smoke:
        options.ranks, options.fit_batches, options.fit_seeds = 2, "64,512", "0"
        options.static, options.seeds, options.predict_seeds = "32,256", "10", 2
        options.targets, options.time_budget_s, options.train_steps = "0.6,0.7", 8, 1024
        options.validate_every = 4000
        options.job_options = "--dataset-size 20000 --validation-size 1000 " + options.job_options
        options.measure_options = "--quick"
        options.calibrate_options = "--fit-batches 16,32 --fit-sizes 65536,262144"
        options.quiet_wait_s = 0  # CI shares its machine: record, never wait
    check_batches(options)
    if not 0 <= options.label_noise < 1:
        refuse(f"--label-noise: expected a share in [0, 1), found {options.label_noise}")
    if not (math.isfinite(options.fit_past_target) and options.fit_past_target >= 1):
        refuse(f"--fit-past-target: expected a finite number >= 1, found "
               f"{options.fit_past_target}")
    if options.hidden < 1:
        refuse(f"--hidden: expected an integer >= 1, found {options.hidden}")
    if not options.quiet_cores > 0 or options.quiet_wait_s < 0:
        refuse(f"--quiet-cores, --quiet-wait-s: expected a number > 0 and one >= 0, found "
               f"{options.quiet_cores} and {options.quiet_wait_s}")
    options.slowdowns = floats(options.slowdown)
    if options.slowdowns and (len(options.slowdowns) != options.ranks or
                              min(options.slowdowns) < 1):
        refuse(f"--slowdown: expected {options.ranks} factors >= 1 (one per rank), found "
               f"'{options.slowdown}'")
    if options.measured_logs and options.train_steps > 0 and not options.policy:
        refuse("--policy: expected the policy.pt that steered the measured runs beside "
               "--measured-logs (or --train-steps 0), found none")
    if options.policy and not options.measured_logs:
        refuse("--policy: expected --measured-logs beside it (the runs it steered), found none")
    if options.dynamics_from:
        check_dynamics_from(options)
    for given in (options.fit_logs, options.measured_logs):
        if given and not given.is_dir():
            refuse(f"expected a folder of logs, found '{given}', which is not one")
    for given in (options.policy, options.cluster_calibration):
        if given and not given.is_file():
            refuse(f"expected a file, found '{given}', which is not one")
    for seed in integers(options.seeds) if options.measured_logs else []:
        for label in policy_labels(options):
            if not (options.measured_logs / f"{run_name(label, seed)}.csv").is_file():
                refuse(f"--measured-logs: expected {run_name(label, seed)}.csv ({label}, seed "
                       f"{seed}) in {options.measured_logs}, found none")
    return options


def check_dynamics_from(options):
    """--dynamics-from names a finished study of this --workload, and nothing else is fitted.
    Its job overhead is the one its scenario.yaml trained and predicted with."""
    if options.fit_logs:
        refuse("--dynamics-from: expected no --fit-logs beside it (nothing is fitted), found "
               f"'{options.fit_logs}'")
    catalog = options.dynamics_from / "dynamics/catalog.yaml"
    scenario = options.dynamics_from / "scenario.yaml"
    if not catalog.is_file() or not scenario.is_file():
        refuse(f"--dynamics-from: expected a finished study's folder (dynamics/catalog.yaml, "
               f"scenario.yaml), found '{options.dynamics_from}' without them")
    workloads = yaml.safe_load(catalog.read_text()).get("workloads") or {}
    if options.workload_name not in workloads:
        refuse(f"--dynamics-from: expected a study of --workload {options.workload} "
               f"({options.workload_name}), found one of {', '.join(workloads) or 'none'}")
    training = yaml.safe_load(scenario.read_text()).get("training") or {}
    if not isinstance(training.get("step_overhead_us"), (int, float)):
        refuse(f"--dynamics-from: expected training.step_overhead_us in '{scenario}', found none")
    options.dynamics_overhead_s = training["step_overhead_us"] / 1e6


def job_batch_limit():
    """The reference job's per-rank batch bound, read from its source (one definition)."""
    text = (SOURCE / "adapter/examples/reference_job.py").read_text()
    return int(re.search(r"^MAX_WORKER_BATCH = (\d+)", text, re.MULTILINE).group(1))


def check_batches(options):
    """Every batch the study will run fits the job's per-rank bound, before any real run: the
    fit runs' global batches split over --ranks, the static policies' per-rank batches."""
    limit = job_batch_limit()
    try:
        fit, static = integers(options.fit_batches), integers(options.static)
    except ValueError:
        refuse(f"--fit-batches, --static: expected comma-separated integers, found "
               f"'{options.fit_batches}' and '{options.static}'")
    if options.ranks < 1:
        refuse(f"--ranks: expected an integer >= 1, found {options.ranks}")
    for batch in [] if options.dynamics_from else fit:  # held out: no fit runs
        if not options.ranks <= batch <= options.ranks * limit:
            refuse(f"--fit-batches: expected global batches in [{options.ranks}, "
                   f"{options.ranks * limit}] ({options.ranks} ranks of at most {limit} each, "
                   f"the job's bound), found {batch}")
    for batch in static:
        if not 1 <= batch <= limit:
            refuse(f"--static: expected per-rank batches in [1, {limit}] (the job's bound), "
                   f"found {batch}")


def refuse(message):
    """Bad input: one line on stderr, exit status 2, nothing written."""
    print(f"sim_to_real.py: {message}", file=sys.stderr)
    sys.exit(2)


def integers(text):
    return [int(word) for word in text.split(",") if word]


def floats(text):
    return [float(word) for word in text.split(",") if word]


class Study:
    """One run of the study in OUT.partial, renamed to OUT when every stage has run."""

    def __init__(self, options):
        self.options = options
        self.out = options.out
        if self.out.exists():
            refuse(f"--out: expected a new directory, found '{self.out}', which exists (it is "
                   "left as it is)")
        self.work = self.out.with_name(self.out.name + ".partial")
        recorded = json.dumps(options.given, indent=1) + "\n"
        self.resumed = options.resume
        if self.work.exists() and not (self.work / ".sim_to_real").is_file():
            refuse(f"--out: '{self.work}' exists and was not written by this script (it is "
                   "left as it is)")
        if options.resume:
            if not self.work.exists():
                refuse(f"--resume: expected an interrupted study in '{self.work}', found none")
            before = (self.work / "options.json").read_text()
            if before != recorded:
                refuse(f"--resume: expected the options of the study in '{self.work}' "
                       f"({' '.join(json.loads(before))}), found other ones")
            self.forget_derived()
        else:
            if self.work.exists():
                print(f"   starting again: {self.work} is removed (--resume keeps its runs)",
                      flush=True)
                shutil.rmtree(self.work)
            self.work.mkdir(parents=True)
            (self.work / ".sim_to_real").write_text("written by scripts/sim_to_real.py\n")
            (self.work / "options.json").write_text(recorded)
        self.started = time.monotonic()
        self.targets = floats(options.targets)
        self.stage_seconds = {}
        # Said on stderr when they arise and again in summary.md.
        self.warnings = []

    def forget_derived(self):
        """Resuming: what the stages derive from the real runs is made again; the finished real
        runs and a finished cluster calibration stay (kept_run says which runs finished)."""
        for name in ("dynamics", "train", "overhead") + tuple(
                p.name for p in self.work.glob("predict_*") if p.is_dir()):
            shutil.rmtree(self.work / name, ignore_errors=True)
        if not (self.work / "cluster/calibrated.yaml").is_file():
            shutil.rmtree(self.work / "cluster", ignore_errors=True)
        for name in ("fit/runs.csv", "scenario.yaml", "overhead.txt", "base_catalog.yaml"):
            (self.work / name).unlink(missing_ok=True)

    def kept_run(self, folder, run, replayed=False):
        """Resuming: whether `run` in `folder` finished (its log, its outcome, its quiet record,
        and with `replayed` its replay's verdict); an unfinished one's files are removed."""
        if not self.resumed:
            return False
        files = [folder / f"{run}.csv", folder / f"{run}.txt", folder / f"{run}.quiet.json"]
        if replayed:
            files.append(folder / f"{run}.replay.txt")
        finished = all(f.is_file() for f in files) and re.search(
            r"time_to_target_s [0-9.]+|missed", files[1].read_text())
        if replayed and finished:
            finished = " decisions match " in files[3].read_text()
        if finished:
            print(f"   kept {run} (--resume)", flush=True)
            return True
        for leftover in [*files, folder / f"{run}.csv.partial"]:
            leftover.unlink(missing_ok=True)
        shutil.rmtree(folder / f"{run}.serve", ignore_errors=True)
        return False

    def stage(self, name, function, *args):
        print(f"== {name}", flush=True)
        start = time.monotonic()
        result = function(*args)
        self.stage_seconds[name] = time.monotonic() - start
        print(f"   {name}: {self.stage_seconds[name]:.0f} s", flush=True)
        return result

    def dynamix(self, *args, log=None):
        command = [str(self.options.dynamix), *map(str, args)]
        with open(log or os.devnull, "w") as output:
            done = subprocess.run(command, stdout=output, stderr=subprocess.STDOUT)
        if done.returncode != 0:
            tail = pathlib.Path(log).read_text()[-2000:] if log else ""
            raise SystemExit(f"sim_to_real.py: {' '.join(command)} failed "
                             f"(exit {done.returncode})\n{tail}")

    def finish(self):
        self.work.rename(self.out)


# ---------------------------------------------------------------- the real job


def job_command(options, ranks, run, log, seed, batch=None, global_batch=None, arbitrator=None,
                validate_every=None, past_target=1.0):
    command = [PYTHON, "-m", "torch.distributed.run", "--redirects", "1", "--tee", "1",
               *rendezvous_args("dynamix"), "--nproc_per_node", str(ranks),
               str(SOURCE / "adapter/examples/reference_job.py"),
               "--run", run, "--log", str(log), "--seed", str(seed),
               "--target-accuracy", str(max(floats(options.targets))),
               "--time-budget-s", str(options.time_budget_s)]
    command += ["--batch", str(batch)] if batch else ["--global-batch", str(global_batch)]
    if arbitrator:
        command += ["--arbitrator", arbitrator]
    if validate_every:
        command += ["--validate-every-samples", str(validate_every)]
    if past_target != 1.0:
        command += ["--past-target", str(past_target)]
    if options.slowdowns:
        command += ["--slowdown", options.slowdown]
    command += ["--workload", options.workload, "--label-noise", str(options.label_noise),
                "--hidden", str(options.hidden)]
    return command + options.job_options.split()


def run_job(options, command, transcript):
    """Runs the job in its own process group; its time to target, or None if it missed."""
    env = dict(os.environ, PYTHONPATH=str(SOURCE / "adapter/python"),
               DYNAMIX_PROTO_PYTHON=str(options.proto))
    limit = options.time_budget_s * 4 + JOB_START_TIMEOUT_S
    with open(transcript, "w") as output:
        job = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT,
                               start_new_session=True)
        try:
            status = job.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
            raise SystemExit(f"sim_to_real.py: the reference job ran past {limit:.0f} s "
                             f"({transcript})")
    text = pathlib.Path(transcript).read_text()
    found = re.findall(r"time_to_target_s ([0-9.]+)|(missed)", text)
    if status != 0 or not found:
        raise SystemExit(f"sim_to_real.py: the reference job failed (exit {status}); see "
                         f"{transcript}")
    reached, _ = found[-1]
    return float(reached) if reached else None


class Quiet:
    """Other processes' CPU use around each real run. A real run needs a quiet machine: Linux's
    autogroup shares the cores between sessions, so another session's work slows the job
    however it is niced. Before a run it waits (up to --quiet-wait-s) until other processes use
    less than --quiet-cores; during the run it measures the same, as the machine's busy CPU
    time less this script's and its finished children's (the job and serve). A run loud before
    or during is contaminated: recorded, kept in results.csv, left out of the comparison."""

    WINDOW_S = 2.0

    def __init__(self, options):
        self.cores, self.wait_s = options.quiet_cores, options.quiet_wait_s

    @staticmethod
    def sample():
        """(machine busy CPU seconds, this process's and its reaped children's, wall seconds)."""
        with open("/proc/stat") as stat:
            ticks = [int(v) for v in stat.readline().split()[1:9]]
        busy = sum(ticks) - ticks[3] - ticks[4]  # all but idle and iowait
        own = sum(getattr(resource.getrusage(who), field)
                  for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
                  for field in ("ru_utime", "ru_stime"))
        return busy / os.sysconf("SC_CLK_TCK"), own, time.monotonic()

    @staticmethod
    def others(before, after):
        """Cores other processes used between two samples."""
        busy, own, wall = (b - a for a, b in zip(before, after))
        return max(0.0, busy - own) / wall if wall > 0 else 0.0

    def settle(self):
        """Waits for a quiet machine; the other processes' cores in the last window."""
        deadline = time.monotonic() + self.wait_s
        while True:
            start = self.sample()
            time.sleep(self.WINDOW_S)
            cores = self.others(start, self.sample())
            if cores <= self.cores or time.monotonic() >= deadline:
                return cores

    def run(self, function, record):
        """function() on a machine checked before and during; its record written to `record`
        (JSON) beside the run's log."""
        before = self.settle()
        start = self.sample()
        result = function()
        during = self.others(start, self.sample())
        contaminated = before > self.cores or during > self.cores
        record.write_text(json.dumps({"other_cores_before": round(before, 3),
                                      "other_cores_during": round(during, 3),
                                      "threshold_cores": self.cores,
                                      "contaminated": contaminated}) + "\n")
        if contaminated:
            print(f"   contaminated: other processes used {before:.2f} cores before, "
                  f"{during:.2f} during (threshold {self.cores})", flush=True)
        return result


def contaminated(log):
    """Whether the run of `log` was marked contaminated; None where no record was kept."""
    record = log.with_suffix(".quiet.json")
    return json.loads(record.read_text())["contaminated"] if record.is_file() else None


class Arbitrator:
    """dynamix serve on a free loopback port for the length of one run."""

    def __init__(self, options, policy, log_dir):
        self.process = subprocess.Popen(
            [str(options.dynamix), "serve", "--policy", policy, "--workers",
             str(options.ranks), "--listen", "127.0.0.1:0", "--log", str(log_dir)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"listening on (\S+)", line)
        if not match:
            self.close()
            raise SystemExit(f"sim_to_real.py: dynamix serve did not start: {line.strip()}")
        self.address = match.group(1)

    def close(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# ---------------------------------------------------------------- stages


def fit_runs(study):
    options, folder = study.options, study.work / "fit"
    folder.mkdir(exist_ok=study.resumed)
    logs = []
    if options.fit_logs:
        for batch in integers(options.fit_batches):
            for log in sorted(options.fit_logs.glob(f"b{batch}_s*.csv")):
                record = log.with_suffix(".quiet.json")
                if record.is_file():
                    shutil.copy(record, folder / record.name)
                logs.append(pathlib.Path(shutil.copy(log, folder / log.name)))
        if not logs:
            refuse(f"--fit-logs: expected b{{N}}_s{{S}}.csv logs of batches {options.fit_batches} "
                   f"in {options.fit_logs}, found none")
    else:
        quiet = Quiet(options)
        for seed in integers(options.fit_seeds):
            for batch in integers(options.fit_batches):
                run = f"b{batch}_s{seed}"
                log = folder / f"{run}.csv"
                logs.append(log)
                if study.kept_run(folder, run):
                    continue
                command = job_command(options, options.ranks, run, log, seed, global_batch=batch,
                                      validate_every=options.validate_every,
                                      past_target=options.fit_past_target)
                quiet.run(lambda: run_job(options, command, folder / f"{run}.txt"),
                          log.with_suffix(".quiet.json"))
    with open(folder / "runs.csv", "w") as merged:
        for index, log in enumerate(logs):
            lines = log.read_text().splitlines(keepends=True)
            merged.writelines(lines if index == 0 else lines[1:])
    return [log.stem for log in logs]


def calibrate_cluster(study):
    options = study.options
    if (study.work / "cluster/calibrated.yaml").is_file():
        print("   kept cluster/ (--resume)", flush=True)
        return
    if options.cluster_calibration:
        (study.work / "cluster").mkdir()
        shutil.copy(options.cluster_calibration, study.work / "cluster/calibrated.yaml")
        return
    scenario = study.work / "reference.yaml"
    scenario.write_text(yaml.safe_dump(reference_scenario(options), sort_keys=False))
    model = f"--model {options.workload_name} --hidden {options.hidden} "
    study.dynamix("calibrate", "--scenario", scenario,
                  "--measure-options", f"--ranks {options.ranks} " + model +
                  options.measure_options,
                  *options.calibrate_options.split(),
                  "--out", study.work / "cluster", log=study.work / "cluster.txt")
    for line in (study.work / "cluster.txt").read_text().splitlines():
        if line.startswith("dynamix: warning: "):  # a knob fitted at a bound of its search
            study.warnings.append("cluster calibration: " + line[len("dynamix: warning: "):])
            print(f"   {study.warnings[-1]}", file=sys.stderr, flush=True)


def reference_scenario(options):
    """calibration/sim_to_real/reference.yaml for this study: --ranks ranks training
    --workload's entry, its parameters counted at --hidden and its LR rule the job's."""
    scenario = yaml.safe_load((SOURCE / "calibration/sim_to_real/reference.yaml").read_text())
    name, workload = options.workload_name, reference_workloads.WORKLOADS[options.workload]
    entry = scenario["workloads"][name]
    entry["parameters"] = sum(p.numel() for p in workload.network(options.hidden).parameters())
    scenario["workloads"] = {name: entry}
    scenario["topology"]["nodes"][0]["count"] = options.ranks
    scenario["training"].update(workload=name, lr_rule=workload.lr_rule)
    return scenario


def fit_dynamics(study):
    name = study.options.workload_name
    if study.options.dynamics_from:  # the held-out protocol: the earlier study's fit, as it is
        shutil.copytree(study.options.dynamics_from / "dynamics", study.work / "dynamics")
        return
    entry = dict(reference_scenario(study.options)["workloads"][name], name=name)
    catalog = study.work / "base_catalog.yaml"
    catalog.write_text(yaml.safe_dump({"workloads": [entry]}, sort_keys=False))
    study.dynamix("calibrate", "--dynamics", study.work / "fit/runs.csv", "--workload", name,
                  "--catalog", catalog, "--target-accuracy", max(study.targets),
                  "--dynamics-fit-batches", study.options.fit_batches,
                  *([] if study.options.no_plateau else ["--fit-plateau"]),
                  "--out", study.work / "dynamics", log=study.work / "dynamics.txt")


def check_targets(study):
    """Before the measured runs: a target at or above the fitted plateau (the workload's final
    accuracy) would leave every policy missing it, in the simulator and most likely for real."""
    fitted = yaml.safe_load((study.work / "dynamics/catalog.yaml").read_text())
    plateau = float(fitted["workloads"][study.options.workload_name]["final_accuracy"])
    for target in study.targets:
        if target >= plateau:
            refuse(f"--targets: expected targets below the fitted plateau {plateau:.4f} "
                   f"(dynamics/catalog.yaml's final_accuracy), found {target}; the fit runs are "
                   f"kept in {study.work}/fit for --fit-logs")


def write_scenario(study, overhead_s):
    """The calibrated cluster (its devices, sync knobs, topology) with the fitted workload and
    the job's per-iteration overhead."""
    scenario = with_step_overhead(calibrated_cluster(study), overhead_s)
    fitted = yaml.safe_load((study.work / "dynamics/catalog.yaml").read_text())
    name = study.options.workload_name
    scenario["workloads"] = {name: fitted["workloads"][name]}
    scenario["name"] = "sim_to_real"
    dataset = scenario["workloads"][name]["dataset_size"]
    if dataset % study.options.validate_every:
        refuse(f"--validate-every: expected a divisor of the dataset size {dataset}, found "
               f"{study.options.validate_every}")
    scenario["training"].update(
        workload=name, lr_rule=reference_workloads.WORKLOADS[study.options.workload].lr_rule,
        target_accuracy=max(study.targets), budget_time_s=study.options.time_budget_s,
        validations_per_epoch=dataset // study.options.validate_every)
    (study.work / "scenario.yaml").write_text(
        f"# The calibrated reference job ({name}): cluster/calibrated.yaml with "
        "dynamics/catalog.yaml's "
        f"workload and {1000 * overhead_s:.3f} ms of job overhead an iteration, "
        "training.step_overhead_us (overhead.txt).\n" + yaml.safe_dump(scenario, sort_keys=False))


def measured_iteration_s(log):
    """Median seconds per iteration over a run's windows (validation is off the clock)."""
    with open(log, newline="") as rows:
        rows = list(csv.DictReader(rows))
    steps = [(float(b["time_s"]) - float(a["time_s"])) / (int(b["iteration"]) - int(a["iteration"]))
             for a, b in zip(rows, rows[1:])]
    return int(float(rows[0]["global_batch"])), statistics.median(steps)


def calibrated_cluster(study):
    """cluster/calibrated.yaml with one node group per rank where --slowdown makes ranks differ:
    rank r computes on a copy of the device whose time points are --slowdown's factor times
    the measured ones."""
    scenario = yaml.safe_load((study.work / "cluster/calibrated.yaml").read_text())
    slowdowns = study.options.slowdowns
    if not slowdowns or all(factor == 1 for factor in slowdowns):
        return scenario
    (group,) = scenario["topology"]["nodes"]
    nodes = []
    for rank, factor in enumerate(slowdowns):
        device = group["gpu"]
        if factor != 1:
            device = f"{group['gpu']}-x{factor:g}"
            slow = copy.deepcopy(scenario["devices"][group["gpu"]])
            slow["time_points"] = [[b, t * factor] for b, t in slow["time_points"]]
            slow["source"] = (f"{group['gpu']}'s time points x {factor:g}: reference_job.py "
                              "--slowdown")
            scenario["devices"][device] = slow
        node = copy.deepcopy(group)
        node.pop("count", None)
        nodes.append(dict(node, name=f"rank-{rank}", gpu=device))
    scenario["topology"]["nodes"] = nodes
    return scenario


def with_step_overhead(scenario, overhead_s):
    """`scenario` (a copy) whose job pays `overhead_s` of host work every iteration after the
    gradient synchronization (training.step_overhead_us): the worker package times that work
    within comm_s, not compute_s, and the goodput rule reads the two differently."""
    scenario = copy.deepcopy(scenario)
    scenario.setdefault("training", {})["step_overhead_us"] = round(overhead_s * 1e6, 3)
    return scenario


def simulated_iteration_s(study, scenario, per_worker, overhead_s):
    """The calibrated scenario's mean iteration at `per_worker` with `overhead_s` of job
    overhead an iteration."""
    shifted = with_step_overhead(scenario, overhead_s)
    work = study.work / "overhead"
    work.mkdir(exist_ok=True)
    (work / "scenario.yaml").write_text(yaml.safe_dump(shifted, sort_keys=False))
    out = work / "simulated"
    shutil.rmtree(out, ignore_errors=True)
    study.dynamix("simulate", "--scenario", work / "scenario.yaml", "--batch-size", per_worker,
                  "--iterations", 100, "--out", out)
    return json.loads((out / "summary.json").read_text())["mean_iteration_s"]


def fit_job_overhead(study):
    """The job's own per-iteration cost that measure_cluster.py's bare DDP loop has not: the
    worker package (gradient norms, metrics, the window's gathers), reading the loss and
    accuracy back, indexing the data. One constant an iteration, paid after the gradient
    synchronization (training.step_overhead_us), fitted (golden-section search in [0, 50 ms]) to
    the fit runs' measured iteration times."""
    if study.options.dynamics_from:
        shift = study.options.dynamics_overhead_s
        (study.work / "overhead.txt").write_text(
            f"job overhead: {1000 * shift:.3f} ms an iteration after the synchronization\n"
            f"(from {study.options.dynamics_from}/scenario.yaml, not refitted)\n")
        return shift
    measured = {}
    for log in sorted((study.work / "fit").glob("b*_s*.csv")):
        batch, seconds = measured_iteration_s(log)
        measured.setdefault(batch, []).append(seconds)
    scenario = calibrated_cluster(study)
    ranks = study.options.ranks

    def error(shift):
        return sum((math.log(simulated_iteration_s(study, scenario, batch // ranks, shift) /
                             statistics.median(times))) ** 2 for batch, times in measured.items())

    # Golden-section search: each step keeps one interior point and its error, simulating once.
    low, high = 0.0, 0.05
    ratio = (math.sqrt(5) - 1) / 2
    a, b = high - ratio * (high - low), low + ratio * (high - low)
    error_a, error_b = error(a), error(b)
    for _ in range(24):
        if error_a < error_b:
            high, b, error_b = b, a, error_a
            a = high - ratio * (high - low)
            error_a = error(a)
        else:
            low, a, error_a = a, b, error_b
            b = low + ratio * (high - low)
            error_b = error(b)
    shift = (low + high) / 2
    # The search closes to within a microsecond: one that far from a bound ended at it.
    at_bound = shift < 2e-6 or shift > 0.05 - 2e-6
    rows = [(batch, statistics.median(times), simulated_iteration_s(study, scenario,
                                                                      batch // ranks, shift))
            for batch, times in sorted(measured.items())]
    shutil.rmtree(study.work / "overhead")
    lines = [f"job overhead: {1000 * shift:.3f} ms an iteration after the synchronization"]
    if at_bound:  # the fit did not find its optimum inside the range searched
        lines.append(f"warning: the job overhead sits at the bound of its search, [0, 50] ms: the "
                     f"iteration model is {'slower' if shift < 2e-6 else 'faster'} than the "
                     "job even without it (a busier cluster calibration, or another cost)")
    lines += [
        f"global batch {batch}: measured {1000 * real:.3f} ms an iteration, simulated "
        f"{1000 * sim:.3f} ms" for batch, real, sim in rows]
    (study.work / "overhead.txt").write_text("\n".join(lines) + "\n")
    print("   " + "\n   ".join(lines), flush=True)
    if at_bound:
        study.warnings.append(lines[1])
    return shift


def train_policy(study):
    if study.options.train_steps <= 0:
        return
    if study.options.policy:
        (study.work / "train").mkdir()
        shutil.copy(study.options.policy, study.work / "train/policy.pt")
        return
    study.dynamix("train", "--scenario", study.work / "scenario.yaml", "--steps",
                  study.options.train_steps, "--eval-seeds", 2, "--quiet",
                  "--out", study.work / "train", log=study.work / "train.txt")


def policy_labels(options):
    return [label for label, _, _ in policies_of(options, None)]


def policies(study):
    """(label, serve/evaluate spec, first per-worker batch of the real job)."""
    return policies_of(study.options, study.work)


def policies_of(options, work):
    listed = [(f"static:{b}", f"static:{b}", b) for b in integers(options.static)]
    listed += [("goodput:100", "goodput:100", 64),
               ("goodput+proportional", "goodput+proportional", 64)]
    if options.train_steps > 0:
        listed.append(("ppo", str(work / "train/policy.pt") if work else "", 64))
    return listed


def predict(study, target):
    specs = ",".join(f"ppo=ppo:{spec}" if label == "ppo" else spec
                     for label, spec, _ in policies(study))
    folder = study.work / f"predict_{target}"
    study.dynamix("evaluate", "--scenario", study.work / "scenario.yaml", "--policies", specs,
                  "--set", f"training.target_accuracy={target}",
                  "--seeds", study.options.predict_seeds, "--decision-lag", 1,
                  "--max-batch-change", 2,  # serve's default guard rails, as the job runs under
                  "--max-lr-change", study.options.max_lr_change,
                  "--decision-interval", 10, "--quiet", "--out", folder,
                  log=study.work / f"predict_{target}.txt")
    predicted = {}
    with open(folder / "results.csv", newline="") as results:
        for row in csv.DictReader(results):
            reached = row["reached"] == "1"
            predicted.setdefault(row["policy"], []).append(
                float(row["time_to_target_s"]) if reached else None)
    return predicted


def predict_all(study):
    return {target: predict(study, target) for target in study.targets}


def run_name(label, seed):
    return f"{label.replace(':', '').replace('+', '_')}_s{seed}"


def reuse_measured(study):
    """The window logs of --measured-logs, by policy: (seed, log), copied into measure/."""
    options, folder = study.options, study.work / "measure"
    folder.mkdir(exist_ok=study.resumed)
    logs = {}
    for seed in integers(options.seeds):
        for label, _, _ in policies(study):
            given = options.measured_logs / f"{run_name(label, seed)}.csv"
            record = given.with_suffix(".quiet.json")
            if record.is_file():
                shutil.copy(record, folder / record.name)
            logs.setdefault(label, []).append(
                (seed, pathlib.Path(shutil.copy(given, folder / given.name))))
    print(f"   reused the measured runs of {options.measured_logs}", flush=True)
    return logs


def measure(study):
    """Every policy on every seed, policies alternated within a seed; each log replayed. The
    window logs of the runs, by policy: (seed, log)."""
    options, folder = study.options, study.work / "measure"
    if options.measured_logs:
        return reuse_measured(study)
    folder.mkdir(exist_ok=study.resumed)
    logs = {}
    quiet = Quiet(options)
    for seed in integers(options.seeds):
        order = policies(study)
        random.Random(seed).shuffle(order)
        for label, spec, batch in order:
            run = run_name(label, seed)
            logs.setdefault(label, []).append((seed, folder / f"{run}.csv"))
            if study.kept_run(folder, run, replayed=True):
                continue

            def steered(run=run, spec=spec, batch=batch, seed=seed):
                arbitrator = Arbitrator(options, spec, folder / f"{run}.serve")
                try:
                    return run_job(options, job_command(
                        options, options.ranks, run, folder / f"{run}.csv", seed, batch=batch,
                        arbitrator=arbitrator.address, validate_every=options.validate_every),
                        folder / f"{run}.txt")
                finally:
                    arbitrator.close()

            reached = quiet.run(steered, folder / f"{run}.quiet.json")
            study.dynamix("replay", "--policy", spec, "--log", folder / f"{run}.serve",
                          log=folder / f"{run}.replay.txt")
            print(f"   {label} seed {seed}: "
                  f"{'missed' if reached is None else f'{reached:.1f} s'}", flush=True)
    return logs


def time_to(log, target):
    """Training seconds at the first validation at or above `target`, or None: the job's own
    test on the same logged value (reference_job.py stops on float(logged) >= target)."""
    with open(log, newline="") as rows:
        for row in csv.DictReader(rows):
            if row["validation_accuracy"] and float(row["validation_accuracy"]) >= target:
                return float(row["time_s"])
    return None


# ---------------------------------------------------------------- comparison


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def kendall_tau(first, second):
    pairs = [(i, j) for i in range(len(first)) for j in range(i + 1, len(first))]
    score = sum(math.copysign(1, (first[i] - first[j]) * (second[i] - second[j]))
                for i, j in pairs if (first[i] - first[j]) * (second[i] - second[j]) != 0)
    return score / len(pairs) if pairs else float("nan")


def bootstrap_ratio(numerators, denominators, rounds=2000, seed=1):
    """95% interval of median(numerators) / median(denominators), resampling both."""
    generator = random.Random(seed)
    ratios = sorted(
        statistics.median(generator.choices(numerators, k=len(numerators))) /
        statistics.median(generator.choices(denominators, k=len(denominators)))
        for _ in range(rounds))
    return ratios[int(0.025 * rounds)], ratios[int(0.975 * rounds) - 1]


def comparison(study, predicted, logs):
    """Per target: {policy: (predicted times, measured times)}, None for a miss; measured runs
    marked contaminated are left out."""
    return {target: {label: (predicted[target].get(label, []),
                             [time_to(log, target) for _, log in logs[label]
                              if not contaminated(log)])
                     for label, _, _ in policies(study)}
            for target in study.targets}


def write_results(study, predicted, logs):
    """Every predicted and measured time, contaminated runs included and marked."""
    with open(study.work / "results.csv", "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["target_accuracy", "policy", "kind", "seed", "time_to_target_s",
                         "contaminated"])
        for target in study.targets:
            for label, _, _ in policies(study):
                for seed, log in logs[label]:
                    flag = contaminated(log)
                    writer.writerow([target, label, "measured", seed, fmt_csv(time_to(log, target)),
                                     "" if flag is None else int(flag)])
                for index, seconds in enumerate(predicted[target].get(label, [])):
                    writer.writerow([target, label, "predicted", index, fmt_csv(seconds), ""])


def fmt_csv(value):
    return "" if value is None else f"{value:.3f}"


def fmt(value):
    return "—" if value is None else f"{value:.1f}"


def speedup(study, by_policy, kind):
    """Best adaptive policy over best static, by median over seeds, with a 95% interval; only
    policies that reached the target on every seed compete."""
    index = 0 if kind == "predicted" else 1
    complete = {label: values[index] for label, values in by_policy.items()
                if values[index] and all(v is not None for v in values[index])}
    statics = [(statistics.median(v), label) for label, v in complete.items()
               if label.startswith("static:")]
    adaptive = [(statistics.median(v), label) for label, v in complete.items()
                if not label.startswith("static:")]
    if not statics or not adaptive:
        return None
    static, learned = min(statics)[1], min(adaptive)[1]
    ratio = statistics.median(complete[static]) / statistics.median(complete[learned])
    return static, learned, ratio, bootstrap_ratio(complete[static], complete[learned])


def target_section(study, target, by_policy):
    lines = [f"## Target {target}", "",
             "| policy | predicted median (s) | measured median (s) | measured range (s) | "
             "predicted / measured | reached (sim) | reached (real) |",
             "|---|---|---|---|---|---|---|"]
    errors, pairs = [], []
    for label, (sims, reals) in by_policy.items():
        sim, real = median_or_none(sims), median_or_none(reals)
        reached = [r for r in reals if r is not None]
        ratio = sim / real if sim and real else None
        if ratio:
            errors.append(abs(ratio - 1))
            pairs.append((sim, real))
        lines.append(f"| {label} | {fmt(sim)} | {fmt(real)} | "
                     f"{fmt(min(reached, default=None))}–{fmt(max(reached, default=None))} | "
                     f"{'—' if ratio is None else f'{ratio:.3f}'} | "
                     f"{sum(s is not None for s in sims)}/{len(sims)} | "
                     f"{len(reached)}/{len(reals)} |")
    lines.append("")
    if errors:
        lines.append(f"Median over policies of |predicted / measured − 1|: "
                     f"{100 * statistics.median(errors):.1f}% (target ≤ 15%).")
    if len(pairs) >= 2:
        tau = kendall_tau([p for p, _ in pairs], [m for _, m in pairs])
        lines.append(f"Kendall τ between predicted and measured rankings: {tau:.2f} "
                     f"(target ≥ 0.8).")
    found = {kind: speedup(study, by_policy, kind) for kind in ("measured", "predicted")}
    for kind, value in found.items():
        if value:
            static, learned, ratio, (low, high) = value
            lines.append(f"Speed-up of the best adaptive policy ({learned}) over the best "
                         f"static ({static}), {kind}: {ratio:.2f} [95%: {low:.2f}, {high:.2f}].")
    if found["measured"] and found["predicted"]:
        ratio, (low, high) = found["measured"][2], found["predicted"][3]
        lines.append(f"The measured speed-up {'lies' if low <= ratio <= high else 'does not lie'}"
                     " within the predicted interval.")
    return lines + [""]


def quiet_lines(study, logs):
    """What the machine's other processes did during the real runs."""
    fit = sorted((study.work / "fit").glob("b*_s*.csv"))
    measured = [log for runs in logs.values() for _, log in runs]
    lines = []
    kinds = (("measured", measured),) if study.options.dynamics_from else (
        ("fit", fit), ("measured", measured))
    for name, runs in kinds:
        flags = [contaminated(log) for log in runs]
        if all(flag is None for flag in flags):
            lines.append(f"The {name} runs carry no quiet-machine record (reused from elsewhere).")
            continue
        loud = sum(bool(flag) for flag in flags)
        lines.append(f"{loud} of {len(runs)} {name} runs contaminated (other processes above "
                     f"{study.options.quiet_cores} cores before or during)"
                     + ("; left out of the comparison." if name == "measured" and loud else
                        "; fitted all the same: refit with --fit-logs from quiet runs."
                        if loud else "."))
    return lines + [""]


def write_summary(study, compared, logs):
    options = study.options
    lines = ["# Sim-to-real: predicted against measured time to target", "",
             f"Workload {options.workload} (width {options.hidden}, label noise "
             f"{options.label_noise:g}); {options.ranks} ranks"
             f"{'; slowdowns ' + options.slowdown if options.slowdowns else ''}"
             f"; validation every {options.validate_every} samples; "
             f"measured seeds {options.seeds}; {options.predict_seeds} simulator seeds per "
             "policy; the real runs stop at the highest target.", ""]
    reused = [f"{name} {path}" for name, path in (
        ("fit runs", options.fit_logs), ("dynamics and job overhead (held out: not refitted)",
                                         options.dynamics_from),
        ("cluster calibration", options.cluster_calibration),
        ("measured runs", options.measured_logs), ("policy", options.policy)) if path]
    if reused:
        lines += ["Reused, not run again: " + "; ".join(reused) + ".", ""]
    lines += quiet_lines(study, logs)
    lines += [f"Warning: {warning}" for warning in study.warnings] + ([""] if study.warnings else [])
    for target, by_policy in compared.items():
        lines += target_section(study, target, by_policy)
    lines += ["Stage wall times: " + ", ".join(
        f"{name} {seconds:.0f} s" for name, seconds in study.stage_seconds.items()),
        f"Total: {time.monotonic() - study.started:.0f} s."]
    (study.work / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)


def plot(study, compared):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, panels = plt.subplots(1, len(compared), figsize=(5.5 * len(compared), 5), dpi=150,
                                  squeeze=False)
    for axes, (target, by_policy) in zip(panels[0], compared.items()):
        for label, (sims, reals) in by_policy.items():
            sims, reals = [s for s in sims if s], [r for r in reals if r]
            if not sims or not reals:
                continue
            x, y = statistics.median(reals), statistics.median(sims)
            axes.errorbar(x, y, xerr=[[x - min(reals)], [max(reals) - x]],
                          yerr=[[y - min(sims)], [max(sims) - y]], fmt="o", capsize=3,
                          label=label)
        axes.set_xscale("log")
        axes.set_yscale("log")  # the times span decades
        low = min(axes.get_xlim()[0], axes.get_ylim()[0])
        high = max(axes.get_xlim()[1], axes.get_ylim()[1])
        axes.plot([low, high], [low, high], "k--", linewidth=0.8, label="predicted = measured")
        axes.set_xlabel("measured time to target (s): median, seed range")
        axes.set_ylabel("predicted time to target (s): median, seed range")
        axes.set_title(f"target validation accuracy {target}")
        axes.legend(fontsize=7)
    figure.suptitle("dynamix simulator against the real reference job")
    figure.tight_layout()
    for suffix in ("png", "svg"):
        figure.savefig(study.work / f"sim_to_real.{suffix}")


def main(argv):
    options = arguments(argv)
    study = Study(options)
    if not options.dynamics_from:
        study.stage("fit runs", fit_runs, study)
    study.stage("cluster calibration", calibrate_cluster, study)
    study.stage("dynamics fit", fit_dynamics, study)
    check_targets(study)
    overhead_s = study.stage("job overhead", fit_job_overhead, study)
    write_scenario(study, overhead_s)
    study.stage("training", train_policy, study)
    predicted = study.stage("prediction", predict_all, study)
    logs = study.stage("measurement", measure, study)
    compared = comparison(study, predicted, logs)
    write_results(study, predicted, logs)
    write_summary(study, compared, logs)
    plot(study, compared)
    study.finish()
    print(f"wrote {options.out}/{{results.csv,summary.md,sim_to_real.png,sim_to_real.svg}}")


if __name__ == "__main__":
    main(sys.argv[1:])
