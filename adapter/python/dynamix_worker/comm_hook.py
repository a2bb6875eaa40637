"""The DDP communication hook for unequal batches: each rank scales its bucket by b_i / B and a SUM
all-reduce yields Σ b_i g_i / B, the gradient of one process over the union of the ranks' batches.

No Python runs on a communication thread. A `.then` callback on the all-reduce's future would run
on gloo's (or NCCL's) thread, and at exit such a thread waiting for the GIL deadlocks the main
thread joining it (PyTorch issue #56297). DDP 1.13 only takes a future holding a Python object,
so the hook returns a fresh future that the autograd thread completes: the first bucket queues a
callback at the end of backward (it runs before DDP's finalize, which DDP queues later), and that
callback waits for the all-reduces, reads the global norm, marks the time (state.timer) and
completes them.
"""
import collections
from dataclasses import dataclass, field

import torch
import torch.distributed as dist

from .timing import HostTimer


# The objects of the last collectives, held by this module until the interpreter's end. A gloo
# thread lets go of a collective's tensors just after wait() returns; had Python dropped its
# references by then, that thread frees their Python objects and needs the GIL, and at exit, with
# the main thread holding the GIL while it joins the thread (~Reducer -> ~ProcessGroupGloo), the
# job hangs (PyTorch issue #56297). Held here, a collective's tensors outlive the process group
# that ran it, in the common case of a DDP model freed before module teardown.
_HELD = collections.deque(maxlen=16)


def hold(*objects) -> None:
    """Keeps the objects of one collective (tensors, works) alive; the oldest are let go."""
    _HELD.append(objects)


@dataclass
class WeightedHookState:
    """What the hook needs (this rank's batch and the global batch) and what it measures over
    one iteration; the controller resets the measurements each iteration."""
    process_group: object = None
    batch: int = 1
    global_batch: int = 1
    world_size: int = 1
    # The clock of the marks below (timing.HostTimer or CudaTimer; the controller sets it).
    timer: object = field(default_factory=HostTimer)
    # Measurements of the current iteration: the timer's marks at the last bucket's hook and
    # once the all-reduces were waited for (None: not reached).
    last_hook_time: object = None
    comm_done_time: object = None
    bytes_reduced: int = 0
    # Sums of squared norms over the buckets: floats, or 0-dim tensors once a bucket was seen.
    local_norm_sq: float = 0.0
    global_norm_sq: float = 0.0
    # (all-reduce work, bucket, the future returned to DDP) of each bucket of this backward pass.
    buckets: list = field(default_factory=list)

    def reset(self) -> None:
        self.last_hook_time = None
        self.comm_done_time = None
        self.bytes_reduced = 0
        self.local_norm_sq = 0.0
        self.global_norm_sq = 0.0
        self.buckets = []


def squared_norm(tensor):
    """‖tensor‖² as a 0-dim tensor on the tensor's device: one dot product, no copy of a float32
    bucket and no host synchronization (the controller reads it once per iteration)."""
    flat = tensor.detach().reshape(-1)
    if flat.dtype != torch.float32:
        flat = flat.float()
    return torch.dot(flat, flat)


def _finish_backward(state: WeightedHookState) -> None:
    """On the autograd thread, before DDP's finalize reads the futures: waits for every bucket's
    all-reduce (DDP would wait for them there anyway), then completes the hook's futures."""
    for work, _, _ in state.buckets:
        work.wait()  # under NCCL: the current stream waits for the all-reduces
    state.comm_done_time = state.timer.mark("comm")
    for _, tensor, future in state.buckets:
        state.global_norm_sq = state.global_norm_sq + squared_norm(tensor)
        future.set_result(tensor)
    hold(state.buckets)  # see _HELD
    state.buckets = []


def weighted_allreduce_hook(state: WeightedHookState, bucket):
    """Register with ddp_model.register_comm_hook(state, weighted_allreduce_hook)."""
    tensor = bucket.buffer()
    state.last_hook_time = state.timer.mark("bucket")
    if not state.buckets:
        torch.autograd.Variable._execution_engine.queue_callback(
            lambda: _finish_backward(state))
    state.local_norm_sq = state.local_norm_sq + squared_norm(tensor)
    state.bytes_reduced += tensor.numel() * tensor.element_size()
    tensor.mul_(state.batch / state.global_batch)
    work = dist.all_reduce(tensor, group=state.process_group, async_op=True)
    future = torch.futures.Future(devices=[tensor.device] if tensor.is_cuda else None)
    state.buckets.append((work, tensor, future))
    return future


def ring_bytes_sent(bytes_reduced: int, world_size: int) -> float:
    """Bytes one rank sends in a ring all-reduce of `bytes_reduced` bytes (NCCL's busbw
    convention, 2(p-1)/p * n); gloo's ring algorithms send the same."""
    if world_size <= 1:
        return 0.0
    return 2.0 * (world_size - 1) / world_size * bytes_reduced
