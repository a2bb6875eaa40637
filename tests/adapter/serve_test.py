"""dynamix serve against hostile and careless clients, on loopback only: a half-open-stream
flood, a second server on the same port or log, addresses and credentials, pinned and
misbehaving policies, oversized reports, a torn log tail, preemption notices in and out of
range. Every server is stopped and reaped.

usage: serve_test.py DYNAMIX_BINARY PROTO_PYTHON_DIR"""
import os
import pathlib
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

WORKERS = 2
# ServerLimits::kMaxThreads in adapter/server/arbitrator_server.h: sync-server threads.
MAX_SERVER_THREADS = 16
SERVERS = []


def fail(message):
    print(f"FAIL: {message}", flush=True)
    for server in SERVERS:
        if server.poll() is None:
            server.kill()
            server.wait()
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def start(binary, policy, log, *extra, listen="127.0.0.1:0", workers=WORKERS):
    """A serve process and the address it printed; fails the test if it does not start."""
    process = subprocess.Popen(
        [binary, "serve", "--policy", str(policy), "--workers", str(workers), "--log", str(log),
         "--listen", listen, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    SERVERS.append(process)
    ready, _, _ = select.select([process.stdout], [], [], 60)
    line = process.stdout.readline() if ready else ""
    if "listening on" not in line:
        process.kill()
        process.wait()
        fail(f"serve did not start: {line!r} {process.stderr.read()}")
    return process, line.split("listening on ")[1].split()[0]


def stop(process, sig=signal.SIGTERM, timeout=10):
    """Stops a server; returns (exit status, seconds it took, stderr)."""
    started = time.monotonic()
    process.send_signal(sig)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        fail(f"serve did not stop within {timeout} s of {sig!r}")
    return process.returncode, time.monotonic() - started, process.stderr.read()


def refused_start(binary, policy, log, *extra, listen="127.0.0.1:0", timeout=30):
    """Runs a serve that must refuse to start: (exit status, stderr, seconds)."""
    started = time.monotonic()
    result = subprocess.run(
        [binary, "serve", "--policy", str(policy), "--workers", str(WORKERS), "--log", str(log),
         "--listen", listen, *extra], capture_output=True, text=True, timeout=timeout)
    return result.returncode, result.stderr, time.monotonic() - started


def report(pb2, window=0, job_id="hostile"):
    workers = [pb2.WorkerWindow(gpu_type="cpu", batch_size=64, compute_s=0.05, comm_s=0.01,
                                wait_s=0.0, throughput_gbps=0.5, retransmit_rate=0.0,
                                cpu_time_ratio=0.1, memory_util=0.2, samples_per_s=1280,
                                grad_std_norm=1.0, grad_var_norm=0.5) for _ in range(WORKERS)]
    metrics = pb2.WindowMetrics(iterations=5, time_s=1.0 + window, iteration_s=0.07,
                                train_loss=1.0, train_accuracy=0.5, validation_accuracy=0.4,
                                progress=0.1, epochs=0.2, workers=workers)
    return pb2.WindowReport(protocol_version=pb2.PROTOCOL_VERSION_1, job_id=job_id,
                            window_index=window, iteration=5 * (window + 1), metrics=metrics,
                            lr_rule=pb2.LR_RULE_LINEAR, reference_batch=128, lr_factor=1.0)


def four_workers_report(pb2, window, leaving):
    """Four workers at 128 samples, the third half as fast, 10 iterations of 0.5 s; `leaving`
    maps a worker to the leaving_in_s of its notice."""
    workers = [pb2.WorkerWindow(gpu_type="cpu", batch_size=128, compute_s=128 / speed,
                                samples_per_s=speed, grad_std_norm=8 ** 0.5, grad_var_norm=8)
               for speed in (640, 640, 320, 640)]
    for worker, seconds in leaving.items():
        workers[worker].leaving_in_s = seconds
    metrics = pb2.WindowMetrics(iterations=10, time_s=5.0 * (window + 1), iteration_s=0.5,
                                train_loss=1.0, train_accuracy=0.5, progress=0.1, epochs=0.2,
                                workers=workers)
    return pb2.WindowReport(protocol_version=pb2.PROTOCOL_VERSION_1, job_id="spot",
                            window_index=window, iteration=10 * (window + 1), metrics=metrics,
                            lr_rule=pb2.LR_RULE_NONE, reference_batch=512)


def threads_of(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return 0


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0


def http2_frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(
        ">I", stream) + payload


def literal_header(name, value):
    """HPACK literal header field without indexing, new name, no Huffman (RFC 7541 6.2.2)."""
    name, value = name.encode(), value.encode()
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def half_open_connection(port, streams):
    """One connection that opens `streams` Decide calls, each with a gRPC message header that
    announces 1,000 bytes and only 10 of them: every stream waits for the rest for ever."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    headers = b"".join(literal_header(name, value) for name, value in [
        (":method", "POST"), (":scheme", "http"),
        (":path", "/dynamix.adapter.v1.Arbitrator/Decide"), (":authority", "127.0.0.1"),
        ("content-type", "application/grpc"), ("te", "trailers")])
    out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + http2_frame(0x4, 0, 0)
    for index in range(streams):
        stream = 2 * index + 1
        out += http2_frame(0x1, 0x4, stream, headers)  # HEADERS, END_HEADERS, no END_STREAM
        out += http2_frame(0x0, 0, stream, b"\x00" + struct.pack(">I", 1000) + b"x" * 5)
    sock.setblocking(False)
    try:
        sock.send(out)
    except (BlockingIOError, ConnectionError):
        pass
    return sock


def closed_by_server(sock, within_s):
    """Whether the server closes `sock` within `within_s` seconds (what it sent is drained)."""
    deadline = time.monotonic() + within_s
    sock.setblocking(True)
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            if not sock.recv(65536):
                return True
        except socket.timeout:
            return False
        except ConnectionError:
            return True
    return False


def answered_within(stub, pb2, window, limit_s):
    started = time.monotonic()
    decision = stub.Decide(report(pb2, window), timeout=limit_s)
    elapsed = time.monotonic() - started
    check(len(decision.batches) == WORKERS and elapsed < limit_s,
          f"a valid report took {elapsed:.2f} s")
    return elapsed


def check_flood(binary, policy, work, grpc, pb2, pb2_grpc):
    """50 connections x 100 half-sent streams: threads stay under the cap, valid reports are
    answered within 1 s during and after."""
    server, address = start(binary, policy, work / "flood-log")
    stub = pb2_grpc.ArbitratorStub(grpc.insecure_channel(address))
    answered_within(stub, pb2, 0, 5)
    before_threads, before_rss = threads_of(server.pid), rss_mb(server.pid)
    port = int(address.rsplit(":", 1)[1])
    sockets = [half_open_connection(port, 100) for _ in range(50)]
    time.sleep(1)
    peak_threads, peak_rss, latencies = 0, 0, []
    for window in range(1, 6):
        latencies.append(answered_within(stub, pb2, window, 1.0))
        peak_threads = max(peak_threads, threads_of(server.pid))
        peak_rss = max(peak_rss, rss_mb(server.pid))
        time.sleep(0.2)
    cut = sum(closed_by_server(sock, 2.0) for sock in sockets)
    for sock in sockets:
        sock.close()
    time.sleep(0.5)
    latencies.append(answered_within(stub, pb2, 6, 1.0))
    check(cut == len(sockets), f"serve kept {len(sockets) - cut} connections with 100 streams open")
    check(peak_threads <= before_threads + MAX_SERVER_THREADS,
          f"serve grew from {before_threads} to {peak_threads} threads under the flood")
    check(peak_rss < before_rss + 50, f"serve grew from {before_rss:.0f} to {peak_rss:.0f} MB")
    slow = half_open_connection(port, 1)
    started = time.monotonic()
    check(closed_by_server(slow, 10) and time.monotonic() - started > 3,
          "a connection with one half-sent stream was not cut after the stream deadline (5 s)")
    slow.close()
    idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(70)]
    for sock in idle:
        sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + http2_frame(0x4, 0, 0))
    time.sleep(0.5)
    closed = 0
    for sock in idle:  # the oldest make room for the newest
        sock.setblocking(False)
        try:
            closed += sock.recv(65536) == b""
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    latencies.append(answered_within(stub, pb2, 7, 1.0))
    for sock in idle:
        sock.close()
    check(closed >= 6, f"serve held {70 - closed} idle connections (the cap is 64)")
    status, _, _ = stop(server)
    check(status == 0, f"serve exited {status} after the flood")
    print(f"flood 50x100 half-open streams: threads {before_threads} -> {peak_threads}, "
          f"RSS {before_rss:.0f} -> {peak_rss:.0f} MB, valid reports answered in "
          f"{max(latencies) * 1000:.0f} ms at most")


def check_exclusive(binary, policy, work):
    server, address = start(binary, policy, work / "first-log")
    status, stderr, _ = refused_start(binary, policy, work / "second-log", listen=address)
    check(status == 2 and "--listen" in stderr, f"a second serve on {address}: {status} {stderr}")
    # The port is held on both loopbacks: a second serve on [::1] at it is refused too.
    if socket.has_ipv6:
        twin = f"[::1]:{address.rsplit(':', 1)[1]}"
        status, stderr, _ = refused_start(binary, policy, work / "second-log", listen=twin)
        check(status == 2 and "--listen" in stderr, f"a second serve on {twin}: {status} {stderr}")
    status, stderr, _ = refused_start(binary, policy, work / "first-log")
    check(status == 2 and "another dynamix serve holds" in stderr,
          f"a second serve on the same log: {status} {stderr}")
    stop(server)


def check_addresses(binary, policy, work):
    for listen, text in [("0.0.0.0:0", "without credentials"), ("127.0.0.1:99999", "65535"),
                         ("127.0.0.1", "host:port"), ("127.0.0.1:", "host:port"),
                         ("[::1:0", "host:port")]:
        status, stderr, _ = refused_start(binary, policy, work / "address-log", listen=listen)
        check(status == 2 and text in stderr and stderr.count("\n") == 1,
              f"--listen {listen}: {status} {stderr!r}")
    check(not (work / "address-log").exists(), "a refused serve created its log")


def check_token(binary, policy, work, grpc, pb2, pb2_grpc):
    token = work / "token"
    token.write_text("s3cret-token\n")
    server, address = start(binary, policy, work / "token-log", "--token-file", str(token))
    stub = pb2_grpc.ArbitratorStub(grpc.insecure_channel(address))
    for metadata in [None, [("authorization", "Bearer wrong")], [("authorization", "s3cret-token")]]:
        try:
            stub.Decide(report(pb2), timeout=5, metadata=metadata)
            fail(f"answered a call with metadata {metadata}")
        except grpc.RpcError as error:
            check(error.code() == grpc.StatusCode.UNAUTHENTICATED, f"{error.code()} for {metadata}")
    decision = stub.Decide(report(pb2), timeout=5,
                           metadata=[("authorization", "Bearer s3cret-token")])
    check(len(decision.batches) == WORKERS, "the token's holder got no decision")
    stop(server)
    lines = (work / "token-log" / "decisions.jsonl").read_text().splitlines()
    check(len(lines) == 1, f"unauthenticated calls reached the log: {len(lines)} lines")
    # Off loopback a token needs TLS: in clear it would be anyone's on the path.
    status, stderr, _ = refused_start(binary, policy, work / "clear-token-log", "--token-file",
                                      str(token), listen="0.0.0.0:0")
    check(status == 2 and "--token-file" in stderr and "in clear" in stderr,
          f"a token off loopback without TLS: {status} {stderr}")


def self_signed_certificate(work):
    """(certificate, key) files for 127.0.0.1 made by the openssl command; None without it."""
    import shutil
    if not shutil.which("openssl"):
        return None
    key, certificate = work / "key.pem", work / "cert.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
         "/CN=dynamix-test", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key),
         "-out", str(certificate)], capture_output=True, text=True, timeout=60)
    check(made.returncode == 0, f"openssl: {made.stderr}")
    return certificate, key


def trained_policy(binary, work):
    """A policy.pt of a few training steps (what dynamix train writes)."""
    trained = subprocess.run(
        [binary, "train", "--steps", "16", "--envs", "2", "--rollout-steps", "4",
         "--eval-every", "100", "--set", "training.budget_epochs=1", "--quiet", "--out",
         str(work / "train")], capture_output=True, text=True, timeout=120)
    check(trained.returncode == 0, trained.stderr)
    return work / "train" / "policy.pt"


def stop_all():
    for server in SERVERS:
        if server.poll() is None:
            server.kill()
            server.wait()


def check_tls(binary, policy, work, grpc, pb2, pb2_grpc):
    """TLS with a self-signed certificate for 127.0.0.1: a client that trusts it gets decisions,
    a plaintext client gets none. Skipped (said so) where the openssl command is missing."""
    made = self_signed_certificate(work)
    if made is None:
        print("serve_test: no openssl command, TLS not checked")
        return
    certificate, key = made
    server, address = start(binary, policy, work / "tls-log", "--tls-cert", str(certificate),
                            "--tls-key", str(key))
    credentials = grpc.ssl_channel_credentials(root_certificates=certificate.read_bytes())
    stub = pb2_grpc.ArbitratorStub(grpc.secure_channel(address, credentials))
    check(len(stub.Decide(report(pb2), timeout=10).batches) == WORKERS, "no decision over TLS")
    plain = pb2_grpc.ArbitratorStub(grpc.insecure_channel(address))
    try:
        plain.Decide(report(pb2, 1), timeout=3)
        fail("a plaintext client was answered by a TLS server")
    except grpc.RpcError as error:
        check(error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED),
              f"plaintext against TLS: {error.code()}")
    stop(server)


def check_rule(binary, work, grpc, pb2, pb2_grpc):
    """serve --policy goodput:100 decides without any policy.pt, and replay agrees."""
    server, address = start(binary, "goodput:100", work / "rule-log")
    stub = pb2_grpc.ArbitratorStub(grpc.insecure_channel(address))
    for window in range(4):
        decision = stub.Decide(report(pb2, window), timeout=5)
        check(decision.policy.spec == "goodput:100" and len(decision.batches) == WORKERS,
              f"goodput:100 answered {decision}")
    stop(server)
    replay = subprocess.run([binary, "replay", "--policy", "goodput:100", "--log",
                             str(work / "rule-log")], capture_output=True, text=True, timeout=60)
    check(replay.returncode == 0 and "replay: 4 decisions match" in replay.stdout,
          f"replay of goodput:100: {replay.stdout} {replay.stderr}")
    other = subprocess.run([binary, "replay", "--policy", "static:64", "--log",
                            str(work / "rule-log")], capture_output=True, text=True, timeout=60)
    check(other.returncode == 1 and "policy: logged 'goodput:100'" in other.stdout,
          f"replay with another rule: {other.stdout} {other.stderr}")


def check_notice(binary, work, grpc, pb2, pb2_grpc):
    """serve --policy goodput-notice:100: a worker leaving before the decision after the next
    applies (10 s at one window of lag) runs the smallest batch and the survivors take its share;
    a notice out of [0, 86400] s is refused naming the field; replay decides the same from the
    log, and otherwise once the notice is taken out of it."""
    log = work / "notice-log"
    server, address = start(binary, "goodput-notice:100", log, "--max-batch-change", "100",
                            workers=4)
    stub = pb2_grpc.ArbitratorStub(grpc.insecure_channel(address))
    calm = list(stub.Decide(four_workers_report(pb2, 0, {}), timeout=5).batches)
    noticed = list(stub.Decide(four_workers_report(pb2, 1, {1: 7.0}), timeout=5).batches)
    distant = list(stub.Decide(four_workers_report(pb2, 2, {1: 12.0}), timeout=5).batches)
    survivors = [0, 2, 3]
    check(noticed[1] == 32 and sum(noticed[w] for w in survivors) >
          sum(calm[w] for w in survivors) and distant == calm,
          f"goodput-notice:100 decided {calm} without a notice, {noticed} with worker 1 leaving "
          f"in 7 s, {distant} in 12 s")
    for seconds, shown in ((-1.0, "-1"), (86400.5, "86400.5"), (float("nan"), "nan")):
        try:
            stub.Decide(four_workers_report(pb2, 3, {1: seconds}), timeout=5)
            fail(f"a notice of {seconds} s was answered")
        except grpc.RpcError as error:
            expected = ("metrics.workers[1].leaving_in_s: expected a number in [0, 86400], "
                        f"found {shown}")
            check(error.code() == grpc.StatusCode.INVALID_ARGUMENT and
                  expected in error.details(), f"{seconds}: {error.code()} {error.details()}")
    stop(server)
    replay = subprocess.run([binary, "replay", "--policy", "goodput-notice:100", "--log",
                             str(log)], capture_output=True, text=True, timeout=60)
    check(replay.returncode == 0 and "replay: 3 decisions match" in replay.stdout and
          "3 refused reports skipped" in replay.stdout, f"replay: {replay.stdout} {replay.stderr}")
    lines = (log / "decisions.jsonl").read_text().splitlines()
    check('"leaving_in_s":7' in lines[1], f"the logged report: {lines[1]}")
    forgotten = work / "notice-forgotten"
    forgotten.mkdir()
    (forgotten / "decisions.jsonl").write_text(
        "\n".join(line.replace(',"leaving_in_s":7', "") for line in lines) + "\n")
    replay = subprocess.run([binary, "replay", "--policy", "goodput-notice:100", "--log",
                             str(forgotten)], capture_output=True, text=True, timeout=60)
    check(replay.returncode == 1 and "window 1 (iteration 20)" in replay.stdout,
          f"replay without the notice: {replay.stdout} {replay.stderr}")
    print(f"notice: goodput-notice:100 decided {calm} without a notice, {noticed} with worker 1 "
          f"leaving in 7 s, {distant} in 12 s; out-of-range notices refused; replay agrees")


def check_pin(binary, policy, work):
    import hashlib
    digest = hashlib.sha256(policy.read_bytes()).hexdigest()
    status, stderr, _ = refused_start(binary, policy, work / "pin-log", "--policy-sha256",
                                      "0" * 64)
    check(status == 2 and digest in stderr and "--policy-sha256" in stderr,
          f"a policy of another sha256: {status} {stderr}")
    server, _ = start(binary, policy, work / "pin-log", "--policy-sha256", digest.upper())
    stop(server)


def misbehaving_policy(policy, out, behaviour, from_call):
    """policy.pt's metadata around a forward that, from its `from_call`-th call, loops for ever
    ("loop"), answers NaN ("nan") or one row whatever the workers ("one_row")."""
    import torch
    files = {"schema.json": "", "actions.json": "", "version": "", "action_base": "",
             "bounds.json": "", "decision_interval": ""}
    original = torch.jit.load(str(policy), _extra_files=files)
    actions = len(original.forward(torch.zeros(1, original.observation_mean.numel()))[0])

    class Misbehaving(torch.nn.Module):
        calls: int
        loop: bool
        one_row: bool

        def __init__(self):
            super().__init__()
            self.register_buffer("observation_mean", original.observation_mean.clone())
            self.register_buffer("observation_std", original.observation_std.clone())
            self.calls = 0
            self.from_call = from_call
            self.actions = actions
            self.loop = behaviour == "loop"
            self.one_row = behaviour == "one_row"

        def forward(self, obs):
            self.calls += 1
            logits = torch.zeros(obs.shape[0], self.actions)
            if self.calls >= self.from_call:
                if self.one_row:
                    logits = logits[:1]
                elif self.loop:
                    while self.calls > 0:
                        logits = logits + 1.0
                else:
                    logits = logits * float("nan")
            return logits

    torch.jit.save(torch.jit.script(Misbehaving()), str(out), _extra_files=files)
    return out


def trusting(policy):
    """The options that let serve run `policy`'s own TorchScript code."""
    import hashlib
    return ("--trust-policy-code", hashlib.sha256(policy.read_bytes()).hexdigest())


def check_misbehaving_policies(binary, policy, work, grpc, pb2, pb2_grpc):
    looping = misbehaving_policy(policy, work / "loop-at-once.pt", "loop", 1)
    # A file that brings code of its own is refused before any of it runs, unless trusted by
    # its SHA-256; then it runs under the decision deadline.
    status, stderr, seconds = refused_start(binary, looping, work / "loop-log")
    check(status == 2 and "--trust-policy-code" in stderr and "dynamix export" in stderr and
          stderr.count("\n") == 1 and seconds < 20,
          f"a policy of its own code, untrusted: {status} after {seconds:.1f} s: {stderr}")
    status, stderr, _ = refused_start(binary, looping, work / "loop-log", "--trust-policy-code",
                                      "0" * 64)
    check(status == 2 and "--trust-policy-code" in stderr,
          f"a policy of its own code trusted by another hash: {status} {stderr}")
    status, stderr, seconds = refused_start(binary, looping, work / "loop-log",
                                            "--decision-deadline-ms", "200", *trusting(looping))
    check(status == 2 and "loads within" in stderr and seconds < 20,
          f"a policy that loops at load: {status} after {seconds:.1f} s: {stderr}")
    warm = misbehaving_policy(policy, work / "loop-at-warm-up.pt", "loop", 2)
    status, stderr, seconds = refused_start(binary, warm, work / "loop-log",
                                            "--decision-deadline-ms", "200", *trusting(warm))
    check(status == 2 and "decides within" in stderr,
          f"a policy that loops at warm-up: {status} after {seconds:.1f} s: {stderr}")

    rows = misbehaving_policy(policy, work / "one-row.pt", "one_row", 1)
    status, stderr, _ = refused_start(binary, rows, work / "rows-log", *trusting(rows))
    check(status == 2 and "forward: expected 2 x" in stderr and "a row per worker" in stderr
          and stderr.count("\n") == 1, f"a policy answering one row: {status} {stderr}")

    later = misbehaving_policy(policy, work / "loop-later.pt", "loop", 3)
    server, address = start(binary, later, work / "loop-later-log", "--decision-deadline-ms", "300",
                            *trusting(later))
    stub = pb2_grpc.ArbitratorStub(grpc.insecure_channel(address))
    for window, limit in [(0, 2.0), (1, 0.5)]:
        started = time.monotonic()
        try:
            stub.Decide(report(pb2, window), timeout=5)
            fail("a looping policy's decision was answered")
        except grpc.RpcError as error:
            elapsed = time.monotonic() - started
            check(error.code() == grpc.StatusCode.UNAVAILABLE and elapsed < limit,
                  f"window {window}: {error.code()} after {elapsed:.2f} s")
    # serve exits by itself (status 3, for a supervisor to restart it) once a decision wedged.
    try:
        server.wait(timeout=5)
    except subprocess.TimeoutExpired:
        fail("serve stayed up with a wedged policy")
    stderr = server.stderr.read()
    check(server.returncode == 3 and "still running inside the policy" in stderr,
          f"serve with a wedged policy: {server.returncode}: {stderr}")

    nan = misbehaving_policy(policy, work / "nan-later.pt", "nan", 3)
    server, address = start(binary, nan, work / "nan-log", *trusting(nan))
    stub = pb2_grpc.ArbitratorStub(grpc.insecure_channel(address))
    try:
        stub.Decide(report(pb2), timeout=5)
        fail("NaN logits were acted on")
    except grpc.RpcError as error:
        check(error.code() == grpc.StatusCode.INTERNAL and "not all finite" in error.details(),
              f"NaN logits: {error.code()} {error.details()}")
    stop(server)
    log = (work / "nan-log" / "refusals.jsonl").read_text()
    check('"refusal"' in log and "not all finite" in log, "the NaN refusal was not logged")


def check_oversized_and_torn_log(binary, policy, work, grpc, pb2, pb2_grpc):
    log = work / "torn-log"
    server, address = start(binary, policy, log)
    stub = pb2_grpc.ArbitratorStub(grpc.insecure_channel(address))
    for window in range(3):
        stub.Decide(report(pb2, window), timeout=5)
    huge = report(pb2, 3, job_id="x" * 8000)
    try:
        stub.Decide(huge, timeout=5)
        fail("an oversized report was answered")
    except grpc.RpcError as error:
        check(error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "byte limit" in
              error.details(), f"oversized: {error.code()} {error.details()}")
    stop(server, signal.SIGKILL)
    text = (log / "refusals.jsonl").read_text()
    check("byte limit" in text and "x" * 8000 not in text, "the oversized refusal's log line")
    with open(log / "decisions.jsonl", "a") as out:
        out.write('{"report": {"job_id": "torn')
    server, address = start(binary, policy, log)
    stub = pb2_grpc.ArbitratorStub(grpc.insecure_channel(address))
    for window in range(4, 6):
        stub.Decide(report(pb2, window), timeout=5)
    _, _, stderr = stop(server)
    check("cut a torn last record of 27 bytes" in stderr, f"no repair reported: {stderr}")
    replay = subprocess.run([binary, "replay", "--policy", str(policy), "--log", str(log)],
                            capture_output=True, text=True, timeout=60)
    check(replay.returncode == 0 and "replay: 5 decisions match" in replay.stdout,
          f"replay after the repair: {replay.stdout} {replay.stderr}")


def main():
    binary, proto_dir = sys.argv[1:3]
    sys.path.insert(0, proto_dir)
    import grpc
    import dynamix_pb2 as pb2
    import dynamix_pb2_grpc as pb2_grpc
    with tempfile.TemporaryDirectory() as directory:
        work = pathlib.Path(directory)
        policy = trained_policy(binary, work)
        try:
            check_addresses(binary, policy, work)
            check_exclusive(binary, policy, work)
            check_pin(binary, policy, work)
            check_token(binary, policy, work, grpc, pb2, pb2_grpc)
            check_tls(binary, policy, work, grpc, pb2, pb2_grpc)
            check_rule(binary, work, grpc, pb2, pb2_grpc)
            check_notice(binary, work, grpc, pb2, pb2_grpc)
            check_oversized_and_torn_log(binary, policy, work, grpc, pb2, pb2_grpc)
            check_misbehaving_policies(binary, policy, work, grpc, pb2, pb2_grpc)
            check_flood(binary, policy, work, grpc, pb2, pb2_grpc)
        finally:
            stop_all()
    print("serve_test: passed")


if __name__ == "__main__":
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    main()
