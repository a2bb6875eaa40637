"""A policy trained in Python goes through dynamix.export_policy into the dynamix command:
evaluate, simulate, sweep and serve load it, examples/python/ppo.py's included; export refuses
what the loader would refuse; a file with another observation schema is refused by evaluate
with one line and exit status 2.
usage: export_test.py DYNAMIX_BINARY  (with build/python on PYTHONPATH; exit 77 without torch)"""
import csv
import hashlib
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import unittest
import zipfile

import numpy as np

try:
    import torch
    from torch import nn
except ImportError:
    print("skipped: this interpreter cannot import torch")
    sys.exit(77)

import dynamix

DYNAMIX = sys.argv.pop(1) if len(sys.argv) > 1 else "build/apps/dynamix"
SHORT = ["training.budget_epochs=2"]
EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "ppo.py"
EXTRA = ("schema.json", "actions.json", "action_base", "bounds.json", "decision_interval",
         "version")


def observations(env, seed=1, steps=20):
    """Raw observations of a random rollout, [rows, features]."""
    obs, _ = env.reset(seed=seed)
    rows = [obs.copy()]
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        obs, _, terminated, truncated, _ = env.step(
            rng.integers(0, len(env.batch_changes), env.workers))
        rows.append(obs.copy())
        if terminated or truncated:
            break
    return np.concatenate(rows)


def mlp(features, actions, hidden=16):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(features, hidden), nn.Tanh(), nn.Linear(hidden, actions))


class Favourite(nn.Module):
    """Logits that pick one action whatever the observation, for a policy whose decisions are
    known in advance."""

    def __init__(self, features, actions, favourite):
        super().__init__()
        self.linear = nn.Linear(features, actions)
        with torch.no_grad():
            self.linear.weight.zero_()
            self.linear.bias.fill_(-1.0)
            self.linear.bias[favourite] = 1.0

    def forward(self, x):
        return self.linear(x)


class Double(nn.Module):
    def forward(self, x):
        return x.double()


def trusted(policy):
    """ppo:PATH that lets dynamix run the file's own TorchScript code, as a
    dynamix.export_policy file of a model other than a tanh MLP needs: it holds the Python
    model's code."""
    return f"ppo:{policy}@trust:{hashlib.sha256(policy.read_bytes()).hexdigest()}"


def run(*args, timeout=240):
    return subprocess.run([DYNAMIX, *args], capture_output=True, text=True, timeout=timeout)


class Fixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.TemporaryDirectory(prefix="dynamix-export-")
        cls.dir = pathlib.Path(cls.scratch.name)
        cls.env = dynamix.make_env("quickstart", overrides=SHORT)
        cls.features, cls.actions = len(cls.env.feature_names), len(cls.env.batch_changes)
        raw = observations(cls.env)
        cls.mean, cls.std = raw.mean(0), np.sqrt(raw.var(0) + 1e-8)

    @classmethod
    def tearDownClass(cls):
        cls.env.close()
        cls.scratch.cleanup()

    def export(self, name, model=None, **keywords):
        model = model if model is not None else mlp(self.features, self.actions)
        arguments = dict(obs_mean=self.mean, obs_std=self.std, env=self.env)
        arguments.update(keywords)
        return dynamix.export_policy(model, path=self.dir / name, **arguments)


class ExportedPolicyRunsInTheCommand(Fixture):
    def test_evaluate_runs_the_exported_policy(self):
        # A tanh MLP is written in dynamix's own code: no pin needed.
        policy = self.export("policy.pt")
        out = self.dir / "evaluate"
        result = run("evaluate", "--scenario", "quickstart", "--policies", f"ppo:{policy}",
                     "--seeds", "1", "--set", SHORT[0], "--quiet", "--out", str(out))
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out / "results.csv") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([row["policy"] for row in rows], ["policy"])
        self.assertEqual(rows[0]["kind"], "learned")
        self.assertGreater(int(rows[0]["decisions"]), 0)
        self.assertTrue(math.isfinite(float(rows[0]["total_time_s"])))

    def test_a_tanh_mlp_is_written_as_dynamix_export_writes_it(self):
        # Nested Sequentials (SB3's actor) and a Linear without bias are MLPs too.
        nested = nn.Sequential(nn.Sequential(nn.Linear(self.features, 8), nn.Tanh()),
                               nn.Sequential(nn.Linear(8, 8, bias=False), nn.Tanh(),
                                             nn.Linear(8, self.actions)))
        for name, model in (("flat.pt", mlp(self.features, self.actions)), ("nested.pt", nested)):
            policy = self.export(name, model)
            with zipfile.ZipFile(policy) as archive:
                code = [n for n in archive.namelist() if "/code/" in n and n.endswith(".py")]
            # dynamix's class (dynamix.BatchSizePolicy), no code of the model's.
            self.assertEqual([n.split("/code/")[1] for n in code], ["dynamix.py"], code)
            loaded = torch.jit.load(str(policy))
            obs = torch.from_numpy(self.mean).float().repeat(3, 1) + 0.1
            with torch.no_grad():
                normalized = (obs - torch.from_numpy(self.mean).float()) / torch.from_numpy(
                    self.std).float()
                expected = model(normalized.clamp(-10, 10))
                self.assertTrue(torch.allclose(loaded(obs), expected, rtol=1e-5, atol=1e-6))

    def test_its_code_runs_only_trusted_by_its_sha256(self):
        # Any other model brings its own code.
        policy = self.export("untrusted.pt", Favourite(self.features, self.actions, 1))
        for refused in (f"ppo:{policy}", f"ppo:{policy}@trust:{'0' * 64}"):
            result = run("evaluate", "--scenario", "quickstart", "--policies", refused,
                         "--seeds", "1", "--set", SHORT[0], "--quiet", "--out",
                         str(self.dir / "untrusted"))
            self.assertEqual(result.returncode, 2, result.stderr)
            lines = result.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, result.stderr)
            self.assertIn("untrusted.pt", lines[0])
            self.assertFalse((self.dir / "untrusted" / "results.csv").exists())

    def test_simulate_takes_the_models_decisions(self):
        for favourite in (1, self.actions - 1):
            policy = self.export(f"favourite{favourite}.pt",
                                 Favourite(self.features, self.actions, favourite))
            out = self.dir / f"simulate{favourite}"
            result = run("simulate", "--policy", trusted(policy), "--set", SHORT[0], "--out",
                         str(out))
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertGreater(json.loads((out / "summary.json").read_text())["iterations"], 0)
            with open(out / "decisions.csv") as f:
                actions = [int(row["action"]) for row in csv.DictReader(f)]
            self.assertGreater(len(actions), 8)
            self.assertEqual(set(actions), {favourite})

    def test_the_example_ppos_policy_is_evaluated(self):
        policy = self.dir / "example" / "policy.pt"
        trained = subprocess.run(
            [sys.executable, str(EXAMPLE), "--total-decisions", "256", "--num-envs", "4",
             "--eval-seeds", "1", "--set", SHORT[0], "--out", str(policy)],
            capture_output=True, text=True, timeout=240)
        self.assertEqual(trained.returncode, 0, trained.stderr)
        self.assertIn(f"wrote {policy}", trained.stdout)
        out = self.dir / "example-evaluate"
        result = run("evaluate", "--scenario", "quickstart", "--policies", trusted(policy),
                     "--seeds", "1", "--set", SHORT[0], "--quiet", "--out", str(out))
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out / "results.csv") as f:
            self.assertEqual([row["kind"] for row in csv.DictReader(f)], ["learned"])

    def test_sweep_runs_the_exported_policy(self):
        policy = self.export("sweep.pt")
        out = self.dir / "sweep"
        result = run("sweep", "--scenario", "quickstart", "--policies", trusted(policy),
                     "--grid", "training.budget_epochs=1,2", "--seeds", "1", "--quiet", "--out",
                     str(out))
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out / "results.csv") as f:
            self.assertEqual(len(list(csv.DictReader(f))), 2)

    @unittest.skipIf(os.environ.get("DYNAMIX_SERVE") == "0", "built without the adapter (gRPC)")
    def test_serve_loads_the_exported_policy(self):
        policy = self.export("serve.pt")
        server = subprocess.Popen(
            [DYNAMIX, "serve", "--policy", trusted(policy), "--workers", "8", "--log",
             str(self.dir / "serve-log"), "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            first = server.stdout.readline()  # printed once the policy is loaded and checked
            self.assertIn("dynamix serve: listening on 127.0.0.1:", first)
            self.assertIn(f"({self.env._env.policy_files()['action_base']})", first)
            self.assertIsNone(server.poll())
        finally:
            server.terminate()
            server.wait(timeout=30)
            server.stdout.close()


class ExportChecksTheContract(Fixture):
    def test_the_file_normalizes_as_documented(self):
        model = mlp(self.features, self.actions)
        policy = self.export("contract.pt", model, clip=2.5)
        extra = dict.fromkeys(EXTRA, "")
        loaded = torch.jit.load(str(policy), _extra_files=extra)
        raw = torch.from_numpy(observations(self.env, seed=7))
        normalized = ((raw - torch.from_numpy(self.mean).float())
                      / torch.from_numpy(self.std).float()).clamp(-2.5, 2.5)
        with torch.no_grad():
            torch.testing.assert_close(loaded(raw), model(normalized))
            self.assertTrue(torch.equal(loaded.act(raw), model(normalized).argmax(1)))
        self.assertEqual(json.loads(extra["actions.json"]), self.env.batch_changes)
        names = [f["name"] for block in ("local", "global")
                 for f in json.loads(extra["schema.json"])[block]]
        self.assertEqual(names, self.env.feature_names)

    def test_a_vector_env_and_torch_statistics_do_as_well(self):
        vector = dynamix.make_vector_env("quickstart", num_envs=2, overrides=SHORT,
                                         decision_interval=7)
        try:
            policy = self.export("vector.pt", env=vector, obs_mean=torch.tensor(self.mean),
                                 obs_std=torch.tensor(self.std))
        finally:
            vector.close()
        extra = dict.fromkeys(EXTRA, "")
        torch.jit.load(str(policy), _extra_files=extra)
        self.assertEqual(extra["decision_interval"].decode().strip(), "7")

    def test_a_traced_model_is_exported_when_scripting_fails(self):
        class Unscriptable(nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, x):
                return self.inner(x) * len([1, *range(0)])  # starred lists: no TorchScript

        model = Unscriptable(mlp(self.features, self.actions))
        with self.assertRaises(Exception):
            torch.jit.script(model)
        self.assertTrue(self.export("traced.pt", model).is_file())

    def test_wrong_statistics_are_refused(self):
        cases = {
            "obs_mean: expected shape": dict(obs_mean=self.mean[:-1]),
            "obs_std: expected shape": dict(obs_std=np.stack([self.std, self.std])),
            "obs_mean[2]: expected a finite": dict(obs_mean=np.where(np.arange(self.features) == 2,
                                                                     np.nan, self.mean)),
            "obs_std[0]: expected a standard deviation > 0": dict(obs_std=np.r_[0, self.std[1:]]),
            "obs_std[1]: expected a finite float32": dict(
                obs_std=np.r_[1.0, 1e300, self.std[2:].astype(np.float64)]),
            "clip: expected a finite number > 0": dict(clip=0),
        }
        for message, keywords in cases.items():
            with self.subTest(message), self.assertRaisesRegex(ValueError, re.escape(message)):
                self.export("bad.pt", **keywords)
        self.assertFalse((self.dir / "bad.pt").exists())

    def test_a_model_of_the_wrong_shape_is_refused(self):
        with self.assertRaisesRegex(ValueError, rf"logits of shape \[1, {self.actions}\].*found "
                                                rf"\[1, {self.actions + 1}\]"):
            self.export("bad.pt", mlp(self.features, self.actions + 1))
        with self.assertRaisesRegex(ValueError, r"fails on a float32 \[1, \d+\] batch.*shapes"):
            self.export("bad.pt", mlp(self.features + 1, self.actions))
        with self.assertRaisesRegex(TypeError, "float32 logits, found torch.float64"):
            self.export("bad.pt", nn.Sequential(mlp(self.features, self.actions), Double()))
        with self.assertRaisesRegex(TypeError, "expected a torch.nn.Module"):
            self.export("bad.pt", lambda x: x)
        with self.assertRaisesRegex(TypeError, "env: expected the environment"):
            self.export("bad.pt", env="quickstart")
        self.assertFalse((self.dir / "bad.pt").exists())

    def test_a_failed_export_leaves_the_old_file(self):
        policy = self.export("kept.pt")
        before = policy.read_bytes()
        with self.assertRaises(ValueError):
            self.export("kept.pt", mlp(self.features, self.actions + 1))
        self.assertEqual(policy.read_bytes(), before)
        self.assertEqual(sorted(p.name for p in self.dir.glob(".kept.pt*")), [])


class ForeignPoliciesAreRefused(Fixture):
    def test_evaluate_refuses_another_feature_count_in_one_line(self):
        # A policy of another schema version: one feature fewer, consistently in schema.json,
        # the buffers and the model, so that only the comparison with this build can fail.
        from dynamix._policy_module import PolicyModule

        files = self.env._env.policy_files()
        schema = json.loads(files["schema.json"])
        schema["local"].pop()
        schema["features_per_worker"] -= 1
        files["schema.json"] = json.dumps(schema)
        short = self.features - 1
        module = torch.jit.script(PolicyModule(torch.jit.script(mlp(short, self.actions)),
                                               torch.zeros(short), torch.ones(short), 10.0))
        policy = self.dir / "foreign.pt"
        torch.jit.save(module, str(policy), _extra_files=files)
        result = run("evaluate", "--scenario", "quickstart", "--policies", trusted(policy),
                     "--seeds", "1", "--set", SHORT[0], "--quiet", "--out",
                     str(self.dir / "refused"))
        self.assertEqual(result.returncode, 2, result.stderr)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertIn("foreign.pt", lines[0])
        self.assertIn(f"schema.json: features_per_worker: expected '{self.features}'", lines[0])
        self.assertFalse((self.dir / "refused" / "results.csv").exists())


def as_text(value):
    """A run.json value as the command line writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return " ".join(str(element) for element in value)
    return str(value)


class OnePreset(Fixture):
    def test_make_env_is_the_environment_dynamix_train_learns_in(self):
        trained = run("train", "--steps", "1000", "--envs", "2", "--rollout-steps", "50",
                      "--eval-every", "1000", "--quiet", "--out", str(self.dir / "train"))
        self.assertEqual(trained.returncode, 0, trained.stderr)
        recorded = json.loads((self.dir / "train" / "run.json").read_text())
        env = dynamix.make_env("quickstart")
        self.assertEqual(env.preset, "training")
        self.assertEqual(sorted(recorded["environment"]),
                         sorted(set(env.options) - {"preset", "shaping_discount",
                                                    "shaping_discount_by_time"}))
        for name, value in recorded["environment"].items():
            shown = env.options[name]
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                self.assertEqual(float(shown), float(value), name)
            else:
                self.assertEqual(shown, as_text(value), name)
        self.assertEqual(env.options["shaping_discount"], recorded["ppo"]["gamma"])
        self.assertEqual(env.options["shaping_discount_by_time"],
                         recorded["ppo"]["discount_by_time"])
        self.assertEqual((env.action_base, env.decision_interval), ("goodput", 20))
        env.close()

    def test_the_evaluation_preset_is_chosen_by_name(self):
        env = dynamix.make_env("quickstart", preset="evaluation", decision_interval=7)
        self.assertEqual((env.preset, env.action_base, env.decision_interval),
                         ("evaluation", "balanced", 7))
        self.assertEqual(env.options["shaping_discount"], 1.0)
        self.assertEqual(sorted(dynamix.PRESETS), ["evaluation", "training"])
        env.close()
        with self.assertRaisesRegex(ValueError, "preset: expected one of training, evaluation"):
            dynamix.make_env("quickstart", preset="eval")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + sys.argv[1:], verbosity=2)
