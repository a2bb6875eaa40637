"""dynamix serve under HTTP/2 floods, on loopback: rapid reset (HEADERS + RST_STREAM), CONTINUATION
without end, half-open streams over plain TCP and over TLS, complete requests never read back,
and idle connections that reconnect as soon as they are closed. Under each, a good client must
be answered within 1 s during the flood and after it, serve must stay within its memory and
threads, and it must exit within 2 s of SIGTERM with the flood still on. Prints one line per
flood (the closing-note table); DYNAMIX_FLOOD_S sets each flood's length (default 3 s).

usage: serve_flood_test.py DYNAMIX_BINARY PROTO_PYTHON_DIR"""
import os
import pathlib
import signal
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve_test import (check, http2_frame, literal_header, report, rss_mb,  # noqa: E402
                        self_signed_certificate, start, stop_all, threads_of, trained_policy)

FLOOD_S = float(os.environ.get("DYNAMIX_FLOOD_S", "3"))
# The bounds serve is held to under any flood (adapter/README.md, "Trust and limits").
MAX_RSS_MB = 256
MAX_THREADS = 16
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + http2_frame(0x4, 0, 0)
HEADERS = b"".join(literal_header(name, value) for name, value in [
    (":method", "POST"), (":scheme", "http"), (":path", "/dynamix.adapter.v1.Arbitrator/Decide"),
    (":authority", "127.0.0.1"), ("content-type", "application/grpc"), ("te", "trailers")])


class Attacker:
    """Threads that each run `attack(connect, stop)` until stopped; `connect` opens a socket to
    serve (TLS when asked), and an attack reconnects whenever serve closes it."""

    def __init__(self, port, attack, threads, tls):
        self.stop = threading.Event()
        context = None
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            context.set_alpn_protocols(["h2"])

        def connect():
            sock = socket.create_connection(("127.0.0.1", port), timeout=2)
            return context.wrap_socket(sock) if context else sock

        def run():
            while not self.stop.is_set():
                try:
                    attack(connect, self.stop)
                except (OSError, ssl.SSLError):
                    time.sleep(0.001)

        self.threads = [threading.Thread(target=run, daemon=True) for _ in range(threads)]
        for thread in self.threads:
            thread.start()

    def end(self):
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=10)


def rapid_reset(connect, stop):
    with connect() as sock:
        sock.sendall(PREFACE)
        stream = 1
        while not stop.is_set():
            burst = b""
            for _ in range(50):
                burst += http2_frame(0x1, 0x4, stream, HEADERS)
                burst += http2_frame(0x3, 0, stream, struct.pack(">I", 8))  # CANCEL
                stream += 2
            sock.sendall(burst)


def continuation(connect, stop):
    with connect() as sock:
        sock.sendall(PREFACE + http2_frame(0x1, 0, 1, HEADERS))  # no END_HEADERS
        block = http2_frame(0x9, 0, 1, b"\x00\x01a\x01b" * 3000)
        while not stop.is_set():
            sock.sendall(block)


def half_open(connect, stop):
    with connect() as sock:
        out = PREFACE
        for index in range(100):
            stream = 2 * index + 1
            out += http2_frame(0x1, 0x4, stream, HEADERS)
            out += http2_frame(0x0, 0, stream, b"\x00" + struct.pack(">I", 1000) + b"x" * 5)
        sock.sendall(out)
        stop.wait(10)  # held until serve cuts it (or the flood ends)


def complete_requests(connect, stop, body=b"\x00" + struct.pack(">I", 60000) + b"\x01" * 60000):
    """Whole requests, four at a time, as fast as serve takes them, whose answers are never
    read."""
    with connect() as sock:
        sock.sendall(PREFACE)
        stream = 1
        while not stop.is_set():
            burst = b""
            for _ in range(4):
                burst += http2_frame(0x1, 0x4, stream, HEADERS)
                for offset in range(0, len(body), 16000):
                    last = offset + 16000 >= len(body)
                    burst += http2_frame(0x0, 0x1 if last else 0, stream,
                                         body[offset:offset + 16000])
                stream += 2
            sock.sendall(burst)


def idle(connect, stop):
    """Ten connections that never send a byte, each reopened as soon as serve closes it."""
    held = [connect() for _ in range(10)]
    try:
        while not stop.is_set():
            for i, sock in enumerate(held):
                sock.setblocking(False)
                try:
                    closed = sock.recv(65536) == b""
                except BlockingIOError:
                    closed = False
                except OSError:
                    closed = True
                if closed:
                    sock.close()
                    held[i] = connect()
            time.sleep(0.02)
    finally:
        for sock in held:
            sock.close()


# (name, attack, attacking threads, TLS, least seconds): the complete-request flood runs long
# enough to pass 64 MiB of requests in all (about 14 s here), past which a gate that lost count
# of the answered ones would cut every client.
FLOODS = [("rapid reset", rapid_reset, 4, False, 0),
          ("CONTINUATION", continuation, 4, False, 0),
          ("half-open 50x100", half_open, 50, False, 0),
          ("half-open 50x100, TLS", half_open, 50, True, 0),
          ("complete requests unread", complete_requests, 16, False, 20),
          ("70 idle, reconnecting", idle, 7, False, 0)]


def good_client(grpc, pb2_grpc, address, certificate):
    if certificate:
        credentials = grpc.ssl_channel_credentials(root_certificates=certificate.read_bytes())
        channel = grpc.secure_channel(address, credentials)
    else:
        channel = grpc.insecure_channel(address)
    return pb2_grpc.ArbitratorStub(channel)


def answered_in(stub, pb2, window):
    started = time.monotonic()
    try:
        decision = stub.Decide(report(pb2, window), timeout=5, wait_for_ready=True)
    except Exception as error:  # noqa: BLE001 (a gRPC error: reported as a miss)
        return float("inf"), str(error).splitlines()[0]
    return time.monotonic() - started, f"{len(decision.batches)} batches"


def run_flood(binary, policy, work, grpc, pb2, pb2_grpc, flood, certificate):
    name, attack, threads, tls, least_s = flood
    extra = ("--tls-cert", str(certificate[0]), "--tls-key", str(certificate[1])) if tls else ()
    server, address = start(binary, policy, work / name.replace(" ", "_"), *extra)
    port = int(address.rsplit(":", 1)[1])
    stub = good_client(grpc, pb2_grpc, address, certificate[0] if tls else None)
    window = 0
    latency, why = answered_in(stub, pb2, window)
    check(latency < 5, f"{name}: no answer before the flood: {why}")
    base_threads, base_rss = threads_of(server.pid), rss_mb(server.pid)
    attacker = Attacker(port, attack, threads, tls)
    during, peak_rss, peak_threads = [], base_rss, base_threads
    ends = time.monotonic() + max(FLOOD_S, least_s)
    while time.monotonic() < ends:
        window += 1
        during.append(answered_in(stub, pb2, window))
        peak_rss, peak_threads = max(peak_rss, rss_mb(server.pid)), max(peak_threads,
                                                                        threads_of(server.pid))
        time.sleep(0.2)
    attacker.end()
    window += 1
    after = answered_in(stub, pb2, window)
    attacker = Attacker(port, attack, threads, tls)  # SIGTERM with the flood on
    time.sleep(0.5)
    peak_rss, peak_threads = max(peak_rss, rss_mb(server.pid)), max(peak_threads,
                                                                    threads_of(server.pid))
    started = time.monotonic()
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    exit_s = time.monotonic() - started
    attacker.end()
    worst = max(latency for latency, _ in during)
    print(f"{name}: RSS {base_rss:.0f} -> {peak_rss:.0f} MB, threads {base_threads} -> "
          f"{peak_threads}, good client {worst * 1000:.0f} ms at worst during "
          f"({len(during)} calls), {after[0] * 1000:.0f} ms after, SIGTERM exit "
          f"{exit_s:.2f} s", flush=True)
    check(worst < 1.0, f"{name}: a good client waited {worst:.2f} s during the flood "
                       f"({[why for _, why in during]})")
    check(after[0] < 1.0, f"{name}: a good client waited {after[0]:.2f} s after it ({after[1]})")
    check(peak_rss <= MAX_RSS_MB, f"{name}: serve reached {peak_rss:.0f} MB")
    check(peak_threads <= MAX_THREADS, f"{name}: serve reached {peak_threads} threads")
    check(exit_s < 2.0 and server.returncode == 0,
          f"{name}: serve exited {server.returncode} {exit_s:.2f} s after SIGTERM")


def main():
    binary, proto_dir = sys.argv[1:3]
    sys.path.insert(0, proto_dir)
    import grpc
    import dynamix_pb2 as pb2
    import dynamix_pb2_grpc as pb2_grpc
    with tempfile.TemporaryDirectory() as directory:
        work = pathlib.Path(directory)
        certificate = self_signed_certificate(work)
        if certificate is None:
            print("skipped: no openssl command for the TLS flood's certificate")
            sys.exit(77)
        policy = trained_policy(binary, work)
        try:
            for flood in FLOODS:
                run_flood(binary, policy, work, grpc, pb2, pb2_grpc, flood, certificate)
        finally:
            stop_all()
    print("serve_flood_test: passed")


if __name__ == "__main__":
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    main()
