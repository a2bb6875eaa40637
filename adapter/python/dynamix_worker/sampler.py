"""A global cursor over a seeded per-epoch permutation: worker i reads its contiguous slice of
every global batch, so any batch vector works and each sample is read once per epoch."""
from typing import Dict, List, Optional, Sequence

import torch

_HISTORY = 64


class GlobalCursorSampler:
    """Yields this rank's indices for each iteration; usable as a DataLoader batch_sampler, with
    workers too: a switch is scheduled for the iteration whose batch it changes, and a DataLoader
    draws that batch ahead of time (the controller's `lookahead`).

    Every rank holds the same state (seed, epoch, cursor) and advances it by the global batch,
    so the ranks never exchange indices. A global batch that crosses the end of an epoch takes
    its tail from the next epoch's permutation: no sample is dropped or repeated.
    """

    def __init__(self, dataset_size: int, batches: Sequence[int], rank: int, seed: int = 0):
        if dataset_size < 1:
            raise ValueError(f"dataset_size: expected >= 1, found {dataset_size}")
        if not 0 <= rank < len(batches):
            raise ValueError(f"rank: expected in [0, {len(batches)}), found {rank}")
        self.dataset_size = dataset_size
        self.rank = rank
        self.seed = seed
        self.epoch = 0
        self.cursor = 0
        self.iteration = 0  # batches served
        self._schedule: Dict[int, List[int]] = {}  # iteration -> the batches from then on
        self._history: Dict[int, dict] = {}  # iteration -> the state before serving it
        self._batches: List[int] = []
        self._last_start = (0, [])
        self._permutations: Dict[int, torch.Tensor] = {}
        self.set_batches(batches)

    @property
    def batches(self) -> List[int]:
        return list(self._batches)

    @property
    def global_batch(self) -> int:
        return sum(self._batches)

    def set_batches(self, batches: Sequence[int]) -> None:
        batches = [int(b) for b in batches]
        if len(batches) != len(self._batches or batches) or min(batches) < 1:
            raise ValueError(f"batches: expected {len(self._batches or batches)} sizes >= 1, "
                             f"found {batches}")
        self._batches = batches

    def schedule(self, iteration: int, batches: Sequence[int]) -> None:
        """Serves `batches` from the batch of `iteration` on (at once if already reached)."""
        if iteration <= self.iteration:
            self.set_batches(batches)
        else:
            self._schedule[iteration] = [int(b) for b in batches]

    def permutation(self, epoch: int) -> torch.Tensor:
        if epoch not in self._permutations:
            generator = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch)
            self._permutations = {epoch: torch.randperm(self.dataset_size, generator=generator),
                                  **{e: p for e, p in self._permutations.items() if e > epoch - 2}}
        return self._permutations[epoch]

    def _slice(self, start: int, length: int) -> List[int]:
        indices: List[int] = []
        position = self.epoch * self.dataset_size + self.cursor + start
        while length > 0:
            epoch, offset = divmod(position, self.dataset_size)
            take = min(length, self.dataset_size - offset)
            indices += self.permutation(epoch)[offset:offset + take].tolist()
            position += take
            length -= take
        return indices

    def last_global_indices(self) -> List[int]:
        """The whole global batch next_indices() last served a slice of, ranks in order: the
        union batch of that iteration."""
        position, batches = self._last_start
        epoch, cursor = self.epoch, self.cursor
        self.epoch, self.cursor = divmod(position, self.dataset_size)
        try:
            return self._slice(0, sum(batches))
        finally:
            self.epoch, self.cursor = epoch, cursor

    def next_indices(self) -> List[int]:
        """This rank's slice of the next global batch; advances the cursor on every rank."""
        if self.iteration in self._schedule:
            self.set_batches(self._schedule.pop(self.iteration))
        self._history[self.iteration] = self.state_dict()
        self._history.pop(self.iteration - _HISTORY, None)
        self.iteration += 1
        self._last_start = (self.epoch * self.dataset_size + self.cursor, list(self._batches))
        start = sum(self._batches[:self.rank])
        indices = self._slice(start, self._batches[self.rank])
        self.epoch, self.cursor = divmod(self.epoch * self.dataset_size + self.cursor +
                                         self.global_batch, self.dataset_size)
        return indices

    def served_batch(self, iteration: int) -> Optional[int]:
        """This rank's batch served for `iteration`, if it is among the last 64 served."""
        state = self._history.get(iteration)
        return None if state is None else state["batches"][self.rank]

    def __len__(self) -> int:
        """Iterations of one epoch at the current global batch, ceil(dataset_size /
        global_batch), the last one's global batch taking its tail from the next epoch (no
        sample is dropped). The iterator itself never ends: loops, progress bars and LR
        schedules that ask for len() get an epoch's worth at the batches in force, which change
        when the arbitrator's decisions apply."""
        return -(-self.dataset_size // self.global_batch)

    @property
    def epochs(self) -> float:
        """Fractional epochs consumed."""
        return self.epoch + self.cursor / self.dataset_size

    def __iter__(self):
        while True:
            yield self.next_indices()

    def state_dict(self, iteration: Optional[int] = None) -> dict:
        """The state, or as it was before serving `iteration`'s batch (one of the last 64: a
        DataLoader has drawn batches ahead of the iteration being trained)."""
        if iteration is not None and iteration != self.iteration:
            if iteration not in self._history:
                raise ValueError(f"iteration: {iteration} is not among the last {_HISTORY} "
                                 f"served (up to {self.iteration})")
            return self._history[iteration]
        return {"seed": self.seed, "epoch": self.epoch, "cursor": self.cursor,
                "batches": list(self._batches), "dataset_size": self.dataset_size,
                "iteration": self.iteration, "schedule": dict(self._schedule)}

    def load_state_dict(self, state: dict) -> None:
        if state["dataset_size"] != self.dataset_size:
            raise ValueError(f"dataset_size: the state is for {state['dataset_size']} samples, "
                             f"this sampler has {self.dataset_size}")
        self.seed, self.epoch, self.cursor = state["seed"], state["epoch"], state["cursor"]
        self.iteration = state.get("iteration", 0)
        self._schedule = {int(i): list(b) for i, b in state.get("schedule", {}).items()}
        self._history = {}
        self._permutations = {}
        self.set_batches(state["batches"])
