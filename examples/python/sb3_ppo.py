"""stable-baselines3's PPO on dynamix's environment, exported as a policy.pt and evaluated by
`dynamix evaluate` against two rules (docs/python.md, "An outside RL library").

Every worker decides with one shared network on its own row (dynamix.sb3.PerWorkerPolicy), so
the policy written decides for any cluster size. SB3 learns from one reward per step, the mean
of the workers' rewards. One command from a clean clone installs what is missing, builds,
and runs this (SB3 pinned in .venv-sb3 beside Debian's torch and numpy):

    bash scripts/sb3.sh --timesteps 8192
"""
import argparse
import pathlib
import subprocess
import sys

import torch

import dynamix
import dynamix.sb3
from stable_baselines3 import PPO


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenario", default="quickstart")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timesteps", type=int, default=8192, help="environment steps SB3 learns from")
    p.add_argument("--n-steps", type=int, default=256, help="SB3 PPO's rollout length")
    p.add_argument("--eval-seeds", type=int, default=5)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario value, as dynamix --set")
    p.add_argument("--out", default="runs/sb3", help="the folder for policy.pt and evaluation/")
    p.add_argument("--dynamix", default="build/apps/dynamix", help="the dynamix executable")
    return p.parse_args()


def main():
    args = parse_args()
    torch.set_num_threads(1)
    env = dynamix.make_env(args.scenario, reward="mean", seed=args.seed, overrides=args.set)
    model = dynamix.sb3.quiet(PPO(dynamix.sb3.PerWorkerPolicy, env, n_steps=args.n_steps,
                                  batch_size=64, seed=args.seed, device="cpu", verbose=0))
    model.learn(total_timesteps=args.timesteps)
    out = pathlib.Path(args.out)
    policy = dynamix.sb3.export_policy(model, out / "policy.pt", env=env)
    # SB3's actor is a tanh MLP: written in dynamix's own code, which dynamix loads as it is.
    print(f"wrote {policy} after {args.timesteps} steps")
    command = [args.dynamix, "evaluate", "--scenario", args.scenario,
               "--policies", f"sb3=ppo:{policy},goodput:100,static:64",
               "--seeds", str(args.eval_seeds), "--quiet", "--out", str(out / "evaluation")]
    for override in args.set:
        command += ["--set", override]
    print(" ".join(command), flush=True)
    return subprocess.run(command, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
