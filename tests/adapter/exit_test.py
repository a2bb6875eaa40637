"""Jobs that use the worker's comm hook exit cleanly: 50 consecutive 2-rank gloo DDP jobs, each rank
a real process that trains a few iterations through AdaptiveBatchController, closes it and leaves
through the interpreter's own shutdown (DDP and gloo torn down there, no os._exit). Every rank
must exit 0 within JOB_TIMEOUT_S: a hang (a gloo thread waiting for the GIL while the main thread
joins it, PyTorch issue #56297) or an abort ("terminate called without an active exception")
fails the test.

usage: exit_test.py SOURCE_DIR [--jobs N] [--legacy-hook]
--legacy-hook runs the hook this package avoids (a Python `.then` callback on the
all-reduce's future, run on gloo's threads) to measure the failure rate it causes; it
reports the counts and does not fail.
Exit 77 (skip) only where gloo cannot start."""
import argparse
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
JOB_TIMEOUT_S = 60
CONCURRENT_JOBS = 2
ITERATIONS, INTERVAL, LAYERS = 6, 3, 12


def legacy_hook(state, bucket):
    """The pre-fix hook, for the 'before' figure only."""
    import torch.distributed as dist
    from dynamix_worker.comm_hook import squared_norm
    tensor = bucket.buffer()
    state.local_norm_sq = state.local_norm_sq + squared_norm(tensor)
    tensor.mul_(float(state.batch))
    future = dist.all_reduce(tensor, group=state.process_group, async_op=True).get_future()

    def finish(done):
        reduced = done.value()[0].div_(float(state.global_batch))
        state.global_norm_sq = state.global_norm_sq + squared_norm(reduced)
        return reduced

    return future.then(finish)


def rank_main(rank, init_file, legacy, final_backward, destroy):
    import torch
    import torch.distributed as dist
    from dynamix_worker import AdaptiveBatchController, GlobalCursorSampler
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=2)
    torch.manual_seed(0)
    layers = [torch.nn.Linear(8, 64), torch.nn.Tanh()]
    for _ in range(LAYERS):
        layers += [torch.nn.Linear(64, 64), torch.nn.Tanh()]
    model = torch.nn.parallel.DistributedDataParallel(
        torch.nn.Sequential(*layers, torch.nn.Linear(64, 3)),
        bucket_cap_mb=0.02)  # a bucket per layer: many all-reduces in flight per iteration
    if legacy:
        # What the package avoids: the `.then` hook, and a close() that does not drain.
        model.register_comm_hook = lambda state, hook: torch.nn.parallel.DistributedDataParallel \
            .register_comm_hook(model, state, legacy_hook)
        AdaptiveBatchController.close = lambda self: None
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(100, 8), torch.randint(0, 3, (100,))
    sampler = GlobalCursorSampler(100, [4, 12], rank)
    with AdaptiveBatchController(model, optimizer, sampler, None, INTERVAL) as controller:
        for _ in range(ITERATIONS):
            indices = controller.next_indices()
            controller.data_loaded()
            loss = torch.nn.functional.cross_entropy(model(x[indices]), y[indices])
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            controller.end_iteration(float(loss))
        if final_backward:  # as a job stopped mid-epoch; else the last thing is a window's end
            torch.nn.functional.cross_entropy(model(x[:8]), y[:8]).backward()
    if destroy:
        # Then the return frees DDP, and gloo with it, right after the last collective: the
        # moment a gloo thread still letting go of that collective's tensors would want the GIL.
        dist.destroy_process_group()
    # Otherwise the interpreter's shutdown tears DDP and gloo down.


def start_job(script, source, work, index, legacy):
    init = pathlib.Path(work) / f"init{index}"
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(source) / "adapter" / "python"))
    return [subprocess.Popen([sys.executable, script, source, "--rank", str(rank), "--init",
                              str(init)] + (["--legacy-hook"] if legacy else []) +
                             (["--final-backward"] if index % 2 else []) +
                             (["--destroy"] if index % 4 < 2 else []),
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True) for rank in range(2)]


def finish_job(ranks, deadline):
    """'ok', 'hang' or 'abort' (any nonzero exit) and the ranks' output."""
    outcome = "ok"
    for process in ranks:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            outcome = "hang"
    for process in ranks:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait()
        elif process.returncode != 0 and outcome == "ok":
            outcome = "abort"
    return outcome, "".join(process.stdout.read() for process in ranks)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("source")
    parser.add_argument("--jobs", type=int, default=50)
    parser.add_argument("--legacy-hook", action="store_true")
    parser.add_argument("--rank", type=int)
    parser.add_argument("--init")
    parser.add_argument("--final-backward", action="store_true")
    parser.add_argument("--destroy", action="store_true")
    args = parser.parse_args()
    if args.rank is not None:
        sys.path.insert(0, str(pathlib.Path(args.source) / "adapter" / "python"))
        rank_main(args.rank, args.init, args.legacy_hook, args.final_backward, args.destroy)
        return
    import torch.distributed as dist
    if not dist.is_available() or not dist.is_gloo_available():
        print("SKIP: this torch has no gloo backend")
        sys.exit(SKIP)
    script = str(pathlib.Path(__file__).resolve())
    counts = {"ok": 0, "hang": 0, "abort": 0}
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as work:
        running = []  # (index, ranks, deadline)
        next_index = 0
        while running or next_index < args.jobs:
            while len(running) < CONCURRENT_JOBS and next_index < args.jobs:
                running.append((next_index, start_job(script, args.source, work, next_index,
                                                      args.legacy_hook),
                                time.monotonic() + JOB_TIMEOUT_S))
                next_index += 1
            index, ranks, deadline = running.pop(0)
            outcome, output = finish_job(ranks, deadline)
            counts[outcome] += 1
            if outcome != "ok":
                print(f"job {index}: {outcome}\n{output[-2000:]}", flush=True)
    elapsed = time.monotonic() - started
    print(f"{args.jobs} jobs ({'legacy' if args.legacy_hook else 'current'} hook): "
          f"{counts['ok']} clean, {counts['hang']} hung, {counts['abort']} aborted, "
          f"{elapsed:.0f} s", flush=True)
    if not args.legacy_hook and counts["ok"] != args.jobs:
        print("FAIL: a job using the comm hook did not exit cleanly")
        sys.exit(1)


if __name__ == "__main__":
    main()
