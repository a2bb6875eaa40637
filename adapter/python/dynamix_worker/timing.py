"""Where the worker's per-iteration times come from. The controller and the comm hook take a
`mark(point)` at the iteration's start ("start"), once the batch is loaded ("data"), at each
bucket's hook ("bucket": the last one ends compute), once the all-reduces are waited for
("comm") and at end_iteration ("end"); the differences of the marks, in seconds, are the
iteration's times.

On the host clock (`HostTimer`, CPU tensors) a mark is time.perf_counter(). On a GPU the host
runs ahead of the device: a hook called when autograd has *launched* a bucket's kernels would
read compute short and the rest as communication. `CudaTimer` records a
torch.cuda.Event(enable_timing=True) on the current stream at the same points instead, so the
differences are device time. Its marks resolve only once the device has passed them; the
controller keeps a window's marks and resolves them at the window's end, where it gathers anyway:
one synchronize of the window's last mark, no host synchronization per iteration."""
import time
from typing import Optional

import torch

POINTS = ("start", "data", "bucket", "comm", "end")


class HostTimer:
    """time.perf_counter() marks: resolved at once."""
    deferred = False

    def mark(self, point: str) -> float:
        return time.perf_counter()

    def seconds(self, start, end) -> float:
        return end - start

    def synchronize(self, mark) -> None:
        pass


class CudaTimer:
    """torch.cuda.Event(enable_timing=True) marks recorded on the device's current stream (on the
    thread that marks: the autograd thread runs the hook and the end-of-backward callback with
    the stream the backward pass uses). Read them after synchronize() of a later mark on the
    same stream; a mark not yet reached then is waited for alone."""
    deferred = True

    def __init__(self, device: torch.device):
        self.device = device

    def mark(self, point: str):
        event = torch.cuda.Event(enable_timing=True)
        event.record(torch.cuda.current_stream(self.device))
        return event

    def seconds(self, start, end) -> float:
        for event in (start, end):
            if not event.query():
                event.synchronize()
        return start.elapsed_time(end) / 1000.0

    def synchronize(self, mark) -> None:
        mark.synchronize()


def timing_device(model: Optional[torch.nn.Module], backend: Optional[str]) -> torch.device:
    """The device whose clock times the iteration: the model's parameters' CUDA device, else the
    current CUDA device under NCCL, else the CPU."""
    if model is not None:
        for parameter in model.parameters():
            if parameter.device.type == "cuda":
                return parameter.device
    if backend == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def timer_for(device: torch.device):
    """CudaTimer for a CUDA device, HostTimer otherwise."""
    device = torch.device(device)
    if device.type == "cuda":
        return CudaTimer(device)  # index None: the current device's stream at each mark
    return HostTimer()
