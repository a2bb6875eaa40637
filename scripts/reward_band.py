#!/usr/bin/env python3
"""Regenerates tests/apps/reward_band.csv, the band a seeded CI training run must stay inside.

Runs the command in tests/apps/reward_band_command.txt for seeds 1-4, bins each training curve's
mean_return by 20 updates, and stores per bin the range over seeds widened by a margin. Run it
after a change that is meant to alter learning:  python3 scripts/reward_band.py [build/apps/dynamix]
"""
import csv
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "apps", "dynamix")
COMMAND = open(os.path.join(ROOT, "tests", "apps", "reward_band_command.txt")).read().split()
SEEDS = [1, 2, 3, 4]
# Bins of 20 updates: a bin then averages ~25 episodes, whose returns are bimodal (reached the
# target or missed it).
BIN = 20


def binned_curve(seed, work):
    out = os.path.join(work, f"seed{seed}")
    subprocess.run([BINARY, *COMMAND, "--seed", str(seed), "--out", out], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bins = {}
    with open(os.path.join(out, "train_curve.csv")) as handle:
        for row in csv.DictReader(handle):
            if row["mean_return"]:
                bins.setdefault((int(row["update"]) - 1) // BIN, []).append(float(row["mean_return"]))
    return {b: sum(v) / len(v) for b, v in bins.items()}


with tempfile.TemporaryDirectory() as work:
    curves = [binned_curve(seed, work) for seed in SEEDS]
common = sorted(set.intersection(*(set(c) for c in curves)))
path = os.path.join(ROOT, "tests", "apps", "reward_band.csv")
with open(path + ".tmp", "w") as handle:
    handle.write("first_update,last_update,low,high\n")
    for b in common:
        values = [c[b] for c in curves]
        low, high = min(values), max(values)
        margin = max(0.25 * (high - low), 0.05 * abs(sum(values) / len(values)), 0.05)
        handle.write(f"{b * BIN + 1},{(b + 1) * BIN},{low - margin:.6f},{high + margin:.6f}\n")
os.replace(path + ".tmp", path)
print(f"wrote {path}: {len(common)} bins from seeds {SEEDS}")
