"""dynamix from Python: the batch-size environment, a gymnasium.Env and a
gymnasium.vector.VectorEnv (with the same attributes when Gymnasium is not installed).

    import dynamix
    env = dynamix.make_env("quickstart", seed=1, reward="sum")
    obs, info = env.reset()
    while True:
        actions = env.action_space.sample()          # one action index per worker
        obs, reward, terminated, truncated, info = env.step(actions)
        if terminated or truncated:
            break

Observations are float32 arrays [workers, features] (row i: worker i's features, then the
cluster's), writable and the caller's own. reward="per_worker" (the default, what `dynamix train`
learns from) gives float32 [workers], one per worker; reward="sum" or "mean" a float over the
workers. The spaces are known before reset: sized for the scenario's workers, or with
randomize=True (a cluster drawn per episode) for max_workers, smaller clusters padded with zero
rows (and zero rewards) that info["workers"] (and the vector env's info["worker_mask"]) mark;
actions for padded workers must be in range and are ignored. reset(seed=None, options=None):
options None, {} or {"initial_batch": N} (the vector env: every environment's episode starting
now; its autoresets start at the initial_batch option); other keys raise.
An environment serves one call at a time: another thread's call meanwhile raises RuntimeError
(give each thread its own), as does any call after close(). Actions must be integer arrays in
the action set, what Gymnasium's MultiDiscrete.contains accepts: float arrays (even of whole
numbers, NaN or 1.7) and indices out of range raise ValueError naming the element and value.

The vector env autoresets on the next step (metadata["autoreset_mode"] is
AutoresetMode.NEXT_STEP): the step after an episode ends ignores that environment's actions and
returns its reset observation, reward 0 and info["autoreset"] True. Its infos are a dict of
arrays over the environments, each key beside a boolean `_key` mask (Gymnasium's convention).

Options (keyword arguments of make_env and make_vector_env): reward ("per_worker"), preset
("training": the environment `dynamix train` learns in, its reward shaping discounted by PPO's
default gamma; "evaluation": the one evaluate, sweep and serve run policies in; PRESETS names
them), overrides (a list of "dotted.key=value", as --set), randomize (False: with True, the
family `dynamix train --randomize` trains on), min_workers / max_workers (with randomize), and
the environment's options below, set over the preset's (ENV_OPTIONS holds them: name, key, type,
unit, range, default and meaning). An environment says what it resolved to: env.preset,
env.action_base, env.decision_interval and env.options (every option, and the reward's shaping
discount).
"""
import numpy as np

from . import _dynamix
from ._dynamix import EnvError, InputError
from .export import export_policy

try:  # Real Gymnasium classes (and registration) when Gymnasium is installed.
    import gymnasium as _gymnasium
    from gymnasium import Env as _Env
    from gymnasium.spaces import Box, MultiDiscrete
    from gymnasium.vector import VectorEnv as _VectorEnv
except ImportError:  # The same attributes without it.
    _gymnasium = None
    from .spaces import Box, MultiDiscrete, Env as _Env, VectorEnv as _VectorEnv
try:
    from gymnasium.vector import AutoresetMode
except ImportError:  # Gymnasium 1.0 named no autoreset modes.
    from .spaces import AutoresetMode

__all__ = ["make_env", "make_vector_env", "BatchSizeEnv", "VectorEnv", "EnvError", "InputError",
           "ENV_OPTIONS", "PRESETS", "REWARDS", "AutoresetMode", "export_policy"]

# What a step's reward is: each worker's (float32 [workers]), or their sum or mean (a float).
REWARDS = ("per_worker", "sum", "mean")

# The environments the entry points start from, by name, each with who starts from it.
PRESETS = dict(_dynamix.env_presets())
# The environment's options table (gym/env_knobs.cpp), the one the command line reads.
ENV_OPTIONS = tuple(_dynamix.env_knobs())
__doc__ += "".join(f"\n    {row['name']} ({row['default']}): {row['meaning']}" for row in ENV_OPTIONS)
_ENV_NAMES = frozenset(row["name"] for row in ENV_OPTIONS)
# make_env's options beside the environment's: the scenario's overrides and its family.
_SCENARIO_NAMES = ("overrides", "randomize", "min_workers", "max_workers")


def _option_texts(name, value):
    """An environment option's value as the command line writes it: one text, or one per element
    of a list. Booleans as true/false; a float where an integer belongs is refused by the row."""
    if isinstance(value, (bool, np.bool_)):
        return ["true" if value else "false"]
    if isinstance(value, (list, tuple, np.ndarray)):
        return [str(element) for element in value]
    if not isinstance(value, (str, int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: expected a number, text, flag or list, found {type(value).__name__}")
    return [str(value)]


def _options(options, preset):
    native = _dynamix.Options()
    if preset not in PRESETS:
        raise ValueError(f"preset: expected one of {', '.join(PRESETS)}, found {preset!r}")
    native.use_preset(preset)
    for key, value in options.items():
        if key in _ENV_NAMES:
            native.set_env(key, _option_texts(key, value))
        elif key in _SCENARIO_NAMES:
            setattr(native, key, list(value) if key == "overrides" else value)
        else:
            raise TypeError(f"unknown option {key!r}; known: "
                            f"{', '.join(sorted(_ENV_NAMES) + list(_SCENARIO_NAMES))}")
    return native


def _resolve(env, native):
    """Sets what an environment resolved to as its attributes: preset, options (every option as
    the command line gives it, and the shaping discount), action_base, decision_interval."""
    env.options = dict(native.resolved())
    env.preset = env.options["preset"]
    env.action_base = env.options["action_base"]
    env.decision_interval = int(env.options["decision_interval"])


def _spaces(schema, workers, leading=()):
    low = np.tile(np.asarray(schema["low"], dtype=np.float32), (*leading, workers, 1))
    high = np.tile(np.asarray(schema["high"], dtype=np.float32), (*leading, workers, 1))
    observation = Box(low=low, high=high, dtype=np.float32)
    action = MultiDiscrete(np.full((*leading, workers), len(schema["actions"]), dtype=np.int64))
    return observation, action


def _reward_mode(reward):
    if reward not in REWARDS:
        raise ValueError(f"reward: expected one of {', '.join(REWARDS)}, found {reward!r}")
    return reward


# The keys reset(options=...) takes, the single and the vector env alike.
_RESET_OPTIONS = ("initial_batch",)


def _reset_options(options, known):
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise TypeError(f"reset: options: expected None or a dict, found {type(options).__name__}")
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"reset: unknown options {unknown}; known: {list(known) or 'none'}")
    return options


class BatchSizeEnv(_Env):
    """One simulated training job; a centralized agent picks every worker's batch change."""

    metadata = {"render_modes": []}
    render_mode = None

    def __init__(self, scenario="quickstart", seed=0, reward="per_worker", preset="training",
                 **options):
        self._reward = _reward_mode(reward)
        native = _options(options, preset)
        _resolve(self, native)
        self._env = _dynamix.Env(scenario, native)
        self._schema = self._env.schema()
        self._next_seed = int(seed)
        self.feature_names = list(self._schema["names"])
        self.batch_changes = list(self._schema["actions"])
        self.observation_space, self.action_space = _spaces(self._schema,
                                                            self._env.padded_workers)

    def reset(self, *, seed=None, options=None):
        """Starts an episode (seed: this one, then seed + 1, ...); returns (obs, info).
        options: None, {} or {"initial_batch": N} (every worker's starting batch)."""
        options = _reset_options(options, _RESET_OPTIONS)
        episode_seed = self._next_seed if seed is None else int(seed)
        obs, info = self._env.reset(episode_seed, int(options.get("initial_batch", 0)))
        self._next_seed = episode_seed + 1  # kept only if the reset was let through
        super().reset(seed=seed)
        return obs, info

    def step(self, actions):
        """actions: an action index per worker; returns (obs, reward, terminated, truncated,
        info)."""
        obs, rewards, terminated, truncated, info = self._env.step(actions)
        if self._reward == "per_worker":
            return obs, rewards, terminated, truncated, info
        total = float(rewards.sum(dtype=np.float64))  # padded workers' rewards are zero
        reward = total if self._reward == "sum" else total / info["workers"]
        return obs, reward, terminated, truncated, info

    @property
    def workers(self):
        """The current episode's worker count (rows past it are padding)."""
        return self._env.workers

    def close(self):
        """Frees the simulator; any later call raises RuntimeError. Closing twice is fine."""
        self._env.close()


class VectorEnv(_VectorEnv):
    """num_envs environments on C++ threads, arrays stacked [num_envs, workers, ...] with
    next-step autoreset; environment i's episodes use seeds seed + i, seed + i + num_envs, ..."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}
    render_mode = None

    def __init__(self, scenario="quickstart", num_envs=4, seed=0, threads=0, reward="per_worker",
                 preset="training", **options):
        self._reward = _reward_mode(reward)
        native = _options(options, preset)
        _resolve(self, native)
        self._vector = _dynamix.VectorEnv(scenario, int(num_envs), int(threads), native)
        self._schema = self._vector.schema()
        self._seed = int(seed)
        self.num_envs = int(num_envs)
        workers = self._vector.padded_workers
        self.single_observation_space, self.single_action_space = _spaces(self._schema, workers)
        self.observation_space, self.action_space = _spaces(self._schema, workers,
                                                            (self.num_envs,))
        self.closed = False

    def reset(self, *, seed=None, options=None):
        """Starts an episode in each environment (environment i: seed + i; without a seed, the
        seeds after the last reset's); options: None, {} or {"initial_batch": N} (every
        environment's starting batch in these episodes; autoresets keep the initial_batch
        option). Returns (obs, infos)."""
        options = _reset_options(options, _RESET_OPTIONS)
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise TypeError(f"reset: seed: expected an int (environment i gets seed + i) or None, "
                            f"found {type(seed).__name__}")
        start = self._seed if seed is None else int(seed)
        obs, infos = self._vector.reset(start, int(options.get("initial_batch", 0)))
        self._seed = start + self.num_envs
        super().reset(seed=seed)
        return obs, infos

    def step(self, actions):
        """actions: [num_envs, workers] action indices; returns (obs, rewards, terminated,
        truncated, infos), each an array over the environments."""
        obs, rewards, terminated, truncated, infos = self._vector.step(actions)
        if self._reward == "per_worker":
            return obs, rewards, terminated, truncated, infos
        total = rewards.sum(axis=1, dtype=np.float64)  # padded workers' rewards are zero
        if self._reward == "mean":
            total /= infos["workers"]
        return obs, total.astype(np.float32), terminated, truncated, infos

    def close_extras(self, **kwargs):
        """Stops the threads and frees the simulators; any later call raises RuntimeError."""
        if hasattr(self, "_vector"):  # not when the constructor raised
            self._vector.close()


def make_env(scenario="quickstart", seed=0, reward="per_worker", preset="training", **options):
    """A BatchSizeEnv on a built-in scenario name or a scenario file, from the preset's options
    (training: what dynamix train learns in)."""
    return BatchSizeEnv(scenario, seed, reward, preset, **options)


def make_vector_env(scenario="quickstart", num_envs=4, seed=0, threads=0, reward="per_worker",
                    preset="training", **options):
    """A VectorEnv: environment i's episodes use seeds seed + i, seed + i + num_envs, ..."""
    return VectorEnv(scenario, num_envs, seed, threads, reward, preset, **options)


if _gymnasium is not None and "dynamix/BatchSize-v0" not in _gymnasium.registry:
    _gymnasium.register(id="dynamix/BatchSize-v0", entry_point="dynamix:BatchSizeEnv",
                        kwargs={"preset": "training"})
