"""The worker package against a fake arbitrator (a Python gRPC server in this process that answers
each window with a fixed pattern, one window later as `dynamix serve` does), with 2-rank gloo jobs
whose ranks are real processes:

- resume: a job checkpointed mid-window, stopped later and resumed from the checkpoint runs the
  same batches, LRs, sampler positions and losses as one that never stopped;
- a decision is taken one window after its report and applied at apply_at_iteration on every
  rank; an out-of-bounds decision is refused whole and logged; reports carry lr_factor and
  max_batches; the token is sent on every call;
- a port that accepts TCP and never answers costs the loop little (measured against no
  arbitrator, alternating);
- an arbitrator killed and restarted on the same port is asked again within about a second;
- a worker's notice (controller.notice(), from a SIGTERM handler or a call) is in its reports
  from that window on, counting down, and absent before;
- the times a report carries come from the controller's device timer: a scripted one injected
  (timer=) gives compute, wait, communication and samples/s to the microsecond whatever the
  host clock says, its marks read once per window; a CPU job's default timer is the host's.

usage: worker_test.py PROTO_PYTHON_DIR SOURCE_DIR"""
import argparse
import contextlib
import json
import os
import pathlib
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent import futures

SKIP = 77
WORKERS, DATASET, FEATURES, CLASSES = 2, 500, 12, 4
JOB_TIMEOUT_S = 40
TOKEN = "s3cret-token"
# Answers by window index: (batches, LR factor). Each stays within the guard rails of the one in
# force before it (global batch within 2x, LR factor within 2x).
PATTERN = [([6, 10], 1.0), ([10, 14], 1.5), ([4, 12], 1.0), ([12, 12], 1.5), ([9, 7], 1.0)]


def fail(message):
    print(f"FAIL: {message}", flush=True)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


# ---------------------------------------------------------------- the fake arbitrator


class FakeArbitrator:
    """Answers a report for iteration I of a k-iteration window with apply_at_iteration I + k;
    `answer(window_index)` gives (batches, lr_factor). Records every report it gets."""

    def __init__(self, pb2, pb2_grpc, answer, token=None, port=0, tls=None):
        import grpc
        self.pb2, self.answer, self.token = pb2, answer, token
        self.reports = []  # (wall time, report, authorization metadata)
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        fake = self

        class Servicer(pb2_grpc.ArbitratorServicer):
            def Decide(self, report, context):
                metadata = dict(context.invocation_metadata())
                fake.reports.append((time.time(), report, metadata.get("authorization")))
                if fake.token and metadata.get("authorization") != f"Bearer {fake.token}":
                    context.abort(grpc.StatusCode.UNAUTHENTICATED, "bad or missing token")
                batches, factor = fake.answer(report.window_index)
                return pb2.Decision(
                    protocol_version=pb2.PROTOCOL_VERSION_1, job_id=report.job_id,
                    window_index=report.window_index, batches=batches,
                    global_batch=sum(batches), lr_factor=factor,
                    apply_at_iteration=report.iteration + report.metrics.iterations)

        pb2_grpc.add_ArbitratorServicer_to_server(Servicer(), self.server)
        if tls:  # (certificate chain, private key), PEM bytes
            self.port = self.server.add_secure_port(
                f"127.0.0.1:{port}", grpc.ssl_server_credentials([(tls[1], tls[0])]))
        else:
            self.port = self.server.add_insecure_port(f"127.0.0.1:{port}")
        check(self.port != 0, f"the fake arbitrator could not bind port {port}")
        self.server.start()
        self.address = f"127.0.0.1:{self.port}"

    def stop(self):
        self.server.stop(None).wait()


def pattern_answer(window_index):
    return PATTERN[window_index % len(PATTERN)]


# ---------------------------------------------------------------- the ranks


class ScriptedTimer:
    """A device timer on a virtual clock (the interface of dynamix_worker.timing): each point
    lands a scripted time after the one before it, whatever the host clock does. Like CUDA
    events, a mark can be read only once a later (or the same) mark was synchronized."""
    deferred = True

    def __init__(self, data_s, compute_s, after_compute_s, tail_s):
        self.after = {"data": ("start", data_s), "bucket": ("data", compute_s),
                      "comm": ("bucket", after_compute_s), "end": ("comm", tail_s)}
        self.last = {"end": 0.0}
        self.marks = 0
        self.synchronized = -1  # the index of the last mark synchronized
        self.synchronizations = 0

    def mark(self, point):
        if point == "start":
            value = self.last["end"]
        else:
            before, step = self.after[point]
            value = self.last[before] + step
        self.last[point] = value
        self.marks += 1
        return (self.marks - 1, value)

    def seconds(self, start, end):
        if max(start[0], end[0]) > self.synchronized:
            raise RuntimeError(f"marks {start}, {end} read before a synchronize")
        return end[1] - start[1]

    def synchronize(self, mark):
        self.synchronizations += 1
        self.synchronized = max(self.synchronized, mark[0])


def rank_main(rank, config):
    import faulthandler
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # run_job asks for stacks on a hang
    import torch
    import torch.distributed as dist
    from dynamix_worker import AdaptiveBatchController, GlobalCursorSampler
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{config['init']}", rank=rank,
                            world_size=WORKERS)
    generator = torch.Generator().manual_seed(5)
    x = torch.randn(DATASET, FEATURES, generator=generator)
    y = (x @ torch.randn(FEATURES, CLASSES, generator=generator)).argmax(1)
    results = []
    for phase in config["phases"]:
        torch.manual_seed(11)
        model = torch.nn.parallel.DistributedDataParallel(torch.nn.Sequential(
            torch.nn.Linear(FEATURES, 32), torch.nn.Tanh(), torch.nn.Linear(32, CLASSES)))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        sampler = GlobalCursorSampler(DATASET, [8] * WORKERS, rank, seed=3)
        timer = ScriptedTimer(*phase["scripted_timer"][rank]) if "scripted_timer" in phase \
            else None
        controller = AdaptiveBatchController(
            model, optimizer, sampler, phase.get("arbitrator"), phase["interval"], job_id="wt",
            total_iterations=phase["iterations"], token=phase.get("token"),
            max_batch=phase.get("max_batch", [None] * WORKERS)[rank], deadline_s=1.0,
            root_certificates=phase.get("root_certificates"), lookahead=phase.get("lookahead", 0),
            timer=timer, wait_for_answer=phase.get("wait_for_answer", False))
        if phase.get("loader_workers"):
            # The dataset yields sample ids, so the test sees exactly which samples arrived.
            loader = torch.utils.data.DataLoader(
                torch.utils.data.TensorDataset(torch.arange(DATASET)), batch_sampler=sampler,
                num_workers=phase["loader_workers"], prefetch_factor=2)
            loader_batches = controller.loader_batches(loader)
        checkpoint = pathlib.Path(config["out"]) / f"checkpoint{rank}.pt"
        if phase.get("resume"):
            saved = torch.load(checkpoint)
            model.load_state_dict(saved["model"])
            optimizer.load_state_dict(saved["optimizer"])
            controller.load_state_dict(saved["controller"])
        steps, gradient_errors, started = [], [], time.perf_counter()
        while controller.iteration < phase["stop_at"]:
            iteration = controller.iteration
            notice_at = phase.get("notices", {}).get(str(rank))
            if notice_at and notice_at[0] == iteration:
                give_notice(controller, *notice_at[1:])
            if phase.get("loader_workers"):
                indices = next(loader_batches)[0].tolist()
            else:
                indices = controller.next_indices()
                controller.data_loaded()
            batches = controller.batches
            time.sleep(phase.get("sleep_s", 0.0))
            # Gradient accumulation: micro-batches under no_sync, the hook on the last only.
            chunks = torch.tensor_split(torch.tensor(indices), phase.get("micro_steps", 1))
            losses = []
            for step, chunk in enumerate(chunks):
                with model.no_sync() if step + 1 < len(chunks) else contextlib.nullcontext():
                    losses.append(torch.nn.functional.cross_entropy(model(x[chunk]), y[chunk]))
                    (losses[-1] * len(chunk) / len(indices)).backward()
            loss = losses[0]  # the whole batch's, without micro-steps
            if phase.get("micro_steps"):
                reference = union_gradient(model.module, x, y, sampler.last_global_indices())
                gradient_errors.append(max(float((p.grad - r).abs().max() / r.abs().max())
                                           for p, r in zip(model.parameters(), reference)))
            optimizer.step()
            optimizer.zero_grad()
            controller.end_iteration(float(loss), 0.5)
            steps.append({"iteration": iteration, "batches": batches, "indices": indices,
                          "read": len(indices), "lr": optimizer.param_groups[0]["lr"],
                          "position": [sampler.epoch, sampler.cursor], "loss": float(loss),
                          "time": time.time()})
            if controller.iteration == phase.get("checkpoint_at"):
                torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                            "controller": controller.state_dict()}, checkpoint)
        results.append({"steps": steps, "loop_s": time.perf_counter() - started,
                        "gradient_errors": gradient_errors,
                        "applied": [[s.applied_at, s.iteration, s.batches, s.lr_factor]
                                    for s in controller.applied],
                        "refusals": controller.refusals,
                        "timer": type(controller.timer).__name__,
                        "synchronizations": getattr(timer, "synchronizations", None)})
        controller.close()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        loader = loader_batches = None  # ends the DataLoader's workers
    (pathlib.Path(config["out"]) / f"rank{rank}.json").write_text(json.dumps(results))
    dist.destroy_process_group()


def give_notice(controller, seconds, by_signal):
    """A preemption notice of `seconds`, by SIGTERM to this process as a spot job gets it (its
    handler, left installed until the phase ends, passes it on), or by a direct call."""
    if by_signal:
        signal.signal(signal.SIGTERM, lambda *_: controller.notice(seconds))
        os.kill(os.getpid(), signal.SIGTERM)
    else:
        controller.notice(seconds)


def union_gradient(model, x, y, indices):
    """The gradient one process computes on the union batch."""
    import copy
    import torch
    single = copy.deepcopy(model)
    single.zero_grad()
    torch.nn.functional.cross_entropy(single(x[indices]), y[indices]).backward()
    return [p.grad.clone() for p in single.parameters()]


def run_job(work, name, phases):
    out = pathlib.Path(work) / name
    out.mkdir(exist_ok=True)
    (out / "init").unlink(missing_ok=True)
    config = json.dumps({"init": str(out / "init"), "out": str(out), "phases": phases})
    ranks = [subprocess.Popen([sys.executable, __file__, "--rank", str(rank), config],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for rank in range(WORKERS)]
    deadline = time.monotonic() + JOB_TIMEOUT_S
    outputs = []
    for process in ranks:
        try:
            outputs.append(process.communicate(timeout=max(1, deadline - time.monotonic()))[0])
        except subprocess.TimeoutExpired:
            for other in ranks:
                other.send_signal(signal.SIGUSR1)
            time.sleep(2)
            for other in ranks:
                other.kill()
            tails = [other.communicate()[0][-1500:] for other in ranks]
            fail(f"{name}: the ranks did not finish within {JOB_TIMEOUT_S} s: {tails}")
    for rank, process in enumerate(ranks):
        check(process.returncode == 0, f"{name}: rank {rank} exited {process.returncode}:\n"
                                       f"{outputs[rank][-3000:]}")
    return [json.loads((out / f"rank{r}.json").read_text()) for r in range(WORKERS)]


# ---------------------------------------------------------------- the checks


def check_resume(work, pb2, pb2_grpc):
    arbitrator = FakeArbitrator(pb2, pb2_grpc, pattern_answer)
    phase = {"arbitrator": arbitrator.address, "interval": 4, "iterations": 36, "stop_at": 36}
    whole = run_job(work, "whole", [phase])
    # Checkpoint mid-window at 13, run on to 19 (work lost, as in a killed job), resume at 13.
    run_job(work, "resumed", [dict(phase, stop_at=19, checkpoint_at=13)])
    resumed = run_job(work, "resumed", [dict(phase, resume=True)])
    arbitrator.stop()
    for rank in range(WORKERS):
        expected = [s for s in whole[rank][0]["steps"] if s["iteration"] >= 13]
        got = resumed[rank][0]["steps"]
        check([s["iteration"] for s in got] == list(range(13, 36)),
              f"rank {rank}: the resumed job ran iterations {[s['iteration'] for s in got]}")
        for a, b in zip(expected, got):
            check(b["read"] == b["batches"][rank], f"rank {rank} read {b['read']} samples, "
                                                   f"batches {b['batches']}")
            for key in ("batches", "indices", "lr", "position", "loss"):
                check(a[key] == b[key], f"rank {rank} iteration {a['iteration']}: {key} "
                                        f"{b[key]} after resuming, {a[key]} without a stop")
    first = whole[0][0]
    changes = {tuple(s["batches"]) for s in first["steps"]}
    check(len(changes) >= 3, f"the pattern's batches were not applied: {changes}")
    check(first["refusals"] == [], f"refusals in a clean run: {first['refusals']}")
    for applied_at, planned, _, _ in first["applied"]:
        check(applied_at == planned and planned % 4 == 0, f"applied at {applied_at}, "
                                                          f"planned {planned}")
    # One window of lag: the answer to window w (reported at 4(w+1)) is in force from 4(w+2).
    for step in first["steps"]:
        window = step["iteration"] // 4 - 2
        batches, factor = PATTERN[window % len(PATTERN)] if window >= 0 else ([8, 8], 1.0)
        check(step["batches"] == batches and abs(step["lr"] - 0.05 * factor) < 1e-12,
              f"iteration {step['iteration']}: batches {step['batches']} lr {step['lr']}, "
              f"expected {batches} lr {0.05 * factor}")
    print(f"resume: iterations 13-35 identical after a stop at 19 and a resume from 13 "
          f"(batches, LR, sampler position, loss; {len(changes)} batch vectors)")


def check_data_loader(work, pb2, pb2_grpc):
    """The same job through a DataLoader with 2 workers (4 batches drawn ahead) and without one:
    the same samples, batches and losses at every iteration, switching at the decided ones."""
    arbitrator = FakeArbitrator(pb2, pb2_grpc, pattern_answer)
    # Waiting for each answer: the runs are compared iteration by iteration, so a late answer in
    # one of them (a window of 2 ms on a loaded machine) must not shift its switches.
    phase = {"arbitrator": arbitrator.address, "interval": 6, "iterations": 42, "stop_at": 42,
             "lookahead": 4, "wait_for_answer": True}
    results = run_job(work, "loader", [phase, dict(phase, loader_workers=2),
                                       dict(phase, micro_steps=3)])
    arbitrator.stop()
    for rank in range(WORKERS):
        accumulated = results[rank][2]
        check(max(accumulated["gradient_errors"]) < 1e-5 and len(accumulated["applied"]) == 5,
              f"rank {rank}, 3 micro-steps: gradient errors against the union batch "
              f"{max(accumulated['gradient_errors'])}, applied {accumulated['applied']}")
    for rank in range(WORKERS):
        direct, loaded = results[rank][:2]
        check(not loaded["refusals"], f"refusals: {loaded['refusals']}")
        for a, b in zip(direct["steps"], loaded["steps"]):
            check(b["read"] == b["batches"][rank], f"rank {rank} iteration {b['iteration']}: "
                  f"the DataLoader gave {b['read']} samples, batches in force {b['batches']}")
            for key in ("batches", "indices", "lr", "loss"):
                check(a[key] == b[key], f"rank {rank} iteration {a['iteration']}: {key} "
                                        f"{b[key]} through the DataLoader, {a[key]} without")
    switches = [a[0] for a in results[0][1]["applied"]]
    check(switches == [12, 18, 24, 30, 36], f"switches at {switches}")
    print(f"data loader: 2 workers, 4 batches ahead: same samples, batches and losses as "
          f"without, switching at iterations {switches}; 3 micro-steps: the union batch's "
          f"gradient within {max(results[0][2]['gradient_errors']):.1e}")


def check_guard_rails_and_token(work, pb2, pb2_grpc):
    answers = {1: ([40, 40], 1.0),     # global batch 80 > 2 x 16
               2: ([8, 8], 2.5),       # LR factor 2.5 > 2 x 1
               3: ([1, 0], 1.0),       # a batch below 1
               4: ([6, 21], 1.0),      # rank 1 declared max_batch 20
               5: ([10, 10], 1.25)}    # fine
    arbitrator = FakeArbitrator(pb2, pb2_grpc, lambda w: answers.get(w, ([8, 8], 1.0)),
                                token=TOKEN)
    tls = self_signed_certificate(work)
    secure = FakeArbitrator(pb2, pb2_grpc, pattern_answer, token=TOKEN,
                            tls=(tls[0].read_bytes(), tls[1].read_bytes()))
    # Two iterations past window 7's report (sent at 16), so that close() cannot cancel it on a
    # loaded machine before it reaches the arbitrator.
    # Windows long enough for each answer to come back within one, however loaded the machine: a
    # short window shows "no answer" (a fifth refusal) instead of the refusal itself.
    phase = {"arbitrator": arbitrator.address, "interval": 2, "iterations": 18, "stop_at": 18,
             "token": TOKEN, "max_batch": [None, 20], "sleep_s": 0.1}
    results = run_job(work, "guards", [
        phase, dict(phase, token="wrong", stop_at=8),
        dict(phase, arbitrator=f"localhost:{secure.port}", root_certificates=str(tls[0]),
             stop_at=8)])  # windows long enough for the first TLS handshake too
    arbitrator.stop()
    secure.stop()
    guarded, wrong, over_tls = results[0]
    # Windows 0-2's reports (iterations 2, 4, 6) arrive long before the job ends; window 3's,
    # sent at the last iteration, may be cancelled by close() before it reaches the server.
    windows = sorted(r.window_index for _, r, _ in secure.reports)
    check(over_tls["applied"] and windows[:3] == [0, 1, 2] and
          all(auth == f"Bearer {TOKEN}" for *_, auth in secure.reports),
          f"over TLS: applied {over_tls['applied']}, refusals {over_tls['refusals']}, "
          f"reports for windows {windows}")
    reasons = "\n".join(guarded["refusals"])
    for expected in ("global batch 80 outside [16/2, 16*2]", "lr_factor 2.5 outside [1/2, 1*2]",
                     "batches [1, 0], expected 2 sizes >= 1", "above its max_batch 20"):
        check(expected in reasons, f"no refusal naming {expected!r}: {reasons}")
    check(len(guarded["refusals"]) == 4, f"refusals: {reasons}")
    check(results[1][0]["applied"] == guarded["applied"], "the ranks applied other decisions")
    # Window 6's answer (the default) applies at 16; window 7's is due at 18, where the job ends.
    check([a[2:] for a in guarded["applied"]] == [[[8, 8], 1.0], [[10, 10], 1.25],
                                                  [[8, 8], 1.0]],
          f"applied {guarded['applied']}")
    check(any("UNAUTHENTICATED" in r for r in wrong["refusals"]),
          f"a wrong token was not refused: {wrong['refusals']}")
    sent = [(r.window_index, r.lr_factor, list(r.max_batches), auth)
            for _, r, auth in arbitrator.reports]
    check(all(auth in (f"Bearer {TOKEN}", "Bearer wrong") for *_, auth in sent),
          f"a call without the token: {sent}")
    # Rank 0 declared none: its cap is 8x its starting batch of 8.
    check(all(m == [64, 20] for _, _, m, _ in sent), f"max_batches: {sent}")
    factors = {w: f for w, f, _, auth in sent if auth == f"Bearer {TOKEN}"}
    # Decision 5 (factor 1.25) is in force from iteration 14: window 6 (iterations 12-13)
    # still ran at 1, window 7 at 1.25.
    check(factors.get(6) == 1.0 and factors.get(7) == 1.25, f"reported lr_factor: {factors}")
    progress = [r.metrics.progress for _, r, auth in arbitrator.reports if auth.endswith(TOKEN)]
    check(progress[:2] == [2 / 18, 4 / 18], f"progress: {progress}")
    print(f"guard rails: {len(guarded['refusals'])} decisions refused whole; token checked, "
          "over TLS too")


def self_signed_certificate(work):
    """(certificate, key) files for localhost, made by openssl."""
    certificate, key = pathlib.Path(work) / "cert.pem", pathlib.Path(work) / "key.pem"
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                           "-keyout", str(key), "-out", str(certificate), "-days", "1",
                           "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
                          capture_output=True, text=True)
    check(made.returncode == 0, f"openssl could not make a certificate: {made.stderr}")
    return certificate, key


def check_dead_arbitrator(work):
    """Alternating phases in one job: no arbitrator, then a port that accepts and never answers."""
    dead = socket.create_server(("127.0.0.1", 0), backlog=16)  # the kernel accepts; nobody reads
    address = f"127.0.0.1:{dead.getsockname()[1]}"
    phase = {"interval": 5, "iterations": 60, "stop_at": 60, "sleep_s": 0.01}
    phases = [dict(phase, arbitrator=address if i % 2 else None) for i in range(6)]
    results = run_job(work, "dead", phases)
    dead.close()
    first = results[0]
    none_s = [p["loop_s"] for p in first[0::2]]
    dead_s = [p["loop_s"] for p in first[1::2]]
    windows = phase["stop_at"] // phase["interval"]
    extra_ms = (statistics.median(dead_s) - statistics.median(none_s)) / windows * 1000
    print(f"dead arbitrator: loop of {phase['stop_at']} iterations, no arbitrator "
          f"{', '.join(f'{s:.3f}' for s in none_s)} s, dead port "
          f"{', '.join(f'{s:.3f}' for s in dead_s)} s; {extra_ms:+.1f} ms per window (median)")
    check(all(p["refusals"] for p in first[1::2]), "no refusal logged against a dead port")
    check(extra_ms < 50, f"a dead arbitrator costs {extra_ms:.1f} ms per window")


def serve_main(port, reports_file):
    """A fake arbitrator process (the reconnect check kills it): one line per report."""
    from dynamix_worker import _protocol
    pb2, pb2_grpc = _protocol.load()

    def answer(window_index):
        with open(reports_file, "a") as reports:
            reports.write(f"{time.time()} {window_index}\n")
        return pattern_answer(window_index)

    arbitrator = FakeArbitrator(pb2, pb2_grpc, answer, port=port)
    print(f"listening on {arbitrator.port}", flush=True)
    time.sleep(JOB_TIMEOUT_S)


class ArbitratorProcess:
    def __init__(self, work, port, name):
        self.reports = pathlib.Path(work) / name
        self.process = subprocess.Popen([sys.executable, __file__, "--serve", str(port),
                                         str(self.reports)], stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        check(line.startswith("listening on "), f"the fake arbitrator said {line!r}")
        self.port = int(line.split()[-1])
        self.started = time.time()

    def times(self):
        if not self.reports.exists():
            return []
        return [float(line.split()[0]) for line in self.reports.read_text().splitlines()]

    def kill(self):
        self.process.kill()
        self.process.wait()


def check_reconnect(work):
    """The arbitrator is killed after its 4th report and restarted on the same port 1 s later."""
    first = ArbitratorProcess(work, 0, "first-reports")
    state = {}

    def restart():
        deadline = time.monotonic() + JOB_TIMEOUT_S
        while len(first.times()) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        first.kill()
        time.sleep(1.0)
        state["second"] = ArbitratorProcess(work, first.port, "second-reports")

    restarter = threading.Thread(target=restart)
    restarter.start()
    phase = {"arbitrator": f"127.0.0.1:{first.port}", "interval": 2, "iterations": 150,
             "stop_at": 150, "sleep_s": 0.03}
    try:
        results = run_job(work, "reconnect", [phase])
    finally:
        restarter.join(timeout=30)
        first.kill()
        if "second" in state:
            state["second"].kill()
    check("second" in state, "the arbitrator was not restarted")
    second = state["second"]
    rank0 = results[0][0]
    steps = rank0["steps"]
    check(second.times(), f"no report reached the restarted arbitrator ({second.started:.2f}, "
                          f"the job ran to {steps[-1]['time']:.2f}): {rank0['refusals'][-3:]}")
    delay = min(second.times()) - second.started
    applied_at = {a[0] for a in rank0["applied"]}
    applied_after = [s["time"] for s in steps
                     if s["time"] > second.started and s["iteration"] in applied_at]
    check(applied_after, f"no decision applied after the restart: {rank0['refusals'][-3:]}")
    print(f"reconnect: first report {delay:.2f} s after the restart, first decision applied "
          f"{applied_after[0] - second.started:.2f} s after it; windows refused while down: "
          f"{len(rank0['refusals'])}")
    check(delay < 1.0, f"the first report reached the restarted arbitrator after {delay:.2f} s")


def check_notice(work, pb2, pb2_grpc):
    """notice(): rank 1 gets a 30 s notice by SIGTERM in window 1, rank 0 one of 0 s by a call
    in window 2. A worker's reports carry leaving_in_s from the window it got its notice in, not
    before, counting down and never below 0."""
    arbitrator = FakeArbitrator(pb2, pb2_grpc, lambda w: ([8, 8], 1.0))
    phase = {"arbitrator": arbitrator.address, "interval": 4, "iterations": 16, "stop_at": 16,
             "notices": {"1": [5, 30.0, True], "0": [9, 0.0, False]}}
    run_job(work, "notice", [phase])
    arbitrator.stop()
    # Window 3's report, sent at the last iteration, may be cancelled by close().
    reports = {r.window_index: r.metrics.workers for _, r, _ in arbitrator.reports}
    check(sorted(reports)[:3] == [0, 1, 2], f"reports for windows {sorted(reports)}")

    def leaving(window, rank):
        worker = reports[window][rank]
        return worker.leaving_in_s if worker.HasField("leaving_in_s") else None

    got = {w: [leaving(w, rank) for rank in range(WORKERS)] for w in sorted(reports)}
    check(got[0] == [None, None], f"window 0, before any notice: leaving_in_s {got[0]}")
    check(got[1][0] is None and 0 < got[1][1] < 30, f"window 1: leaving_in_s {got[1]}")
    check(got[2][0] == 0.0 and 0 < got[2][1] < got[1][1], f"window 2: leaving_in_s {got[2]}")
    print(f"notice: leaving_in_s by window {got} (rank 1: 30 s by SIGTERM in window 1; rank 0: "
          "0 s in window 2)")


def check_device_timer(work, pb2, pb2_grpc):
    """A scripted device timer injected into the controller (rank 0: compute 30 ms, 30 ms after
    it; rank 1: compute 50 ms, 10 ms after it) while the host sleeps 20 ms in each iteration's
    compute: the reports carry the timer's times, wait and communication split as on a device,
    and the marks are read once per window. Then the default timer of a CPU gloo job."""
    arbitrator = FakeArbitrator(pb2, pb2_grpc, lambda w: ([8, 8], 1.0))
    script = [[0.005, 0.030, 0.030, 0.005], [0.005, 0.050, 0.010, 0.005]]
    phase = {"arbitrator": arbitrator.address, "interval": 4, "iterations": 12, "stop_at": 12,
             "sleep_s": 0.02, "scripted_timer": script}
    results = run_job(work, "timer", [phase, {"interval": 4, "iterations": 4, "stop_at": 4}])
    arbitrator.stop()
    expected = [{"compute_s": 0.030, "wait_s": 0.020, "comm_s": 0.010},
                {"compute_s": 0.050, "wait_s": 0.0, "comm_s": 0.010}]
    reports = [r for _, r, _ in arbitrator.reports]
    check([r.window_index for r in reports] == [0, 1, 2], f"reports: {len(reports)}")
    for report in reports:
        check(abs(report.metrics.iteration_s - 0.070) < 1e-9,
              f"window {report.window_index}: iteration_s {report.metrics.iteration_s}")
        for rank, worker in enumerate(report.metrics.workers):
            for name, value in expected[rank].items():
                check(abs(getattr(worker, name) - value) < 1e-9,
                      f"window {report.window_index} worker {rank}: {name} "
                      f"{getattr(worker, name)}, the timer gave {value}")
            check(worker.batch_size == 8 and
                  abs(worker.samples_per_s - 8 / expected[rank]["compute_s"]) < 1e-6,
                  f"worker {rank}: samples_per_s {worker.samples_per_s}")
            check(abs(worker.cpu_time_ratio - 0.005 / 0.070) < 1e-9,
                  f"worker {rank}: cpu_time_ratio {worker.cpu_time_ratio}")
    for rank in range(WORKERS):
        scripted, default = results[rank]
        check(scripted["timer"] == "ScriptedTimer" and scripted["synchronizations"] == 3,
              f"rank {rank}: timer {scripted['timer']}, {scripted['synchronizations']} "
              "synchronizations in 3 windows")
        check(default["timer"] == "HostTimer", f"rank {rank}: a CPU job's timer is "
                                               f"{default['timer']}")
    worker = reports[-1].metrics.workers[0]
    print(f"device timer: reports carry the injected timer's compute {worker.compute_s * 1e3:.1f}"
          f" ms, wait {worker.wait_s * 1e3:.1f} ms, comm {worker.comm_s * 1e3:.1f} ms, "
          f"{worker.samples_per_s:.1f} samples/s (host sleeps 20 ms); one synchronize per "
          "window; a CPU job's default is the host clock")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int)
    parser.add_argument("--serve", type=int)
    parser.add_argument("args", nargs="+")
    args = parser.parse_args()
    if args.rank is not None:
        rank_main(args.rank, json.loads(args.args[0]))
        return
    if args.serve is not None:
        serve_main(args.serve, args.args[0])
        return
    proto_dir, source = args.args
    os.environ["DYNAMIX_PROTO_PYTHON"] = proto_dir
    os.environ["PYTHONPATH"] = str(pathlib.Path(source) / "adapter" / "python")
    sys.path.insert(0, os.environ["PYTHONPATH"])
    import torch.distributed as dist
    if not dist.is_available() or not dist.is_gloo_available():
        print("SKIP: this torch has no gloo backend")
        sys.exit(SKIP)
    from dynamix_worker import _protocol
    pb2, pb2_grpc = _protocol.load()
    with tempfile.TemporaryDirectory() as work:
        started = time.monotonic()
        check_device_timer(work, pb2, pb2_grpc)
        check_notice(work, pb2, pb2_grpc)
        check_resume(work, pb2, pb2_grpc)
        check_guard_rails_and_token(work, pb2, pb2_grpc)
        check_data_loader(work, pb2, pb2_grpc)
        check_dead_arbitrator(work)
        check_reconnect(work)
    print(f"worker: all checks passed in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
