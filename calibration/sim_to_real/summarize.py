"""Time to target, B_simple over training and the per-window B_simple noise of reference_job logs.

B_simple (McCandlish et al. 2018, app. A) from a window's mean squared norms of rank 0's local
gradient (batch b) and the all-reduced one (batch B): |G|^2 = (B|g_B|^2 - b|g_b|^2) / (B - b),
tr(S) = (|g_b|^2 - |g_B|^2) / (1/b - 1/B), B_simple = tr(S) / |G|^2. The trend is the same ratio
of the two sums over TREND_WINDOWS windows centred on each window; the noise is the standard
deviation of log(per-window B_simple / trend) over the windows whose |G|^2 estimate is > 0.

    python3 calibration/sim_to_real/summarize.py --target 0.86 calibration/sim_to_real/*.csv
"""
import argparse
import csv
import math
import statistics
from collections import defaultdict

TREND_WINDOWS = 21


def read(path):
    with open(path, newline="") as file:
        return list(csv.DictReader(file))


def norms(row):
    b, big = float(row["local_batch"]), float(row["global_batch"])
    local, global_ = float(row["local_norm_sq"]), float(row["global_norm_sq"])
    trace = (local - global_) / (1 / b - 1 / big)
    signal = (big * global_ - b * local) / (big - b)
    return trace, signal


def time_to_target(rows, target):
    for row in rows:
        if row["validation_accuracy"] and float(row["validation_accuracy"]) >= target:
            return float(row["time_s"]), int(row["samples"])
    return None, int(rows[-1]["samples"])


def per_window_noise(rows):
    """(std of log residual, share of windows without an estimate)."""
    pairs = [norms(r) for r in rows]
    residuals, missing = [], 0
    half = TREND_WINDOWS // 2
    for i, (trace, signal) in enumerate(pairs):
        around = pairs[max(0, i - half):i + half + 1]
        trend_trace = sum(t for t, _ in around)
        trend_signal = sum(s for _, s in around)
        if not (trace > 0 and signal > 0) or not (trend_trace > 0 and trend_signal > 0):
            missing += 1
            continue
        residuals.append(math.log((trace / signal) / (trend_trace / trend_signal)))
    return (statistics.pstdev(residuals) if len(residuals) > 1 else float("nan"),
            missing / len(pairs))


def b_simple_by_quarter(rows):
    """Pooled B_simple and mean train loss in each quarter of the run's samples."""
    out = []
    last = int(rows[-1]["samples"])
    for q in range(4):
        part = [r for r in rows if q * last / 4 < int(r["samples"]) <= (q + 1) * last / 4]
        trace = sum(norms(r)[0] for r in part)
        signal = sum(norms(r)[1] for r in part)
        loss = statistics.fmean(float(r["train_loss"]) for r in part)
        out.append((trace / signal if signal > 0 else float("nan"), loss))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=float, required=True)
    parser.add_argument("logs", nargs="+")
    args = parser.parse_args()
    by_batch = defaultdict(list)
    print("| global batch | run | time to target (s) | samples | B_simple by quarter "
          "(train loss) | per-window std log B_simple | windows without estimate |")
    print("|---|---|---|---|---|---|---|")
    for path in sorted(args.logs, key=lambda p: (int(read(p)[0]["global_batch"]), p)):
        rows = read(path)
        batch = int(float(rows[0]["global_batch"]))
        seconds, samples = time_to_target(rows, args.target)
        noise, missing = per_window_noise(rows)
        quarters = ", ".join(f"{b:.0f} ({loss:.2f})" for b, loss in b_simple_by_quarter(rows))
        by_batch[batch].append((seconds, noise))
        shown = f"{seconds:.1f}" if seconds is not None else "missed"
        print(f"| {batch} | {rows[0]['run']} | {shown} | {samples} | {quarters} | "
              f"{noise:.2f} | {100 * missing:.0f}% |")
    print()
    print("| global batch | runs reached | median time to target (s) | range (s) | "
          "median per-window std log B_simple |")
    print("|---|---|---|---|---|")
    for batch, runs in sorted(by_batch.items()):
        reached = sorted(s for s, _ in runs if s is not None)
        median = f"{statistics.median(reached):.1f}" if reached else "-"
        spread = f"{reached[0]:.1f}-{reached[-1]:.1f}" if reached else "-"
        noise = statistics.median(n for _, n in runs)
        print(f"| {batch} | {len(reached)}/{len(runs)} | {median} | {spread} | {noise:.2f} |")


if __name__ == "__main__":
    main()
