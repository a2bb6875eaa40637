"""The environments keep Gymnasium's contract: the checks of gymnasium.utils.env_checker.check_env
and of a vector env's (seeded determinism, spaces known before reset and containing what is
returned, dtypes, shapes, options, next-step autoreset, `_key` info masks, fresh writable
arrays, action validation) reimplemented so that they run without Gymnasium; with Gymnasium
importable, also check_env itself and the class hierarchy.
usage: gymnasium_contract_test.py  (with build/python on PYTHONPATH)"""
import inspect
import os
import sys
import unittest
import warnings

import numpy as np

import dynamix

try:
    import gymnasium
    from gymnasium.utils.env_checker import check_env
except ImportError:
    gymnasium = None
    # The pinned Gymnasium of scripts/setup.sh's .venv, when there is one (it sees this numpy).
    venv = os.environ.pop("DYNAMIX_GYMNASIUM_PYTHON", "")
    if __name__ == "__main__" and os.access(venv, os.X_OK):
        os.execv(venv, [venv, *sys.argv])

SHORT = ["training.budget_epochs=2"]
TINY = ["training.budget_epochs=0.6"]  # episodes of a few decisions, for autoreset
RANDOM = {"randomize": True, "min_workers": 4, "max_workers": 12}


def equal(a, b):
    """Gymnasium's data_equivalence, exact: dicts key by key, arrays by dtype, shape and value."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return (isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
                and bool(np.all((a == b) | (a != a) & (b != b))))
    return type(a) is type(b) and a == b


def shares_memory(a, b):
    if isinstance(a, dict):
        return any(shares_memory(a[k], b[k]) for k in a if k in b)
    return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.shares_memory(a, b)


class SingleEnvContract(unittest.TestCase):
    def envs(self):
        yield dynamix.make_env("quickstart", overrides=SHORT)
        yield dynamix.make_env("quickstart", reward="sum", overrides=SHORT)
        yield dynamix.make_env("quickstart", reward="mean", overrides=SHORT, **RANDOM)

    def test_spaces_are_known_before_reset_and_hold_what_is_returned(self):
        for env in self.envs():
            workers = env.action_space.shape[0]
            features = len(env.feature_names)
            self.assertEqual(env.observation_space.shape, (workers, features))
            self.assertEqual(env.observation_space.dtype, np.float32)
            np.testing.assert_array_equal(env.action_space.nvec, len(env.batch_changes))
            obs, info = env.reset(seed=4)
            self.assertIsInstance(info, dict)
            self.assertEqual(obs.dtype, np.float32)
            self.assertIn(obs, env.observation_space)
            obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
            self.assertIn(obs, env.observation_space)
            self.assertIs(type(terminated), bool)
            self.assertIs(type(truncated), bool)
            if env._reward == "per_worker":
                self.assertEqual((reward.dtype, reward.shape), (np.float32, (workers,)))
            else:
                self.assertIs(type(reward), float)

    def test_reset_signature_and_seeded_determinism(self):
        for env in self.envs():
            parameters = inspect.signature(env.reset).parameters
            self.assertIsNone(parameters["seed"].default)
            self.assertIsNone(parameters["options"].default)
            obs_1, _ = env.reset(seed=123)
            rng_1 = env.unwrapped.np_random.bit_generator.state
            obs_2, _ = env.reset()
            obs_3, _ = env.reset(seed=123)
            rng_3 = env.unwrapped.np_random.bit_generator.state
            obs_4, _ = env.reset()
            self.assertTrue(equal(obs_1, obs_3) and equal(obs_2, obs_4))
            self.assertFalse(equal(obs_1, obs_2))
            self.assertEqual(rng_1, rng_3)
            env.reset(seed=456)
            self.assertNotEqual(env.unwrapped.np_random.bit_generator.state, rng_1)

    def test_step_determinism_under_a_seed(self):
        for env in self.envs():
            env.action_space.seed(123)
            action = env.action_space.sample()
            env.reset(seed=123)
            first = env.step(action)
            env.reset(seed=123)
            second = env.step(action)
            for a, b in zip(first, second):
                self.assertTrue(equal(a, b), (a, b))
            self.assertFalse(first[3], "truncated after one step")

    def test_reset_options_none_empty_known_and_unknown(self):
        env = dynamix.make_env("quickstart", overrides=SHORT)
        np.testing.assert_array_equal(env.reset(seed=1, options=None)[0],
                                      env.reset(seed=1, options={})[0])
        _, info = env.reset(seed=1, options={"initial_batch": 64})
        self.assertEqual(info["batches"], [64] * 8)
        with self.assertRaisesRegex(ValueError, r"unknown options \['bogus'\]"):
            env.reset(options={"bogus": 1})
        with self.assertRaisesRegex(TypeError, "expected None or a dict"):
            env.reset(options=[1])

    def test_returned_arrays_are_fresh_and_writable(self):
        env = dynamix.make_env("quickstart", overrides=SHORT)
        env.action_space.seed(123)
        calls = [env.reset(seed=123)]
        for _ in range(2):
            obs, rewards, _, _, info = env.step(env.action_space.sample())
            calls.append((obs, info))
            self.assertTrue(rewards.flags.writeable)
        calls.append(env.reset(seed=123))
        for i, (obs_1, info_1) in enumerate(calls):
            self.assertTrue(obs_1.flags.writeable)
            for obs_2, info_2 in calls[i + 1:]:
                self.assertFalse(shares_memory(obs_1, obs_2) or shares_memory(info_1, info_2))

    def test_actions_outside_the_action_space_raise_naming_the_worker(self):
        env = dynamix.make_env("quickstart", overrides=SHORT)
        env.reset(seed=1)
        for bad, shown in ((5, "5 is outside"), (-1, "-1 is outside"), (1.7, "1.7 is not"),
                           (2.0, "2.0 is a float")):
            actions = np.full(8, 2.0 if isinstance(bad, float) else 2)
            actions[6 if bad != 2.0 else 0] = bad
            self.assertNotIn(actions, env.action_space)
            with self.assertRaisesRegex(ValueError, rf"actions\[{6 if bad != 2.0 else 0}\]: {shown}"):
                env.step(actions)
        self.assertIn(np.full(8, 2), env.action_space)
        env.step(np.full(8, 2, dtype=np.uint8))

    def test_rewards_sum_and_mean_are_the_per_worker_rewards_reduced(self):
        envs = {mode: dynamix.make_env("quickstart", reward=mode, overrides=SHORT, **RANDOM)
                for mode in dynamix.REWARDS}
        for seed in (1, 2, 3):
            for env in envs.values():
                env.reset(seed=seed)
            actions = np.arange(12) % 5
            steps = {mode: env.step(actions) for mode, env in envs.items()}
            per_worker, workers = steps["per_worker"][1], steps["per_worker"][4]["workers"]
            self.assertAlmostEqual(steps["sum"][1], float(per_worker.sum()), places=5)
            self.assertAlmostEqual(steps["mean"][1], float(per_worker[:workers].mean()), places=5)
        with self.assertRaisesRegex(ValueError, "reward: expected one of per_worker, sum, mean"):
            dynamix.make_env("quickstart", reward="max")

    def test_close_twice_is_allowed(self):
        env = dynamix.make_env("quickstart", overrides=SHORT)
        env.close()
        env.close()

    @unittest.skipIf(gymnasium is None, "gymnasium is not importable")
    def test_gymnasium_check_env_passes_without_warnings(self):
        for env in (dynamix.make_env("quickstart", reward="sum", overrides=SHORT),
                    dynamix.make_env("quickstart", reward="mean", overrides=SHORT, **RANDOM),
                    gymnasium.make("dynamix/BatchSize-v0", reward="sum", overrides=SHORT)):
            self.assertIsInstance(env.unwrapped, gymnasium.Env)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                check_env(env.unwrapped, skip_render_check=True)
            self.assertEqual([str(w.message) for w in caught], [])


class VectorEnvContract(unittest.TestCase):
    def vector(self, num_envs=3, seed=10, **options):
        options.setdefault("overrides", SHORT)
        return dynamix.make_vector_env("quickstart", num_envs=num_envs, seed=seed, threads=2,
                                       **options)

    def test_single_and_batched_spaces_are_known_before_reset(self):
        for options in ({}, RANDOM):
            vector = self.vector(**options)
            single_obs, single_act = vector.single_observation_space, vector.single_action_space
            self.assertEqual(vector.observation_space.shape, (3, *single_obs.shape))
            self.assertEqual(vector.action_space.shape, (3, *single_act.shape))
            self.assertEqual(vector.observation_space.dtype, np.float32)
            self.assertEqual(dynamix.AutoresetMode(vector.metadata["autoreset_mode"]),
                             dynamix.AutoresetMode.NEXT_STEP)
            obs, infos = vector.reset()
            self.assertIn(obs, vector.observation_space)
            for i in range(3):
                self.assertIn(obs[i], single_obs)
            obs, rewards, terminated, truncated, infos = vector.step(vector.action_space.sample())
            self.assertIn(obs, vector.observation_space)
            self.assertEqual((rewards.dtype, rewards.shape), (np.float32, single_act.shape and
                                                              (3, single_act.shape[0])))
            self.assertEqual((terminated.dtype, terminated.shape), (np.bool_, (3,)))
            self.assertEqual((truncated.dtype, truncated.shape), (np.bool_, (3,)))
            self.assert_infos_follow_the_vector_convention(infos, 3)

    def assert_infos_follow_the_vector_convention(self, infos, num_envs):
        self.assertIsInstance(infos, dict)
        for key, value in infos.items():
            if key.startswith("_"):
                self.assertIn(key[1:], infos)
                continue
            self.assertEqual(value.shape[0], num_envs, key)
            mask = infos["_" + key]
            self.assertEqual((mask.dtype, mask.shape), (np.bool_, (num_envs,)), key)
        np.testing.assert_array_equal(infos["_time_to_target_s"],
                                      ~np.isnan(infos["time_to_target_s"]))

    def test_reset_is_deterministic_under_a_seed_and_continues_without_one(self):
        a, b = self.vector(), self.vector()
        for x, y in zip(a.reset(seed=5), b.reset(seed=5)):
            self.assertTrue(equal(x, y))
        rng = a.np_random.bit_generator.state
        following, _ = a.reset()
        self.assertEqual(a.np_random.bit_generator.state, rng)
        self.assertFalse(equal(following, b.reset(seed=5)[0]))
        np.testing.assert_array_equal(following, self.vector().reset(seed=8)[0])
        with self.assertRaisesRegex(TypeError, "seed"):
            a.reset(seed=[1, 2, 3])

    def test_reset_options_are_the_single_envs(self):
        vector = self.vector()
        obs, infos = vector.reset(seed=1, options={"initial_batch": 64})
        np.testing.assert_array_equal(infos["batches"], np.full((3, 8), 64))
        single = dynamix.make_env("quickstart", overrides=SHORT)
        for i in range(3):
            np.testing.assert_array_equal(
                obs[i], single.reset(seed=1 + i, options={"initial_batch": 64})[0])
        _, infos = vector.reset(seed=1, options={})
        self.assertFalse(np.all(infos["batches"] == 64))
        with self.assertRaisesRegex(ValueError,
                                    r"unknown options \['bogus'\]; known: \['initial_batch'\]"):
            vector.reset(options={"bogus": 1, "initial_batch": 64})
        with self.assertRaisesRegex(TypeError, "expected None or a dict"):
            vector.reset(options=[1])

    def test_next_step_autoreset_reports_the_reset_and_ignores_actions(self):
        vector = self.vector(num_envs=2, seed=30, overrides=TINY)
        vector.reset()
        actions = np.full((2, 8), 2)
        for _ in range(200):
            _, _, terminated, truncated, infos = vector.step(actions)
            self.assertFalse(np.any(infos["autoreset"]))
            ended = terminated | truncated
            if np.any(ended):
                break
        self.assertTrue(np.any(ended), "no episode ended")
        obs, rewards, terminated, truncated, infos = vector.step(np.full((2, 8), 4))
        np.testing.assert_array_equal(infos["autoreset"], ended)
        i = int(np.flatnonzero(ended)[0])
        self.assertTrue(np.all(rewards[i] == 0) and not terminated[i] and not truncated[i])
        fresh, _ = dynamix.make_env("quickstart", overrides=TINY).reset(seed=30 + i + 2)
        np.testing.assert_array_equal(obs[i], fresh)

    def test_returned_arrays_are_fresh_and_writable(self):
        vector = self.vector()
        vector.action_space.seed(1)
        calls = [vector.reset(seed=1)]
        for _ in range(2):
            obs, rewards, _, _, infos = vector.step(vector.action_space.sample())
            calls.append((obs, infos))
        for i, (obs_1, infos_1) in enumerate(calls):
            self.assertTrue(obs_1.flags.writeable)
            for obs_2, infos_2 in calls[i + 1:]:
                self.assertFalse(shares_memory(obs_1, obs_2) or shares_memory(infos_1, infos_2))

    def test_actions_outside_the_action_space_raise(self):
        vector = self.vector()
        vector.reset()
        actions = np.full((3, 8), 2)
        actions[1, 4] = 5
        with self.assertRaisesRegex(ValueError, "5 for worker 4|actions\\[1, 4\\]"):
            vector.step(actions)
        with self.assertRaisesRegex(ValueError, r"expected an array \[3, 8\]"):
            vector.step(np.full((3, 7), 2))

    def test_rewards_sum_and_mean_reduce_over_each_environments_workers(self):
        vectors = {mode: self.vector(reward=mode, **RANDOM) for mode in dynamix.REWARDS}
        for vector in vectors.values():
            vector.reset(seed=2)
        actions = np.tile(np.arange(12) % 5, (3, 1))
        steps = {mode: vector.step(actions) for mode, vector in vectors.items()}
        per_worker, infos = steps["per_worker"][1], steps["per_worker"][4]
        np.testing.assert_allclose(steps["sum"][1], per_worker.sum(axis=1), rtol=1e-5)
        np.testing.assert_allclose(steps["mean"][1], per_worker.sum(axis=1) / infos["workers"],
                                   rtol=1e-5)
        self.assertEqual(steps["mean"][1].dtype, np.float32)

    def test_close_twice_is_allowed_and_later_calls_raise(self):
        vector = self.vector()
        vector.close()
        vector.close()
        self.assertTrue(vector.closed)
        with self.assertRaisesRegex(RuntimeError, "closed"):
            vector.reset()

    @unittest.skipIf(gymnasium is None, "gymnasium is not importable")
    def test_the_classes_are_gymnasiums(self):
        self.assertIsInstance(dynamix.make_env(), gymnasium.Env)
        self.assertIsInstance(self.vector(), gymnasium.vector.VectorEnv)


if __name__ == "__main__":
    print(f"gymnasium: {gymnasium.__version__ if gymnasium else 'not importable'}")
    unittest.main(verbosity=2)
