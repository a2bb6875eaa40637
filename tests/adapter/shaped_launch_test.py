"""adapter/examples/shaped_launch.py: ranks in their own network namespaces, their egress
shaped by tc; the shaped links lengthen each iteration by the gradient's transfer, and nothing the
launcher created is left behind.

usage: shaped_launch_test.py SOURCE_DIR
Exit 77 (skip) where network namespaces or the tbf qdisc are unavailable (not root)."""
import os
import pathlib
import re
import subprocess
import sys

SKIP = 77
SOURCE = pathlib.Path(sys.argv[1])
# The example's SmallCnn: 160 + 4,640 + 5,130 fp32 parameters.
GRADIENT_BYTES = 9930 * 4
SLOW_MBIT = 2


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def namespaces_work():
    probe = f"dynamix-probe-{os.getpid()}"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode != 0:
        return False
    inside = ["ip", "netns", "exec", probe]
    ok = subprocess.run(inside + ["tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate",
                                  "10mbit", "burst", "3000", "latency", "100ms"],
                        capture_output=True).returncode == 0
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return ok


def median_iteration_ms(rates):
    environment = dict(os.environ, PYTHONPATH=str(SOURCE / "adapter" / "python"))
    launcher = subprocess.Popen(
        [sys.executable, str(SOURCE / "adapter" / "examples" / "shaped_launch.py"),
         "--rates-mbit", rates, "--timeout-s", "120", "--",
         str(SOURCE / "adapter" / "examples" / "train_cnn.py"), "--plain", "--iterations", "24",
         "--interval", "10", "--batch", "32"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    stdout, stderr = launcher.communicate(timeout=180)
    if launcher.returncode != 0:
        fail(f"shaped_launch {rates} exited {launcher.returncode}: {stderr[-2000:]}")
    check_cleaned_up(launcher.pid % 100000)
    found = re.search(r"median iteration ([0-9.]+) ms", stdout)
    if not found:
        fail(f"no median iteration in: {stdout[-1000:]}")
    return float(found.group(1))


def check_cleaned_up(tag):
    """The launcher names what it creates after its process id: none of it may remain."""
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    if re.search(rf"dynamix-{tag}-\d", left) or re.search(rf"dxbr{tag}\b|dxv{tag}r\d", links):
        fail(f"namespaces or links of launcher {tag} left behind: {left} {links}")


def main():
    if os.geteuid() != 0 or not namespaces_work():
        print("skip: network namespaces with a tbf qdisc need root (CAP_NET_ADMIN)")
        sys.exit(SKIP)
    fast = median_iteration_ms("10000,10000")
    shaped = median_iteration_ms(f"{SLOW_MBIT},{SLOW_MBIT}")
    # A 2-rank ring sends the whole gradient each way over the shaped links.
    expected_ms = GRADIENT_BYTES * 8 / (SLOW_MBIT * 1e6) * 1e3
    print(f"median iteration: {fast:.2f} ms unshaped, {shaped:.2f} ms with both ranks at "
          f"{SLOW_MBIT} Mbit/s (a {expected_ms:.1f} ms transfer)")
    if shaped - fast < 0.5 * expected_ms:
        fail(f"the shaped rank added {shaped - fast:.2f} ms, expected about {expected_ms:.1f}")
    print("ok")


if __name__ == "__main__":
    main()
