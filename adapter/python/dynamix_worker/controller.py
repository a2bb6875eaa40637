"""The worker side of dynamix: at the end of window w rank 0 sends the window's measured metrics to
the arbitrator without waiting; at the end of window w+1 it takes the answer if it has arrived
(the arbitrator answers for apply_at_iteration = that window end), checks it against the guard
rails, broadcasts it over the process group, and every rank switches batches, sampler and LR at
that iteration. A slow, dead or wrong arbitrator never stops training: the job keeps its
batches, logs why, and asks again."""
import dataclasses
import logging
import math
import os
import time
from dataclasses import dataclass
from typing import List, Optional

import torch
import torch.distributed as dist

from . import _protocol
from .comm_hook import WeightedHookState, hold, ring_bytes_sent, weighted_allreduce_hook
from .metrics import ITERATION_FIELDS, TCP_FIELDS, TcpCounters, memory_util, worker_window
from .sampler import GlobalCursorSampler
from .timing import timer_for, timing_device

LOG = logging.getLogger("dynamix_worker")
LR_RULES = ("none", "linear", "sqrt", "adascale")
# The arbitrator's bound on a reported notice, seconds (kMaxNoticeSeconds, adapter/server/report.h).
MAX_NOTICE_S = 86400.0
# The arbitrator's bound on |train_loss| (kWindowRanges, adapter/server/report.cpp).
MAX_LOSS = 1e9
# Without a max_batch, a rank's batch never grows past this multiple of its starting batch, so
# that no arbitrator can take it where its memory or its optimization would not follow.
DEFAULT_MAX_BATCH_GROWTH = 8


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
    optimizer.step(); close() on every rank at the end; see adapter/README.md."""

    def __init__(self, model: torch.nn.parallel.DistributedDataParallel,
                 optimizer: torch.optim.Optimizer, sampler: GlobalCursorSampler,
                 arbitrator: Optional[str], interval: int, job_id: str = "job",
                 lr_rule: str = "linear", reference_batch: Optional[float] = None,
                 deadline_s: float = 1.0, gpu_type: str = "cpu",
                 total_iterations: Optional[int] = None, max_batch_change: float = 2.0,
                 max_lr_change: float = 2.0, max_lr_factor: float = 64.0,
                 min_lr_factor: float = 1.0 / 64.0,
                 max_batch: Optional[int] = None, token: Optional[str] = None,
                 root_certificates: Optional[str] = None, lookahead: int = 0, timer=None,
                 lr_factor: float = 1.0, wait_for_answer: bool = False):
        if lr_rule not in LR_RULES:
            raise ValueError(f"lr_rule: expected one of {', '.join(LR_RULES)}, found {lr_rule!r}")
        if interval < 1:
            raise ValueError(f"interval: expected >= 1, found {interval}")
        if not 0 <= lookahead < interval:
            raise ValueError(f"lookahead: expected in [0, interval={interval}), found "
                             f"{lookahead}")
        if total_iterations is not None and total_iterations < 1:
            raise ValueError(f"total_iterations: expected >= 1, found {total_iterations}")
        for name, value in (("deadline_s", deadline_s), ("max_batch_change", max_batch_change),
                            ("max_lr_change", max_lr_change), ("max_lr_factor", max_lr_factor),
                            ("min_lr_factor", min_lr_factor), ("lr_factor", lr_factor)):
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name}: expected a finite number > 0, found {value}")
        for name, value in (("max_batch_change", max_batch_change),
                            ("max_lr_change", max_lr_change)):
            if value < 1:
                raise ValueError(f"{name}: expected >= 1 (a ratio), found {value}")
        if not min_lr_factor <= lr_factor <= max_lr_factor:
            raise ValueError(f"lr_factor: expected a number in [min_lr_factor={min_lr_factor:g}, "
                             f"max_lr_factor={max_lr_factor:g}], found {lr_factor}")
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()
        if max_batch is not None and max_batch < max(1, sampler.batches[self.rank]):
            raise ValueError(f"max_batch: {max_batch} is below this rank's starting batch "
                             f"{sampler.batches[self.rank]}")
        if max_batch is None:  # an absolute cap all the same: see DEFAULT_MAX_BATCH_GROWTH
            max_batch = max(1, sampler.batches[self.rank]) * DEFAULT_MAX_BATCH_GROWTH
        self.sampler, self.optimizer, self.interval = sampler, optimizer, interval
        self.job_id, self.lr_rule, self.deadline_s = job_id, lr_rule, deadline_s
        self.gpu_type, self.total_iterations = gpu_type, total_iterations
        self.max_batch_change, self.max_lr_change = max_batch_change, max_lr_change
        self.max_lr_factor, self.min_lr_factor = max_lr_factor, min_lr_factor
        self.lookahead = lookahead
        # Rank 0 waits for each answer (at most its call's deadline_s) instead of keeping the
        # batches when it is late: the decisions then do not depend on timing.
        self.wait_for_answer = wait_for_answer
        self.reference_batch = float(reference_batch or sampler.global_batch)
        self.device = (torch.device("cuda", torch.cuda.current_device())
                       if dist.get_backend() == "nccl" else torch.device("cpu"))
        # The optimizer's LRs as given are the base LRs, tuned for reference_batch; a job that
        # starts at another global batch passes the rule's factor for it (lr_factor).
        self.base_lrs = [group["lr"] for group in optimizer.param_groups]
        self._set_lr_factor(float(lr_factor))
        self.iteration = 0
        self.window_index = 0
        self.pending: Optional[Switch] = None
        self.applied: List[Switch] = []
        # Every rank's rows of ITERATION_FIELDS for the window that ended last, [ranks,
        # iterations, fields] (None before the first window's end).
        self.window_rows: Optional[torch.Tensor] = None
        self.refusals: List[str] = []
        # time.monotonic() when this rank's worker leaves (notice()); None without a notice.
        self._leaves_at: Optional[float] = None
        self._validation_accuracy = 0.0
        self._previous_accuracy: Optional[float] = None
        self._rows: List[List[float]] = []
        # Iterations whose times are marks not yet read (see _resolve).
        self._pending_rows: list = []
        # The clock of compute, communication and data loading: CUDA events on the model's GPU
        # (or under NCCL), the host clock otherwise (timing.py); a test may pass its own.
        self.timer = timer if timer is not None else timer_for(
            timing_device(model, dist.get_backend()))
        self._started = time.perf_counter()
        self._tcp_counters = TcpCounters()
        self._tcp = self._tcp_counters.read()
        declared = torch.tensor([max_batch], dtype=torch.int64, device=self.device)
        gathered = [torch.empty_like(declared) for _ in range(self.world_size)]
        dist.all_gather(gathered, declared)
        hold(declared, gathered)  # every collective's tensors: see comm_hook._HELD
        self.max_batches = [int(t) for t in gathered]
        self._in_force = sampler.batches
        self.hook_state = WeightedHookState(
            process_group=None, batch=sampler.batches[self.rank],
            global_batch=sampler.global_batch, world_size=self.world_size, timer=self.timer)
        model.register_comm_hook(self.hook_state, weighted_allreduce_hook)
        # Rank 0: the report in flight (its window, its serialized bytes, the call's future).
        self._in_flight = None
        self._late = []  # calls left to reach their deadline
        self._channel = self._stub = None
        if self.rank == 0 and arbitrator:
            self._connect(arbitrator, token or os.environ.get("DYNAMIX_TOKEN"),
                          root_certificates)

    def _connect(self, address: str, token: Optional[str], root_certificates: Optional[str]):
        import grpc
        self._pb2, grpc_stubs = _protocol.load()
        # Retry every 200-500 ms, so a restarted arbitrator is reached within a second (gRPC's
        # default backoff grows to 120 s). gRPC core takes the "min" backoff as the least time
        # one connection attempt may take: 1 s leaves a TLS handshake over a WAN room. No
        # keepalive pings: the calls are short, each has a deadline, and a server's default
        # policy (a ping per 5 minutes between calls) answers more with GOAWAY.
        options = [("grpc.initial_reconnect_backoff_ms", 200),
                   ("grpc.min_reconnect_backoff_ms", 1000),
                   ("grpc.max_reconnect_backoff_ms", 500)]
        if root_certificates:
            with open(root_certificates, "rb") as pem:
                credentials = grpc.ssl_channel_credentials(root_certificates=pem.read())
            self._channel = grpc.secure_channel(address, credentials, options)
        else:
            self._channel = grpc.insecure_channel(address, options)
        self._metadata = (("authorization", f"Bearer {token}"),) if token else None
        self._stub = grpc_stubs.ArbitratorStub(self._channel)

    def close(self) -> None:
        """Call on every rank before the process group ends (it is collective): waits until no
        rank has communication in flight, ends the calls to the arbitrator and closes the
        connection (an open gRPC channel can keep a forked rank from exiting). The tensors of
        the last collectives stay held by the package (comm_hook.hold) until the interpreter's
        end, so that no gloo thread is left to free them."""
        if getattr(self, "_closed", False):
            return
        self._closed = True
        if dist.is_initialized():
            dist.barrier()
        self.hook_state.reset()
        for call in self._late + ([self._in_flight[2]] if self._in_flight else []):
            call.cancel()
        self._in_flight, self._late = None, []
        if self._channel is not None:
            self._channel.close()
            self._channel, self._stub = None, None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def batch(self) -> int:
        """This rank's batch in force (the sampler may have served batches ahead)."""
        return self.hook_state.batch

    @property
    def batches(self) -> List[int]:
        return list(self._in_force)

    @property
    def validation_accuracy(self) -> float:
        return self._validation_accuracy

    @validation_accuracy.setter
    def validation_accuracy(self, value: float) -> None:
        """The latest validation accuracy in [0, 1], reported with every window from now on."""
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"validation_accuracy: expected a number in [0, 1], found {value}")
        self._validation_accuracy = float(value)

    def notice(self, seconds: float) -> None:
        """This rank's worker leaves `seconds` from now: its preemption notice (AWS EC2 spot
        gives 120 s, GCP and Azure spot VMs 30 s). From the window's end on, its reports carry
        the seconds left then (leaving_in_s, never below 0), and a rule such as
        goodput-notice:100 moves its share to the survivors before it goes. A later call
        replaces an earlier one. Cheap and safe from a signal handler or another thread: one
        attribute store, no lock, no collective (the value travels with the window's gather);
        not kept by state_dict(), since a resumed job runs on other machines."""
        seconds = float(seconds)
        if not (math.isfinite(seconds) and 0.0 <= seconds <= MAX_NOTICE_S):
            raise ValueError(f"notice: expected seconds in [0, {MAX_NOTICE_S:g}], found {seconds}")
        self._leaves_at = time.monotonic() + seconds

    def _leaving_in_s(self) -> float:
        leaves_at = self._leaves_at
        return math.inf if leaves_at is None else max(0.0, leaves_at - time.monotonic())

    def next_indices(self) -> List[int]:
        """Starts the iteration, then returns this rank's sample indices."""
        self.start_iteration()
        return self.sampler.next_indices()

    def start_iteration(self) -> None:
        """Applies a decision due at this iteration (hook weights, LR) and starts its clock; call
        it before fetching the batch when the sampler feeds a DataLoader (or use batches())."""
        if self.pending is not None and self.pending.iteration <= self.iteration:
            self._apply(self.pending)
            self.pending = None
        self.hook_state.reset()
        self._iteration_start = self.timer.mark("start")
        self._data_done = None

    def loader_batches(self, loader):
        """Yields a DataLoader's batches (its batch_sampler being this job's sampler), each
        iteration started before the wait for its batch, which counts as data loading. A loader
        with workers draws num_workers × prefetch_factor batches ahead: a controller made with
        lookahead 0 takes that as its lookahead (the same on every rank, checked); one made
        with another lookahead below it is refused."""
        ahead = loader.num_workers * (loader.prefetch_factor or 2) if loader.num_workers else 0
        if ahead and self.lookahead == 0:
            if ahead >= self.interval:
                raise ValueError(f"the DataLoader draws {ahead} batches ahead (num_workers × "
                                 f"prefetch_factor), not less than interval={self.interval}: "
                                 "use a longer interval or fewer batches ahead")
            self.lookahead = ahead
        elif self.lookahead < ahead:
            raise ValueError(f"lookahead: expected at least num_workers × prefetch_factor = "
                             f"{ahead} for this DataLoader, found {self.lookahead}")
        self._require_equal_lookahead()
        iterator = iter(loader)
        while True:
            self.start_iteration()
            try:
                batch = next(iterator)
            except StopIteration:
                return
            self.data_loaded()
            yield batch

    def _require_equal_lookahead(self) -> None:
        """Every rank broadcasts the answer at the same iteration only if all have the same
        lookahead; a difference would hang the job, so it is an error on every rank."""
        mine = torch.tensor([self.lookahead], dtype=torch.int64, device=self.device)
        gathered = [torch.empty_like(mine) for _ in range(self.world_size)]
        dist.all_gather(gathered, mine)
        hold(mine, gathered)
        lookaheads = [int(t) for t in gathered]
        if len(set(lookaheads)) > 1:
            raise ValueError(f"lookahead: the ranks differ ({lookaheads}); give every rank's "
                             "DataLoader the same num_workers and prefetch_factor")

    def data_loaded(self) -> None:
        """The batch is in memory; checks that it is the size in force (a DataLoader drawing
        further ahead than the lookahead would run a batch the gradient weights do not assume)."""
        self._data_done = self.timer.mark("data")
        served = self.sampler.served_batch(self.iteration)
        if served is not None and served != self.batch:
            raise RuntimeError(
                f"iteration {self.iteration}: the batch drawn has {served} samples, the batch in "
                f"force {self.batch}: the data was drawn {self.sampler.iteration - self.iteration}"
                f" iterations ahead, more than lookahead={self.lookahead} (a DataLoader with "
                "workers draws num_workers × prefetch_factor ahead; iterate it with "
                "loader_batches(), or make the controller with that lookahead)")

    def end_iteration(self, loss: float, accuracy: float = 0.0, grad_scale: float = 1.0) -> None:
        """Records the iteration's measurements (accuracy: this rank's training accuracy in
        [0, 1]; grad_scale: the AMP GradScaler's scale the backward ran under, its
        get_scale() before update()); at a window's end, reports and switches."""
        if not 0.0 <= accuracy <= 1.0:
            raise ValueError(f"accuracy: expected a number in [0, 1], found {accuracy}")
        if not (math.isfinite(grad_scale) and grad_scale > 0):
            raise ValueError(f"grad_scale: expected a finite number > 0, found {grad_scale}")
        end = self.timer.mark("end")
        state = self.hook_state
        # The marks and the norms (0-dim tensors, on the GPU there) are read at the window's
        # end (_resolve): no host synchronization per iteration.
        self._pending_rows.append((
            self._iteration_start, self._data_done, state.last_hook_time, state.comm_done_time,
            end, ring_bytes_sent(state.bytes_reduced, self.world_size), state.local_norm_sq,
            state.global_norm_sq, grad_scale,
            loss.detach() if isinstance(loss, torch.Tensor) else float(loss), float(accuracy),
            memory_util(self.device), float(self.batch)))
        if not getattr(self.timer, "deferred", True):
            self._resolve()
        self.iteration += 1
        if self.iteration % self.interval == 0:
            self._end_window()
        if self.lookahead and (self.iteration + self.lookahead) % self.interval == 0:
            self._broadcast_answer()

    def _apply(self, switch: Switch) -> None:
        self._in_force = list(switch.batches)
        self.hook_state.batch = switch.batches[self.rank]
        self.hook_state.global_batch = sum(switch.batches)
        self._set_lr_factor(switch.lr_factor)
        switch.applied_at = self.iteration
        self.applied.append(switch)

    def _set_lr_factor(self, factor: float) -> None:
        self.lr_factor = factor
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = base * factor

    def _resolve(self) -> None:
        """Turns the iterations' marks into rows of ITERATION_FIELDS: one synchronize of the last
        iteration's end mark (a device timer's earlier marks on its stream are then passed)."""
        if not self._pending_rows:
            return
        seconds = self.timer.seconds
        self.timer.synchronize(self._pending_rows[-1][4])
        for (start, data_done, hook, comm_done, end, sent, local, global_, scale, loss,
             accuracy, memory, batch) in self._pending_rows:
            data_done = start if data_done is None else data_done
            compute_end = end if hook is None else hook
            comm_done = compute_end if comm_done is None else comm_done
            self._rows.append([
                seconds(start, data_done), seconds(data_done, compute_end),
                max(0.0, seconds(compute_end, comm_done)), seconds(start, end), sent,
                float(local) / scale ** 2, float(global_) / scale ** 2, float(loss), accuracy,
                memory, batch])
        self._pending_rows = []

    def _gather(self):
        self._resolve()
        rows = torch.tensor(self._rows, dtype=torch.float64, device=self.device)
        tcp = self._tcp_counters.read()
        window = torch.tensor([tcp[name] - self._tcp[name] for name in TCP_FIELDS] +
                              [self._leaving_in_s()], dtype=torch.float64, device=self.device)
        self._tcp = tcp
        all_rows = [torch.empty_like(rows) for _ in range(self.world_size)]
        all_windows = [torch.empty_like(window) for _ in range(self.world_size)]
        dist.all_gather(all_rows, rows)
        dist.all_gather(all_windows, window)
        hold(rows, window, all_rows, all_windows)
        return torch.stack(all_rows).cpu(), torch.stack(all_windows).cpu()

    def _end_window(self) -> None:
        rows, windows = self._gather()
        self._rows = []
        self.window_rows = rows
        if self.lookahead == 0:
            self._broadcast_answer()
        if self._stub is not None:
            self._send(self.report(rows, windows))
        self.window_index += 1

    def _broadcast_answer(self) -> None:
        """Rank 0 takes the last report's answer; every rank schedules it. Without lookahead this
        is at the window's end, where it applies; with lookahead, that many iterations earlier,
        so the sampler serves the new batches from the window's end though a DataLoader draws
        them ahead."""
        payload = torch.zeros(4 + self.world_size, dtype=torch.float64, device=self.device)
        switch = self._take_answer() if self._stub is not None else None
        if switch is not None:
            payload[:4] = torch.tensor([1, switch.iteration, switch.lr_factor,
                                        switch.window_index], dtype=torch.float64)
            payload[4:] = torch.tensor(switch.batches, dtype=torch.float64)
        dist.broadcast(payload, src=0)
        hold(payload)
        payload = payload.cpu()
        if payload[0] == 1:
            self.pending = Switch(int(payload[1]), [int(b) for b in payload[4:].tolist()],
                                  float(payload[2]), int(payload[3]))
            self.sampler.schedule(self.pending.iteration, self.pending.batches)

    def _send(self, report) -> None:
        """Rank 0: sends the report without waiting; its answer is read a window later."""
        problem = report_problem(report)
        if problem:
            self._keep(f"report not sent: {problem}")
            return
        self._send_bytes(report.window_index, report.SerializeToString())

    def _send_bytes(self, window_index: int, serialized: bytes) -> None:
        report = self._pb2.WindowReport.FromString(serialized)
        # wait_for_ready: while the arbitrator is down the call waits (until its deadline) for
        # the channel instead of failing at once; a waiting call is also what keeps gRPC
        # polling the reconnection, which otherwise is noticed seconds late.
        future = self._stub.Decide.future(report, timeout=self.deadline_s,
                                          metadata=self._metadata, wait_for_ready=True)
        self._in_flight = (window_index, serialized, future)

    def _take_answer(self) -> Optional[Switch]:
        """Rank 0: the previous window's decision if it has arrived (or, with wait_for_answer,
        once it arrives or its call's deadline passes) and passes the checks. None (logged)
        otherwise."""
        import grpc
        if self._in_flight is None:
            return None
        window_index, serialized, future = self._in_flight
        self._in_flight = None
        self._late = [late for late in self._late if not late.done()]
        if not future.done() and not self.wait_for_answer:
            # Not cancelled: a call waiting for the channel is what keeps gRPC driving a
            # reconnection (see _send_bytes). It ends at its deadline; held until then, as a
            # dropped future cancels itself.
            self._late.append(future)
            return self._keep(f"no answer to window {window_index}'s report within a window")
        try:
            decision = future.result()
        except grpc.RpcError as error:
            return self._keep(f"{error.code().name}: {error.details()}")
        except grpc.FutureCancelledError:
            return self._keep("the call was cancelled")
        problem = self._check(decision, self._pb2.WindowReport.FromString(serialized))
        if problem:
            return self._keep(problem)
        return Switch(decision.apply_at_iteration, list(decision.batches), decision.lr_factor,
                      window_index)

    def _check(self, decision, report) -> Optional[str]:
        """Why a decision is refused whole, or None. The bounds are the arbitrator's, with the
        same defaults, against the window the report describes."""
        batches, window_index = list(decision.batches), report.window_index
        if decision.protocol_version != self._pb2.PROTOCOL_VERSION_1:
            return f"protocol_version {decision.protocol_version}, expected 1"
        if decision.window_index != window_index or decision.job_id != self.job_id:
            return (f"an answer for job {decision.job_id!r} window {decision.window_index}, "
                    f"expected {self.job_id!r} window {window_index}")
        due = report.iteration + report.metrics.iterations
        if decision.apply_at_iteration != due:
            return (f"apply_at_iteration {decision.apply_at_iteration}, expected {due} (one "
                    "window after the report)")
        if len(batches) != self.world_size or min(batches, default=0) < 1:
            return f"batches {batches}, expected {self.world_size} sizes >= 1"
        if decision.global_batch != sum(batches):
            return f"global_batch {decision.global_batch} != sum of batches {sum(batches)}"
        ran = round(sum(worker.batch_size for worker in report.metrics.workers))
        change = self.max_batch_change
        if not ran / change <= sum(batches) <= ran * change:
            return (f"global batch {sum(batches)} outside [{ran}/{change:g}, {ran}*{change:g}] "
                    "(max_batch_change)")
        for rank, (batch, cap) in enumerate(zip(batches, self.max_batches)):
            if batch > cap:
                return f"batch {batch} for worker {rank} above its max_batch {cap}"
        factor = decision.lr_factor
        if not (math.isfinite(factor) and factor > 0):
            return f"lr_factor {factor}, expected a finite number > 0"
        reported = report.lr_factor
        if not reported / self.max_lr_change <= factor <= reported * self.max_lr_change:
            return (f"lr_factor {factor:g} outside [{reported:g}/{self.max_lr_change:g}, "
                    f"{reported:g}*{self.max_lr_change:g}] (max_lr_change)")
        if factor > self.max_lr_factor:
            return f"lr_factor {factor:g} above max_lr_factor {self.max_lr_factor:g}"
        if factor < self.min_lr_factor:
            return f"lr_factor {factor:g} below min_lr_factor {self.min_lr_factor:g}"
        return None

    def _keep(self, why: str) -> None:
        message = f"window {self.window_index}: keeping batches {self._in_force}: {why}"
        LOG.warning(message)
        self.refusals.append(message)
        return None

    def state_dict(self) -> dict:
        """Everything a resumed job needs to continue exactly: save it with the model's and the
        optimizer's state on every rank (rank 0's also holds the report awaiting an answer,
        which load_state_dict sends again)."""
        def switch(s):
            return None if s is None else dataclasses.asdict(s)
        self._resolve()
        return {"iteration": self.iteration, "window_index": self.window_index,
                "base_lrs": list(self.base_lrs), "reference_batch": self.reference_batch,
                "lr_factor": self.lr_factor, "batches": list(self._in_force),
                "sampler": self.sampler.state_dict(self.iteration),
                "last_applied": switch(self.applied[-1] if self.applied else None),
                "pending": switch(self.pending), "rows": [list(r) for r in self._rows],
                "previous_accuracy": self._previous_accuracy,
                "validation_accuracy": self._validation_accuracy,
                "elapsed_s": time.perf_counter() - self._started, "world_size": self.world_size,
                "report_in_flight": self._in_flight[:2] if self._in_flight else None}

    def load_state_dict(self, state: dict) -> None:
        """Restores a state_dict(); the optimizer's LR becomes base LR x the LR factor in force,
        whatever order the optimizer's own state was loaded in."""
        if state["world_size"] != self.world_size:
            raise ValueError(f"state: saved by a job of {state['world_size']} workers, this one "
                             f"has {self.world_size}")
        self.iteration, self.window_index = state["iteration"], state["window_index"]
        self.base_lrs, self.reference_batch = list(state["base_lrs"]), state["reference_batch"]
        self.sampler.load_state_dict(dict(state["sampler"], schedule={}))
        self._in_force = list(state["batches"])
        self.hook_state.batch = self._in_force[self.rank]
        self.hook_state.global_batch = sum(self._in_force)
        self._set_lr_factor(state["lr_factor"])
        self.applied = [Switch(**state["last_applied"])] if state["last_applied"] else []
        self.pending = Switch(**state["pending"]) if state["pending"] else None
        if self.pending is not None:
            self.sampler.schedule(self.pending.iteration, self.pending.batches)
        self._rows = [list(r) for r in state["rows"]]
        self._pending_rows = []
        self._previous_accuracy = state["previous_accuracy"]
        self._validation_accuracy = state["validation_accuracy"]
        self._started = time.perf_counter() - state["elapsed_s"]
        if self._stub is not None and state["report_in_flight"] is not None:
            self._send_bytes(*state["report_in_flight"])

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
            validation_accuracy=self._validation_accuracy,
            progress=min(1.0, self.iteration / self.total_iterations)
            if self.total_iterations else 0.0,
            epochs=self.sampler.epochs,
            workers=[pb2.WorkerWindow(**worker_window(rows, windows, rank, self.gpu_type))
                     for rank in range(self.world_size)])
        return pb2.WindowReport(
            protocol_version=pb2.PROTOCOL_VERSION_1, job_id=self.job_id,
            window_index=self.window_index, iteration=self.iteration, metrics=metrics,
            lr_rule=pb2.LrRule.Value("LR_RULE_" + self.lr_rule.upper()),
            reference_batch=self.reference_batch, lr_factor=self.lr_factor,
            max_batches=self.max_batches)


def report_problem(report) -> Optional[str]:
    """Why a report would be refused by the arbitrator's checks, or None: every number finite
    and >= 0 but the loss (any finite number within MAX_LOSS: an NLL of continuous targets or a
    negative ELBO is below 0), accuracies and progress within [0, 1], their change within
    [-1, 1], a notice within MAX_NOTICE_S."""
    metrics = report.metrics
    if not (math.isfinite(metrics.train_loss) and abs(metrics.train_loss) <= MAX_LOSS):
        return (f"metrics.train_loss: expected a number in [-{MAX_LOSS:g}, {MAX_LOSS:g}], found "
                f"{metrics.train_loss}")
    unit = ("train_accuracy", "validation_accuracy", "progress")
    for name, value in [(f"metrics.{n}", getattr(metrics, n)) for n in
                        ("time_s", "iteration_s", "epochs") + unit] + \
            [(f"metrics.workers[{i}].{field.name}", value) for i, worker in
             enumerate(metrics.workers) for field, value in worker.ListFields()
             if field.name != "gpu_type"]:
        if not (math.isfinite(value) and value >= 0):
            return f"{name}: expected a finite number >= 0, found {value}"
        if name.split(".")[-1] in unit and value > 1:
            return f"{name}: expected a number in [0, 1], found {value}"
        if name.endswith(".leaving_in_s") and value > MAX_NOTICE_S:
            return f"{name}: expected a number in [0, {MAX_NOTICE_S:g}], found {value}"
    if not -1 <= metrics.train_accuracy_change <= 1:
        return (f"metrics.train_accuracy_change: expected a number in [-1, 1], found "
                f"{metrics.train_accuracy_change}")
    return None
