"""The worker's own limits, whatever the arbitrator answers: an absolute batch cap without
max_batch, an LR-factor floor and ceiling; losses of any sign reported; the lookahead taken
from a DataLoader, and a batch drawn further ahead refused with a clear error; the sampler's
len(). One process, a gloo group of one.

usage: controller_test.py PROTO_STUBS_DIR SOURCE_DIR"""
import os
import pathlib
import sys
import tempfile

STUBS, SOURCE = sys.argv[1:3]
os.environ["DYNAMIX_PROTO_PYTHON"] = STUBS
sys.path.insert(0, str(pathlib.Path(SOURCE) / "adapter" / "python"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from dynamix_worker import _protocol  # noqa: E402
from dynamix_worker.controller import AdaptiveBatchController, report_problem  # noqa: E402
from dynamix_worker.sampler import GlobalCursorSampler  # noqa: E402

DATASET = 100


def check(condition, message):
    if not condition:
        print(f"FAIL: {message}")
        sys.exit(1)


def raises(call, text):
    try:
        call()
    except (ValueError, RuntimeError) as error:
        check(text in str(error), f"expected an error naming {text!r}, found {error}")
        return
    check(False, f"no error naming {text!r}")


def controller(batch=8, **options):
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    sampler = GlobalCursorSampler(DATASET, [batch], 0)
    return AdaptiveBatchController(model, optimizer, sampler, None, 4, job_id="c", **options)


def decided(pb2, batches, lr_factor, ran, reported_lr=1.0):
    """(decision, report) for a window that ran `ran` samples at `reported_lr`."""
    metrics = pb2.WindowMetrics(iterations=4, workers=[pb2.WorkerWindow(batch_size=ran)])
    report = pb2.WindowReport(job_id="c", window_index=0, iteration=4, metrics=metrics,
                              lr_factor=reported_lr)
    decision = pb2.Decision(protocol_version=pb2.PROTOCOL_VERSION_1, job_id="c", window_index=0,
                            batches=batches, global_batch=sum(batches), lr_factor=lr_factor,
                            apply_at_iteration=8)
    return decision, report


def check_limits(pb2):
    plain = controller()
    plain._pb2 = pb2
    check(plain.max_batches == [64], f"the default cap: {plain.max_batches}")
    # Each step within the 2x change rails, yet past the absolute cap or the LR floor.
    check(plain._check(*decided(pb2, [64], 1.0, 40)) is None, "a batch at the cap was refused")
    check(plain._check(*decided(pb2, [65], 1.0, 40)) == "batch 65 for worker 0 above its "
          "max_batch 64", "a batch past the default cap was not refused")
    check(plain._check(*decided(pb2, [8], 1 / 100, 8, reported_lr=1 / 60)) ==
          "lr_factor 0.01 below min_lr_factor 0.015625", "an LR factor below the floor")
    check(plain._check(*decided(pb2, [8], 70.0, 8, reported_lr=40.0)) ==
          "lr_factor 70 above max_lr_factor 64", "an LR factor above the ceiling")
    declared = controller(max_batch=200, min_lr_factor=1 / 1000)
    check(declared.max_batches == [200], f"a declared cap: {declared.max_batches}")
    declared._pb2 = pb2
    check(declared._check(*decided(pb2, [8], 1 / 100, 8, reported_lr=1 / 60)) is None,
          "a floor of 1/1000 refused 1/100")
    raises(lambda: controller(lr_factor=1 / 100), "lr_factor: expected a number in")
    print("limits: without max_batch a rank stays within 8x its starting batch; the LR factor "
          "within [1/64, 64]")


def check_losses(pb2):
    for loss, refused in ((-3.5, False), (0.0, False), (float("nan"), True), (2e9, True)):
        report = pb2.WindowReport(metrics=pb2.WindowMetrics(train_loss=loss))
        problem = report_problem(report)
        check((problem is not None) == refused and (not refused or "train_loss" in problem),
              f"loss {loss}: {problem}")
    print("losses: any finite number within 1e9 is reported (an NLL or ELBO below 0 too)")


def check_loader():
    # An epoch at the batches in force: ceil(100 / 16), then ceil(100 / 50).
    sampler = GlobalCursorSampler(DATASET, [8, 8], 0)
    check(len(sampler) == 7, f"len at [8, 8]: {len(sampler)}")
    sampler.set_batches([30, 20])
    check(len(sampler) == 2, f"len at [30, 20]: {len(sampler)}")

    def loader(c, workers):
        dataset = torch.utils.data.TensorDataset(torch.arange(DATASET))
        return torch.utils.data.DataLoader(dataset, batch_sampler=c.sampler,
                                           num_workers=workers, prefetch_factor=2)

    derived = controller()
    batches = derived.loader_batches(loader(derived, 1))
    next(batches)
    check(derived.lookahead == 2, f"lookahead from 1 worker x 2: {derived.lookahead}")
    batches = None
    raises(lambda: next(controller().loader_batches(loader(controller(), 2))),
           "the DataLoader draws 4 batches ahead (num_workers × prefetch_factor), not less than "
           "interval=4")
    short = controller(lookahead=1)
    raises(lambda: next(short.loader_batches(loader(short, 1))),
           "lookahead: expected at least num_workers × prefetch_factor = 2")
    # A batch drawn ahead at the old size after a switch: refused, not trained on.
    ahead = controller()
    ahead.sampler.next_indices()
    ahead.sampler.set_batches([5])
    ahead.sampler.next_indices()
    ahead.start_iteration()
    ahead.data_loaded()  # iteration 0 drew 8, the batch in force
    ahead.end_iteration(0.5)
    ahead.start_iteration()
    raises(ahead.data_loaded, "iteration 1: the batch drawn has 5 samples, the batch in force 8")
    print("loader: len() is an epoch at the batches in force; lookahead taken from the "
          "DataLoader; a batch drawn ahead of a switch is refused")


def main():
    pb2, _ = _protocol.load()
    with tempfile.TemporaryDirectory() as work:
        dist.init_process_group("gloo", init_method=f"file://{work}/store", rank=0,
                                world_size=1)
        try:
            check_limits(pb2)
            check_losses(pb2)
            check_loader()
        finally:
            dist.destroy_process_group()
    print("controller_test: passed")


if __name__ == "__main__":
    main()
