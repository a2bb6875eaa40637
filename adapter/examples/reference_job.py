"""The sim-to-real reference job: one of reference_workloads.py's workloads (--workload: an MLP
on a random teacher's labels, a CNN on scikit-learn's handwritten digits, an LSTM on a generated
language) trained with DDP over gloo, at fixed batches or steered by `dynamix serve`, until a
validation accuracy.

    python3 -m torch.distributed.run --redirects 1 --tee 1 --nproc_per_node 4 \\
        adapter/examples/reference_job.py --global-batch 512 --log runs/b512.csv
    ... adapter/examples/reference_job.py --arbitrator 127.0.0.1:50051 --log runs/goodput.csv

One CSV row per window of --interval iterations (LOG_FIELDS, written by rank 0 to FILE.partial
and renamed to FILE at the end, so a killed run leaves no FILE); the last stdout line is
`time_to_target_s X` or `missed`. time_s is the training clock: validation and logging are
left out. The LR follows the workload's rule (linear or square root), --lr at --reference-batch.
"""
import argparse
import csv
import math
import os
import pathlib
import sys
import time

import torch
import torch.distributed as dist

from dynamix_worker import AdaptiveBatchController, GlobalCursorSampler
from dynamix_worker.metrics import ITERATION_FIELDS

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import reference_workloads  # noqa: E402  (beside this file)
import slow_device  # noqa: E402
import teacher_data  # noqa: E402

LOG_FIELDS = ["run", "window", "iteration", "samples", "time_s", "global_batch", "local_batch",
              "lr_factor", "train_loss", "validation_accuracy", "local_norm_sq",
              "global_norm_sq"]
MAX_WORKER_BATCH = 1024  # the policies' per-worker bound


def split_evenly(total: int, parts: int):
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


class WindowLog:
    """Rank 0's CSV: rows go to FILE.partial, flushed per window; finish() renames it to FILE."""

    def __init__(self, path: pathlib.Path):
        self.path = path
        self.partial = path.with_name(path.name + ".partial")
        if path.exists():
            with open(path, newline="") as existing:
                if existing.readline().strip() != ",".join(LOG_FIELDS):
                    raise SystemExit(f"--log {path}: exists and is not a reference_job log; "
                                     "refusing to replace it")
            path.unlink()  # an older run's: a killed run must not leave it looking like ours
        path.parent.mkdir(parents=True, exist_ok=True)
        self.file = open(self.partial, "w", newline="")
        self.writer = csv.writer(self.file, lineterminator="\n")
        self.writer.writerow(LOG_FIELDS)

    def write(self, row: list) -> None:
        self.writer.writerow(row)
        self.file.flush()

    def finish(self) -> None:
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()
        os.replace(self.partial, self.path)


def window_row(rows: torch.Tensor):
    """Global and rank-0 batch, batch-weighted loss and rank 0's mean squared norms of one
    window's gathered rows [ranks, iterations, ITERATION_FIELDS]."""
    f = {name: i for i, name in enumerate(ITERATION_FIELDS)}
    batch = rows[:, :, f["batch"]]
    global_batch = batch.sum(dim=0)
    loss = (rows[:, :, f["loss"]] * batch / global_batch).sum(dim=0)
    return {"samples": int(global_batch.sum()), "global_batch": float(global_batch.mean()),
            "local_batch": float(batch[0].mean()), "train_loss": float(loss.mean()),
            "local_norm_sq": float(rows[0, :, f["local_norm_sq"]].mean()),
            "global_norm_sq": float(rows[0, :, f["global_norm_sq"]].mean())}


def accuracy_on(model: torch.nn.Module, split: teacher_data.Split) -> float:
    with torch.no_grad():
        return float((model(split.inputs).argmax(1) == split.labels).float().mean())


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arbitrator", help="host:port of dynamix serve; none keeps the batches")
    parser.add_argument("--plain", action="store_true",
                        help="fixed batches even if --arbitrator is given")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--global-batch", type=int, help="starting global batch, split evenly "
                      "over the ranks (default 512)")
    size.add_argument("--batch", type=int, help="starting batch of every rank")
    parser.add_argument("--workload", choices=sorted(reference_workloads.WORKLOADS),
                        default="mlp", help="the network and its data (reference_workloads.py)")
    workloads = reference_workloads.WORKLOADS.items()
    parser.add_argument("--lr", type=float,
                        help="SGD LR (momentum 0.9) at --reference-batch (default: the "
                             "workload's: " + ", ".join(f"{n} {w.lr:g}" for n, w in workloads) +
                        ")")
    parser.add_argument("--reference-batch", type=int, default=256,
                        help="the global batch --lr is tuned for (the workload's rule: " +
                        ", ".join(f"{n} {w.lr_rule}" for n, w in workloads) + ")")
    parser.add_argument("--interval", type=int, default=10, help="k: iterations per window")
    parser.add_argument("--target-accuracy", type=float, default=0.85,
                        help="validation accuracy that ends the run")
    parser.add_argument("--past-target", type=float, default=1.0,
                        help="train on after the target until this many times the samples that "
                             "reached it (a fit run that sees the plateau; the time to target "
                             "stays the first reach)")
    parser.add_argument("--time-budget-s", type=float, default=300.0,
                        help="training seconds after which the run stops (missed)")
    parser.add_argument("--validate-every-samples", type=int, default=100000,
                        help="training samples between validations")
    parser.add_argument("--seed", type=int, default=0, help="data, order and initial weights")
    parser.add_argument("--label-noise", type=float, default=0.0,
                        help="fraction of training labels flipped (the noise-scale knob)")
    parser.add_argument("--dataset-size", type=int, default=200000)
    parser.add_argument("--validation-size", type=int, default=4000)
    parser.add_argument("--hidden", type=int,
                        help="the network's width: hidden units, or the CNN's channels "
                             "(default: the workload's: " +
                        ", ".join(f"{n} {w.hidden}" for n, w in workloads) + ")")
    parser.add_argument("--slowdown", default="", help="per-rank compute slowdown, e.g. 1,1,1.5,2")
    parser.add_argument("--run", default="run", help="the log's run label (no commas)")
    parser.add_argument("--log", type=pathlib.Path, help="CSV written by rank 0")
    args = parser.parse_args()
    workload = reference_workloads.WORKLOADS[args.workload]
    args.lr = workload.lr if args.lr is None else args.lr
    args.hidden = workload.hidden if args.hidden is None else args.hidden
    if "," in args.run or "\n" in args.run:
        parser.error(f"--run: no commas or newlines, found {args.run!r}")
    if not 0 < args.target_accuracy <= 1:
        parser.error(f"--target-accuracy: expected a number in (0, 1], found "
                     f"{args.target_accuracy}")
    for name in ("interval", "reference_batch", "validate_every_samples", "dataset_size",
                 "validation_size", "hidden"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')}: expected >= 1, found "
                         f"{getattr(args, name)}")
    if not (math.isfinite(args.past_target) and args.past_target >= 1):
        parser.error(f"--past-target: expected a finite number >= 1, found {args.past_target}")
    if not (math.isfinite(args.lr) and args.lr > 0):
        parser.error(f"--lr: expected a finite number > 0, found {args.lr}")
    return args


def main():
    args = arguments()
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    slowdown = [float(s) for s in args.slowdown.split(",")] if args.slowdown else [1.0] * world
    if len(slowdown) != world or min(slowdown) < 1:
        raise SystemExit(f"--slowdown: expected {world} factors >= 1, found {args.slowdown!r}")
    if args.batch is not None:
        batches = [args.batch] * world
    else:
        batches = split_evenly(args.global_batch or 512, world)
    if min(batches) < 1 or max(batches) > MAX_WORKER_BATCH:
        raise SystemExit(f"batches {batches}: expected each in [1, {MAX_WORKER_BATCH}]")
    workload = reference_workloads.WORKLOADS[args.workload]
    train, held_out = workload.splits(args.dataset_size, args.validation_size, args.seed,
                                      args.label_noise)
    torch.manual_seed(args.seed)
    model = torch.nn.parallel.DistributedDataParallel(workload.network(args.hidden))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    sampler = GlobalCursorSampler(args.dataset_size, batches, rank, args.seed)
    controller = AdaptiveBatchController(
        model, optimizer, sampler, None if args.plain else args.arbitrator, args.interval,
        job_id=f"reference_job-{args.run}", lr_rule=workload.lr_rule,
        reference_batch=args.reference_batch,
        lr_factor=(sum(batches) / args.reference_batch) ** (
            0.5 if workload.lr_rule == "sqrt" else 1.0),
        max_batch=MAX_WORKER_BATCH)
    log = WindowLog(args.log) if rank == 0 and args.log else None
    samples, next_validation = 0, args.validate_every_samples
    time_to_target = None
    clock = 0.0  # training seconds, validation and logging left out
    stop = torch.zeros(1)
    with controller:
        resumed = time.perf_counter()
        while True:
            indices = controller.next_indices()
            x, y = train.inputs[indices], train.labels[indices]
            controller.data_loaded()
            output, loss = slow_device.train_step(model, optimizer, x, y, slowdown[rank])
            lr_factor = controller.lr_factor  # in force during this iteration
            controller.end_iteration(float(loss),
                                     float((output.argmax(1) == y).float().mean()))
            if controller.iteration % args.interval:
                continue
            clock += time.perf_counter() - resumed
            window = window_row(controller.window_rows)
            samples += window["samples"]
            validation = ""
            if samples >= next_validation:
                while next_validation <= samples:
                    next_validation += args.validate_every_samples
                if rank == 0:
                    accuracy = accuracy_on(model.module, held_out)
                    controller.validation_accuracy = accuracy
                    # Reached is judged on the logged value, as scripts/sim_to_real.py
                    # reads it: one definition, whatever the float's last digits.
                    validation = f"{accuracy:.6f}"
                    print(f"samples {samples} time_s {clock:.2f} global_batch "
                          f"{window['global_batch']:g} loss {window['train_loss']:.4f} "
                          f"validation_accuracy {accuracy:.4f}", flush=True)
                    if float(validation) >= args.target_accuracy and time_to_target is None:
                        time_to_target, samples_to_target = clock, samples
            if log:
                log.write([args.run, controller.window_index - 1, controller.iteration, samples,
                           f"{clock:.6f}", f"{window['global_batch']:g}",
                           f"{window['local_batch']:g}", f"{lr_factor:.9g}",
                           f"{window['train_loss']:.9g}", validation,
                           f"{window['local_norm_sq']:.9g}", f"{window['global_norm_sq']:.9g}"])
            stop[0] = float((time_to_target is not None and
                             samples >= args.past_target * samples_to_target) or
                            clock >= args.time_budget_s)
            dist.broadcast(stop, src=0)
            resumed = time.perf_counter()
            if stop[0]:
                break
    if log:
        log.finish()
    if rank == 0:
        print(f"time_to_target_s {time_to_target:.3f}" if time_to_target is not None
              else "missed", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
