"""Measured per-window metrics of one rank, in the units of gym/window_metrics.h."""
import math
import os
import resource
import socket
import struct
from typing import Dict, Tuple

import torch

# One row per iteration, in this order, gathered to rank 0 at the window's end.
ITERATION_FIELDS = ["data_s", "compute_s", "after_compute_s", "iteration_s", "bytes_sent",
                    "local_norm_sq", "global_norm_sq", "loss", "accuracy", "memory_util",
                    "batch"]
# Per window and rank: TCP segments sent and retransmitted, then the seconds until the rank
# leaves, from its preemption notice (infinity without one).
TCP_FIELDS = ["out_segments", "retransmitted_segments"]
WINDOW_FIELDS = TCP_FIELDS + ["leaving_in_s"]

# struct tcp_info (linux/tcp.h): tcpi_total_retrans at byte 100, tcpi_segs_out at 136 (Linux 4.2+).
_TCP_INFO_BYTES = 144
_TOTAL_RETRANS_OFFSET, _SEGS_OUT_OFFSET = 100, 136


def host_tcp_counters() -> Dict[str, float]:
    """OutSegs and RetransSegs from /proc/net/snmp (host-wide; zeros where unreadable)."""
    try:
        with open("/proc/net/snmp") as snmp:
            lines = [line.split() for line in snmp if line.startswith("Tcp:")]
        values = dict(zip(lines[0][1:], lines[1][1:]))
        return {"out_segments": float(values["OutSegs"]),
                "retransmitted_segments": float(values["RetransSegs"])}
    except (OSError, IndexError, KeyError, ValueError):
        return {"out_segments": 0.0, "retransmitted_segments": 0.0}


def _tcp_info(descriptor: int):
    """TCP_INFO of a TCP socket descriptor, or None. Reads through a socket object that does
    not own the descriptor (detached before it is dropped), so the job's own socket is never
    closed or duplicated: a lingering duplicate would keep gloo's connections open at exit."""
    try:
        sock = socket.socket(fileno=descriptor)
    except (OSError, ValueError):
        return None
    try:
        if sock.type != socket.SOCK_STREAM or sock.family not in (socket.AF_INET,
                                                                  socket.AF_INET6):
            return None
        return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_BYTES)
    except OSError:
        return None
    finally:
        sock.detach()


def own_tcp_sockets() -> Dict[int, Tuple[int, int]]:
    """(segments sent, segments retransmitted) of each TCP socket this process holds (gloo's
    and the arbitrator channel's), by socket inode, read with getsockopt(TCP_INFO)."""
    counters = {}
    try:
        descriptors = os.listdir("/proc/self/fd")
    except OSError:
        return counters
    for name in descriptors:
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if not target.startswith("socket:["):
            continue
        info = _tcp_info(int(name))
        if info is None:
            continue
        if len(info) < _TCP_INFO_BYTES:
            continue
        inode = int(target[len("socket:["):-1])
        counters[inode] = (struct.unpack_from("I", info, _SEGS_OUT_OFFSET)[0],
                           struct.unpack_from("I", info, _TOTAL_RETRANS_OFFSET)[0])
    return counters


class TcpCounters:
    """Cumulative TCP segments sent and retransmitted by this process: TCP_INFO of its own
    sockets where readable (a socket's last counts stay in the sum after it closes), else the
    host-wide /proc/net/snmp counters. The source is chosen once, so window deltas stay
    consistent."""

    def __init__(self):
        self._sockets = own_tcp_sockets()
        self.source = "process sockets (TCP_INFO)" if self._sockets else "host (/proc/net/snmp)"

    def read(self) -> Dict[str, float]:
        if not self._sockets:
            return host_tcp_counters()
        self._sockets.update(own_tcp_sockets())
        return {"out_segments": float(sum(sent for sent, _ in self._sockets.values())),
                "retransmitted_segments": float(sum(lost for _, lost in self._sockets.values()))}


def _memory_total_bytes() -> float:
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError):
        return 0.0


def memory_util(device: torch.device) -> float:
    """CUDA max allocated / device total on a GPU; resident set size / physical memory on CPU."""
    if device.type == "cuda":
        total = torch.cuda.get_device_properties(device).total_memory
        return torch.cuda.max_memory_allocated(device) / total
    try:
        with open("/proc/self/statm") as statm:
            resident_pages = int(statm.read().split()[1])
        rss = resident_pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    total = _memory_total_bytes()
    return rss / total if total > 0 else 0.0


def worker_window(rows: torch.Tensor, window: torch.Tensor, rank: int,
                  gpu_type: str) -> dict:
    """One worker's WorkerWindow fields from every rank's iteration rows
    [ranks, iterations, fields] and window rows [ranks, WINDOW_FIELDS]; leaving_in_s only for a
    worker under notice."""
    f = {name: i for i, name in enumerate(ITERATION_FIELDS)}
    mine = rows[rank]
    compute = mine[:, f["compute_s"]]
    slowest = rows[:, :, f["compute_s"]].max(dim=0).values
    wait = slowest - compute
    comm = (mine[:, f["after_compute_s"]] - wait).clamp(min=0)
    batch = mine[:, f["batch"]]
    sent = mine[:, f["bytes_sent"]].sum()
    comm_total = comm.sum()
    segments = window[rank, 0]
    iteration_total = mine[:, f["iteration_s"]].sum()
    var_norm = gradient_variance_norm(mine, batch, rows[:, :, f["batch"]].sum(dim=0))
    leaving_in_s = float(window[rank, WINDOW_FIELDS.index("leaving_in_s")])
    fields = {
        "gpu_type": gpu_type,
        "batch_size": float(batch.mean()),
        "compute_s": float(compute.mean()),
        "comm_s": float(comm.mean()),
        "wait_s": float(wait.mean()),
        "throughput_gbps": float(sent * 8 / comm_total / 1e9) if comm_total > 0 else 0.0,
        "retransmit_rate": float(window[rank, 1] / segments) if segments > 0 else 0.0,
        "cpu_time_ratio": float(mine[:, f["data_s"]].sum() / iteration_total)
        if iteration_total > 0 else 0.0,
        "memory_util": float(mine[:, f["memory_util"]].max()),
        "samples_per_s": float(batch.sum() / compute.sum()) if compute.sum() > 0 else 0.0,
        "grad_std_norm": var_norm ** 0.5,
        "grad_var_norm": var_norm,
    }
    if math.isfinite(leaving_in_s):
        fields["leaving_in_s"] = leaving_in_s
    return fields


def gradient_variance_norm(mine: torch.Tensor, batch: torch.Tensor,
                           global_batch: torch.Tensor) -> float:
    """σ²_norm of this worker's mean gradient, B_simple / b (McCandlish et al. 2018, app. A):
    from |g_b|² and |G_B|² over the window, tr(Σ) ≈ (|g_b|² - |G_B|²) / (1/b - 1/B) and
    |G|² ≈ (B|G_B|² - b|g_b|²) / (B - b)."""
    f = {name: i for i, name in enumerate(ITERATION_FIELDS)}
    local, global_ = mine[:, f["local_norm_sq"]], mine[:, f["global_norm_sq"]]
    # An iteration whose gradient overflowed (an AMP step the GradScaler skipped) says nothing
    # about the noise: it is left out.
    usable = (global_batch > batch) & local.isfinite() & global_.isfinite()
    if not bool(usable.any()):
        return 0.0
    b, big = batch[usable], global_batch[usable]
    trace = ((local[usable] - global_[usable]) / (1 / b - 1 / big)).mean()
    signal = ((big * global_[usable] - b * local[usable]) / (big - b)).mean()
    if not (trace > 0 and signal > 0):
        return 0.0
    return float(trace / signal / batch.mean())
