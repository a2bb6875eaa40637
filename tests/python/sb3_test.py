"""stable-baselines3 drops in: SB3's PPO learns with dynamix.sb3.PerWorkerPolicy on Debian's torch
and numpy, the policy.pt it exports decides as SB3's policy does, for any worker count, and the
example's round trip through `dynamix evaluate` runs. Runs under scripts/setup.sh's .venv-sb3;
skipped (exit 77) where that has no SB3 (PyPI unreachable when it was set up).
usage: sb3_test.py DYNAMIX_EXE EXAMPLE  (with build/python on PYTHONPATH)"""
import csv
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

try:
    import stable_baselines3
except ImportError:
    venv = os.environ.pop("DYNAMIX_SB3_PYTHON", "")
    if __name__ == "__main__" and os.access(venv, os.X_OK):
        os.execv(venv, [venv, *sys.argv])
    print("skipped: stable-baselines3 is not importable here, nor from .venv-sb3 (scripts/setup.sh "
          "installs it there when PyPI is reachable)")
    sys.exit(77)

import numpy as np
import torch
from stable_baselines3 import PPO

import dynamix
import dynamix.sb3

DYNAMIX, EXAMPLE = sys.argv[1], sys.argv[2]
SHORT = ["training.budget_epochs=2"]


def trained(policy, steps=256):
    env = dynamix.make_env("quickstart", reward="mean", seed=1, overrides=SHORT)
    model = PPO(policy, env, n_steps=128, batch_size=64, n_epochs=2, seed=1, device="cpu", verbose=0)
    return env, dynamix.sb3.quiet(model).learn(steps)


class Recipe(unittest.TestCase):
    def test_sb3_runs_on_debians_torch_and_numpy(self):
        for module in (torch, np):
            self.assertFalse(pathlib.Path(module.__file__).is_relative_to(sys.prefix),
                             f"{module.__name__} {module.__version__} comes from the venv "
                             f"({module.__file__}), not Debian's")
        self.assertEqual(stable_baselines3.__version__, "2.4.1")

    def test_a_quiet_model_leaves_nothing_in_the_temporary_directory(self):
        with tempfile.TemporaryDirectory() as folder:
            before, tempfile.tempdir = tempfile.tempdir, folder
            try:
                trained(dynamix.sb3.PerWorkerPolicy, steps=128)
            finally:
                tempfile.tempdir = before
            self.assertEqual(os.listdir(folder), [])


class Export(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.env, cls.model = trained(dynamix.sb3.PerWorkerPolicy)
        cls.folder = tempfile.TemporaryDirectory()
        cls.path = dynamix.sb3.export_policy(cls.model, pathlib.Path(cls.folder.name) / "p.pt",
                                             env=cls.env)
        cls.loaded = torch.jit.load(str(cls.path))

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def test_the_file_decides_as_sb3s_policy(self):
        for seed in (3, 4):
            obs, _ = self.env.reset(seed=seed)
            for _ in range(5):
                sb3_actions, _ = self.model.predict(obs, deterministic=True)
                tensor = self.model.policy.obs_to_tensor(obs)[0]
                with torch.no_grad():
                    dist = self.model.policy.get_distribution(tensor).distribution
                    sb3_logp = torch.stack([d.logits for d in dist], 1)[0]
                    file_logp = torch.log_softmax(self.loaded(torch.as_tensor(obs)), -1)
                torch.testing.assert_close(file_logp, sb3_logp, rtol=1e-5, atol=1e-5)
                np.testing.assert_array_equal(self.loaded.act(torch.as_tensor(obs)).numpy(),
                                              sb3_actions)
                obs, *_ = self.env.step(sb3_actions)

    def test_one_network_decides_for_any_worker_count(self):
        actor = dynamix.sb3.actor(self.model)
        policy_net = self.model.policy.mlp_extractor.policy_net.net
        rows = torch.as_tensor(self.env.reset(seed=1)[0])
        for workers in (1, 3, 8, 33):
            obs = rows[torch.arange(workers) % rows.shape[0]]
            with torch.no_grad():
                self.assertEqual(list(self.loaded(obs).shape), [workers, 5])
                torch.testing.assert_close(actor(obs),
                                           self.model.policy.action_net.net(policy_net(obs)))

    def test_a_stock_policy_is_refused_naming_the_one_to_use(self):
        env, stock = trained("MlpPolicy", steps=128)
        with self.assertRaisesRegex(TypeError, "PerWorkerPolicy, found policy ActorCriticPolicy"):
            dynamix.sb3.export_policy(stock, pathlib.Path(self.folder.name) / "s.pt", env=env)
        self.assertFalse((pathlib.Path(self.folder.name) / "s.pt").exists())

    def test_spaces_other_than_dynamixs_are_refused(self):
        import gymnasium
        flat = gymnasium.spaces.Box(0, 1, (8,))
        with self.assertRaisesRegex(ValueError, "expected a dynamix observation space"):
            PPO(dynamix.sb3.PerWorkerPolicy, gymnasium.make("CartPole-v1"), device="cpu")
        with self.assertRaisesRegex(ValueError, "expected a dynamix action space"):
            dynamix.sb3.PerWorkerPolicy(gymnasium.spaces.Box(0, 1, (8, 3)), flat, lambda _: 1e-3)


class Example(unittest.TestCase):
    def test_train_export_and_evaluate_in_one_command(self):
        with tempfile.TemporaryDirectory() as folder:
            out = pathlib.Path(folder) / "run"
            done = subprocess.run(
                [sys.executable, EXAMPLE, "--timesteps", "256", "--n-steps", "128",
                 "--eval-seeds", "2", "--set", SHORT[0], "--out", str(out), "--dynamix", DYNAMIX,
                 "--scenario", "hetero32"],
                capture_output=True, text=True, timeout=240, check=False)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            with open(out / "evaluation" / "results.csv", newline="") as results:
                rows = [row for row in csv.DictReader(results) if row["policy"] == "sb3"]
            self.assertEqual(len(rows), 2, done.stdout)  # one per evaluation seed, on 32 workers
            self.assertIn("| sb3 |", done.stdout)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
