"""The network model against the real Linux TCP stack: gloo all-reduces between two ranks in
network namespaces of their own, joined by a veth pair whose rate `tc tbf` limits and whose
random loss an nftables `numgen random` rule draws; then `dynamix calibrate` fits the sync knobs
to the lossless rows and `dynamix fidelity` predicts the lossy ones, held out.

    sudo python3 scripts/tcp_study.py --out runs/tcp               # the study (about 10 min)
    sudo python3 scripts/tcp_study.py --smoke --out runs/tcp_smoke # every stage, tiny (CI)

Needs root (CAP_NET_ADMIN), ip, tc, nft and ethtool; refused with exit status 2 otherwise.
Segmentation offloads are off on the veth ends, so that a drop is one segment, as on a wire.
The prediction takes network.loss_recovery=sack (the Linux stack's recovery, tcp.h).
This kernel may lack netem: loss comes from nftables, delay is the veth's own. Writes OUT (a new
directory; OUT.partial until done): measured.csv (scripts/measure_cluster.py's schema, one file
per condition under conditions/), calibrated/ (the lossless fit), predicted/ (one fidelity run
per lossy condition), results.csv and summary.md (predicted against measured, per condition).
The namespaces, their veth pair and their nftables tables are this script's own and are removed
when it ends, however it ends.
"""
import argparse
import csv
import json
import os
import pathlib
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

SOURCE = pathlib.Path(__file__).resolve().parent.parent
SCENARIO = SOURCE / "calibration" / "netns.yaml"
ADDRESSES = ("10.213.0.1", "10.213.0.2")
RANK_TIMEOUT_S = 300


def arguments(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=pathlib.Path, help="directory to write (new)")
    p.add_argument("--dynamix", type=pathlib.Path, default=SOURCE / "build/apps/dynamix")
    p.add_argument("--rates-gbps", default="1,4", help="veth rates tbf holds each direction to")
    p.add_argument("--losses", default="0,1e-4,1e-3,1e-2",
                   help="random loss of each direction's packets; 0 is fitted, the rest predicted")
    p.add_argument("--sizes", default="65536,1048576,16777216,67108864",
                   help="all-reduce message bytes (float32 tensors)")
    p.add_argument("--repetitions", type=int, default=7, help="timed all-reduces per size")
    p.add_argument("--smoke", action="store_true",
                   help="one rate, loss 0 and 1e-2, two small sizes: checks the pipeline")
    p.add_argument("--rank", type=int, help=argparse.SUPPRESS)  # one rank, inside its namespace
    p.add_argument("--port", type=int, help=argparse.SUPPRESS)
    options = p.parse_args(argv)
    if options.smoke:
        options.rates_gbps, options.losses = "1", "0,1e-2"
        options.sizes, options.repetitions = "65536,1048576", 3
    try:
        options.rates = [float(v) for v in options.rates_gbps.split(",")]
        options.loss_rates = [float(v) for v in options.losses.split(",")]
        options.size_list = [int(v) for v in options.sizes.split(",")]
    except ValueError as error:
        refuse(f"--rates-gbps, --losses, --sizes: expected comma-separated numbers ({error})")
    if not all(0.001 <= r <= 100 for r in options.rates):
        refuse(f"--rates-gbps: expected rates in [0.001, 100], found '{options.rates_gbps}'")
    if not all(0 <= p < 0.5 for p in options.loss_rates) or 0 not in options.loss_rates:
        refuse(f"--losses: expected losses in [0, 0.5) including 0 (the fit), found "
               f"'{options.losses}'")
    if not all(4 <= s <= 1 << 28 and s % 4 == 0 for s in options.size_list):
        refuse(f"--sizes: expected multiples of 4 in [4, 2^28], found '{options.sizes}'")
    if not 1 <= options.repetitions <= 1000:
        refuse(f"--repetitions: expected an integer in [1, 1000], found {options.repetitions}")
    if options.rank is None and options.out is None:
        refuse("--out: expected a directory to write, found none")
    return options


def refuse(message):
    print(f"tcp_study.py: {message}", file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------- one rank, in its namespace


def rank_main(options):
    """Times all-reduces of each size on this rank; rank 0 prints one JSON line of medians."""
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://{ADDRESSES[0]}:{options.port}",
                            rank=options.rank, world_size=2,
                            timeout=__import__("datetime").timedelta(seconds=RANK_TIMEOUT_S))
    medians = {}
    for size in options.size_list:
        tensor = torch.ones(size // 4)
        seconds = []
        for repetition in range(options.repetitions + 1):  # the first warms the connection up
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(tensor)
            if repetition:
                seconds.append(time.perf_counter() - start)
        medians[size] = statistics.median(seconds)
    dist.destroy_process_group()
    if options.rank == 0:
        print(json.dumps(medians), flush=True)


# ---------------------------------------------------------------- namespaces


class Link:
    """Two namespaces joined by a veth pair: rate held by tbf, loss drawn by nftables."""

    def __init__(self):
        tag = f"{os.getpid() % 100000}"
        self.namespaces = (f"dynamix-tcp-{tag}-a", f"dynamix-tcp-{tag}-b")
        self.devices = (f"dxt{tag}a", f"dxt{tag}b")
        self.made = []

    def __enter__(self):
        a, b = self.namespaces
        for namespace in self.namespaces:
            run("ip", "netns", "add", namespace)
            self.made.append(namespace)
        run("ip", "link", "add", self.devices[0], "netns", a, "type", "veth", "peer", "name",
            self.devices[1], "netns", b)
        for namespace, device, address in zip(self.namespaces, self.devices, ADDRESSES):
            run("ip", "-n", namespace, "addr", "add", f"{address}/30", "dev", device)
            run("ip", "-n", namespace, "link", "set", device, "up")
            run("ip", "-n", namespace, "link", "set", "lo", "up")
            run("ip", "netns", "exec", namespace, "ethtool", "-K", device, "tso", "off", "gso",
                "off", "gro", "off")
            run("ip", "netns", "exec", namespace, "nft", "add", "table", "inet", "dynamix")
            run("ip", "netns", "exec", namespace, "nft", "add", "chain", "inet", "dynamix", "in",
                "{ type filter hook prerouting priority -300 ; }")
        return self

    def congestion_control(self):
        """The TCP congestion control the ranks use: a new namespace's default (the host's
        net.ipv4.tcp_congestion_control, which a namespace may not be allowed to change)."""
        return run("ip", "netns", "exec", self.namespaces[0], "sysctl", "-n",
                   "net.ipv4.tcp_congestion_control").strip()

    def shape(self, rate_gbps, loss):
        """Each direction held to rate_gbps, each packet arriving dropped with probability loss."""
        burst = max(64 * 1024, int(rate_gbps * 1e9 / 8 * 1e-3))  # a millisecond of the rate
        for namespace, device in zip(self.namespaces, self.devices):
            run("tc", "-n", namespace, "qdisc", "replace", "dev", device, "root", "tbf", "rate",
                f"{rate_gbps}gbit", "burst", str(burst), "latency", "20ms")
            run("ip", "netns", "exec", namespace, "nft", "flush", "chain", "inet", "dynamix", "in")
            if loss > 0:
                run("ip", "netns", "exec", namespace, "nft", "add", "rule", "inet", "dynamix",
                    "in", "iifname", device, "numgen", "random", "mod", "1000000", "<",
                    str(round(loss * 1e6)), "drop")

    def counters(self):
        """TCP's retransmitted segments and retransmission timeouts so far, both namespaces."""
        totals = {"TcpRetransSegs": 0, "TcpExtTCPTimeouts": 0}
        for namespace in self.namespaces:
            for line in run("ip", "netns", "exec", namespace, "nstat", "-az", *totals).splitlines():
                words = line.split()
                if len(words) >= 2 and words[0] in totals:
                    totals[words[0]] += int(words[1])
        return totals["TcpRetransSegs"], totals["TcpExtTCPTimeouts"]

    def __exit__(self, *_):
        for namespace in self.made:  # the veth pair and nftables tables go with them
            subprocess.run(["ip", "netns", "del", namespace], check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run(*command):
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"tcp_study.py: {' '.join(command)} failed: "
                         f"{(done.stderr or done.stdout).strip()}")
    return done.stdout


def measure(link, options):
    """Medians of every size on the shaped link, from rank 0 (both ranks run the same loop)."""
    with socket.socket() as probe:  # a port for gloo's store; the namespaces have their own
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ranks = []
    for rank, (namespace, device) in enumerate(zip(link.namespaces, link.devices)):
        # gloo's address is its device's, not the host name's (which resolves outside).
        command = ["ip", "netns", "exec", namespace, "env", f"GLOO_SOCKET_IFNAME={device}",
                   sys.executable, str(pathlib.Path(__file__)),
                   "--rank", str(rank), "--port", str(port), "--sizes", options.sizes,
                   "--repetitions", str(options.repetitions)]
        ranks.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, start_new_session=True))
    try:
        outputs = [rank.communicate(timeout=RANK_TIMEOUT_S) for rank in ranks]
    except subprocess.TimeoutExpired:
        raise SystemExit(f"tcp_study.py: the ranks ran past {RANK_TIMEOUT_S} s")
    finally:
        for rank in ranks:
            if rank.poll() is None:
                os.killpg(rank.pid, signal.SIGKILL)
                rank.wait()
    for rank, (out, err) in zip(ranks, outputs):
        if rank.returncode != 0:
            raise SystemExit(f"tcp_study.py: a rank failed (exit {rank.returncode}): "
                             f"{err.strip()[-800:]}")
    return {int(size): seconds for size, seconds in json.loads(outputs[0][0]).items()}


# ---------------------------------------------------------------- the study


def write_measurements(path, rate, loss, medians, options):
    with open(path, "w", newline="") as out:
        out.write(f"# scripts/tcp_study.py: 2 gloo ranks in network namespaces, veth at "
                  f"{rate} Gb/s each way (tc tbf), loss {loss} (nftables), "
                  f"{options.congestion_control}, medians of {options.repetitions}\n")
        writer = csv.writer(out)
        writer.writerow(["kind", "ranks", "message_bytes", "total_s"])
        for size, seconds in sorted(medians.items()):
            writer.writerow(["allreduce", 2, size, f"{seconds:.9g}"])


def link_overrides(rate, loss):
    return ["--set", f"topology.links.0.bandwidth_gbps={rate}",
            "--set", f"topology.links.0.loss_rate={loss}"]


def dynamix(options, *args, log):
    with open(log, "w") as output:
        done = subprocess.run([str(options.dynamix), *map(str, args)], stdout=output,
                              stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        raise SystemExit(f"tcp_study.py: dynamix {args[0]} failed; see {log}")


def predicted_rows(folder):
    """(message_bytes, measured, predicted) of a fidelity run's rows."""
    with open(folder / "fidelity.csv", newline="") as rows:
        return [(int(float(r["message_bytes"])), float(r["measured_total_s"]),
                 float(r["simulated_total_s"])) for r in csv.DictReader(rows)]


def study(options):
    out = options.out
    if out.exists():
        refuse(f"--out: expected a new directory, found '{out}', which exists (left as it is)")
    work = out.with_name(out.name + ".partial")
    if work.exists():
        if not (work / ".tcp_study").is_file():
            refuse(f"--out: '{work}' exists and was not written by this script (left as it is)")
        shutil.rmtree(work)
    (work / "conditions").mkdir(parents=True)
    (work / ".tcp_study").write_text("written by scripts/tcp_study.py\n")
    conditions = [(rate, loss) for rate in options.rates for loss in options.loss_rates]
    recovery = []  # (rate, loss, retransmitted segments, timeouts) while measuring
    with Link() as link:
        options.congestion_control = link.congestion_control()
        for rate, loss in conditions:
            link.shape(rate, loss)
            before = link.counters()
            medians = measure(link, options)
            after = link.counters()
            retransmits, timeouts = (a - b for a, b in zip(after, before))
            recovery.append((rate, loss, retransmits, timeouts))
            write_measurements(work / "conditions" / f"r{rate:g}_l{loss:g}.csv", rate, loss,
                               medians, options)
            print(f"   {rate:g} Gb/s, loss {loss:g}: " + ", ".join(
                f"{size >> 10} KiB {seconds * 1e3:.2f} ms" for size, seconds in medians.items()),
                flush=True)
    rows = []
    for rate in options.rates:
        fitted = work / "calibrated" / f"r{rate:g}"
        dynamix(options, "calibrate", "--scenario", SCENARIO, *link_overrides(rate, 0),
                "--measured", work / "conditions" / f"r{rate:g}_l0.csv", "--fit-kinds", "allreduce",
                "--fit-sizes", options.sizes, "--fit", "sync.message_overhead_us=1:100000:50",
                "--fit", "sync.call_overhead_us=1:100000:50",
                "--fit", "sync.reduction_gbps=0.1:1000:20", "--out", fitted,
                log=work / f"calibrate_r{rate:g}.txt")
        for line in (work / f"calibrate_r{rate:g}.txt").read_text().splitlines():
            if line.startswith("dynamix: warning: "):  # a knob fitted at a bound of its search
                print(f"   {rate:g} Gb/s: {line}", file=sys.stderr, flush=True)
        for loss in options.loss_rates:
            folder = work / "predicted" / f"r{rate:g}_l{loss:g}"
            dynamix(options, "fidelity", "--scenario", fitted / "calibrated.yaml",
                    *link_overrides(rate, loss), "--set", "network.loss_recovery=sack", "--measured",
                    work / "conditions" / f"r{rate:g}_l{loss:g}.csv", "--out", folder,
                    log=work / f"fidelity_r{rate:g}_l{loss:g}.txt")
            rows += [(rate, loss, size, measured, predicted)
                     for size, measured, predicted in predicted_rows(folder)]
    write_results(work, rows, recovery, options)
    work.rename(out)
    print(f"wrote {out}/{{results.csv,summary.md,conditions/,calibrated/,predicted/}}")


def write_results(work, rows, recovery, options):
    with open(work / "results.csv", "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["rate_gbps", "loss_rate", "message_bytes", "measured_s", "predicted_s",
                         "predicted_over_measured", "held_out"])
        for rate, loss, size, measured, predicted in rows:
            writer.writerow([rate, loss, size, f"{measured:.6g}", f"{predicted:.6g}",
                             f"{predicted / measured:.4g}", int(loss > 0)])
    lines = ["# The network model against Linux TCP", "",
             f"2 gloo ranks, veth pair, {options.congestion_control}, medians of "
             f"{options.repetitions} all-reduces. Loss 0 is fitted (sync knobs), the rest "
             "held out; predicted with network.loss_recovery=sack.", "",
             "| rate (Gb/s) | loss | message | measured (ms) | predicted (ms) | predicted / measured |",
             "|---|---|---|---|---|---|"]
    for rate, loss, size, measured, predicted in rows:
        lines.append(f"| {rate:g} | {loss:g} | {size >> 10} KiB | {measured * 1e3:.3f} | "
                     f"{predicted * 1e3:.3f} | {predicted / measured:.3g} |")
    lines.append("")
    for loss in options.loss_rates:
        errors = [abs(p / m - 1) for _, l, _, m, p in rows if l == loss]
        if errors:
            lines.append(f"- loss {loss:g}: median |predicted/measured - 1| = "
                         f"{100 * statistics.median(errors):.1f}% over {len(errors)} rows")
    lines += ["", "What TCP did meanwhile (nstat in both namespaces): timeouts per retransmitted "
              "segment, against the model's Q (reno: min(1, 3·√(3bp/8)), b = 2; sack: p²).", "",
              "| rate (Gb/s) | loss | retransmitted | timeouts | per retransmission | reno Q | "
              "sack Q |", "|---|---|---|---|---|---|---|"]
    for rate, loss, retransmits, timeouts in recovery:
        measured_q = f"{timeouts / retransmits:.2g}" if retransmits else "-"
        reno = min(1, 3 * (3 * 2 * loss / 8) ** 0.5)
        lines.append(f"| {rate:g} | {loss:g} | {retransmits} | {timeouts} | {measured_q} | "
                     f"{reno:.2g} | {loss * loss:.2g} |")
    (work / "summary.md").write_text("\n".join(lines) + "\n")


def check_tools():
    if os.geteuid() != 0:
        refuse("expected root (network namespaces, tc and nftables need CAP_NET_ADMIN), found "
               f"uid {os.geteuid()}")
    missing = [tool for tool in ("ip", "tc", "nft", "ethtool") if shutil.which(tool) is None]
    if missing:
        refuse(f"expected {', '.join(missing)} on PATH (Debian: iproute2, nftables, ethtool), "
               "found none")


def main(argv):
    options = arguments(argv)
    if options.rank is not None:
        rank_main(options)
        return
    check_tools()
    study(options)


if __name__ == "__main__":
    main(sys.argv[1:])
