"""The TorchScript module of an exported policy: the normalization the C++ loader looks for
(observation_mean, observation_std, observation_clip), then the user's model. Apart from
export.py so that `import dynamix` does not import torch."""
import torch
from torch import nn


class PolicyModule(nn.Module):
    """forward(obs) = model(clamp((obs - mean) / std, -clip, clip)), as the C++ export's."""

    observation_clip: float

    def __init__(self, model, mean, std, clip):
        super().__init__()
        self.model = model
        self.register_buffer("observation_mean", mean)
        self.register_buffer("observation_std", std)
        self.observation_clip = clip

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        x = torch.clamp((obs - self.observation_mean) / self.observation_std,
                        -self.observation_clip, self.observation_clip)
        return self.model(x)

    @torch.jit.export
    def act(self, obs: torch.Tensor) -> torch.Tensor:
        return torch.argmax(self.forward(obs), 1)
