"""A small CNN on a generated image dataset (no downloads), trained with DDP under per-worker
batch sizes that `dynamix serve` decides every k iterations.

    torchrun --nproc_per_node 4 adapter/examples/train_cnn.py --arbitrator 127.0.0.1:50051
    torchrun --nproc_per_node 4 adapter/examples/train_cnn.py --backend nccl ...   # GPUs

CPU heterogeneity is emulated per rank (--slowdown 1,1,1.5,2 makes rank 3 twice as slow), network
heterogeneity by launching the ranks with shaped_launch.py (per-rank tc rates, needs root);
--plain runs the same loop as plain DDP at a fixed batch, the baseline of the overhead figure.
--checkpoint FILE saves every rank's model, optimizer and controller state (FILE.rank0, ...)
every --checkpoint-every iterations and resumes from them when they exist.
"""
import argparse
import os
import pathlib
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

from dynamix_worker import AdaptiveBatchController, GlobalCursorSampler

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import slow_device  # noqa: E402  (beside this file)

SIDE, CLASSES = 16, 10


def generated_images(size: int, seed: int):
    """Class c: a bright 4x4 square at one of ten places, in noise."""
    generator = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, CLASSES, (size,), generator=generator)
    images = torch.randn(size, 1, SIDE, SIDE, generator=generator)
    for c in range(CLASSES):
        row, column = divmod(c, 4)
        images[labels == c, :, 4 * row:4 * row + 4, 4 * column:4 * column + 4] += 0.6
    return images, labels


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.head = torch.nn.Linear(32 * (SIDE // 4) ** 2, CLASSES)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.head(x.flatten(1))


def validation_accuracy(model, held_out, device) -> float:
    with torch.no_grad():
        predicted = model.module(held_out[0].to(device)).argmax(1)
    return float((predicted == held_out[1].to(device)).float().mean())


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["gloo", "nccl"], default="gloo")
    parser.add_argument("--arbitrator", help="host:port of dynamix serve; none keeps the batches")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--interval", type=int, default=10, help="k: iterations per window")
    parser.add_argument("--batch", type=int, default=64, help="starting batch of every worker")
    parser.add_argument("--dataset-size", type=int, default=20000)
    parser.add_argument("--lr", type=float, default=0.05, help="LR at the starting global batch")
    parser.add_argument("--lr-rule", default="linear", choices=["none", "linear", "sqrt",
                                                                "adascale"])
    parser.add_argument("--slowdown", default="", help="per-rank compute slowdown, e.g. 1,1,1.5,2")
    parser.add_argument("--plain", action="store_true", help="plain DDP, fixed batches")
    parser.add_argument("--validate-every", type=int, default=50,
                        help="iterations between validation accuracies sent to the arbitrator "
                             "(0: never)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-batch", type=int,
                        help="each rank's largest batch, whatever the arbitrator says (default: "
                             "8x --batch)")
    parser.add_argument("--checkpoint", help="checkpoint files' prefix; resumes from them")
    parser.add_argument("--checkpoint-every", type=int, default=50)
    args = parser.parse_args()
    if args.checkpoint and args.plain:
        parser.error("--checkpoint saves the controller's state: not with --plain")
    return args


def save_checkpoint(path: pathlib.Path, model, optimizer, controller) -> None:
    """Written beside and renamed into place: a kill never leaves half a checkpoint."""
    staged = path.with_name(path.name + ".tmp")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "controller": controller.state_dict()}, staged)
    os.replace(staged, path)


def main():
    args = arguments()
    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device("cuda", local_rank) if args.backend == "nccl" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    else:
        torch.set_num_threads(1)
    slowdown = [float(s) for s in args.slowdown.split(",")] if args.slowdown else [1.0] * world
    images, labels = generated_images(args.dataset_size, args.seed)
    held_out = generated_images(1000, args.seed + 1)  # the validation set
    torch.manual_seed(args.seed)
    model = torch.nn.parallel.DistributedDataParallel(
        SmallCnn().to(device), device_ids=[local_rank] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    sampler = GlobalCursorSampler(args.dataset_size, [args.batch] * world, rank, args.seed)
    controller = None if args.plain else AdaptiveBatchController(
        model, optimizer, sampler, args.arbitrator, args.interval, job_id="train_cnn",
        lr_rule=args.lr_rule, gpu_type=torch.cuda.get_device_name(device)
        if device.type == "cuda" else "cpu", total_iterations=args.iterations,
        max_batch=args.max_batch)
    checkpoint = pathlib.Path(f"{args.checkpoint}.rank{rank}") if args.checkpoint else None
    if checkpoint and checkpoint.exists():
        saved = torch.load(checkpoint, map_location=device)
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        controller.load_state_dict(saved["controller"])
        if rank == 0:
            print(f"resumed from {checkpoint} at iteration {controller.iteration}", flush=True)
    times = []
    first = controller.iteration if controller else 0
    for iteration in range(first, args.iterations):
        start = time.perf_counter()
        indices = controller.next_indices() if controller else sampler.next_indices()
        x, y = images[indices].to(device), labels[indices].to(device)
        if controller:
            controller.data_loaded()
        output, loss = slow_device.train_step(model, optimizer, x, y, slowdown[rank])
        accuracy = float((output.argmax(1) == y).float().mean())
        if controller:
            controller.end_iteration(float(loss), accuracy)
            if args.validate_every and controller.iteration % args.validate_every == 0:
                controller.validation_accuracy = validation_accuracy(model, held_out, device)
            if checkpoint and controller.iteration % args.checkpoint_every == 0:
                save_checkpoint(checkpoint, model, optimizer, controller)
        times.append(time.perf_counter() - start)
        if rank == 0 and (iteration + 1) % args.interval == 0:
            print(f"iteration {iteration + 1}: loss {float(loss):.3f} accuracy {accuracy:.2f} "
                  f"batches {sampler.batches} lr {optimizer.param_groups[0]['lr']:.4f}",
                  flush=True)
    if rank == 0:
        steady = times[len(times) // 5:]
        print(f"{'plain DDP' if args.plain else 'dynamix_worker'}: median iteration "
              f"{1000 * statistics.median(steady):.2f} ms over {len(steady)} iterations")
    if controller is not None:
        controller.close()  # collective: no rank has communication in flight after it
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
