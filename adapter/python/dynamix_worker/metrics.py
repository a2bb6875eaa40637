"""Measured per-window metrics of one rank, in the units of gym/window_metrics.h."""
import os
import resource
from typing import Dict

import torch

# One row per iteration, in this order, gathered to rank 0 at the window's end.
ITERATION_FIELDS = ["data_s", "compute_s", "after_compute_s", "iteration_s", "bytes_sent",
                    "local_norm_sq", "global_norm_sq", "loss", "accuracy", "memory_util",
                    "batch"]
# Per window and rank: TCP segments sent and retransmitted (host-wide counters).
WINDOW_FIELDS = ["out_segments", "retransmitted_segments"]


def tcp_counters() -> Dict[str, float]:
    """OutSegs and RetransSegs from /proc/net/snmp (host-wide; zeros where unreadable)."""
    try:
        with open("/proc/net/snmp") as snmp:
            lines = [line.split() for line in snmp if line.startswith("Tcp:")]
        values = dict(zip(lines[0][1:], lines[1][1:]))
        return {"out_segments": float(values["OutSegs"]),
                "retransmitted_segments": float(values["RetransSegs"])}
    except (OSError, IndexError, KeyError, ValueError):
        return {"out_segments": 0.0, "retransmitted_segments": 0.0}


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
    [ranks, iterations, fields] and window counters [ranks, 2]."""
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
    return {
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


def gradient_variance_norm(mine: torch.Tensor, batch: torch.Tensor,
                           global_batch: torch.Tensor) -> float:
    """σ²_norm of this worker's mean gradient, B_simple / b (McCandlish et al. 2018, app. A):
    from |g_b|² and |G_B|² over the window, tr(Σ) ≈ (|g_b|² - |G_B|²) / (1/b - 1/B) and
    |G|² ≈ (B|G_B|² - b|g_b|²) / (B - b)."""
    f = {name: i for i, name in enumerate(ITERATION_FIELDS)}
    local, global_ = mine[:, f["local_norm_sq"]], mine[:, f["global_norm_sq"]]
    usable = global_batch > batch
    if not bool(usable.any()):
        return 0.0
    b, big = batch[usable], global_batch[usable]
    trace = ((local[usable] - global_[usable]) / (1 / b - 1 / big)).mean()
    signal = ((big * global_[usable] - b * local[usable]) / (big - b)).mean()
    if not (trace > 0 and signal > 0):
        return 0.0
    return float(trace / signal / batch.mean())
