"""Launching a job's ranks on one host."""
import os
import socket


def rendezvous_args(tag: str = "dynamix") -> list:
    """torchrun options for a single-host rendezvous on a free loopback port: what --standalone
    does, except that --standalone always takes port 29400, which another job on the host may
    hold. `tag` starts the rendezvous id."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return ["--nnodes", "1", "--rdzv_backend", "c10d", "--rdzv_endpoint", f"127.0.0.1:{port}",
            "--rdzv_id", f"{tag}-{os.getpid()}-{port}"]
