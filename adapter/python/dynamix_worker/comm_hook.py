"""The DDP communication hook for unequal batches: all-reduce b_i * g_i and divide by B, which
equals the gradient of one process over the union of the ranks' batches. It also times the
communication through the futures and measures local and global gradient norms."""
import time
from dataclasses import dataclass, field

import torch
import torch.distributed as dist


@dataclass
class WeightedHookState:
    """What the hook needs (this rank's batch and the global batch) and what it measures over
    one iteration; the controller resets the measurements each iteration."""
    process_group: object = None
    batch: int = 1
    global_batch: int = 1
    world_size: int = 1
    # Measurements of the current iteration.
    last_hook_time: float = 0.0
    comm_done_time: float = 0.0
    bytes_reduced: int = 0
    # Sums of squared norms over the buckets: floats, or 0-dim tensors once a bucket was seen.
    local_norm_sq: float = 0.0
    global_norm_sq: float = 0.0
    pending: list = field(default_factory=list)

    def reset(self) -> None:
        self.last_hook_time = 0.0
        self.comm_done_time = 0.0
        self.bytes_reduced = 0
        self.local_norm_sq = 0.0
        self.global_norm_sq = 0.0
        self.pending = []


def squared_norm(tensor):
    """‖tensor‖² as a 0-dim tensor on the tensor's device: one dot product, no copy of a float32
    bucket and no host synchronization (the controller reads it once per iteration)."""
    flat = tensor.detach()
    if flat.dtype != torch.float32:
        flat = flat.float()
    return torch.dot(flat, flat)


def weighted_allreduce_hook(state: WeightedHookState, bucket):
    """Register with ddp_model.register_comm_hook(state, weighted_allreduce_hook)."""
    tensor = bucket.buffer()
    state.last_hook_time = time.perf_counter()
    state.local_norm_sq += squared_norm(tensor)
    state.bytes_reduced += tensor.numel() * tensor.element_size()
    tensor.mul_(float(state.batch))
    future = dist.all_reduce(tensor, group=state.process_group, async_op=True).get_future()

    def finish(done):
        reduced = done.value()[0].div_(float(state.global_batch))
        state.global_norm_sq += squared_norm(reduced)
        state.comm_done_time = max(state.comm_done_time, time.perf_counter())
        return reduced

    return future.then(finish)


def ring_bytes_sent(bytes_reduced: int, world_size: int) -> float:
    """Bytes one rank sends in a ring all-reduce of `bytes_reduced` bytes (NCCL's busbw
    convention, 2(p-1)/p * n); gloo's ring algorithms send the same."""
    if world_size <= 1:
        return 0.0
    return 2.0 * (world_size - 1) / world_size * bytes_reduced
