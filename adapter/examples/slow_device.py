"""A slower device emulated on this one, for the examples' --slowdown: a training step whose
gradients are ready `slowdown` times later than this machine has them."""
import time

import torch.nn.functional as F


def train_step(model, optimizer, x, y, slowdown: float):
    """Forward, cross-entropy loss, backward and the optimizer's step; returns (output, loss)."""
    compute_start = time.perf_counter()
    output = model(x)
    loss = F.cross_entropy(output, y)
    if slowdown > 1:  # forward and backward take about three forward passes
        time.sleep((slowdown - 1) * 3 * (time.perf_counter() - compute_start))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return output, loss
