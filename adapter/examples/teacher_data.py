"""A generated classification task with a movable gradient noise scale: Gaussian inputs labelled
by a fixed random teacher network, a fraction of the training labels flipped.

Provenance: nothing is downloaded. The teacher is a 2-layer tanh MLP (FEATURES -> TEACHER_HIDDEN
-> CLASSES) drawn from torch.Generator seeded with TEACHER_SEED; its logits are centred per class
over CENTRING_SAMPLES inputs so that the classes are about equally frequent. A sample is x ~ N(0, I)
drawn from a generator seeded with the split's seed, its label the teacher's argmax. Training
labels are then flipped, each with probability label_noise, to a uniformly drawn *other* class
(from a third generator); held-out labels stay clean, so validation accuracy measures how well
the student learned the teacher whatever the noise. Label noise adds per-sample gradient variance
without changing the function to learn, which raises the critical batch (McCandlish et al. 2018).

Same arguments, same tensors, on any machine with the same torch (the generators are torch's
CPU Philox/MT streams): every rank builds the data itself.

    python3 adapter/examples/teacher_data.py --label-noise 0.2   # prints class shares, noise
"""
import argparse
from dataclasses import dataclass

import torch

FEATURES, TEACHER_HIDDEN, CLASSES = 32, 64, 10
TEACHER_SEED = 20181214  # the arXiv date of McCandlish et al., "An Empirical Model of Large-Batch Training"
CENTRING_SAMPLES = 65536
VALIDATION_SEED_OFFSET = 1_000_003


@dataclass
class Split:
    inputs: torch.Tensor   # [n, FEATURES] float32
    labels: torch.Tensor   # [n] int64, as trained on (noisy for training splits)
    clean: torch.Tensor    # [n] int64, the teacher's labels


class Teacher:
    """The fixed labelling function: argmax of a centred random 2-layer tanh MLP."""

    def __init__(self):
        generator = torch.Generator().manual_seed(TEACHER_SEED)
        self.w1 = torch.randn(FEATURES, TEACHER_HIDDEN, generator=generator) / FEATURES ** 0.5
        self.b1 = 0.5 * torch.randn(TEACHER_HIDDEN, generator=generator)
        self.w2 = torch.randn(TEACHER_HIDDEN, CLASSES, generator=generator) / TEACHER_HIDDEN ** 0.5
        self.centre = torch.zeros(CLASSES)
        self.centre = self.logits(torch.randn(CENTRING_SAMPLES, FEATURES,
                                              generator=generator)).mean(0)

    def logits(self, inputs: torch.Tensor) -> torch.Tensor:
        return torch.tanh(inputs @ self.w1 + self.b1) @ self.w2 - self.centre

    def labels(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.logits(inputs).argmax(1)


def generate(size: int, seed: int, label_noise: float = 0.0, teacher: Teacher = None) -> Split:
    """`size` samples from the split seeded by `seed`; each label flipped with probability
    label_noise to another class."""
    if size < 1:
        raise ValueError(f"size: expected >= 1, found {size}")
    teacher = teacher or Teacher()
    inputs = torch.randn(size, FEATURES, generator=torch.Generator().manual_seed(seed))
    clean = teacher.labels(inputs)
    return Split(inputs, flip_labels(clean, label_noise, seed), clean)


def flip_labels(labels: torch.Tensor, label_noise: float, seed: int) -> torch.Tensor:
    """Each label moved with probability label_noise to a uniformly drawn other class (a
    generator seeded with seed + 7919)."""
    if not 0.0 <= label_noise < 1.0:
        raise ValueError(f"label_noise: expected a fraction in [0, 1), found {label_noise}")
    noise = torch.Generator().manual_seed(seed + 7919)
    flip = torch.rand(len(labels), generator=noise) < label_noise
    shift = torch.randint(1, CLASSES, (len(labels),), generator=noise)
    return torch.where(flip, (labels + shift) % CLASSES, labels)


def training_and_validation(size: int, validation_size: int, seed: int, label_noise: float):
    """The training split (noisy labels) and the held-out split (clean labels) of one seed."""
    teacher = Teacher()
    return (generate(size, seed, label_noise, teacher),
            generate(validation_size, seed + VALIDATION_SEED_OFFSET, 0.0, teacher))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--label-noise", type=float, default=0.0)
    args = parser.parse_args()
    split = generate(args.size, args.seed, args.label_noise)
    shares = torch.bincount(split.clean, minlength=CLASSES).float() / args.size
    print("class shares", " ".join(f"{s:.3f}" for s in shares.tolist()))
    print(f"labels flipped {float((split.labels != split.clean).float().mean()):.4f}")


if __name__ == "__main__":
    main()
