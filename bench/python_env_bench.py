"""Python-side twin of bench/env_bench.cpp: the same action pattern through the bindings, so
that steps/s can be set beside BM_EnvStep/8 and BM_VectorEnvStep/8 (scripts/bench.sh runs both).
usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_env_bench.py [seconds]"""
import sys
import time

import numpy as np

import dynamix

# The C++ twin's environment (evaluation_env_options(): balanced base, k = 10), not the training
# default (goodput, k = 20), whose windows are twice as long.
TWIN_OPTIONS = {"decision_interval": 10, "action_base": "balanced"}


def env_steps_per_s(seconds):
    env = dynamix.make_env("quickstart", **TWIN_OPTIONS)
    seed = 1
    env.reset(seed=seed)
    actions = np.zeros(env.workers, dtype=np.int32)
    index = np.arange(env.workers)
    steps, done = 0, False
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        if done:
            seed += 1
            env.reset(seed=seed)
        actions[:] = (steps + index) % 5
        _, _, terminated, truncated, _ = env.step(actions)
        done = terminated or truncated
        steps += 1
    return steps / (time.perf_counter() - start)


def vector_steps_per_s(seconds, environments=4):
    vector = dynamix.make_vector_env("quickstart", num_envs=environments, seed=1, threads=2,
                                     **TWIN_OPTIONS)
    obs, _ = vector.reset()
    # The twin's actions, (steps + i) % 5 for environment i, repeat every 5 steps: made before
    # the clock starts, as the twin's cost next to nothing.
    rows = np.arange(environments)[:, None] + np.zeros(obs.shape[1], dtype=np.int32)
    cycle = [((t * environments + rows) % 5).astype(np.int32) for t in range(5)]
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        vector.step(cycle[(steps // environments) % 5])
        steps += environments
    return steps / (time.perf_counter() - start)


if __name__ == "__main__":
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    print(f"python_env_step/workers:8        steps_per_s={env_steps_per_s(seconds):.0f}")
    print(f"python_vector_env_step/workers:8 steps_per_s={vector_steps_per_s(seconds):.0f}")
