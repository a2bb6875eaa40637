"""Box, MultiDiscrete, Env, VectorEnv and AutoresetMode with Gymnasium's attributes, for when
Gymnasium is absent: the dynamix environments then keep the same API."""
import enum

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
        return (x.shape == self.shape and np.can_cast(x.dtype, self.dtype)
                and bool(np.all(x >= self.low) and np.all(x <= self.high)))

    def __contains__(self, x):
        return self.contains(x)

    def sample(self):
        return self._rng.uniform(self.low, self.high).astype(self.dtype)

    def seed(self, seed=None):
        self._rng = np.random.default_rng(seed)

    def __repr__(self):
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"


class MultiDiscrete:
    """One discrete choice in [0, n) per element, like gymnasium.spaces.MultiDiscrete (whose
    contains, too, accepts an array of the shape whose dtype casts safely to the space's, so no
    float array, and whose values lie in range)."""

    def __init__(self, nvec, dtype=np.int64, seed=None):
        self.nvec = np.asarray(nvec, dtype=np.int64)
        self.shape = self.nvec.shape
        self.dtype = np.dtype(dtype)
        self._rng = np.random.default_rng(seed)

    def contains(self, x):
        x = np.asarray(x)
        return (x.shape == self.shape and np.can_cast(x.dtype, self.dtype)
                and bool(np.all(x >= 0) and np.all(x < self.nvec)))

    def __contains__(self, x):
        return self.contains(x)

    def sample(self):
        return self._rng.integers(0, self.nvec).astype(self.dtype)

    def seed(self, seed=None):
        self._rng = np.random.default_rng(seed)

    def __repr__(self):
        return f"MultiDiscrete({self.nvec.tolist()})"


class AutoresetMode(enum.Enum):
    """gymnasium.vector.AutoresetMode (Gymnasium >= 1.1)."""

    NEXT_STEP = "NextStep"
    SAME_STEP = "SameStep"
    DISABLED = "Disabled"


class _Seeded:
    """np_random, seeded by reset(seed=...), as gymnasium.Env and gymnasium.vector.VectorEnv."""

    _np_random = None
    _np_random_seed = None

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self._np_random = np.random.default_rng(seed)
            self._np_random_seed = seed

    @property
    def np_random(self):
        if self._np_random is None:
            self._np_random = np.random.default_rng()
        return self._np_random

    @property
    def np_random_seed(self):
        return -1 if self._np_random_seed is None else self._np_random_seed

    @property
    def unwrapped(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.close()
        return False


class Env(_Seeded):
    """gymnasium.Env's attributes."""

    metadata = {"render_modes": []}
    render_mode = None
    spec = None

    def render(self):
        return None

    def close(self):
        pass


class VectorEnv(_Seeded):
    """gymnasium.vector.VectorEnv's attributes: close() runs close_extras() once."""

    metadata = {}
    render_mode = None
    spec = None
    closed = False

    def render(self):
        return None

    def close(self, **kwargs):
        if not self.closed:
            self.close_extras(**kwargs)
            self.closed = True

    def close_extras(self, **kwargs):
        pass
