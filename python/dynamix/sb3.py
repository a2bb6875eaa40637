"""dynamix with stable-baselines3: a per-worker actor-critic for SB3's PPO (or A2C), and the
adapter that writes what it learned as a policy.pt (docs/python.md, "An outside RL library").

    import dynamix, dynamix.sb3
    from stable_baselines3 import PPO

    env = dynamix.make_env("quickstart", reward="mean")
    model = dynamix.sb3.quiet(PPO(dynamix.sb3.PerWorkerPolicy, env, seed=1)).learn(4096)
    dynamix.sb3.export_policy(model, "runs/sb3/policy.pt", env=env)

SB3's stock MlpPolicy reads the whole [workers, features] observation as one flat vector and
writes the logits of every worker from it, so it is sized for one worker count and cannot be
exported. PerWorkerPolicy is what dynamix's own trainer learns: every worker runs one shared
network on its own row (its features, then the cluster's), and the value is the mean of the
workers' values. The same network then decides for any cluster size.

Needs stable-baselines3 and the Gymnasium it takes; scripts/setup.sh installs pinned versions
into .venv-sb3 beside Debian's torch and numpy (docs/python.md).
"""
import copy
import math

import numpy as np

from . import export as _export

try:
    from torch import nn
    from gymnasium import spaces
    from stable_baselines3.common.base_class import BaseAlgorithm
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.policies import ActorCriticPolicy
    from stable_baselines3.common.torch_layers import FlattenExtractor
except ImportError as error:  # say how to get them, not only what is missing
    raise ImportError(f"dynamix.sb3 needs stable-baselines3 and Gymnasium ({error}); "
                      "scripts/setup.sh installs pinned versions into .venv-sb3 "
                      "(docs/python.md, \"An outside RL library\")") from error

__all__ = ["PerWorkerPolicy", "actor", "export_policy", "quiet"]

DEFAULT_LAYERS = (64, 64)  # SB3's own default for PPO's actor and critic


def quiet(model):
    """`model` with a logger that writes nothing: SB3's own makes an empty folder SB3-<date> in
    the temporary directory at every learn() of a model with verbose=0 and no tensorboard_log."""
    model.set_logger(Logger(None, []))
    return model


def _rows(space):
    """(workers, features, actions) of a dynamix environment's spaces, or a ValueError."""
    observation, action = space
    if not (isinstance(observation, spaces.Box) and len(observation.shape) == 2):
        raise ValueError("PerWorkerPolicy: expected a dynamix observation space, Box "
                         f"[workers, features], found {observation}")
    if not (isinstance(action, spaces.MultiDiscrete) and action.nvec.ndim == 1
            and action.nvec.size == observation.shape[0] and np.all(action.nvec == action.nvec[0])):
        raise ValueError("PerWorkerPolicy: expected a dynamix action space, MultiDiscrete with "
                         f"one equal choice per worker ({observation.shape[0]}), found {action}")
    return observation.shape[0], observation.shape[1], int(action.nvec[0])


def _mlp(inputs, layers, activation):
    modules, width = [], inputs
    for size in layers:
        modules += [nn.Linear(width, size), activation()]
        width = size
    return nn.Sequential(*modules), width


class _PerRow(nn.Module):
    """A network applied to every worker's row: [batch, workers * in] -> [batch, workers * out],
    or with mean=True the mean over the workers, [batch, out]."""

    def __init__(self, net, workers, mean=False):
        super().__init__()
        self.net, self.workers, self.mean = net, workers, mean

    def forward(self, x):
        rows = self.net(x.reshape(x.shape[0], self.workers, -1))
        return rows.mean(1) if self.mean else rows.reshape(x.shape[0], -1)


class _Extractor(nn.Module):
    """SB3's mlp_extractor with one actor and one critic network shared by the workers."""

    def __init__(self, workers, features, layers, activation):
        super().__init__()
        pi, self.pi_width = _mlp(features, layers["pi"], activation)
        vf, self.vf_width = _mlp(features, layers["vf"], activation)
        self.policy_net, self.value_net = _PerRow(pi, workers), _PerRow(vf, workers)
        self.latent_dim_pi, self.latent_dim_vf = workers * self.pi_width, workers * self.vf_width

    def forward(self, features):
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features):
        return self.policy_net(features)

    def forward_critic(self, features):
        return self.value_net(features)


class PerWorkerPolicy(ActorCriticPolicy):
    """SB3's ActorCriticPolicy, each worker deciding with one shared network on its own row.

    net_arch: hidden layer sizes, one list for both networks or dict(pi=[...], vf=[...])
    (default 64, 64); activation_fn (default nn.Tanh) as SB3's. Other arguments are SB3's. The
    observation is read raw: dynamix's features are bounded and of order one (the observation
    space says each bound), so no normalizer is needed; one of the caller's would have to be
    exported with the actor (dynamix.export_policy's obs_mean, obs_std)."""

    def __init__(self, observation_space, action_space, lr_schedule, net_arch=None,
                 activation_fn=nn.Tanh, **kwargs):
        self.dynamix_rows = _rows((observation_space, action_space))
        layers = list(DEFAULT_LAYERS) if net_arch is None else net_arch
        if not isinstance(layers, dict):
            layers = {"pi": list(layers), "vf": list(layers)}
        if set(layers) != {"pi", "vf"}:
            raise ValueError(f"net_arch: expected a list of sizes or dict(pi=[...], vf=[...]), "
                             f"found {net_arch!r}")
        self.dynamix_layers = layers
        super().__init__(observation_space, action_space, lr_schedule, net_arch=layers,
                         activation_fn=activation_fn, **kwargs)

    def _build_mlp_extractor(self):
        workers, features, _ = self.dynamix_rows
        self.mlp_extractor = _Extractor(workers, features, self.dynamix_layers, self.activation_fn)

    def _build(self, lr_schedule):
        """SB3's _build for a per-worker action head and a value that averages the workers'."""
        workers, _, actions = self.dynamix_rows
        self._build_mlp_extractor()
        self.action_net = _PerRow(nn.Linear(self.mlp_extractor.pi_width, actions), workers)
        self.value_net = _PerRow(nn.Linear(self.mlp_extractor.vf_width, 1), workers, mean=True)
        if self.ortho_init:  # SB3's gains: hidden layers sqrt(2), action head 0.01, value 1
            for module, gain in ((self.mlp_extractor, math.sqrt(2)), (self.action_net, 0.01),
                                 (self.value_net, 1.0)):
                module.apply(lambda m, gain=gain: self.init_weights(m, gain=gain))
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1),
                                              **self.optimizer_kwargs)


def actor(model):
    """The per-worker actor of an SB3 model (or its policy) trained with PerWorkerPolicy: a new
    torch.nn.Module mapping observations [workers, features] to logits [workers, actions], for
    any number of workers, the form dynamix.export_policy takes."""
    policy = model.policy if isinstance(model, BaseAlgorithm) else model
    if not isinstance(policy, PerWorkerPolicy):
        raise TypeError("model: expected an SB3 model trained with dynamix.sb3.PerWorkerPolicy, "
                        f"found policy {type(policy).__name__} (a stock policy reads the whole "
                        "cluster as one vector and decides for one worker count only)")
    if policy.features_extractor_class is not FlattenExtractor:
        raise TypeError("model: expected PerWorkerPolicy's default features extractor "
                        f"(FlattenExtractor), found {policy.features_extractor_class.__name__}")
    return nn.Sequential(copy.deepcopy(policy.mlp_extractor.policy_net.net),
                         copy.deepcopy(policy.action_net.net)).cpu().eval()


def export_policy(model, path, *, env):
    """Writes an SB3 model trained with PerWorkerPolicy on `env` as a policy.pt (what
    dynamix.export_policy does for a model of one's own; returns the path written). The
    observation goes in unnormalized: mean 0, standard deviation 1, and a clip no observation
    reaches (the largest bound of env's observation space)."""
    space = env.observation_space
    bound = float(np.max(np.abs(np.concatenate([space.low.ravel(), space.high.ravel()]))))
    if not math.isfinite(bound):
        raise ValueError(f"env: expected a bounded observation space, found {space}")
    features = space.shape[-1]
    return _export.export_policy(actor(model), np.zeros(features), np.ones(features), path,
                                 env=env, clip=bound)
