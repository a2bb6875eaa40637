"""dynamix_worker: per-worker batch sizes for PyTorch DDP jobs, decided by `dynamix serve`."""
from .comm_hook import WeightedHookState, weighted_allreduce_hook
from .controller import AdaptiveBatchController, Switch
from .sampler import GlobalCursorSampler
from .timing import CudaTimer, HostTimer

__all__ = ["AdaptiveBatchController", "CudaTimer", "GlobalCursorSampler", "HostTimer", "Switch",
           "WeightedHookState", "weighted_allreduce_hook"]
