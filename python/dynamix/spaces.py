"""Box and MultiDiscrete with the attributes of gymnasium.spaces, for when Gymnasium is absent."""
import numpy as np


class Box:
    """A box in R^shape between low and high (arrays of that shape), like gymnasium.spaces.Box."""

    def __init__(self, low, high, shape=None, dtype=np.float32, seed=None):
        self.dtype = np.dtype(dtype)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), shape or np.shape(low)).copy()
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), self.low.shape).copy()
        self.shape = self.low.shape
        self._rng = np.random.default_rng(seed)

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= self.low) and np.all(x <= self.high))

    def sample(self):
        return self._rng.uniform(self.low, self.high).astype(self.dtype)

    def seed(self, seed=None):
        self._rng = np.random.default_rng(seed)

    def __repr__(self):
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"


class MultiDiscrete:
    """One discrete choice in [0, n) per element, like gymnasium.spaces.MultiDiscrete."""

    def __init__(self, nvec, dtype=np.int64, seed=None):
        self.nvec = np.asarray(nvec, dtype=np.int64)
        self.shape = self.nvec.shape
        self.dtype = np.dtype(dtype)
        self._rng = np.random.default_rng(seed)

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= 0) and np.all(x < self.nvec))

    def sample(self):
        return self._rng.integers(0, self.nvec).astype(self.dtype)

    def seed(self, seed=None):
        self._rng = np.random.default_rng(seed)

    def __repr__(self):
        return f"MultiDiscrete({self.nvec.tolist()})"
