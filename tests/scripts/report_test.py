#!/usr/bin/python3
"""scripts/report.py end to end: small runs of the built dynamix (train, evaluate, simulate,
sweep), each exported as executed notebooks, HTML and PNG figures that are real 800x450 images;
the training curve drawn in a given CI band; a folder dynamix did not write is refused.  usage: report_test.py PATH/TO/dynamix"""
import csv
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.path.join(ROOT, "scripts", "report.py")
DYNAMIX = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(ROOT, "build", "apps", "dynamix")
SHORT = ["--set", "training.budget_time_s=10", "--quiet"]
RUNS = {
    "train": (["train", "--steps", "1024", *SHORT], ["training"],
              ["training_curve.png", "training_evaluation.png"]),
    "evaluate": (["evaluate", "--policies", "static:128,goodput", "--seeds", "2", *SHORT],
                 ["evaluation"], ["evaluation_bars.png"]),
    "simulate": (["simulate", "--policy", "goodput", "--record", "iterations",
                  "--set", "training.budget_time_s=5"], ["episode"],
                 ["episode_batches.png", "episode_timeline.png"]),
    "sweep": (["sweep", "--scenario", os.path.join(ROOT, "scenarios", "studies", "scaling.yaml"),
               "--grid", "topology.fabric.nodes=8,32", "--grid", "sync.architecture=ring,ps",
               "--policies", "static:64,goodput", "--seeds", "1", *SHORT], ["sweep"],
              ["sweep_scaling.png"]),
}


def png_size(path):
    """Width and height from the PNG signature and IHDR chunk; fails on anything else."""
    with open(path, "rb") as handle:
        head = handle.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise AssertionError(f"{path} is not a PNG image")
    return struct.unpack(">II", head[16:24])


def report(run_dir, *extra):
    return subprocess.run([sys.executable, REPORT, run_dir, *extra], capture_output=True, text=True)


class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.TemporaryDirectory(prefix="dynamix-report-")
        for name, (command, _, _) in RUNS.items():
            subprocess.run([DYNAMIX, *command, "--out", os.path.join(cls.work.name, name)],
                           check=True, stdout=subprocess.DEVNULL)
        cls.band = os.path.join(cls.work.name, "band.csv")
        with open(cls.band, "w") as handle:
            handle.write("first_update,last_update,low,high\n1,20,-1,1\n")

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def test_every_run_exports_executed_notebooks_html_and_figures(self):
        for name, (_, notebooks, figures) in RUNS.items():
            with self.subTest(run=name):
                run_dir = os.path.join(self.work.name, name)
                outcome = report(run_dir, "--band", self.band) if name == "train" else report(run_dir)
                self.assertEqual(outcome.returncode, 0, outcome.stderr)
                folder = os.path.join(run_dir, "report")
                for notebook in notebooks:
                    with open(os.path.join(folder, notebook + ".ipynb")) as handle:
                        cells = json.load(handle)["cells"]
                    code = [c for c in cells if c["cell_type"] == "code"]
                    self.assertTrue(all(c["execution_count"] for c in code))
                    self.assertGreater(os.path.getsize(os.path.join(folder, notebook + ".html")), 10000)
                if name == "train":
                    with open(os.path.join(folder, "training.ipynb")) as handle:
                        self.assertIn("CI reward band", handle.read())
                for figure in figures:
                    self.assertEqual(png_size(os.path.join(folder, figure)), (800, 450))
                self.assertEqual(sorted(f for f in os.listdir(folder) if f.endswith(".png")),
                                 sorted(figures))

    def test_the_alpha_beta_reference_is_the_simulated_ring_time_on_an_uncongested_fabric(self):
        run_dir = os.path.join(self.work.name, "sweep")
        self.assertEqual(report(run_dir).returncode, 0)
        with open(os.path.join(run_dir, "report", "alpha_beta.csv")) as handle:
            reference = {row["cell"]: float(row["alpha_beta_s"]) for row in csv.DictReader(handle)}
        with open(os.path.join(run_dir, "results.csv")) as handle:
            rows = [r for r in csv.DictReader(handle) if r["policy"] == "static:64"]
        ring = {r["cell"]: r for r in rows if r["sync.architecture"] == "ring"}
        self.assertEqual(sorted(reference), sorted(ring))
        for cell, row in ring.items():
            # 8 and 32 nodes, leaf-spine: one ring flow per link, nothing the closed form omits.
            comm_s = float(row["comm_share"]) * float(row["mean_iteration_s"])
            self.assertAlmostEqual(reference[cell] / comm_s, 1, delta=0.01, msg=row)

    def test_a_folder_dynamix_did_not_write_is_refused_and_left_alone(self):
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "train_curve.csv"), "w") as handle:
                handle.write("update,mean_return\n1,0.5\n")
            outcome = report(folder)
            self.assertEqual(outcome.returncode, 2)
            self.assertEqual(outcome.stderr.count("\n"), 1)
            self.assertIn(".dynamix-run", outcome.stderr)
            self.assertEqual(os.listdir(folder), ["train_curve.csv"])

    def test_a_report_folder_dynamix_did_not_write_is_refused(self):
        run_dir = os.path.join(self.work.name, "simulate")
        report_dir = os.path.join(run_dir, "report")
        if os.path.exists(report_dir):
            subprocess.run(["rm", "-r", report_dir], check=True)
        os.mkdir(report_dir)
        with open(os.path.join(report_dir, "notes.txt"), "w") as handle:
            handle.write("mine")
        outcome = report(run_dir)
        self.assertEqual(outcome.returncode, 2)
        self.assertEqual(os.listdir(report_dir), ["notes.txt"])
        subprocess.run(["rm", "-r", report_dir], check=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
