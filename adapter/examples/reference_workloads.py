"""The sim-to-real reference job's workloads (--workload): each one's network, data and the SGD
LR it is tuned for. Nothing is downloaded; every rank builds the same tensors itself.

  mlp   the teacher task (teacher_data.py): 32 Gaussian features labelled by a fixed random
        tanh network; an MLP student 32-H-H-10 (H = --hidden; 22,026 parameters at 128).
  cnn   handwritten digits: the 1,797 8x8 images scikit-learn ships (sklearn.datasets.
        load_digits, a copy of the UCI ML optical-recognition test set; Debian's
        python3-sklearn), split once into 1,437 training and 360 held-out images by a
        permutation seeded with DIGITS_SPLIT_SEED. A sample is one of its split's images drawn
        at random, shifted by up to SHIFT pixels (zeros fill) and given Gaussian pixel noise of
        sd PIXEL_NOISE on a [0, 1] scale, then centred and scaled (PIXEL_MEAN, PIXEL_SD):
        --dataset-size training samples and --validation-size held-out ones, from the split's
        seed. Held-out samples come from images the training never sees. (Uncentred, one
        initialization in three stalled near 0.75 at a global batch of 4,096.) A
        two-convolution CNN (8 then 16 channels of 3x3 at --hidden 16, one 2x2 max-pool, a
        linear head; 3,818 parameters).
  lstm  a generated language: ten sources, each a first-order Markov chain over VOCABULARY
        tokens whose transition rows are softmax(SHARPNESS x N(0, 1)), drawn with a generator
        seeded by LANGUAGE_SEED; a sample is SEQUENCE_LENGTH tokens from one source (its start
        token uniform), its label the source. An embedding of 16, a one-layer LSTM of --hidden
        units and a linear head on the last state (6,986 parameters at 32).

Label noise flips each training label to a uniformly drawn other class with probability
--label-noise (the noise-scale knob, McCandlish et al. 2018); held-out labels stay clean.
"""
from dataclasses import dataclass
from typing import Callable

import torch

import teacher_data

CLASSES = 10
DIGITS_SPLIT_SEED, DIGITS_HELD_OUT, SHIFT, PIXEL_NOISE = 1_797, 360, 1, 0.3
# The training samples' pixel mean and sd (seed 0, 20,000 samples), to centre and scale them.
PIXEL_MEAN, PIXEL_SD = 0.28, 0.476
VOCABULARY, SEQUENCE_LENGTH, SHARPNESS, LANGUAGE_SEED = 16, 24, 1.0, 1_997_1115


@dataclass
class Workload:
    """One workload: its network for a width, its (training, held-out) splits for
    (size, held-out size, seed, label noise), the SGD LR at a global batch of 256 it is tuned
    for and the rule that scales it with the batch, and its default width."""
    network: Callable[[int], torch.nn.Module]
    splits: Callable[[int, int, int, float], tuple]
    lr: float
    lr_rule: str
    hidden: int
    inputs: Callable[[int], torch.Tensor]  # a batch of random inputs of the right shape


# ---------------------------------------------------------------- mlp: the teacher task

def mlp(hidden: int) -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Linear(teacher_data.FEATURES, hidden), torch.nn.ReLU(),
        torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
        torch.nn.Linear(hidden, teacher_data.CLASSES))


def teacher_splits(size, held_out, seed, label_noise):
    return teacher_data.training_and_validation(size, held_out, seed, label_noise)


# ---------------------------------------------------------------- cnn: handwritten digits

class DigitsCnn(torch.nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, channels // 2, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(channels // 2, channels, 3, padding=1)
        self.head = torch.nn.Linear(channels * 16, CLASSES)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.max_pool2d(torch.relu(self.conv2(x)), 2)
        return self.head(x.flatten(1))


def digits_images():
    """The 1,797 images [n, 1, 8, 8] on [0, 1] and their labels, split (training, held out)."""
    from sklearn.datasets import load_digits  # Debian's python3-sklearn; only this workload

    digits = load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    labels = torch.tensor(digits.target, dtype=torch.int64)
    order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(DIGITS_SPLIT_SEED))
    train, held = order[DIGITS_HELD_OUT:], order[:DIGITS_HELD_OUT]
    return (images[train], labels[train]), (images[held], labels[held])


def augmented(images, labels, size, seed):
    """`size` samples drawn from (images, labels), each shifted by up to SHIFT pixels (zeros
    fill) and given Gaussian pixel noise of sd PIXEL_NOISE."""
    generator = torch.Generator().manual_seed(seed)
    pick = torch.randint(0, len(labels), (size,), generator=generator)
    shifts = torch.randint(-SHIFT, SHIFT + 1, (size, 2), generator=generator)
    padded = torch.nn.functional.pad(images[pick, 0], (SHIFT,) * 4)
    rows = (torch.arange(8) + SHIFT).view(1, 8) - shifts[:, :1]
    columns = (torch.arange(8) + SHIFT).view(1, 8) - shifts[:, 1:]
    inputs = padded[torch.arange(size).view(-1, 1, 1), rows.unsqueeze(2), columns.unsqueeze(1)]
    noise = PIXEL_NOISE * torch.randn(size, 1, 8, 8, generator=generator)
    return (inputs.unsqueeze(1) + noise - PIXEL_MEAN) / PIXEL_SD, labels[pick]


def digits_splits(size, held_out, seed, label_noise):
    (images, labels), (held_images, held_labels) = digits_images()
    inputs, clean = augmented(images, labels, size, seed)
    held_inputs, held_clean = augmented(held_images, held_labels, held_out,
                                        seed + teacher_data.VALIDATION_SEED_OFFSET)
    return (teacher_data.Split(inputs, teacher_data.flip_labels(clean, label_noise, seed), clean),
            teacher_data.Split(held_inputs, held_clean, held_clean))


# ---------------------------------------------------------------- lstm: a generated language

class SequenceLstm(torch.nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.embedding = torch.nn.Embedding(VOCABULARY, 16)
        self.lstm = torch.nn.LSTM(16, hidden, batch_first=True)
        self.head = torch.nn.Linear(hidden, CLASSES)

    def forward(self, tokens):
        _, (state, _) = self.lstm(self.embedding(tokens))
        return self.head(state[-1])


def language_sources() -> torch.Tensor:
    """[CLASSES, VOCABULARY, VOCABULARY] transition matrices, rows summing to one."""
    generator = torch.Generator().manual_seed(LANGUAGE_SEED)
    logits = SHARPNESS * torch.randn(CLASSES, VOCABULARY, VOCABULARY, generator=generator)
    return torch.softmax(logits, dim=2)


def sentences(size: int, seed: int, sources: torch.Tensor):
    generator = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, CLASSES, (size,), generator=generator)
    tokens = torch.empty(size, SEQUENCE_LENGTH, dtype=torch.int64)
    tokens[:, 0] = torch.randint(0, VOCABULARY, (size,), generator=generator)
    for step in range(1, SEQUENCE_LENGTH):
        rows = sources[labels, tokens[:, step - 1]]
        tokens[:, step] = torch.multinomial(rows, 1, generator=generator).squeeze(1)
    return tokens, labels


def language_splits(size, held_out, seed, label_noise):
    sources = language_sources()
    tokens, clean = sentences(size, seed, sources)
    held_tokens, held_labels = sentences(held_out, seed + teacher_data.VALIDATION_SEED_OFFSET,
                                         sources)
    return (teacher_data.Split(tokens, teacher_data.flip_labels(clean, label_noise, seed), clean),
            teacher_data.Split(held_tokens, held_labels, held_labels))


WORKLOADS = {
    "mlp": Workload(mlp, teacher_splits, 0.02, "linear", 128,
                    lambda batch: torch.randn(batch, teacher_data.FEATURES)),
    # The CNN diverges at LR 0.2 and a global batch of 4,096: the square-root rule keeps it at 0.12.
    "cnn": Workload(DigitsCnn, digits_splits, 0.03, "sqrt", 16,
                    lambda batch: torch.rand(batch, 1, 8, 8)),
    "lstm": Workload(SequenceLstm, language_splits, 0.1, "linear", 32,
                     lambda batch: torch.randint(0, VOCABULARY, (batch, SEQUENCE_LENGTH))),
}
