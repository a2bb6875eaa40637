"""End to end: a 4-rank gloo DDP job with unequal, changing batches against a live `dynamix serve`
on loopback; replay of its log; a killed arbitrator; refused reports and policies.

usage: adapter_test.py DYNAMIX_BINARY PROTO_PYTHON_DIR SOURCE_DIR
Exit 77 (skip) only where gloo cannot start."""
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
WORKERS, ITERATIONS, INTERVAL, DATASET = 4, 40, 5, 1000
KILL_AT = 17
JOB_TIMEOUT_S = 120
FEATURES, CLASSES = 12, 4


SERVERS = []  # every serve started, killed when a check fails


def fail(message):
    print(f"FAIL: {message}", flush=True)
    for process in SERVERS:
        if process.poll() is None:
            process.kill()
            process.wait()
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def dataset():
    import torch
    generator = torch.Generator().manual_seed(5)
    x = torch.randn(DATASET, FEATURES, generator=generator)
    y = (x @ torch.randn(FEATURES, CLASSES, generator=generator)).argmax(1)  # learnable
    return x, y


def make_model():
    import torch
    torch.manual_seed(11)
    return torch.nn.Sequential(torch.nn.Linear(FEATURES, 32), torch.nn.Tanh(),
                               torch.nn.Linear(32, CLASSES))


def union_gradient(model, x, y, indices):
    """The gradient one process computes on the union batch."""
    import copy
    import torch
    single = copy.deepcopy(model)
    single.zero_grad()
    torch.nn.functional.cross_entropy(single(x[indices]), y[indices]).backward()
    return [p.grad.clone() for p in single.parameters()]


def worker(rank, init_file, address, out_dir, kill_pid):
    import faulthandler
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # run_job asks for stacks on a hang
    import torch
    import torch.distributed as dist
    from dynamix_worker import AdaptiveBatchController, GlobalCursorSampler
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=WORKERS)
    x, y = dataset()
    model = torch.nn.parallel.DistributedDataParallel(make_model())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    sampler = GlobalCursorSampler(DATASET, [64] * WORKERS, rank, seed=3)
    controller = AdaptiveBatchController(model, optimizer, sampler, address, INTERVAL,
                                         job_id="ci", lr_rule="linear", deadline_s=2.0,
                                         total_iterations=ITERATIONS)
    indices_read, gradient_errors = [], []
    for iteration in range(ITERATIONS):
        indices = controller.next_indices()
        controller.data_loaded()
        indices_read.append(indices)
        loss = torch.nn.functional.cross_entropy(model(x[indices]), y[indices])
        time.sleep(len(indices) * 2e-5 * (1 + rank))  # a slower CPU per rank
        loss.backward()
        if iteration % 7 == 3:
            reference = union_gradient(model.module, x, y, sampler.last_global_indices())
            gradient_errors.append(max(float((p.grad - r).abs().max() / (r.abs().max() + 1e-12))
                                       for p, r in zip(model.parameters(), reference)))
        optimizer.step()
        optimizer.zero_grad()
        controller.end_iteration(float(loss))
        if kill_pid and rank == 0 and iteration + 1 == KILL_AT:
            os.kill(kill_pid, signal.SIGKILL)
    result = {"applied": [[s.applied_at, s.iteration, s.batches, s.lr_factor]
                          for s in controller.applied],
              "indices": indices_read, "gradient_errors": gradient_errors,
              "refusals": controller.refusals, "final_batches": sampler.batches,
              "lr": optimizer.param_groups[0]["lr"], "iterations": controller.iteration}
    (pathlib.Path(out_dir) / f"rank{rank}.json").write_text(json.dumps(result))
    controller.close()
    dist.destroy_process_group()
    # The rank returns and tears DDP and gloo down as any job does, which cannot hang while
    # Python stays off gloo's threads (a `.then` hook on them hangs about 1 run in 4).


def run_job(work, address, kill_pid=0, name="job"):
    import torch.multiprocessing as mp
    out = pathlib.Path(work) / name
    out.mkdir()
    # fork: the ranks inherit the imported torch instead of importing it four times again.
    context = mp.start_processes(worker, args=(str(out / "init"), address, str(out), kill_pid),
                                 nprocs=WORKERS, join=False, start_method="fork")
    deadline = time.monotonic() + JOB_TIMEOUT_S
    while not context.join(timeout=1):
        if time.monotonic() > deadline:
            for process in context.processes:
                if process.is_alive():
                    os.kill(process.pid, signal.SIGUSR1)  # each stuck rank prints its stacks
            time.sleep(2)
            for process in context.processes:
                process.kill()
            fail(f"{name}: the ranks did not finish within {JOB_TIMEOUT_S} s")
    return [json.loads((out / f"rank{r}.json").read_text()) for r in range(WORKERS)]


def probe(rank, init_file):
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=2)
    dist.barrier()
    dist.destroy_process_group()


def gloo_starts(work):
    """None if a 2-rank gloo group starts here; the reason if not."""
    import torch.distributed as dist
    import torch.multiprocessing as mp
    if not dist.is_available() or not dist.is_gloo_available():
        return "this torch has no gloo backend"
    try:
        mp.start_processes(probe, args=(str(pathlib.Path(work) / "probe"),), nprocs=2,
                           start_method="fork")
    except Exception as error:  # noqa: BLE001 - any failure to start is the reason to skip
        return f"{type(error).__name__}: {error}"
    return None


class Server:
    def __init__(self, binary, policy, log):
        self.process = subprocess.Popen(
            [binary, "serve", "--policy", str(policy), "--workers", str(WORKERS), "--log",
             str(log), "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        SERVERS.append(self.process)
        line = self.process.stdout.readline()
        found = re.search(r"listening on (127\.0\.0\.1:\d+)", line)
        check(found, f"dynamix serve did not say where it listens: {line!r} "
                     f"{self.process.stderr.read() if not found else ''}")
        self.address = found.group(1)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(timeout=30)
        return self.process.stderr.read()


def check_job(results, kill=False):
    first = results[0]
    for rank, result in enumerate(results):
        check(result["iterations"] == ITERATIONS, f"rank {rank} ran {result['iterations']}")
        check(result["applied"] == first["applied"],
              f"rank {rank} applied {result['applied']}, rank 0 {first['applied']}")
        check(result["final_batches"] == first["final_batches"], "ranks end on other batches")
        check(max(result["gradient_errors"]) < 1e-5,
              f"weighted gradient differs from the union batch's: {result['gradient_errors']}")
    for applied_at, planned, batches, _ in first["applied"]:
        check(applied_at == planned, f"a decision for iteration {planned} applied at {applied_at}")
    check(len({tuple(b) for _, _, b, _ in first["applied"]} | {(64,) * WORKERS}) > 1,
          "the batches never changed")
    sequence = [i for step in range(ITERATIONS) for r in range(WORKERS)
                for i in results[r]["indices"][step]]
    epochs = len(sequence) // DATASET
    check(epochs >= 2, f"only {len(sequence)} samples read")
    for epoch in range(epochs):
        chunk = sorted(sequence[epoch * DATASET:(epoch + 1) * DATASET])
        check(chunk == list(range(DATASET)), f"epoch {epoch} did not read every sample once")
    for step in range(ITERATIONS):
        sizes = [len(results[r]["indices"][step]) for r in range(WORKERS)]
        in_force = [64] * WORKERS
        for applied_at, _, batches, _ in first["applied"]:
            if applied_at <= step:
                in_force = batches
        check(sizes == in_force, f"iteration {step}: ranks read {sizes}, batches {in_force}")
    if kill:
        # One window of lag: the last report answered before the kill is applied at the end of
        # the window after it.
        last = (KILL_AT // INTERVAL + 1) * INTERVAL
        decided = [a for a in first["applied"]]
        check(decided and all(a[0] <= last for a in decided),
              f"decisions after the kill: {decided}")
        check(first["final_batches"] == decided[-1][2], "the job left its last batches")
        check(any("window" in r for r in first["refusals"]), "no refusal logged after the kill")
    else:
        # Reports at 5, 10, ..., 40; each applies a window later; those due at 40 and 45 fall
        # at or after the job's end.
        check(len(first["applied"]) == ITERATIONS // INTERVAL - 2,
              f"{len(first['applied'])} decisions applied: {first['refusals']}")


def replay(binary, policy, log):
    result = subprocess.run([binary, "replay", "--policy", str(policy), "--log", str(log),
                             "--show-window", "1"], capture_output=True, text=True)
    check(result.returncode == 0, f"replay failed: {result.stdout}{result.stderr}")
    check("decisions match" in result.stdout, result.stdout)
    return result.stdout


def check_refusals(address, proto_dir):
    import grpc
    sys.path.insert(0, proto_dir)
    import dynamix_pb2 as pb2
    import dynamix_pb2_grpc as pb2_grpc
    stub = pb2_grpc.ArbitratorStub(grpc.insecure_channel(address))

    def report(workers=WORKERS):
        metrics = pb2.WindowMetrics(iterations=5, time_s=1, iteration_s=0.1, workers=[
            pb2.WorkerWindow(gpu_type="cpu", batch_size=64, compute_s=0.05, samples_per_s=1280)
            for _ in range(workers)])
        return pb2.WindowReport(protocol_version=pb2.PROTOCOL_VERSION_1, job_id="probe",
                                window_index=0, iteration=5, metrics=metrics,
                                lr_rule=pb2.LR_RULE_LINEAR, reference_batch=256)

    def refused(message, code, text):
        try:
            stub.Decide(message, timeout=10)
        except grpc.RpcError as error:
            check(error.code() == code and text in error.details(),
                  f"expected {code} with {text!r}, got {error.code()} {error.details()!r}")
            return
        fail(f"a malformed report was answered (expected {text!r})")

    refused(report(3), grpc.StatusCode.INVALID_ARGUMENT,
            "metrics.workers: expected 4 workers (dynamix serve --workers), found 3")
    nan = report()
    nan.metrics.workers[2].compute_s = float("nan")
    refused(nan, grpc.StatusCode.INVALID_ARGUMENT,
            "metrics.workers[2].compute_s: expected a number in [0, 1000000], found nan")
    negative = report()
    negative.metrics.workers[1].retransmit_rate = -0.5
    refused(negative, grpc.StatusCode.INVALID_ARGUMENT,
            "metrics.workers[1].retransmit_rate: expected a number in [0, 1], found -0.5")
    huge = report()
    huge.job_id = "x" * 100_000
    refused(huge, grpc.StatusCode.RESOURCE_EXHAUSTED, "larger than max")
    # serve decided for job 'ci': another job's report, and a window of it not after the last
    # decided, are refused (a stateful rule would otherwise mix the two jobs' windows).
    refused(report(), grpc.StatusCode.FAILED_PRECONDITION,
            "out of sequence: job_id: expected 'ci' (serve decides for one job")
    later = report()
    later.job_id, later.window_index = "ci", 1_000_000
    check(len(stub.Decide(later, timeout=10).batches) == WORKERS,
          "the arbitrator stopped serving after malformed reports")
    # Bytes that are not a WindowReport: gRPC refuses them before Decide; serve logs them.
    raw = grpc.insecure_channel(address).unary_unary("/dynamix.adapter.v1.Arbitrator/Decide")
    try:
        raw(b"\xff\xff\xff\xff", timeout=10)
        fail("a request that is no WindowReport was answered")
    except grpc.RpcError as error:
        check(error.code() == grpc.StatusCode.INTERNAL, f"malformed bytes: {error.code()}")
    refused(later, grpc.StatusCode.ALREADY_EXISTS,
            "out of sequence: window_index: expected a window after 1000000 (the last decided), "
            "found 1000000 again")


def check_other_schema(binary, policy, work):
    import torch
    files = {"schema.json": "", "actions.json": "", "version": "", "action_base": "",
             "bounds.json": "", "decision_interval": ""}
    module = torch.jit.load(str(policy), _extra_files=files)
    schema = files["schema.json"]
    schema = schema.decode() if isinstance(schema, bytes) else schema
    files["schema.json"] = schema.replace('"name": "', '"name": "other_', 1)
    other = pathlib.Path(work) / "other.pt"
    torch.jit.save(module, str(other), _extra_files=files)
    import hashlib
    trust = hashlib.sha256(other.read_bytes()).hexdigest()  # saved by Python: its own code
    result = subprocess.run([binary, "serve", "--policy", str(other), "--trust-policy-code", trust,
                             "--workers", "4", "--log",
                             str(pathlib.Path(work) / "other-log"), "--listen", "127.0.0.1:0"],
                            capture_output=True, text=True, timeout=60)
    check(result.returncode == 2 and "schema.json" in result.stderr and
          "other_" in result.stderr, f"a policy of another schema: {result}")
    check(not (pathlib.Path(work) / "other-log").exists(), "a refused serve wrote its log")


def check_replay_mismatch(binary, policy, log, work):
    """A tampered decision fails replay with exit 1, naming its window and what differs."""
    lines = (pathlib.Path(log) / "decisions.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    tampered = next(i for i, r in enumerate(records)
                    if "decision" in r and r["report"]["window_index"] in ("2", 2))
    records[tampered]["decision"]["batches"][0] += 1
    copy = pathlib.Path(work) / "tampered"
    copy.mkdir()
    (copy / "decisions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    result = subprocess.run([binary, "replay", "--policy", str(policy), "--log", str(copy)],
                            capture_output=True, text=True)
    check(result.returncode == 1 and "window 2 (iteration 15) of job 'ci' differs: batches: "
          "logged [" in result.stdout, f"replay of a tampered log: {result}")
    # A decision logged twice for one window: replay names it out of sequence.
    records = [json.loads(line) for line in lines]
    decided = [i for i, r in enumerate(records) if "decision" in r]
    records.insert(decided[2] + 1, records[decided[2]])
    (copy / "decisions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    result = subprocess.run([binary, "replay", "--policy", str(policy), "--log", str(copy)],
                            capture_output=True, text=True)
    window = records[decided[2]]["report"]["window_index"]
    check(result.returncode == 1 and f"window {window} of job 'ci' was decided, though out of "
          "sequence: window_index: expected a window after" in result.stdout,
          f"replay of a log with a duplicated decision: {result}")


def check_log_safety(binary, policy, work):
    """A --log folder dynamix did not write is refused before anything is written."""
    users = pathlib.Path(work) / "users-folder"
    users.mkdir()
    (users / "notes.txt").write_text("mine")
    result = subprocess.run([binary, "serve", "--policy", str(policy), "--workers", "4", "--log",
                             str(users), "--listen", "127.0.0.1:0"], capture_output=True,
                            text=True, timeout=60)
    check(result.returncode == 2 and "was not written by dynamix" in result.stderr,
          f"serve into a user's folder: {result}")
    check(sorted(p.name for p in users.iterdir()) == ["notes.txt"], "serve wrote into it")


def main():
    binary, proto_dir, source = sys.argv[1:4]
    os.environ["DYNAMIX_PROTO_PYTHON"] = proto_dir
    sys.path.insert(0, str(pathlib.Path(source) / "adapter" / "python"))
    try:
        import grpc  # noqa: F401
        import torch  # noqa: F401
    except ImportError as error:
        fail(f"{sys.executable} lacks {error.name} (Debian: python3-torch, python3-grpcio)")
    with tempfile.TemporaryDirectory() as work:
        reason = gloo_starts(work)
        if reason:
            print(f"SKIP: gloo cannot start here: {reason}")
            sys.exit(SKIP)
        trained = subprocess.run(
            [binary, "train", "--steps", "16", "--envs", "2", "--rollout-steps", "4",
             "--eval-every", "100", "--set", "training.budget_epochs=1", "--quiet", "--out",
             f"{work}/train"], capture_output=True, text=True)
        check(trained.returncode == 0, trained.stderr)
        policy = pathlib.Path(work) / "train" / "policy.pt"

        server = Server(binary, policy, f"{work}/log")
        results = run_job(work, server.address)
        check_job(results)

        killed = Server(binary, policy, f"{work}/killed-log")
        killed_results = run_job(work, killed.address, kill_pid=killed.process.pid,
                                 name="killed")
        killed.process.wait(timeout=30)
        check_job(killed_results, kill=True)
        print(replay(binary, policy, f"{work}/killed-log"))
        print("\n".join(killed_results[0]["refusals"][:1]))

        # A rule served without any policy.pt steers the same job, and replay agrees.
        rule = Server(binary, "goodput:100", f"{work}/rule-log")
        rule_results = run_job(work, rule.address, name="rule")
        rule.stop()
        for rank, result in enumerate(rule_results):
            check(result["iterations"] == ITERATIONS and
                  result["applied"] == rule_results[0]["applied"],
                  f"goodput:100: rank {rank} ran {result['iterations']} iterations, applied "
                  f"{result['applied']}")
        check(len(rule_results[0]["applied"]) >= 3,
              f"goodput:100 applied {len(rule_results[0]['applied'])} decisions")
        print(replay(binary, "goodput:100", f"{work}/rule-log"))

        # gRPC in this process only after the last fork: gRPC does not survive fork(2).
        check_refusals(server.address, proto_dir)
        messages = server.stop()
        check("report refused: metrics.workers" in messages, messages)
        check("request refused: its bytes are not a WindowReport protobuf" in messages, messages)
        logged = (pathlib.Path(work) / "log" / "refusals.jsonl").read_text()
        check("its bytes are not a WindowReport protobuf" in logged,
              f"the malformed request is not in refusals.jsonl: {logged[-2000:]}")
        print(replay(binary, policy, f"{work}/log"))
        check_replay_mismatch(binary, policy, f"{work}/log", work)
        check_other_schema(binary, policy, work)
        check_log_safety(binary, policy, work)
    print("adapter: all checks passed")


if __name__ == "__main__":
    main()
