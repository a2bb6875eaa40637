"""scripts/tcp_study.py's smoke run: two gloo ranks in network namespaces of their own at 1 Gb/s,
lossless and at 1% loss; the lossless rows fitted, the lossy ones predicted, the outputs well
formed, nothing of the study left behind; bad input refused in one line. Root only (network
namespaces, tc, nftables): skipped with exit 77 elsewhere.
usage: tcp_study_test.py PATH/TO/dynamix"""
import csv
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

STUDY = pathlib.Path(__file__).resolve().parent.parent.parent / "scripts" / "tcp_study.py"
DYNAMIX = sys.argv.pop(1)

if os.geteuid() != 0 or any(shutil.which(t) is None for t in ("ip", "tc", "nft", "ethtool")):
    print("skipped: the network study needs root and ip, tc, nft and ethtool "
          "(scripts/setup.sh installs iproute2, nftables and ethtool)")
    sys.exit(77)


def study(*arguments):
    return subprocess.run([sys.executable, str(STUDY), "--dynamix", DYNAMIX, *arguments],
                          capture_output=True, text=True, timeout=240, check=False)


def namespaces():
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in listed.splitlines() if line.startswith("dynamix-tcp-")]


class TcpStudy(unittest.TestCase):
    def test_the_smoke_study_fits_lossless_rows_and_predicts_lossy_ones(self):
        with tempfile.TemporaryDirectory() as folder:
            out = pathlib.Path(folder) / "tcp"
            done = study("--smoke", "--out", str(out))
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            with open(out / "results.csv", newline="") as results:
                rows = list(csv.DictReader(results))
            self.assertEqual(len(rows), 4)  # 1 rate x 2 losses x 2 sizes
            for row in rows:
                self.assertEqual(row["held_out"], "1" if float(row["loss_rate"]) > 0 else "0")
                self.assertGreater(float(row["measured_s"]), 0)
                self.assertGreater(float(row["predicted_s"]), 0)
            summary = (out / "summary.md").read_text()
            self.assertIn("loss 0.01: median |predicted/measured - 1|", summary)
            self.assertIn("| 1 | 0.01 |", summary)  # the retransmission and timeout counts
            self.assertTrue((out / "calibrated" / "r1" / "calibrated.yaml").is_file())
            self.assertFalse(out.with_name("tcp.partial").exists())
        self.assertEqual(namespaces(), [])

    def test_bad_input_is_refused_in_one_line_and_an_existing_folder_left_alone(self):
        with tempfile.TemporaryDirectory() as folder:
            kept = pathlib.Path(folder) / "kept"
            kept.mkdir()
            (kept / "mine.txt").write_text("not the study's\n")
            for arguments in (["--out", str(kept)], ["--losses", "0.7", "--out", "x"],
                              ["--losses", "1e-3", "--out", "x"], ["--sizes", "3", "--out", "x"]):
                with self.subTest(arguments=arguments):
                    done = study(*arguments)
                    self.assertEqual(done.returncode, 2, done.stderr)
                    self.assertEqual(done.stderr.count("\n"), 1, done.stderr)
                    self.assertTrue(done.stderr.startswith("tcp_study.py: "), done.stderr)
            self.assertEqual((kept / "mine.txt").read_text(), "not the study's\n")
        self.assertEqual(namespaces(), [])


if __name__ == "__main__":
    unittest.main()
