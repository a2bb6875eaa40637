"""The Python bindings behave as Gymnasium's environment checker demands (seeded determinism,
observations inside their space, API shapes) and as the C++ environment does.
usage: env_test.py  (with build/python on PYTHONPATH)"""
import threading
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

    def test_arrays_are_read_only_views_that_later_steps_never_change(self):
        env = dynamix.make_env("quickstart", overrides=SHORT)
        obs, _ = env.reset(seed=1)
        kept = obs.copy()
        self.assertFalse(obs.flags.writeable)
        with self.assertRaises(ValueError):
            obs[0, 0] = 1
        for _ in range(3):
            env.step(np.full(8, 2))
        np.testing.assert_array_equal(obs, kept)

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

    def test_randomized_clusters_vary_and_the_spaces_follow(self):
        env = dynamix.make_env("quickstart", randomize=True, min_workers=4, max_workers=12,
                               overrides=SHORT)
        self.assertIsNone(env.observation_space)
        sizes = set()
        for seed in range(6):
            obs, _ = env.reset(seed=seed)
            sizes.add(obs.shape[0])
            self.assertEqual(env.action_space.shape, (obs.shape[0],))
            self.assertTrue(env.observation_space.contains(obs))
        self.assertGreater(len(sizes), 1)

    def test_vector_env_matches_single_environments(self):
        vector = dynamix.make_vector_env("quickstart", num_envs=3, seed=20, threads=2,
                                         overrides=SHORT)
        obs, infos = vector.reset()
        self.assertEqual(obs.shape, (3, 8, len(dynamix.make_env().feature_names)))
        self.assertEqual(len(infos), 3)
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


if __name__ == "__main__":
    unittest.main(verbosity=2)
