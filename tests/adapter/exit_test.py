"""Jobs that use the worker's comm hook exit cleanly: 50 consecutive 2-rank gloo DDP jobs, each rank
a real process that trains a few iterations through AdaptiveBatchController, closes it and leaves
through the interpreter's own shutdown (DDP and gloo torn down there, no os._exit). Every rank
must exit 0 within JOB_TIMEOUT_S: a hang (a gloo thread waiting for the GIL while the main thread
joins it, PyTorch issue #56297) or an abort ("terminate called without an active exception")
fails the test.

usage: exit_test.py SOURCE_DIR [--jobs N] [--ranks R] [--serve DYNAMIX] [--legacy-hook]
--ranks R runs R ranks a job (2 by default; a job of more than 2 ranks runs alone).
--serve DYNAMIX gives each job its own `DYNAMIX serve --policy goodput:100` on loopback, stops it
after the job and replays its log: a job counts as clean only if every rank exits 0 and
`DYNAMIX replay` finds the decisions match.
--legacy-hook runs the hook this package avoids (a Python `.then` callback on the
all-reduce's future, run on gloo's threads) to measure the failure rate it causes; it
reports the counts and does not fail.
Exit 77 (skip) only where gloo cannot start."""
import argparse
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
POLICY = "goodput:100"
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


def rank_main(rank, ranks, init_file, legacy, final_backward, destroy, arbitrator):
    import torch
    import torch.distributed as dist
    from dynamix_worker import AdaptiveBatchController, GlobalCursorSampler
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=ranks)
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
    sampler = GlobalCursorSampler(100, [4 if r % 2 == 0 else 12 for r in range(ranks)], rank)
    with AdaptiveBatchController(model, optimizer, sampler, arbitrator, INTERVAL,
                                 max_batch=48) as controller:
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


class Arbitrator:
    """`dynamix serve` for one job, on a free loopback port, logging to `log`; its output goes to
    files beside the log, never to a pipe it could fill."""

    def __init__(self, binary, ranks, log):
        self.binary, self.log = binary, log
        self.output = pathlib.Path(f"{log}.out")
        with open(self.output, "w") as output:
            self.process = subprocess.Popen(
                [binary, "serve", "--policy", POLICY, "--workers", str(ranks), "--log", str(log),
                 "--listen", "127.0.0.1:0"], stdout=output, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        found = None
        while not found and self.process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
            found = re.search(r"listening on (127\.0\.0\.1:\d+)", self.output.read_text())
        if not found:
            self.stop()
            raise RuntimeError(f"dynamix serve did not say where it listens: {self.said()}")
        self.address = found.group(1)

    def said(self):
        return self.output.read_text()[-2000:]

    def stop(self):
        """Stops serve (SIGINT); None when it exited 0, else what it said."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.returncode == 0:
            return None
        return f"serve exit {self.process.returncode}: {self.said()}"

    def replay(self):
        """None when replay finds decisions and they match, else its output."""
        result = subprocess.run([self.binary, "replay", "--policy", POLICY, "--log",
                                 str(self.log)], capture_output=True, text=True, timeout=60)
        matched = re.search(r"(\d+) decisions match", result.stdout)
        if result.returncode == 0 and matched and int(matched.group(1)) > 0:
            return None
        return f"replay exit {result.returncode}: {result.stdout}{result.stderr}"


def start_job(script, source, work, index, legacy, ranks, arbitrator):
    init = pathlib.Path(work) / f"init{index}"
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(source) / "adapter" / "python"))
    if arbitrator and "DYNAMIX_PROTO_PYTHON" not in env:
        # The build's generated stubs, beside the dynamix that serves (BUILD/apps/dynamix).
        env["DYNAMIX_PROTO_PYTHON"] = str(
            pathlib.Path(arbitrator.binary).resolve().parents[1] / "adapter" / "proto")
    return [subprocess.Popen([sys.executable, script, source, "--rank", str(rank), "--ranks",
                              str(ranks), "--init", str(init)] +
                             (["--arbitrator", arbitrator.address] if arbitrator else []) +
                             (["--legacy-hook"] if legacy else []) +
                             (["--final-backward"] if index % 2 else []) +
                             (["--destroy"] if index % 4 < 2 else []),
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True) for rank in range(ranks)]


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
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--serve", metavar="DYNAMIX")
    parser.add_argument("--legacy-hook", action="store_true")
    parser.add_argument("--rank", type=int)
    parser.add_argument("--init")
    parser.add_argument("--arbitrator")
    parser.add_argument("--final-backward", action="store_true")
    parser.add_argument("--destroy", action="store_true")
    args = parser.parse_args()
    if args.ranks < 2:
        parser.error(f"--ranks: expected at least 2, found {args.ranks}")
    if args.rank is not None:
        sys.path.insert(0, str(pathlib.Path(args.source) / "adapter" / "python"))
        rank_main(args.rank, args.ranks, args.init, args.legacy_hook, args.final_backward,
                  args.destroy, args.arbitrator)
        return
    import torch.distributed as dist
    if not dist.is_available() or not dist.is_gloo_available():
        print("SKIP: this torch has no gloo backend")
        sys.exit(SKIP)
    script = str(pathlib.Path(__file__).resolve())
    counts = {"ok": 0, "hang": 0, "abort": 0, "replay": 0}
    concurrent = CONCURRENT_JOBS if args.ranks == 2 else 1
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as work:
        running = []  # (index, ranks, arbitrator, deadline)
        next_index = 0
        try:
            while running or next_index < args.jobs:
                while len(running) < concurrent and next_index < args.jobs:
                    arbitrator = (Arbitrator(args.serve, args.ranks,
                                             pathlib.Path(work) / f"log{next_index}")
                                  if args.serve else None)
                    running.append((next_index, start_job(script, args.source, work, next_index,
                                                          args.legacy_hook, args.ranks,
                                                          arbitrator),
                                    arbitrator, time.monotonic() + JOB_TIMEOUT_S))
                    next_index += 1
                index, ranks, arbitrator, deadline = running.pop(0)
                outcome, output = finish_job(ranks, deadline)
                if arbitrator:
                    stopped = arbitrator.stop()
                    problem = stopped or (arbitrator.replay() if outcome == "ok" else None)
                    if outcome == "ok" and problem:
                        outcome, output = "replay", problem
                    elif outcome != "ok":
                        output += f"\nserve said: {arbitrator.said()}"
                counts[outcome] += 1
                if outcome != "ok":
                    print(f"job {index}: {outcome}\n{output[-2000:]}", flush=True)
        finally:
            for _, ranks, arbitrator, _ in running:
                finish_job(ranks, time.monotonic())
                if arbitrator:
                    arbitrator.stop()
    elapsed = time.monotonic() - started
    print(f"{args.jobs} jobs of {args.ranks} ranks "
          f"({'legacy' if args.legacy_hook else 'current'} hook"
          f"{', each with dynamix serve and replay' if args.serve else ''}): "
          f"{counts['ok']} clean, {counts['hang']} hung, {counts['abort']} aborted"
          f"{', %d with serve or replay failing' % counts['replay'] if args.serve else ''}, "
          f"{elapsed:.0f} s", flush=True)
    if not args.legacy_hook and counts["ok"] != args.jobs:
        print("FAIL: a job using the comm hook did not exit cleanly")
        sys.exit(1)


if __name__ == "__main__":
    main()
