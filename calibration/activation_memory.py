"""Activation memory of a torchvision model: the bytes autograd keeps for the backward pass, per
training sample, in fp32 and under autocast. The source of the catalog's
activation_bytes_per_sample for resnet50-imagenet (catalog/workloads.yaml).

    /usr/bin/python3 calibration/activation_memory.py --model resnet50   # apt-get install python3-torchvision

Every tensor a forward pass saves for backward is seen through torch.autograd.graph
.saved_tensors_hooks and counted once by its storage; the model's parameters are left out (the
simulator counts them apart). The per-sample figure is the difference between two batches over
their difference in samples, so what does not grow with the batch (autocast's low-precision copies
of the weights) drops out. On torch 1.13 / torchvision 0.14 (Debian 12), resnet50 at 224x224:
85.9 MB per sample in fp32, 43.8 MB under bfloat16 autocast on the CPU (the simulator halves the
fp32 figure for mixed precision: 43.0 MB).
"""
import argparse

import torch
import torchvision


def saved_bytes(model, batch: int, side: int, dtype) -> int:
    parameters = {p.data_ptr() for p in model.parameters()}
    seen = {}

    def pack(tensor):
        storage = tensor.storage()
        if storage.data_ptr() not in parameters:
            seen[storage.data_ptr()] = max(seen.get(storage.data_ptr(), 0), storage.nbytes())
        return tensor

    images = torch.randn(batch, 3, side, side)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        with torch.autocast("cpu", dtype=dtype or torch.bfloat16, enabled=dtype is not None):
            model(images)
    return sum(seen.values())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet50", help="a torchvision.models constructor")
    parser.add_argument("--side", type=int, default=224, help="image side in pixels")
    parser.add_argument("--batches", type=int, nargs=2, default=[2, 6], metavar=("SMALL", "LARGE"))
    args = parser.parse_args()
    small, large = args.batches
    if not 1 <= small < large:
        parser.error("--batches: expected SMALL >= 1 and LARGE > SMALL")
    if not hasattr(torchvision.models, args.model):
        parser.error(f"--model: expected a torchvision.models constructor, found {args.model!r}")
    torch.manual_seed(0)
    model = getattr(torchvision.models, args.model)()
    model.train()
    print(f"{args.model} at {args.side}x{args.side}, torch {torch.__version__}, "
          f"torchvision {torchvision.__version__}")
    for name, dtype in (("fp32", None), ("autocast bfloat16", torch.bfloat16)):
        per_sample = (saved_bytes(model, large, args.side, dtype) -
                      saved_bytes(model, small, args.side, dtype)) / (large - small)
        print(f"{name}: {per_sample / 1e6:.1f} MB saved for backward per sample")


if __name__ == "__main__":
    main()
