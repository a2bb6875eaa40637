"""dynamix from Python: the batch-size environment with the Gymnasium API.

    import dynamix
    env = dynamix.make_env("quickstart", seed=1)
    obs, info = env.reset()
    while True:
        actions = env.action_space.sample()          # one action index per worker
        obs, rewards, terminated, truncated, info = env.step(actions)
        if terminated or truncated:
            break

Observations are float32 arrays [workers, features] (row i: worker i's features, then the
cluster's); rewards are float32 [workers], one per worker (sum or average them for a
single-agent learner). The arrays view the simulator's buffers without a copy and are
read-only; copy one to change it. The worker count is the scenario's: fixed for a scenario,
varying per episode with randomize=True (observation_space and action_space then follow the
current episode and are set by reset). An environment serves one call at a time: another
thread's call meanwhile raises RuntimeError (give each thread its own), as does any call after
close(). Actions must be integers (or floats holding integers); NaN, infinities and fractions
raise ValueError.

Options (keyword arguments of make_env and make_vector_env): overrides (a list of
"dotted.key=value", as --set), randomize (False), min_workers / max_workers (with randomize),
and the environment's options below, with the defaults `dynamix train` uses (ENV_OPTIONS holds
them: name, key, type, unit, range, default and meaning).
"""
import numpy as np

from . import _dynamix
from ._dynamix import EnvError, InputError
from .export import export_policy

try:  # Real Gymnasium spaces (and registration) when Gymnasium is installed.
    import gymnasium as _gymnasium
    from gymnasium.spaces import Box, MultiDiscrete
except ImportError:  # The same attributes without it.
    _gymnasium = None
    from .spaces import Box, MultiDiscrete

__all__ = ["make_env", "make_vector_env", "BatchSizeEnv", "VectorEnv", "EnvError", "InputError",
           "ENV_OPTIONS", "export_policy"]

# The environment's options table (gym/env_knobs.cpp), the one the command line reads.
ENV_OPTIONS = tuple(_dynamix.env_knobs())
__doc__ += "".join(f"\n    {row['name']} ({row['default']}): {row['meaning']}" for row in ENV_OPTIONS
                   if hasattr(_dynamix.Options(), row["name"]))


def _options(options):
    native = _dynamix.Options()
    for key, value in options.items():
        if not hasattr(native, key):
            raise TypeError(f"unknown option {key!r}; known: "
                            f"{', '.join(k for k in dir(native) if not k.startswith('_'))}")
        setattr(native, key, list(value) if key == "overrides" else value)
    return native


def _spaces(schema, workers, leading=()):
    low = np.tile(np.asarray(schema["low"], dtype=np.float32), (*leading, workers, 1))
    high = np.tile(np.asarray(schema["high"], dtype=np.float32), (*leading, workers, 1))
    observation = Box(low=low, high=high, dtype=np.float32)
    action = MultiDiscrete(np.full((*leading, workers), len(schema["actions"]), dtype=np.int64))
    return observation, action


class BatchSizeEnv(_gymnasium.Env if _gymnasium is not None else object):
    """One simulated training job; a centralized agent picks every worker's batch change."""

    metadata = {"render_modes": []}
    render_mode = None

    def __init__(self, scenario="quickstart", seed=0, **options):
        self._env = _dynamix.Env(scenario, _options(options))
        self._schema = self._env.schema()
        self._next_seed = int(seed)
        self.feature_names = list(self._schema["names"])
        self.batch_changes = list(self._schema["actions"])
        self.observation_space = self.action_space = None
        if self._env.fixed_workers is not None:
            self._set_spaces(self._env.fixed_workers)

    def _set_spaces(self, workers):
        self.observation_space, self.action_space = _spaces(self._schema, workers)

    def reset(self, seed=None, options=None):
        """Starts an episode (seed: this one, then seed + 1, ...); returns (obs, info)."""
        if options:
            raise ValueError(f"reset options are not supported: {sorted(options)}")
        seed = self._next_seed if seed is None else int(seed)
        obs, info = self._env.reset(seed)  # the seed is kept only if this call is let through
        self._next_seed = seed + 1
        self._set_spaces(obs.shape[0])
        return obs, info

    def step(self, actions):
        """actions: an action index per worker; returns (obs, rewards, terminated, truncated,
        info)."""
        return self._env.step(actions)  # any integer array or sequence (checked in C++)

    @property
    def workers(self):
        return self._env.workers

    def close(self):
        """Frees the simulator; any later call raises RuntimeError. Closing twice is fine."""
        self._env.close()


class VectorEnv:
    """num_envs environments on C++ threads, next-step autoreset (Gymnasium >= 1.0): arrays are
    stacked [num_envs, workers, ...]; every environment must have the same worker count."""

    def __init__(self, scenario="quickstart", num_envs=4, seed=0, threads=0, **options):
        self._vector = _dynamix.VectorEnv(scenario, int(num_envs), int(threads), _options(options))
        self._schema = self._vector.schema()
        self._seed = int(seed)
        self.num_envs = int(num_envs)
        self.observation_space = self.action_space = None

    def reset(self, seed=None, options=None):
        if options:
            raise ValueError(f"reset options are not supported: {sorted(options)}")
        seed = self._seed if seed is None else int(seed)
        obs, infos = self._vector.reset(seed)
        self._seed = seed
        self.observation_space, self.action_space = _spaces(self._schema, obs.shape[1],
                                                            (self.num_envs,))
        return obs, infos

    def step(self, actions):
        return self._vector.step(actions)

    def close(self):
        """Stops the threads and frees the simulators; any later call raises RuntimeError."""
        self._vector.close()


def make_env(scenario="quickstart", seed=0, **options):
    """A BatchSizeEnv on a built-in scenario name or a scenario file."""
    return BatchSizeEnv(scenario, seed, **options)


def make_vector_env(scenario="quickstart", num_envs=4, seed=0, threads=0, **options):
    """A VectorEnv: environment i's episodes use seeds seed + i, seed + i + num_envs, ..."""
    return VectorEnv(scenario, num_envs, seed, threads, **options)


if _gymnasium is not None and "dynamix/BatchSize-v0" not in _gymnasium.registry:
    _gymnasium.register(id="dynamix/BatchSize-v0", entry_point="dynamix:BatchSizeEnv")
