"""The Python bindings behave as Gymnasium's environment checker demands (seeded determinism,
observations inside their space, API shapes) and as the C++ environment does.
usage: env_test.py  (with build/python on PYTHONPATH)"""
import threading
import time
import unittest

import numpy as np

import dynamix

SHORT = ["training.budget_epochs=2"]


def rollout(env, seed, steps=6):
    obs, _ = env.reset(seed=seed)
    trace = [obs.copy()]
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        actions = rng.integers(0, len(env.batch_changes), env.workers)
        obs, rewards, terminated, truncated, _ = env.step(actions)
        trace += [obs.copy(), rewards.copy()]
        if terminated or truncated:
            break
    return trace


class EnvChecker(unittest.TestCase):
    def test_spaces_shapes_and_types(self):
        env = dynamix.make_env("quickstart", overrides=SHORT)
        self.assertEqual(env.observation_space.shape, (8, len(env.feature_names)))
        self.assertEqual(env.action_space.shape, (8,))
        obs, info = env.reset(seed=3)
        self.assertEqual(obs.dtype, np.float32)
        self.assertTrue(env.observation_space.contains(obs))
        for key in ("batches", "iteration", "time_s", "validation_accuracy", "time_to_target_s"):
            self.assertIn(key, info)
        obs, rewards, terminated, truncated, info = env.step(env.action_space.sample())
        self.assertTrue(env.observation_space.contains(obs))
        self.assertEqual(rewards.shape, (8,))
        self.assertEqual(rewards.dtype, np.float32)
        self.assertIsInstance(terminated, bool)
        self.assertIsInstance(truncated, bool)

    def test_seeded_determinism(self):
        a = rollout(dynamix.make_env("quickstart", overrides=SHORT), 5)
        b = rollout(dynamix.make_env("quickstart", overrides=SHORT), 5)
        c = rollout(dynamix.make_env("quickstart", overrides=SHORT), 6)
        self.assertEqual(len(a), len(b))
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
        self.assertFalse(all(np.array_equal(x, y) for x, y in zip(a, c)))

    def test_reset_without_seed_continues_the_sequence(self):
        env = dynamix.make_env("quickstart", seed=10, overrides=SHORT)
        first, _ = env.reset()
        second, _ = env.reset()
        again, _ = dynamix.make_env("quickstart", overrides=SHORT).reset(seed=11)
        np.testing.assert_array_equal(second, again)
        self.assertFalse(np.array_equal(first, second))

    def test_arrays_are_writable_and_the_callers_own(self):
        env = dynamix.make_env("quickstart", overrides=SHORT)
        untouched = dynamix.make_env("quickstart", overrides=SHORT)
        obs, _ = env.reset(seed=1)
        untouched.reset(seed=1)
        kept = obs.copy()
        for _ in range(3):
            env.step(np.full(8, 2))
        np.testing.assert_array_equal(obs, kept)  # later steps never write a returned array
        obs[:] = 7  # nor does writing it reach the environment
        obs, rewards, *_ = env.step(np.full(8, 2))
        self.assertTrue(obs.flags.writeable and rewards.flags.writeable)
        rewards[:] = 0
        for _ in range(4):
            untouched.step(np.full(8, 2))
        for x, y in zip(env.step(np.full(8, 1))[:2], untouched.step(np.full(8, 1))[:2]):
            np.testing.assert_array_equal(x, y)

    def test_episode_ends_and_the_budget_truncates(self):
        env = dynamix.make_env("quickstart", overrides=["training.budget_epochs=0.5"])
        env.reset(seed=1)
        for _ in range(10000):
            _, _, terminated, truncated, _ = env.step(np.full(8, 2))
            if terminated or truncated:
                break
        self.assertTrue(truncated)
        with self.assertRaises(dynamix.EnvError):
            env.step(np.full(8, 2))

    def test_keyword_defaults_are_the_environment_table_defaults(self):
        # One definition: the table dynamix train reads (gym/env_knobs.cpp) gives the defaults,
        # and every row of it is a keyword argument.
        table = {row["name"]: row["default"] for row in dynamix.ENV_OPTIONS}
        self.assertEqual(table["decision_interval"], "20")
        self.assertEqual(table["action_base"], "goodput")
        native = dynamix._dynamix.Options()
        for name, default in table.items():
            # A list's default may be described rather than given: actions' is "the action
            # base's" (gym/action_base.cpp), an empty list here.
            shown = native.env_value(name)
            self.assertEqual(shown, "" if name == "actions" else default, name)
        self.assertEqual(dynamix.make_env("quickstart", overrides=SHORT).batch_changes,
                         [50, 71, 100, 141, 200])

    def test_every_environment_option_is_a_keyword_argument_checked_by_its_row(self):
        env = dynamix.make_env("quickstart", overrides=SHORT, actions=[-20, 0, 20],
                               action_base="global", decision_lag=1, max_batch_change=2,
                               stop_at_target=False)
        self.assertEqual(env.batch_changes, [-20, 0, 20])
        native = dynamix._options({"decision_lag": 1, "max_batch_change": 2.5,
                                   "stop_at_target": False}, "training")
        self.assertEqual([native.env_value(n) for n in ("decision_lag", "max_batch_change",
                                                        "stop_at_target")], ["1", "2.5", "false"])
        with self.assertRaisesRegex(dynamix.EnvError, "decision_lag: expected an integer in"):
            dynamix.make_env("quickstart", decision_lag=5)
        with self.assertRaisesRegex(dynamix.EnvError, "decision_interval: .*found '1.7'"):
            dynamix.make_env("quickstart", decision_interval=1.7)

    def test_bad_input_is_a_clear_error(self):
        env = dynamix.make_env("quickstart", overrides=SHORT)
        env.reset(seed=1)
        with self.assertRaisesRegex(dynamix.EnvError, "action"):
            env.step(np.full(8, 99))
        with self.assertRaisesRegex(dynamix.EnvError, "8"):
            env.step(np.full(3, 2))
        with self.assertRaisesRegex(TypeError, "unknown option 'bogus'"):
            dynamix.make_env("quickstart", bogus=1)
        with self.assertRaisesRegex(dynamix.InputError, "nosuch"):
            dynamix.make_env("nosuch")
        with self.assertRaisesRegex(dynamix.EnvError, "action_base"):
            dynamix.make_env("quickstart", action_base="sideways")

    def test_randomized_clusters_vary_inside_spaces_padded_to_max_workers(self):
        env = dynamix.make_env("quickstart", randomize=True, min_workers=4, max_workers=12,
                               overrides=SHORT)
        self.assertEqual(env.observation_space.shape, (12, len(env.feature_names)))
        self.assertEqual(env.action_space.shape, (12,))
        sizes = set()
        for seed in range(6):
            obs, info = env.reset(seed=seed)
            workers = info["workers"]
            sizes.add(workers)
            self.assertEqual(env.workers, workers)
            self.assertTrue(env.observation_space.contains(obs))
            self.assertTrue(np.all(obs[workers:] == 0))
            obs, rewards, _, _, info = env.step(np.full(12, 4))
            self.assertTrue(env.observation_space.contains(obs))
            self.assertEqual(len(info["batches"]), workers)
            self.assertTrue(np.all(obs[workers:] == 0) and np.all(rewards[workers:] == 0))
        self.assertGreater(len(sizes), 1)

    def test_randomized_vector_env_pads_and_masks_each_environment(self):
        vector = dynamix.make_vector_env("quickstart", num_envs=4, seed=3, randomize=True,
                                         min_workers=4, max_workers=12, overrides=SHORT)
        obs, infos = vector.reset()
        self.assertEqual(obs.shape, (4, 12, len(dynamix.make_env().feature_names)))
        self.assertGreater(len(set(infos["workers"])), 1)
        for _ in range(3):
            obs, rewards, _, _, infos = vector.step(vector.action_space.sample())
            self.assertTrue(vector.observation_space.contains(obs))
            mask = infos["worker_mask"]
            np.testing.assert_array_equal(mask.sum(axis=1), infos["workers"])
            self.assertTrue(np.all(obs[~mask] == 0) and np.all(rewards[~mask] == 0))

    def test_vector_env_matches_single_environments(self):
        vector = dynamix.make_vector_env("quickstart", num_envs=3, seed=20, threads=2,
                                         overrides=SHORT)
        obs, infos = vector.reset()
        self.assertEqual(obs.shape, (3, 8, len(dynamix.make_env().feature_names)))
        self.assertEqual(infos["iteration"].shape, (3,))
        actions = np.tile(np.arange(8) % 5, (3, 1))
        obs, rewards, terminated, truncated, infos = vector.step(actions)
        self.assertEqual(rewards.shape, (3, 8))
        self.assertEqual(terminated.shape, (3,))
        for i in range(3):
            single = dynamix.make_env("quickstart", overrides=SHORT)
            single.reset(seed=20 + i)
            expected, expected_rewards, *_ = single.step(actions[i])
            np.testing.assert_array_equal(obs[i], expected)
            np.testing.assert_array_equal(rewards[i], expected_rewards)

    def test_vector_infos_are_the_callers_own_whether_kept_dropped_or_changed(self):
        def vector():
            return dynamix.make_vector_env("quickstart", num_envs=3, seed=4, threads=2,
                                           randomize=True, min_workers=2, max_workers=6,
                                           overrides=["training.budget_epochs=0.6"])

        # What a caller may do to infos it then drops: none of it reaches the next step's.
        changes = [lambda i: i["batches"].resize(i["batches"].size, refcheck=True),
                   lambda i: setattr(i["_workers"].flags, "writeable", False),
                   lambda i: setattr(i["time_s"], "strides", (0,)),
                   lambda i: i.pop("epochs"),
                   lambda i: i.update(extra=1),
                   lambda i: i["decision"].fill(-1),
                   lambda i: held.append((i["iteration"], i["iteration"].copy()))]
        held = []

        def step_and_drop(t, actions):
            infos = dropped.step(actions)[4]
            self.assertEqual(list(infos), list(copies[-1]))
            for key, value in infos.items():
                np.testing.assert_array_equal(value, copies[-1][key], f"step {t}: {key}")
                self.assertEqual(value.dtype, copies[-1][key].dtype)
                self.assertTrue(value.flags.writeable)
            changes[t % len(changes)](infos)

        kept, dropped = vector(), vector()
        kept_infos = [kept.reset()[1]]
        copies = [{k: v.copy() for k, v in kept_infos[0].items()}]
        dropped.reset()
        rng = np.random.default_rng(4)
        for t in range(40):
            actions = rng.integers(0, 5, kept.action_space.shape)
            kept_infos.append(kept.step(actions)[4])
            copies.append({k: v.copy() for k, v in kept_infos[-1].items()})
            step_and_drop(t, actions)
        self.assertTrue(any(i["autoreset"].any() for i in kept_infos))
        for infos, copy in zip(kept_infos, copies):  # later steps never write returned infos
            for key, value in infos.items():
                np.testing.assert_array_equal(value, copy[key])
        for array, copy in held:
            np.testing.assert_array_equal(array, copy)

    def test_environments_step_on_threads(self):
        results = {}

        def run(seed):
            results[seed] = rollout(dynamix.make_env("quickstart", overrides=SHORT), seed)

        threads = [threading.Thread(target=run, args=(s,)) for s in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for seed in (1, 2):
            alone = rollout(dynamix.make_env("quickstart", overrides=SHORT), seed)
            for x, y in zip(results[seed], alone):
                np.testing.assert_array_equal(x, y)


IN_USE = "already in use by another thread"
# Long steps (the GIL released for ~0.2 ms each) in an episode longer than a second of them.
LONG_STEPS = {"decision_interval": 100, "stop_at_target": False,
              "overrides": ["training.budget_epochs=100000", "training.budget_time_s=1e7"]}


def hammer(env, actions):
    """Two threads step env with the same actions until one fails, for at most a second;
    returns the successful steps and [(error, seconds from the start)]. Joined with a timeout:
    a hang fails."""
    start, stop = threading.Barrier(2), threading.Event()
    steps, errors = [0, 0], []

    def run(t):
        start.wait()
        while not stop.is_set() and time.monotonic() - began < 1:
            try:
                env.step(actions)
            except Exception as error:
                errors.append((error, time.monotonic() - began))
                stop.set()
                return
            steps[t] += 1

    threads = [threading.Thread(target=run, args=(t,), daemon=True) for t in (0, 1)]
    began = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads), "a thread hangs inside step"
    return sum(steps), errors


class Stalling:
    """Actions whose conversion holds step in progress until released: a second call is then
    certain to overlap it."""

    def __init__(self, actions):
        self.actions, self.entered, self.release = actions, threading.Event(), threading.Event()

    def __array__(self, dtype=None):
        self.entered.set()
        self.release.wait(10)
        return np.asarray(self.actions)


class Misuse(unittest.TestCase):
    def assert_refuses_a_second_thread(self, env, actions, calls, name):
        stalled = Stalling(actions)
        first = threading.Thread(target=env.step, args=(stalled,), daemon=True)
        first.start()
        self.assertTrue(stalled.entered.wait(10))
        for call in calls:
            with self.assertRaisesRegex(RuntimeError, f"{name}.*{IN_USE}"):
                call()
        stalled.release.set()
        first.join(10)
        self.assertFalse(first.is_alive())

    def test_a_second_thread_in_a_busy_environment_gets_an_error(self):
        env = dynamix.make_env("quickstart", overrides=SHORT)
        env.reset(seed=1)
        self.assert_refuses_a_second_thread(
            env, np.full(8, 2), [lambda: env.step(np.full(8, 2)), lambda: env.reset(seed=9),
                                 lambda: env.workers, env.close], "BatchSizeEnv")
        obs, _ = env.reset()  # seed 2: the refused reset(seed=9) left the sequence alone
        expected, _ = dynamix.make_env("quickstart", overrides=SHORT).reset(seed=2)
        np.testing.assert_array_equal(obs, expected)
        untouched = dynamix.make_env("quickstart", overrides=SHORT)
        for x, y in zip(rollout(env, 5), rollout(untouched, 5)):
            np.testing.assert_array_equal(x, y)

    def test_a_second_thread_in_a_busy_vector_env_gets_an_error(self):
        vector = dynamix.make_vector_env("quickstart", num_envs=2, threads=2, overrides=SHORT)
        vector.reset(seed=1)
        actions = np.full((2, 8), 2)
        self.assert_refuses_a_second_thread(
            vector, actions, [lambda: vector.step(actions), lambda: vector.reset(seed=9),
                              vector.close], "VectorEnv")
        vector.step(actions)

    def test_two_threads_hammering_one_env_leave_it_as_one_thread_would(self):
        env = dynamix.make_env("quickstart", **LONG_STEPS)
        env.reset(seed=1)
        steps, errors = hammer(env, np.full(8, 2))
        self.assertTrue(errors, "both threads stepped one environment unchallenged")
        error, seconds = errors[0]
        self.assertRegex(str(error), f"BatchSizeEnv.step.*{IN_USE}")
        self.assertIsInstance(error, RuntimeError)
        self.assertLess(seconds, 1)
        untouched = dynamix.make_env("quickstart", **LONG_STEPS)
        untouched.reset(seed=1)
        for _ in range(steps):
            untouched.step(np.full(8, 2))
        for x, y in zip(env.step(np.arange(8) % 5), untouched.step(np.arange(8) % 5)):
            np.testing.assert_array_equal(x, y)
        for x, y in zip(rollout(env, 5), rollout(dynamix.make_env("quickstart", **LONG_STEPS), 5)):
            np.testing.assert_array_equal(x, y)

    def test_two_threads_hammering_one_vector_env_neither_hang_nor_break_it(self):
        make = lambda: dynamix.make_vector_env("quickstart", num_envs=2, threads=2, **LONG_STEPS)
        vector = make()
        vector.reset(seed=1)
        actions = np.full((2, 8), 2)
        steps, errors = hammer(vector, actions)
        self.assertTrue(errors, "both threads stepped one vector env unchallenged")
        error, seconds = errors[0]
        self.assertRegex(str(error), f"VectorEnv.step.*{IN_USE}")
        self.assertIsInstance(error, RuntimeError)
        self.assertLess(seconds, 1)
        untouched = make()
        untouched.reset(seed=1)
        for _ in range(steps):
            untouched.step(actions)
        stepped = vector.step(np.tile(np.arange(8) % 5, (2, 1)))
        expected = untouched.step(np.tile(np.arange(8) % 5, (2, 1)))
        for x, y in zip(stepped[:4], expected[:4]):
            np.testing.assert_array_equal(x, y)
        self.assertEqual(stepped[4].keys(), expected[4].keys())
        for key in expected[4]:
            np.testing.assert_array_equal(stepped[4][key], expected[4][key])

    def test_nan_infinite_and_fractional_actions_are_refused_not_cast(self):
        env = dynamix.make_env("quickstart", overrides=SHORT)
        vector = dynamix.make_vector_env("quickstart", num_envs=2, overrides=SHORT)
        env.reset(seed=5)
        vector.reset(seed=5)
        for bad, shown in ((np.nan, "nan"), (np.inf, "inf"), (-np.inf, "-inf"), (1.5, "1.5")):
            actions = np.full(8, 2.0)
            actions[3] = bad
            with self.assertRaisesRegex(ValueError, rf"actions\[3\]: {shown} is not"):
                env.step(actions)
            with self.assertRaisesRegex(ValueError, rf"actions\[1, 3\]: {shown} is not"):
                vector.step(np.stack([np.full(8, 2.0), actions]))
        with self.assertRaisesRegex(dynamix.EnvError, r"actions\[7\]: 4294967298 is outside"):
            env.step([2] * 7 + [2**32 + 2])
        for wrong in (np.full(8, True), ["2"] * 8, [None] * 8):
            with self.assertRaisesRegex(TypeError, "expected integer action indices"):
                env.step(wrong)
        # Whole floats are refused too, as Gymnasium's MultiDiscrete.contains refuses them.
        with self.assertRaisesRegex(dynamix.EnvError, r"actions\[0\]: 2.0 is a float"):
            env.step(np.full(8, 2.0))
        # Refused actions leave the environment as it was.
        untouched = dynamix.make_env("quickstart", overrides=SHORT)
        untouched.reset(seed=5)
        for x, y in zip(env.step(np.full(8, 2)), untouched.step(np.full(8, 2))):
            np.testing.assert_array_equal(x, y)
        for x, y in zip(rollout(env, 6), rollout(untouched, 6)):
            np.testing.assert_array_equal(x, y)

    def test_calls_after_close_raise_and_close_twice_is_fine(self):
        env = dynamix.make_env("quickstart", overrides=SHORT)
        env.reset(seed=1)
        env.close()
        env.close()
        for call in (lambda: env.step(np.full(8, 2)), lambda: env.reset(seed=1),
                     lambda: env.workers):
            with self.assertRaisesRegex(RuntimeError, "BatchSizeEnv.* is closed"):
                call()
        vector = dynamix.make_vector_env("quickstart", num_envs=2, threads=2, overrides=SHORT)
        vector.reset(seed=1)
        vector.close()
        vector.close()
        for call in (lambda: vector.step(np.full((2, 8), 2)), lambda: vector.reset(seed=1)):
            with self.assertRaisesRegex(RuntimeError, "VectorEnv.* is closed"):
                call()


if __name__ == "__main__":
    unittest.main(verbosity=2)
