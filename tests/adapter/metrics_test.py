"""The worker's TCP counters: TCP_INFO of the process's own sockets, counting what it sends
over loopback and never going backwards when a socket closes; host-wide counters otherwise.

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


def main():
    check_skipped_steps_left_out()
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
