"""Launch the ranks of a torch.distributed script, each in its own network namespace whose egress
is shaped by `tc` to its own rate: network heterogeneity on one machine, without touching the
host's interfaces. Needs root (CAP_NET_ADMIN) and the tbf qdisc.

    python3 adapter/examples/shaped_launch.py --rates-mbit 1000,1000,200,50 \\
        [--serve 'dynamix serve --policy policy.pt --workers 4 --log run --listen {bridge}:50051'] \\
        -- adapter/examples/train_cnn.py --arbitrator {bridge}:50051 --iterations 100

Every rank gets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR (rank 0's address), MASTER_PORT and
GLOO_SOCKET_IFNAME, as torchrun would set them. The namespaces hang off one bridge in the host's
namespace; `{bridge}` in the script's arguments and in --serve becomes the bridge's address, so
an arbitrator started with --serve is reachable from rank 0. Everything created is removed at the
end, also on failure or Ctrl-C.
"""
import argparse
import os
import shlex
import subprocess
import sys
import time

MASTER_PORT = 29500


def run(*command: str) -> None:
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


class ShapedNetwork:
    """A bridge 10.213.X.254/24 and, per rank, a namespace with a veth 10.213.X.(i+1) whose
    egress a tbf qdisc holds to the rank's rate."""

    def __init__(self, rates_mbit):
        tag = os.getpid() % 100000
        self.subnet = f"10.213.{os.getpid() % 250}"
        self.bridge_name = f"dxbr{tag}"
        self.bridge = f"{self.subnet}.254"
        self.namespaces = [f"dynamix-{tag}-{i}" for i in range(len(rates_mbit))]
        self.addresses = [f"{self.subnet}.{i + 1}" for i in range(len(rates_mbit))]
        self._veths = [f"dxv{tag}r{i}" for i in range(len(rates_mbit))]
        self._rates = rates_mbit

    def __enter__(self):
        try:
            run("ip", "link", "add", self.bridge_name, "type", "bridge")
            run("ip", "addr", "add", f"{self.bridge}/24", "dev", self.bridge_name)
            run("ip", "link", "set", self.bridge_name, "up")
            for namespace, veth, address, rate in zip(self.namespaces, self._veths,
                                                      self.addresses, self._rates):
                self._add_rank(namespace, veth, address, rate)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _add_rank(self, namespace, veth, address, rate):
        run("ip", "netns", "add", namespace)
        run("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", namespace)
        run("ip", "link", "set", veth, "master", self.bridge_name)
        run("ip", "link", "set", veth, "up")
        inside = ("ip", "netns", "exec", namespace)
        run(*inside, "ip", "link", "set", "lo", "up")
        run(*inside, "ip", "addr", "add", f"{address}/24", "dev", "eth0")
        run(*inside, "ip", "link", "set", "eth0", "up")
        # Token bucket: a burst of 1 ms at the rate, at least two 1500-byte frames, so the rate
        # holds from the first bytes.
        burst = max(3000, int(rate * 1e6 / 8 / 1000))
        run(*inside, "tc", "qdisc", "add", "dev", "eth0", "root", "tbf", "rate", f"{rate}mbit",
            "burst", str(burst), "latency", "400ms")

    def __exit__(self, *_):
        # Deleting a veth end deletes its peer at once; a deleted namespace frees its devices
        # only later, in the kernel's own time.
        for veth in self._veths:
            subprocess.run(["ip", "link", "del", veth], stderr=subprocess.DEVNULL)
        for namespace in self.namespaces:
            subprocess.run(["ip", "netns", "del", namespace], stderr=subprocess.DEVNULL)
        subprocess.run(["ip", "link", "del", self.bridge_name], stderr=subprocess.DEVNULL)


def rank_command(network, rank, script):
    environment = {"RANK": str(rank), "LOCAL_RANK": str(rank),
                   "WORLD_SIZE": str(len(network.namespaces)),
                   "MASTER_ADDR": network.addresses[0], "MASTER_PORT": str(MASTER_PORT),
                   "GLOO_SOCKET_IFNAME": "eth0"}
    return (["ip", "netns", "exec", network.namespaces[rank], "env"] +
            [f"{key}={value}" for key, value in environment.items()] + [sys.executable] + script)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates-mbit", required=True,
                        help="each rank's egress rate in Mbit/s, comma-separated")
    parser.add_argument("--serve", help="a command run in the host namespace while the job runs")
    parser.add_argument("--timeout-s", type=float, default=600)
    parser.add_argument("script", nargs=argparse.REMAINDER, help="-- SCRIPT [ARGS...]")
    args = parser.parse_args()
    script = args.script[1:] if args.script[:1] == ["--"] else args.script
    try:
        rates = [float(rate) for rate in args.rates_mbit.split(",")]
    except ValueError:
        parser.error(f"--rates-mbit: expected numbers separated by commas, found "
                     f"'{args.rates_mbit}'")
    if not script or any(rate <= 0 for rate in rates):
        parser.error("expected positive --rates-mbit and a script after --")
    with ShapedNetwork(rates) as network:
        script = [part.replace("{bridge}", network.bridge) for part in script]
        server = (subprocess.Popen(shlex.split(args.serve.replace("{bridge}", network.bridge)))
                  if args.serve else None)
        if server:
            time.sleep(1)  # let it bind before rank 0 asks
        ranks = [subprocess.Popen(rank_command(network, rank, script))
                 for rank in range(len(rates))]
        deadline = time.monotonic() + args.timeout_s
        try:
            codes = [rank.wait(timeout=max(1.0, deadline - time.monotonic())) for rank in ranks]
        finally:
            for process in ranks + ([server] if server else []):
                if process.poll() is None:
                    process.terminate()
                    process.wait()
    sys.exit(max(codes, key=abs))


if __name__ == "__main__":
    main()
