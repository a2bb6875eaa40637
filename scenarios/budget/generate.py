#!/usr/bin/python3
"""Writes the epoch-budget training clusters (scenarios/budget/*.yaml): static clusters, large
for their data set, where the published epoch budget (200 epochs for CIFAR) binds: a rule that
grows the global batch far past the gradient noise scale spends its epochs before it reaches the
target, and one that holds the batch near the goodput optimum reaches it. A learned policy trains
on them (`dynamix train --train-on budget`) so that it is charged for an epoch-budget miss; they
are never used for selection or reports.

Fabrics as in scenarios/validation/generate.py (speeds assumed); workloads, targets and epoch
budgets from catalog/workloads.yaml (each target the catalog's, or up to six points below it);
time budgets about 2.5 times what goodput:100 takes to the target there, so that the epochs bind
first and a miss costs a learner about what v64_leafspine's does (a miss is charged until the
time budget). Run from the repository root:
/usr/bin/python3 scenarios/budget/generate.py
"""
import importlib.util
import pathlib

HERE = pathlib.Path(__file__).parent
_spec = importlib.util.spec_from_file_location("validation", HERE.parent / "validation" / "generate.py")
validation = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(validation)
GENERATOR = "scenarios/budget/generate.py"

SETS = [
    ("b32_vgg", "32 workers (A100, V100) on two leaves, VGG-11 on CIFAR-10",
     dict(gpus=[("A100", 16), ("V100", 16)], hosts_per_leaf=16, uplink_gbps=100, spines=1),
     dict(workload="vgg11-cifar10", optimizer="sgd", target=0.885, budget_s=250)),
    ("b48_ps", "48 workers (H100, A100, T4) pushing to 4 parameter servers, ResNet-34 on CIFAR-10",
     dict(gpus=[("H100", 16), ("A100", 16), ("T4", 16)], hosts_per_leaf=13, uplink_gbps=100,
          spines=2, servers=4),
     dict(workload="resnet34-cifar10", optimizer="adam", target=0.845, budget_s=2400,
          architecture="ps", servers=4)),
    ("b96_leafspine", "96 workers (A100, V100) on six leaves, ResNet-50 on CIFAR-10",
     dict(gpus=[("A100", 48), ("V100", 48)], hosts_per_leaf=16, uplink_gbps=100, spines=2),
     dict(workload="resnet50-cifar10", optimizer="sgd", target=0.885, budget_s=500)),
    ("b128_threetier", "128 workers (H100, A100, V100) on a three-tier fabric, ResNet-18 on CIFAR-100",
     dict(gpus=[("H100", 32), ("A100", 48), ("V100", 48)], hosts_per_leaf=16, uplink_gbps=100,
          spines=4, tiers=3),
     dict(workload="resnet18-cifar100", optimizer="sgd", target=0.72, budget_s=200)),
    ("b160_leafspine", "160 workers (A100, V100, RTX3090) on ten leaves, VGG-11 on CIFAR-100",
     dict(gpus=[("A100", 64), ("V100", 64), ("RTX3090", 32)], hosts_per_leaf=16, uplink_gbps=200,
          spines=4),
     dict(workload="vgg11-cifar100", optimizer="adam", target=0.64, budget_s=100)),
    ("b192_lossy", "192 workers (A100, T4) on twelve leaves, 1e-4 loss on the T4 links, "
     "ResNet-34 on CIFAR-100",
     dict(gpus=[("A100", 96), ("T4", 96)], hosts_per_leaf=16, uplink_gbps=200, spines=4,
          loss=("T4", 1.0e-4)),
     dict(workload="resnet34-cifar100", optimizer="sgd", target=0.69, budget_s=500)),
]

for name, comment, topo, scen in SETS:
    (HERE / f"{name}.topology.yaml").write_text(
        validation.fabric(name, comment, generator=GENERATOR, **topo))
    (HERE / f"{name}.yaml").write_text(
        validation.scenario(name, comment, generator=GENERATOR, **scen))
