"""The worker's TCP counters: TCP_INFO of the process's own sockets, counting what it sends
over loopback and never going backwards when a socket closes; host-wide counters otherwise.
σ²_norm leaves out skipped AMP steps. The device timer: CUDA events for CUDA parameters (or
NCCL), the host clock otherwise; a CUDA mark reads in seconds (no GPU needed).

usage: metrics_test.py SOURCE_DIR"""
import pathlib
import socket
import sys
import threading

sys.path.insert(0, str(pathlib.Path(sys.argv[1]) / "adapter" / "python"))
from dynamix_worker.metrics import TcpCounters  # noqa: E402


def check(condition, message):
    if not condition:
        print(f"FAIL: {message}")
        sys.exit(1)


def check_skipped_steps_left_out():
    """An overflowed iteration (an AMP step the GradScaler skipped) leaves σ²_norm unchanged."""
    import torch
    from dynamix_worker.metrics import ITERATION_FIELDS, gradient_variance_norm
    f = {name: i for i, name in enumerate(ITERATION_FIELDS)}
    rows = torch.zeros(4, len(ITERATION_FIELDS), dtype=torch.float64)
    rows[:, f["batch"]] = 8
    rows[:, f["local_norm_sq"]] = torch.tensor([3.0, 2.5, 3.5, 3.0])
    rows[:, f["global_norm_sq"]] = torch.tensor([1.2, 1.0, 1.4, 1.1])
    global_batch = torch.full((4,), 32.0, dtype=torch.float64)
    clean = gradient_variance_norm(rows[:3], rows[:3, f["batch"]], global_batch[:3])
    rows[3, f["local_norm_sq"]] = float("inf")
    rows[3, f["global_norm_sq"]] = float("nan")
    with_skip = gradient_variance_norm(rows, rows[:, f["batch"]], global_batch)
    check(clean > 0 and abs(with_skip - clean) < 1e-12,
          f"σ²_norm with a skipped step {with_skip}, without it {clean}")


def check_timer_selection():
    """timer_for picks CudaTimer for a CUDA device only; timing_device finds a model's CUDA
    parameters, else NCCL's current device, else the CPU. No GPU is touched."""
    import types
    import torch
    from dynamix_worker.timing import CudaTimer, HostTimer, timer_for, timing_device
    for device, kind in ((torch.device("cuda", 0), CudaTimer), ("cuda:1", CudaTimer),
                         ("cuda", CudaTimer), (torch.device("cpu"), HostTimer),
                         ("meta", HostTimer)):
        check(type(timer_for(device)) is kind, f"timer for {device}: "
                                               f"{type(timer_for(device)).__name__}")
    check(timer_for("cuda:1").device == torch.device("cuda", 1), "the CUDA timer's device")
    cpu_model = torch.nn.Linear(2, 2)
    check(timing_device(cpu_model, "gloo") == torch.device("cpu"), "a CPU model under gloo")

    class OnGpu(torch.nn.Module):  # parameters that say they are on cuda:1
        def parameters(self, recurse=True):
            return iter([types.SimpleNamespace(device=torch.device("cuda", 1))])
    check(timing_device(OnGpu(), "gloo") == torch.device("cuda", 1), "a model on cuda:1")
    current = torch.cuda.current_device
    torch.cuda.current_device = lambda: 3
    try:
        check(timing_device(cpu_model, "nccl") == torch.device("cuda", 3), "NCCL's device")
    finally:
        torch.cuda.current_device = current

    class Event:  # torch.cuda.Event's reading side
        def __init__(self, done):
            self.done, self.waited = done, False

        def query(self):
            return self.done

        def synchronize(self):
            self.waited = True

        def elapsed_time(self, other):
            return 12.5  # milliseconds
    start, end = Event(True), Event(False)
    seconds = CudaTimer("cuda:0").seconds(start, end)
    check(seconds == 0.0125 and end.waited and not start.waited,
          f"a CUDA mark pair: {seconds} s, waited for {start.waited}, {end.waited}")
    host = HostTimer()
    first = host.mark("start")
    check(0 <= host.seconds(first, host.mark("end")) < 1, "the host clock")


def main():
    check_skipped_steps_left_out()
    check_timer_selection()
    check(TcpCounters().source.startswith("host"),
          "a process without TCP sockets falls back to the host counters")
    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname())
    peer, _ = server.accept()
    counters = TcpCounters()
    check(counters.source.startswith("process"), f"own sockets are read: {counters.source}")
    before = counters.read()
    payload = b"x" * (4 << 20)
    received = bytearray()

    def drain():
        while len(received) < len(payload):
            received.extend(peer.recv(1 << 16))

    reader = threading.Thread(target=drain)
    reader.start()
    client.sendall(payload)
    reader.join(timeout=30)
    check(len(received) == len(payload), "the payload arrived")
    after = counters.read()
    sent = after["out_segments"] - before["out_segments"]
    # 4 MiB in segments of at most 64 KiB (loopback's MTU) is at least 64 segments.
    check(sent >= 64, f"4 MiB sent counts at least 64 segments, counted {sent}")
    check(after["retransmitted_segments"] >= before["retransmitted_segments"],
          "retransmissions never decrease")
    client.close()
    peer.close()
    closed = counters.read()
    check(closed["out_segments"] >= after["out_segments"],
          "a closed socket's segments stay counted")
    print(f"ok: {sent:.0f} segments counted from TCP_INFO")


if __name__ == "__main__":
    main()
