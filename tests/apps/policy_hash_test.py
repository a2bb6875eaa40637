"""The CI hash check: a short seeded `dynamix train` exports the policy.pt whose SHA-256 is stored
in tests/apps/policy.pt.sha256, on whatever x86-64 CPU runs it, with any number of environment
threads, and still when the environment asks the libraries for another CPU's kernels (dynamix
pins them, apps/portable_kernels.h); DYNAMIX_KERNELS=native lets the libraries choose again.

usage: policy_hash_test.py DYNAMIX SOURCE_DIR

After a change meant to alter what training produces, DYNAMIX_UPDATE_GOLDEN=1 meson test -C build
policy_hash rewrites the stored hash (commit it with the change).
"""
import hashlib
import os
import pathlib
import subprocess
import sys
import tempfile

TRAIN = ("train --randomize --steps 4096 --envs 8 --rollout-steps 64 --eval-every 8 "
         "--eval-seeds 1 --checkpoint-every 1000 --seed 1 --quiet").split()
# Another CPU's choices, which this CPU can run too: OpenBLAS's Core2 kernels need SSSE3, and ATen
# falls back to its baseline kernels where AVX2 is missing.
ANOTHER_CPU = {"OPENBLAS_CORETYPE": "Core2", "ATEN_CPU_CAPABILITY": "avx2"}


def policy_sha256(dynamix, work, name, threads, extra_environment):
    """The SHA-256 of the policy.pt that TRAIN writes with `threads` environment threads."""
    environment = {k: v for k, v in os.environ.items() if k != "DYNAMIX_KERNELS"}
    environment.update(extra_environment)
    out = work / name
    run = subprocess.run([dynamix, *TRAIN, "--threads", str(threads), "--out", str(out)],
                         env=environment, capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        raise SystemExit(f"{name}: dynamix train exited {run.returncode}: {run.stderr.strip()}")
    return hashlib.sha256((out / "policy.pt").read_bytes()).hexdigest()


def main():
    dynamix, source = sys.argv[1], pathlib.Path(sys.argv[2])
    stored_file = source / "tests" / "apps" / "policy.pt.sha256"
    with tempfile.TemporaryDirectory() as scratch:
        work = pathlib.Path(scratch)
        pinned = policy_sha256(dynamix, work, "pinned", 1, {})
        if os.environ.get("DYNAMIX_UPDATE_GOLDEN"):
            stored_file.write_text(f"{pinned}  policy.pt\n")
            print(f"wrote {stored_file}")
            return 0
        stored = stored_file.read_text().split()[0]
        failures = []
        if pinned != stored:
            failures.append(f"policy.pt has SHA-256 {pinned}, {stored_file} says {stored}: training "
                            "no longer gives these bytes (if meant: DYNAMIX_UPDATE_GOLDEN=1 meson "
                            "test -C build policy_hash)")
        emulated = policy_sha256(dynamix, work, "another-cpu", 2, ANOTHER_CPU)
        if emulated != pinned:
            failures.append(f"with {ANOTHER_CPU} and 2 threads policy.pt has SHA-256 {emulated}, "
                            f"{pinned} without: the kernels are not pinned")
        native = policy_sha256(dynamix, work, "native", 1, {**ANOTHER_CPU, "DYNAMIX_KERNELS": "native"})
        if native == pinned:
            failures.append(f"DYNAMIX_KERNELS=native with {ANOTHER_CPU} trained the pinned bytes: "
                            "the opt-out does not reach the libraries")
    for failure in failures:
        print(failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
