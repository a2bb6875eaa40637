"""The worker side of dynamix: every k iterations rank 0 reports the window's measured metrics to
the arbitrator (with a deadline), broadcasts its decision over the process group, and every rank
switches batches, sampler and LR at the same iteration. A slow, dead or wrong arbitrator never
stops training: the job keeps its batches, logs why, and asks again next window."""
import logging
import math
import time
from dataclasses import dataclass
from typing import List, Optional

import torch
import torch.distributed as dist

from . import _protocol
from .comm_hook import WeightedHookState, ring_bytes_sent, weighted_allreduce_hook
from .metrics import (ITERATION_FIELDS, WINDOW_FIELDS, TcpCounters, memory_util,
                      worker_window)
from .sampler import GlobalCursorSampler

LOG = logging.getLogger("dynamix_worker")
LR_RULES = ("none", "linear", "sqrt", "adascale")


@dataclass
class Switch:
    """A decision every rank applies at `iteration`."""
    iteration: int
    batches: List[int]
    lr_factor: float
    window_index: int
    # The iteration it was applied at on this rank (set when applied).
    applied_at: int = -1


class AdaptiveBatchController:
    """Drives one DDP job's per-worker batches. Call next_indices() at the start of each
    iteration, data_loaded() once the batch is in memory, and end_iteration() after
    optimizer.step(); see adapter/README.md."""

    def __init__(self, model: torch.nn.parallel.DistributedDataParallel,
                 optimizer: torch.optim.Optimizer, sampler: GlobalCursorSampler,
                 arbitrator: Optional[str], interval: int, job_id: str = "job",
                 lr_rule: str = "linear", reference_batch: Optional[float] = None,
                 deadline_s: float = 1.0, gpu_type: str = "cpu",
                 total_iterations: Optional[int] = None):
        if lr_rule not in LR_RULES:
            raise ValueError(f"lr_rule: expected one of {', '.join(LR_RULES)}, found {lr_rule!r}")
        if interval < 1:
            raise ValueError(f"interval: expected >= 1, found {interval}")
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()
        self.sampler, self.optimizer, self.interval = sampler, optimizer, interval
        self.job_id, self.lr_rule, self.deadline_s = job_id, lr_rule, deadline_s
        self.gpu_type, self.total_iterations = gpu_type, total_iterations
        self.reference_batch = float(reference_batch or sampler.global_batch)
        self.device = (torch.device("cuda", torch.cuda.current_device())
                       if dist.get_backend() == "nccl" else torch.device("cpu"))
        self.base_lrs = [group["lr"] for group in optimizer.param_groups]
        self.lr_factor = 1.0
        self.iteration = 0
        self.window_index = 0
        self.pending: Optional[Switch] = None
        self.applied: List[Switch] = []
        self.refusals: List[str] = []
        self.validation_accuracy = 0.0
        self._previous_accuracy: Optional[float] = None
        self._rows: List[List[float]] = []
        self._started = time.perf_counter()
        self._tcp_counters = TcpCounters()
        self._tcp = self._tcp_counters.read()
        self.hook_state = WeightedHookState(
            process_group=None, batch=sampler.batches[self.rank],
            global_batch=sampler.global_batch, world_size=self.world_size)
        model.register_comm_hook(self.hook_state, weighted_allreduce_hook)
        self._stub = self._connect(arbitrator) if self.rank == 0 and arbitrator else None

    def _connect(self, address: str):
        import grpc
        self._pb2, grpc_stubs = _protocol.load()
        self._channel = grpc.insecure_channel(address)
        return grpc_stubs.ArbitratorStub(self._channel)

    def close(self) -> None:
        """Closes the connection to the arbitrator (rank 0); call before the process group ends.
        An open gRPC channel can keep a forked rank from exiting."""
        channel = getattr(self, "_channel", None)
        if channel is not None:
            channel.close()
            self._channel, self._stub = None, None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def batch(self) -> int:
        return self.sampler.batches[self.rank]

    def next_indices(self) -> List[int]:
        """Applies a decision due at this iteration, then returns this rank's sample indices."""
        if self.pending is not None and self.pending.iteration <= self.iteration:
            self._apply(self.pending)
            self.pending = None
        self.hook_state.reset()
        self._iteration_start = time.perf_counter()
        self._data_done = None
        return self.sampler.next_indices()

    def data_loaded(self) -> None:
        self._data_done = time.perf_counter()

    def end_iteration(self, loss: float, accuracy: float = 0.0) -> None:
        """Records the iteration's measurements; at a window's end, reports and decides."""
        now = time.perf_counter()
        state = self.hook_state
        data_done = self._data_done or self._iteration_start
        compute_end = state.last_hook_time or now
        self._rows.append([
            data_done - self._iteration_start, compute_end - data_done,
            max(0.0, (state.comm_done_time or compute_end) - compute_end),
            now - self._iteration_start, ring_bytes_sent(state.bytes_reduced, self.world_size),
            float(state.local_norm_sq), float(state.global_norm_sq), float(loss), float(accuracy),
            memory_util(self.device), float(self.batch)])
        self.iteration += 1
        if self.iteration % self.interval == 0:
            self._end_window()

    def _apply(self, switch: Switch) -> None:
        self.sampler.set_batches(switch.batches)
        self.hook_state.batch = switch.batches[self.rank]
        self.hook_state.global_batch = sum(switch.batches)
        self.lr_factor = switch.lr_factor
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = base * switch.lr_factor
        switch.applied_at = self.iteration
        self.applied.append(switch)

    def _gather(self):
        rows = torch.tensor(self._rows, dtype=torch.float64, device=self.device)
        tcp = self._tcp_counters.read()
        window = torch.tensor([tcp[name] - self._tcp[name] for name in WINDOW_FIELDS],
                              dtype=torch.float64, device=self.device)
        self._tcp = tcp
        all_rows = [torch.empty_like(rows) for _ in range(self.world_size)]
        all_windows = [torch.empty_like(window) for _ in range(self.world_size)]
        dist.all_gather(all_rows, rows)
        dist.all_gather(all_windows, window)
        return torch.stack(all_rows).cpu(), torch.stack(all_windows).cpu()

    def _end_window(self) -> None:
        rows, windows = self._gather()
        self._rows = []
        payload = torch.zeros(3 + self.world_size, dtype=torch.float64, device=self.device)
        if self._stub is not None:
            switch = self._ask(rows, windows)
            if switch is not None:
                payload[0], payload[1], payload[2] = 1, switch.iteration, switch.lr_factor
                payload[3:] = torch.tensor(switch.batches, dtype=torch.float64)
        dist.broadcast(payload, src=0)
        payload = payload.cpu()
        if payload[0] == 1:
            self.pending = Switch(int(payload[1]), [int(b) for b in payload[3:].tolist()],
                                  float(payload[2]), self.window_index)
        self.window_index += 1

    def _ask(self, rows: torch.Tensor, windows: torch.Tensor) -> Optional[Switch]:
        """Rank 0: the report, the arbitrator's answer checked; None (logged) on any failure."""
        import grpc
        report = self.report(rows, windows)
        try:
            decision = self._stub.Decide(report, timeout=self.deadline_s)
        except grpc.RpcError as error:
            return self._keep(f"{error.code().name}: {error.details()}")
        problem = self._check(decision)
        if problem:
            return self._keep(problem)
        return Switch(decision.apply_at_iteration, list(decision.batches), decision.lr_factor,
                      self.window_index)

    def _check(self, decision) -> Optional[str]:
        batches = list(decision.batches)
        if decision.protocol_version != self._pb2.PROTOCOL_VERSION_1:
            return f"protocol_version {decision.protocol_version}, expected 1"
        if decision.window_index != self.window_index or decision.job_id != self.job_id:
            return (f"an answer for job {decision.job_id!r} window {decision.window_index}, "
                    f"expected {self.job_id!r} window {self.window_index}")
        if len(batches) != self.world_size or min(batches, default=0) < 1:
            return f"batches {batches}, expected {self.world_size} sizes >= 1"
        if decision.global_batch != sum(batches):
            return f"global_batch {decision.global_batch} != sum of batches {sum(batches)}"
        if decision.apply_at_iteration < self.iteration:
            return f"apply_at_iteration {decision.apply_at_iteration} is before {self.iteration}"
        if not (math.isfinite(decision.lr_factor) and decision.lr_factor > 0):
            return f"lr_factor {decision.lr_factor}, expected a finite number > 0"
        return None

    def _keep(self, why: str) -> None:
        message = f"window {self.window_index}: keeping batches {self.sampler.batches}: {why}"
        LOG.warning(message)
        self.refusals.append(message)
        return None

    def report(self, rows: torch.Tensor, windows: torch.Tensor):
        """The WindowReport of the window that just ended, from every rank's measurements."""
        pb2 = self._pb2
        f = {name: i for i, name in enumerate(ITERATION_FIELDS)}
        batch = rows[:, :, f["batch"]]
        weights = batch / batch.sum(dim=0)
        accuracy = float((rows[:, :, f["accuracy"]] * weights).sum(dim=0).mean())
        change = 0.0 if self._previous_accuracy is None else accuracy - self._previous_accuracy
        self._previous_accuracy = accuracy
        metrics = pb2.WindowMetrics(
            iterations=rows.shape[1], time_s=time.perf_counter() - self._started,
            iteration_s=float(rows[0, :, f["iteration_s"]].mean()),
            train_loss=float((rows[:, :, f["loss"]] * weights).sum(dim=0).mean()),
            train_accuracy=accuracy, train_accuracy_change=change,
            validation_accuracy=self.validation_accuracy,
            progress=min(1.0, self.iteration / self.total_iterations)
            if self.total_iterations else 0.0,
            epochs=self.sampler.epochs,
            workers=[pb2.WorkerWindow(**worker_window(rows, windows, rank, self.gpu_type))
                     for rank in range(self.world_size)])
        return pb2.WindowReport(
            protocol_version=pb2.PROTOCOL_VERSION_1, job_id=self.job_id,
            window_index=self.window_index, iteration=self.iteration, metrics=metrics,
            lr_rule=pb2.LrRule.Value("LR_RULE_" + self.lr_rule.upper()),
            reference_batch=self.reference_batch)
