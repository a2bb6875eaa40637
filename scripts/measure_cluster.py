#!/usr/bin/env python3
"""Measures this machine for `dynamix calibrate`: gloo all-reduce times over loopback and a small
model's per-iteration compute, communication and total time under DDP (--model cnn: SmallCnn;
reference-mlp, reference-cnn, reference-lstm: the sim-to-real reference job's workloads), one
process per rank, each limited to one thread
(torch.set_num_threads(1)), as data-parallel CPU ranks run. With --backend nccl: one process per
GPU (rank r on cuda:r), NCCL, and times read from CUDA events (the worker package's CudaTimer,
adapter/python/dynamix_worker/timing.py, which must be importable) instead of the host clock;
that path has not run on a GPU yet (docs/calibration.md).

    /usr/bin/python3 scripts/measure_cluster.py --out measurements.csv
    /usr/bin/python3 scripts/measure_cluster.py --quick --out smoke.csv      # a few seconds
    PYTHONPATH=adapter/python python3 scripts/measure_cluster.py --backend nccl --ranks 8 \
        --out gpus.csv

Output: a CSV, one row per configuration (schema in docs/calibration.md), after '#' lines that
record where and how it was measured. Times are medians over repetitions; *_min_s, *_p25_s and
*_p75_s describe their spread. Rows:
  kind=allreduce   one all_reduce of message_bytes (float32) over `ranks` ranks: comm_s = total_s
                   = the time until every rank holds the sum (the slowest rank, after a barrier).
  kind=iteration   one DDP iteration at batch_per_rank: compute_s = forward + backward + optimizer
                   step with DDP's synchronization off (model.no_sync(), the ranks computing at the
                   same time as in training), comm_s = DDP's all-reduce, timed in a communication
                   hook from the bucket being handed over to the reduced gradient, total_s = the
                   whole iteration with synchronization, measured back to back.
  kind=compute     one rank alone: forward + backward + optimizer step at batch_per_rank.
With --quiet-file PATH the file is created before measuring (other jobs on the machine pause their
builds while it exists), measuring waits for the 1-minute load average to fall below --max-load
(at most --settle-s seconds), and the file is removed however the script ends.
"""
import os

# Each rank gets one OpenMP thread, as torchrun gives the job's ranks ("Setting OMP_NUM_THREADS
# environment variable for each process to be 1 in default"); set before torch loads its
# thread pools. torch.set_num_threads(1) alone left the ranks' GEMMs on more threads than
# cores: with 4 ranks on 2 cores, a DDP iteration at 1,024 a rank measured 63-70 ms (CNN) and
# 98-104 ms (LSTM) against the job's 47 and 86 ms; with one thread 48 and 84 ms.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import datetime
import pathlib
import platform
import resource
import signal
import socket
import statistics
import sys
import time
from typing import NamedTuple, Tuple

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

# The sim-to-real job's networks, one definition: beside this file where `dynamix calibrate`
# writes them, in adapter/examples in the source tree.
for _folder in (pathlib.Path(__file__).resolve().parent,
                pathlib.Path(__file__).resolve().parent.parent / "adapter" / "examples"):
    sys.path.insert(0, str(_folder))
import reference_workloads  # noqa: E402

SIDE, CLASSES = 16, 10
COLUMNS = ["kind", "ranks", "message_bytes", "batch_per_rank", "compute_s", "comm_s", "total_s",
           "total_min_s", "total_p25_s", "total_p75_s", "repetitions", "other_load_cores"]


class SmallCnn(torch.nn.Module):
    """About 100k parameters (98,950), 16x16 single-channel images, ten classes."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.hidden = torch.nn.Linear(32 * (SIDE // 4) ** 2, 180)
        self.head = torch.nn.Linear(180, CLASSES)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.head(F.relu(self.hidden(x.flatten(1))))


# --model: the network for a width (None: its default), one batch of its inputs, and how the
# provenance line describes them. reference-*: the sim-to-real job's workloads
# (adapter/examples/reference_workloads.py).
MODELS = {
    "cnn": (lambda _width: SmallCnn(), lambda batch: torch.randn(batch, 1, SIDE, SIDE),
            f"1x{SIDE}x{SIDE} images"),
    **{f"reference-{name}": (
        lambda width, workload=workload: workload.network(width or workload.hidden),
        workload.inputs, f"the sim-to-real reference job's {name} workload")
       for name, workload in reference_workloads.WORKLOADS.items()},
}


class LaunchPlan(NamedTuple):
    """How the ranks run: the process group's backend and each rank's device."""
    backend: str
    devices: Tuple[str, ...]


def launch_plan(backend: str, ranks: int, device_count: int) -> LaunchPlan:
    """gloo: every rank a one-thread CPU process. nccl: one process per GPU, rank r on cuda:r;
    ValueError when there are fewer GPUs (device_count, torch.cuda.device_count() in use) than
    ranks."""
    if backend == "gloo":
        return LaunchPlan("gloo", ("cpu",) * ranks)
    if backend != "nccl":
        raise ValueError(f"expected gloo or nccl, found {backend!r}")
    if device_count < ranks:
        raise ValueError(f"expected a GPU for each of {ranks} ranks (one process per GPU), "
                         f"found {device_count}")
    return LaunchPlan("nccl", tuple(f"cuda:{rank}" for rank in range(ranks)))


def worker_timing():
    """The worker package's timing module; from the source tree's adapter/python when it is not
    importable as it is."""
    try:
        from dynamix_worker import timing
    except ImportError:
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "adapter/python"))
        from dynamix_worker import timing
    return timing


def clock_for(device: str):
    """What times a section on `device`: the host clock on the CPU; CUDA events recorded on the
    device's stream on a GPU, where the host runs ahead of the kernels it launches."""
    if torch.device(device).type == "cpu":
        return HostClock()
    return worker_timing().timer_for(torch.device(device))


class HostClock:
    """time.perf_counter() marks (the worker package's HostTimer, without importing it)."""

    def mark(self, _point: str = "") -> float:
        return time.perf_counter()

    def seconds(self, start, end) -> float:
        return end - start


def new_model(options) -> torch.nn.Module:
    return MODELS[options.model][0](options.hidden)


def batch_of(options, batch: int, device: str = "cpu"):
    return (MODELS[options.model][1](batch).to(device),
            torch.randint(0, CLASSES, (batch,)).to(device))


def parameter_count(options) -> int:
    return sum(p.numel() for p in new_model(options).parameters())


def spread(samples):
    """Median, min, 25th and 75th percentile of a list of seconds."""
    ordered = sorted(samples)
    quartiles = statistics.quantiles(ordered, n=4) if len(ordered) > 1 else [ordered[0]] * 3
    return statistics.median(ordered), ordered[0], quartiles[0], quartiles[2]


def cpu_seconds():
    """(busy, total) CPU seconds of the whole machine since boot, from /proc/stat."""
    with open("/proc/stat", encoding="utf-8") as stat:
        fields = [int(f) for f in stat.readline().split()[1:]]
    ticks = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields) - idle) / ticks, sum(fields) / ticks


def own_cpu_seconds():
    return sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))


class Trial:
    """CPU that processes other than the measuring ones used during a block of measurements, in
    cores (machine busy time less the ranks' own, over wall time). `group_sum` adds the ranks'
    own CPU time up (an all_reduce when distributed)."""

    def __init__(self, group_sum=lambda seconds: seconds):
        self.group_sum = group_sum

    def __enter__(self):
        self.machine = cpu_seconds()[0]
        self.own = own_cpu_seconds()
        self.wall = time.perf_counter()
        return self

    def __exit__(self, *_):
        own = self.group_sum(own_cpu_seconds() - self.own)
        self.other_cores = max(0.0, (cpu_seconds()[0] - self.machine - own) /
                               max(1e-6, time.perf_counter() - self.wall))


def best_trial(trials):
    """The trial measured while other processes used the least CPU (then the lower median)."""
    return min(trials, key=lambda t: (round(t[0], 1), statistics.median(t[1])))


def sum_over_ranks(seconds, device="cpu"):
    total = torch.tensor([seconds], dtype=torch.float64, device=device)
    dist.all_reduce(total)
    return float(total[0])


def repetitions_for(message_bytes: int, scale: float) -> int:
    """Enough repetitions for a stable median, fewer for large messages."""
    mib = message_bytes / 2 ** 20
    base = 100 if mib <= 0.25 else 50 if mib <= 1 else 25 if mib <= 4 else 12 if mib <= 16 else 7
    return max(3, int(base * scale))


class Rank(NamedTuple):
    """This rank's device and the clock that times its sections."""
    device: str
    clock: object

    def group_sum(self, seconds):
        return sum_over_ranks(seconds, self.device)


def timed_allreduce(tensor, rank):
    """Seconds until the slowest rank holds the sum, starting from a barrier."""
    dist.barrier()
    start = rank.clock.mark("start")
    dist.all_reduce(tensor)
    end = rank.clock.mark("comm")
    elapsed = torch.tensor([rank.clock.seconds(start, end)], dtype=torch.float64,
                           device=rank.device)
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
    return float(elapsed[0])


def allreduce_rows(world, options, rank):
    tensors = {size: torch.ones(size // 4, dtype=torch.float32, device=rank.device)
               for size in options.sizes}
    trials = {size: [] for size in options.sizes}
    for _ in range(options.trials):
        for size, tensor in tensors.items():
            for _ in range(2):
                timed_allreduce(tensor, rank)
            repetitions = repetitions_for(size, options.repetition_scale / options.trials)
            with Trial(rank.group_sum) as trial:
                samples = [timed_allreduce(tensor, rank) for _ in range(repetitions)]
            trials[size].append((trial.other_cores, samples))
    rows = []
    for size in options.sizes:
        other, samples = best_trial(trials[size])
        median, low, p25, p75 = spread(samples)
        rows.append({"kind": "allreduce", "ranks": world, "message_bytes": size,
                     "comm_s": median, "total_s": median, "total_min_s": low, "total_p25_s": p25,
                     "total_p75_s": p75, "repetitions": len(samples), "other_load_cores": other})
    return rows


class HookTimer:
    """DDP communication hook that times each bucket's all-reduce and averages the gradient. The
    marks are kept and read after the iteration (comm_seconds): CUDA events resolve only once the
    device has passed them."""

    def __init__(self, world, clock):
        self.world = world
        self.clock = clock
        self.marks = []

    def hook(self, _state, bucket):
        start = self.clock.mark("bucket")
        future = dist.all_reduce(bucket.buffer(), async_op=True).get_future()

        def done(finished):
            self.marks.append((start, self.clock.mark("comm")))
            return finished.value()[0].div_(self.world)

        return future.then(done)

    def comm_seconds(self):
        seconds = sum(self.clock.seconds(start, end) for start, end in self.marks)
        self.marks = []
        return seconds


def one_iteration(model, optimizer, x, y, sync, clock):
    start = clock.mark("start")
    if sync:
        F.cross_entropy(model(x), y).backward()
    else:
        with model.no_sync():
            F.cross_entropy(model(x), y).backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=False)
    return clock.seconds(start, clock.mark("end"))


def iteration_trial(model, optimizer, timer, batch, options, rank):
    """A block of iterations without synchronization (compute), then one with it (total)."""
    x, y = batch_of(options, batch, rank.device)
    iterations = options.iterations
    for _ in range(3):
        one_iteration(model, optimizer, x, y, True, rank.clock)
    timer.comm_seconds()
    compute, comm, total = [], [], []
    with Trial(rank.group_sum) as trial:
        dist.barrier()
        compute += [one_iteration(model, optimizer, x, y, False, rank.clock)
                    for _ in range(iterations)]
        dist.barrier()
        for _ in range(iterations):
            total.append(one_iteration(model, optimizer, x, y, True, rank.clock))
            comm.append(timer.comm_seconds())
    return trial.other_cores, (compute, comm, total)


def iteration_row(world, batch, trials):
    """Rank medians of the least disturbed trial: their mean (compute, comm) or their max
    (total: the BSP iteration waits for the slowest rank)."""
    other, _ = best_trial([(t[0], t[1][2]) for t in trials])
    chosen = [t for t in trials if t[0] == other][0][1]
    gathered = [None] * world
    dist.all_gather_object(gathered, chosen)
    compute_s = statistics.mean(statistics.median(r[0]) for r in gathered)
    comm_s = statistics.mean(statistics.median(r[1]) for r in gathered)
    slowest = max(gathered, key=lambda r: statistics.median(r[2]))[2]
    median, low, p25, p75 = spread(slowest)
    return {"kind": "iteration", "ranks": world, "batch_per_rank": batch, "compute_s": compute_s,
            "comm_s": comm_s, "total_s": median, "total_min_s": low, "total_p25_s": p25,
            "total_p75_s": p75, "repetitions": len(slowest), "other_load_cores": other}


def ddp_rows(world, options, rank):
    torch.manual_seed(0)
    device = torch.device(rank.device)
    model = torch.nn.parallel.DistributedDataParallel(
        new_model(options).to(device), device_ids=[device] if device.type == "cuda" else None)
    timer = HookTimer(world, rank.clock)
    model.register_comm_hook(None, timer.hook)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    trials = {batch: [] for batch in options.batches}
    for _ in range(options.trials):
        for batch in options.batches:
            trials[batch].append(iteration_trial(model, optimizer, timer, batch, options, rank))
    # Every rank picks the same trial: rank 0's view of the machine decides.
    for batch in options.batches:
        others = torch.tensor([t[0] for t in trials[batch]], dtype=torch.float64,
                              device=rank.device)
        dist.broadcast(others, 0)
        trials[batch] = [(float(o), t[1]) for o, t in zip(others, trials[batch])]
    return [iteration_row(world, batch, trials[batch]) for batch in options.batches]


def rank_main(rank, world, port, options, plan, queue):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo",
                      NCCL_SOCKET_IFNAME="lo")
    torch.set_num_threads(1)
    device = plan.devices[rank]
    if torch.device(device).type == "cuda":
        torch.cuda.set_device(torch.device(device))
    dist.init_process_group(plan.backend, rank=rank, world_size=world)
    this = Rank(device, clock_for(device))
    rows = allreduce_rows(world, options, this) + ddp_rows(world, options, this)
    if rank == 0:
        queue.put(rows)
    dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def distributed_rows(world, options, plan):
    context = mp.get_context("spawn")
    queue = context.SimpleQueue()
    mp.start_processes(rank_main, args=(world, free_port(), options, plan, queue), nprocs=world,
                       join=True, start_method="spawn")
    return queue.get()


def compute_trial(model, optimizer, inputs, iterations, clock):
    x, y = inputs
    samples = []
    with Trial() as trial:
        for step in range(3 + iterations):
            start = clock.mark("start")
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=False)
            end = clock.mark("end")
            if step >= 3:
                samples.append(clock.seconds(start, end))
    return trial.other_cores, samples


def single_rank_rows(options, device="cpu"):
    """One rank alone on `device` (the first of the launch plan's)."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = new_model(options).to(device)
    clock = clock_for(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    # Warm the allocator.
    compute_trial(model, optimizer, batch_of(options, max(options.compute_batches), device), 20,
                  clock)
    trials = {batch: [] for batch in options.compute_batches}
    for _ in range(options.trials):
        for batch in options.compute_batches:
            trials[batch].append(compute_trial(model, optimizer, batch_of(options, batch, device),
                                               2 * options.iterations, clock))
    rows = []
    for batch in options.compute_batches:
        other, samples = best_trial(trials[batch])
        median, low, p25, p75 = spread(samples)
        rows.append({"kind": "compute", "ranks": 1, "batch_per_rank": batch, "compute_s": median,
                     "comm_s": 0.0, "total_s": median, "total_min_s": low, "total_p25_s": p25,
                     "total_p75_s": p75, "repetitions": len(samples), "other_load_cores": other})
    return rows


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def provenance(options, started, settled_load, others_busy):
    return [
        f"machine: {socket.gethostname()} ({platform.platform()})",
        f"cpu: {cpu_model()}",
        f"cores: {os.cpu_count()}",
        f"torch: {torch.__version__}; python {platform.python_version()}; "
        f"{backend_text(options)}; torch.set_num_threads(1) and OMP_NUM_THREADS="
        f"{os.environ['OMP_NUM_THREADS']} per rank; scheduling "
        f"{'SCHED_RR' if options.realtime else 'default'}; {options.trials} trials per "
        "configuration, the least disturbed kept",
        f"date: {started.isoformat(timespec='seconds')}",
        f"model: {type(new_model(options)).__name__}, {parameter_count(options)} parameters "
        f"({4 * parameter_count(options)} gradient bytes), {MODELS[options.model][2]}, "
        "SGD momentum",
        f"load average before measuring: {settled_load:.2f}; CPU used by other processes "
        f"while measuring: {others_busy:.2f} cores on average",
        "command: measure_cluster.py " + " ".join(options.argv),
    ]


def backend_text(options):
    if options.backend == "gloo":
        return "backend gloo over loopback, host-clock timing"
    names = sorted({torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())})
    return (f"backend nccl, one process per GPU ({torch.cuda.device_count()} x "
            f"{' / '.join(names)}), CUDA-event timing")


def write_csv(path, header, rows):
    def cell(row, column):
        value = row.get(column, "")
        return f"{value:.9g}" if isinstance(value, float) else str(value)

    text = "".join(f"# {line}\n" for line in header) + ",".join(COLUMNS) + "\n"
    text += "".join(",".join(cell(row, c) for c in COLUMNS) + "\n" for row in rows)
    if path == "-":
        sys.stdout.write(text)
        return
    temporary = path + ".partial"
    with open(temporary, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, path)


def busy_cores(seconds=3.0):
    busy, _ = cpu_seconds()
    time.sleep(seconds)
    return (cpu_seconds()[0] - busy) / seconds


def wait_until_quiet(max_load, settle_s):
    """Until the 1-minute load average is below max_load or the last 3 s kept less than
    max_load / 4 cores busy, at most settle_s seconds; returns the load average then."""
    deadline = time.monotonic() + settle_s
    while os.getloadavg()[0] >= max_load and time.monotonic() < deadline:
        if busy_cores() < max_load / 4:
            break
    return os.getloadavg()[0]


def integers(text):
    return [int(part) for part in text.split(",") if part]


def arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="-", help="CSV to write ('-': standard output)")
    parser.add_argument("--model", choices=sorted(MODELS), default="cnn",
                        help="cnn: SmallCnn (adapter/examples/train_cnn.py); reference-W: the "
                             "sim-to-real reference job's workload W "
                             "(adapter/examples/reference_workloads.py)")
    parser.add_argument("--hidden", type=int,
                        help="the reference workload's width, as the job's --hidden (default: "
                             "the workload's)")
    parser.add_argument("--ranks", type=integers, default=[2, 4])
    parser.add_argument("--backend", choices=["gloo", "nccl"], default="gloo",
                        help="gloo: CPU ranks over loopback, host clock; nccl: one process per "
                             "GPU, CUDA events (the worker package's CudaTimer)")
    parser.add_argument("--sizes", type=integers, default=[2 ** k for k in range(16, 27)],
                        help="all-reduce message bytes (default 64 KiB .. 64 MiB, powers of 2)")
    parser.add_argument("--batches", type=integers, default=[16, 32, 64, 128],
                        help="per-rank batches of the DDP iterations")
    parser.add_argument("--compute-batches", type=integers,
                        default=[8, 16, 32, 64, 128, 256], help="single-rank compute sweep")
    parser.add_argument("--iterations", type=int, default=12,
                        help="iterations per timed block, each way")
    parser.add_argument("--trials", type=int, default=3,
                        help="blocks per configuration, spread over the run; the one during "
                             "which other processes used the least CPU is kept")
    parser.add_argument("--repetition-scale", type=float, default=1.0)
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 2 ranks, two small sizes, two batches")
    parser.add_argument("--quiet-file", help="file that asks other jobs to pause while measuring")
    parser.add_argument("--realtime", action="store_true",
                        help="measure under SCHED_RR (needs root or CAP_SYS_NICE): other "
                             "processes of a shared machine then cannot preempt the ranks")
    parser.add_argument("--max-load", type=float, default=0.8)
    parser.add_argument("--settle-s", type=float, default=240)
    options = parser.parse_args(argv)
    if options.quick:
        options.ranks, options.sizes, options.batches = [2], [65536, 262144], [16, 32]
        options.compute_batches, options.iterations, options.repetition_scale = [16, 32], 3, 0.1
        options.trials = 1
    options.argv = argv
    try:
        options.plans = {world: launch_plan(options.backend, world, device_count(options.backend))
                         for world in options.ranks}
        if options.backend == "nccl":
            worker_timing()
    except (ValueError, ImportError) as error:
        print(f"measure_cluster.py: --backend {options.backend}: {error}", file=sys.stderr)
        sys.exit(2)
    return options


def device_count(backend):
    return torch.cuda.device_count() if backend == "nccl" else 0


def measure(options):
    started = datetime.datetime.now(datetime.timezone.utc)
    if options.realtime:  # inherited by the spawned ranks
        os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(10))
    load = wait_until_quiet(options.max_load, options.settle_s) if options.quiet_file else \
        os.getloadavg()[0]
    busy_before, wall_before = cpu_seconds()
    own_before = own_cpu_seconds()
    rows = single_rank_rows(options, options.plans[options.ranks[0]].devices[0])
    for world in options.ranks:
        rows += distributed_rows(world, options, options.plans[world])
    busy_after, wall_after = cpu_seconds()
    others = (busy_after - busy_before - (own_cpu_seconds() - own_before)) / max(
        1e-9, (wall_after - wall_before) / os.cpu_count())
    write_csv(options.out, provenance(options, started, load, max(0.0, others)), rows)


def main(argv):
    options = arguments(argv)
    if not options.quiet_file:
        measure(options)
        return
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    open(options.quiet_file, "a", encoding="utf-8").close()
    try:
        measure(options)
    finally:
        try:
            os.remove(options.quiet_file)
        except FileNotFoundError:
            pass


if __name__ == "__main__":
    main(sys.argv[1:])
