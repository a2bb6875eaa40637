"""A single-file PPO (CleanRL style) that trains a batch-size policy against dynamix's Python
bindings, evaluates it with the protocol of `dynamix evaluate` (docs/evaluation.md) and exports
it with dynamix.export_policy as a policy.pt that `dynamix evaluate`, `sweep`, `simulate` and
`serve` take (docs/python.md, "Your own policy in").

Every worker is an agent sharing one actor-critic: its row of the observation in, a
distribution over the batch changes and a value out, trained on its own reward with GAE, as
the C++ trainer does (docs/ppo.md). Run from the repository root after building:

    PYTHONPATH=build/python /usr/bin/python3 examples/python/ppo.py --total-decisions 200000
    build/apps/dynamix evaluate --policies ppo:runs/python-ppo/policy.pt --out runs/python-eval
"""
import argparse
import time

import numpy as np
import torch
from torch import nn

import dynamix


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenario", default="quickstart")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--total-decisions", type=int, default=200_000)
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--num-steps", type=int, default=64, help="decisions per env per rollout")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.999)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--minibatches", type=int, default=4)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--entropy-coef", type=float, default=0.01)
    p.add_argument("--value-coef", type=float, default=0.5)
    p.add_argument("--eval-seeds", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default="runs/python-ppo/policy.pt", help="the policy.pt to write")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario value, as dynamix --set")
    # The environment the README's figures for this example were measured in, not the package's
    # defaults (dynamix.ENV_OPTIONS: train's goodput base, k = 20).
    p.add_argument("--decision-interval", type=int, default=10)
    p.add_argument("--action-base", default="balanced")
    return p.parse_args()


def environment(args):
    """The environment options every env of this example takes."""
    return {"decision_interval": args.decision_interval, "action_base": args.action_base,
            "overrides": args.set}


class Agent(nn.Module):
    def __init__(self, features, actions):
        super().__init__()
        def mlp(out):
            return nn.Sequential(nn.Linear(features, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                                 nn.Linear(64, out))
        self.actor, self.critic = mlp(actions), mlp(1)

    def forward(self, obs):
        return torch.distributions.Categorical(logits=self.actor(obs)), self.critic(obs)[..., 0]


class Normalizer:
    """Running mean and variance of observation features (Welford, batched); normalized values
    are clipped to ±10, as the C++ trainer's and the exported policy's."""

    clip = 10.0

    def __init__(self, features):
        self.mean, self.var, self.count = np.zeros(features), np.ones(features), 1e-4

    def update(self, rows):
        mean, var, n = rows.mean(0), rows.var(0), rows.shape[0]
        delta, total = mean - self.mean, self.count + n
        self.mean = self.mean + delta * n / total
        self.var = (self.var * self.count + var * n + delta**2 * self.count * n / total) / total
        self.count = total

    @property
    def std(self):
        return np.sqrt(self.var + 1e-8)

    def __call__(self, obs):
        x = np.clip((obs - self.mean) / self.std, -self.clip, self.clip)
        return torch.as_tensor(x, dtype=torch.float32)


def train(args):
    torch.manual_seed(args.seed)
    envs = dynamix.make_vector_env(args.scenario, num_envs=args.num_envs, seed=args.seed,
                                   threads=args.threads, **environment(args))
    obs, _ = envs.reset()
    m, workers, features = obs.shape
    agent = Agent(features, len(dynamix.make_env(args.scenario, **environment(args)).batch_changes))
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    norm = Normalizer(features)
    shape = (args.num_steps, m, workers)
    buf_obs = torch.zeros(shape + (features,))
    buf_act, buf_logp, buf_rew, buf_val = (torch.zeros(shape) for _ in range(4))
    buf_done = torch.zeros(shape)
    done = torch.zeros(m)
    decisions, start, update = 0, time.time(), 0
    episode_return = np.zeros(m)
    while decisions < args.total_decisions:
        returns_seen = []
        for t in range(args.num_steps):
            norm.update(obs.reshape(-1, features))
            x = norm(obs)
            with torch.no_grad():
                dist, value = agent(x)
                action = dist.sample()
            buf_obs[t], buf_act[t], buf_logp[t], buf_val[t] = x, action, dist.log_prob(action), value
            buf_done[t] = done[:, None]
            obs, rewards, terminated, truncated, infos = envs.step(action.numpy())
            buf_rew[t] = torch.tensor(rewards)
            # Bootstrapping through truncation is left out for brevity (CleanRL does the same).
            done = torch.as_tensor(terminated | truncated, dtype=torch.float32)
            episode_return += rewards.mean(axis=1)
            returns_seen += [episode_return[i] for i in range(m) if done[i]]
            episode_return[done.numpy() > 0] = 0
            decisions += m
        with torch.no_grad():
            _, next_value = agent(norm(obs))
            advantages = torch.zeros(shape)
            last = torch.zeros(m, workers)
            for t in reversed(range(args.num_steps)):
                not_done = 1.0 - (done[:, None] if t == args.num_steps - 1 else buf_done[t + 1])
                nxt = next_value if t == args.num_steps - 1 else buf_val[t + 1]
                delta = buf_rew[t] + args.gamma * nxt * not_done - buf_val[t]
                last = delta + args.gamma * args.gae_lambda * not_done * last
                advantages[t] = last
            returns = advantages + buf_val
        flat = lambda b: b.reshape(-1, *b.shape[3:])  # noqa: E731
        b_obs, b_act, b_logp = flat(buf_obs), flat(buf_act), flat(buf_logp)
        b_adv, b_ret = flat(advantages), flat(returns)
        size = b_act.shape[0]
        for _ in range(args.epochs):
            for idx in torch.randperm(size).chunk(args.minibatches):
                dist, value = agent(b_obs[idx])
                ratio = (dist.log_prob(b_act[idx]) - b_logp[idx]).exp()
                adv = (b_adv[idx] - b_adv[idx].mean()) / (b_adv[idx].std() + 1e-8)
                policy_loss = torch.max(-adv * ratio,
                                        -adv * ratio.clamp(1 - args.clip, 1 + args.clip)).mean()
                loss = (policy_loss + args.value_coef * ((value - b_ret[idx]) ** 2).mean()
                        - args.entropy_coef * dist.entropy().mean())
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()
        update += 1
        if returns_seen:
            print(f"update {update} | {decisions} decisions | {decisions / (time.time() - start):.0f}"
                  f" decisions/s | mean return {np.mean(returns_seen):.2f}")
    return agent, norm


def evaluate(args, agent, norm):
    """Greedy, as `dynamix evaluate`: seeds 1000.., every worker from batch 64, to the budget."""
    env = dynamix.make_env(args.scenario, initial_batch=dynamix_initial_batch(),
                           stop_at_target=False, **environment(args))
    times = []
    for seed in range(1000, 1000 + args.eval_seeds):
        obs, info = env.reset(seed=seed)
        while True:
            with torch.no_grad():
                action = agent(norm(obs))[0].logits.argmax(-1)
            obs, _, terminated, truncated, info = env.step(action.numpy())
            if terminated or truncated:
                break
        times.append(info["time_to_target_s"])
    reached = [t for t in times if t is not None]
    mean = f"{np.mean(reached):.1f} s" if reached else "never"
    print(f"evaluation on {args.scenario}: reached {len(reached)}/{len(times)}, "
          f"mean time to target {mean}")


def dynamix_initial_batch():
    return 64  # kEvaluationInitialBatch, the starting batch of `dynamix evaluate`


def export(args, agent, norm):
    """The actor alone (normalized observations in, logits out) with the statistics it was
    trained behind; the environment, made with train()'s options, supplies the rest."""
    env = dynamix.make_env(args.scenario, overrides=args.set)
    out = dynamix.export_policy(agent.actor, norm.mean, norm.std, args.out, env=env,
                                clip=norm.clip)
    # A tanh MLP: written in dynamix's own code, so that dynamix loads it as it is.
    print(f"wrote {out}: build/apps/dynamix evaluate --scenario {args.scenario} "
          f"--policies ppo:{out} --out RUN_DIR")


if __name__ == "__main__":
    arguments = parse_args()
    torch.set_num_threads(1)
    trained = train(arguments)
    evaluate(arguments, *trained)
    export(arguments, *trained)
