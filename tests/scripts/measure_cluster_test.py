"""scripts/measure_cluster.py chooses its backend, devices and clock in one place: NCCL runs one
process per GPU, rank r on cuda:r, timed by CUDA events, and is refused with one line where
there are fewer GPUs than ranks; gloo runs CPU ranks on the host clock. The NCCL plan is checked
with an injected GPU count (no GPU here), and the gloo path runs end to end through the same
code.

usage: measure_cluster_test.py SOURCE_DIR"""
import csv
import importlib.util
import pathlib
import subprocess
import sys
import tempfile


def check(condition, message):
    if not condition:
        print(f"FAIL: {message}", flush=True)
        sys.exit(1)


def load(source):
    spec = importlib.util.spec_from_file_location("measure_cluster",
                                                  source / "scripts/measure_cluster.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_plans(measure):
    plan = measure.launch_plan("nccl", 4, device_count=4)
    check(plan.backend == "nccl", f"nccl plan: backend {plan.backend}")
    check(plan.devices == ("cuda:0", "cuda:1", "cuda:2", "cuda:3"),
          f"nccl plan: one process per GPU, found {plan.devices}")
    check(measure.launch_plan("nccl", 2, device_count=8).devices == ("cuda:0", "cuda:1"),
          "nccl plan with more GPUs than ranks")
    try:
        measure.launch_plan("nccl", 4, device_count=2)
        check(False, "nccl with 2 GPUs for 4 ranks was accepted")
    except ValueError as error:
        check(str(error) == "expected a GPU for each of 4 ranks (one process per GPU), found 2",
              f"nccl refusal: {error}")
    plan = measure.launch_plan("gloo", 4, device_count=8)
    check(plan == measure.LaunchPlan("gloo", ("cpu",) * 4), f"gloo plan: {plan}")


def check_clocks(measure):
    timing = measure.worker_timing()
    cuda = measure.clock_for("cuda:1")
    check(isinstance(cuda, timing.CudaTimer), f"cuda:1 is timed by {type(cuda).__name__}")
    check(str(cuda.device) == "cuda:1", f"the CUDA clock's device: {cuda.device}")
    host = measure.clock_for("cpu")
    start = host.mark("start")
    check(host.seconds(start, host.mark("end")) >= 0, "the host clock goes forward")


def check_gloo_run(source, work):
    out = work / "quick.csv"
    done = subprocess.run([sys.executable, str(source / "scripts/measure_cluster.py"), "--quick",
                           "--model", "reference-mlp", "--backend", "gloo", "--out", str(out)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=300)
    check(done.returncode == 0, f"gloo --quick: exit {done.returncode}\n{done.stdout[-2000:]}")
    text = out.read_text()
    check("backend gloo over loopback, host-clock timing" in text, "gloo provenance line")
    rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
    kinds = [row["kind"] for row in rows]
    check(kinds.count("compute") == 2 and kinds.count("allreduce") == 2 and
          kinds.count("iteration") == 2, f"gloo --quick rows: {kinds}")
    for row in rows:
        check(float(row["total_s"]) > 0, f"{row['kind']} total_s {row['total_s']}")
        if row["kind"] == "iteration":
            check(float(row["comm_s"]) > 0, f"iteration at {row['batch_per_rank']}: no comm_s")


def check_refusal(source, work):
    if load(source).torch.cuda.device_count() >= 2:
        return  # a machine with GPUs runs the NCCL path instead of refusing it
    done = subprocess.run([sys.executable, str(source / "scripts/measure_cluster.py"),
                           "--backend", "nccl", "--ranks", "2", "--out", str(work / "x.csv")],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    check(done.returncode == 2, f"nccl without GPUs: exit {done.returncode}")
    check(done.stderr.count("\n") == 1 and done.stderr.startswith(
        "measure_cluster.py: --backend nccl: expected a GPU for each of 2 ranks"),
          f"nccl without GPUs said {done.stderr!r}")
    check(not (work / "x.csv").exists(), "a refused run wrote its CSV")


def main():
    source = pathlib.Path(sys.argv[1])
    measure = load(source)
    check_plans(measure)
    check_clocks(measure)
    with tempfile.TemporaryDirectory() as work:
        check_refusal(source, pathlib.Path(work))
        check_gloo_run(source, pathlib.Path(work))
    print("ok")


if __name__ == "__main__":
    main()
