#!/usr/bin/python3
"""scripts/report.py and dynamix report end to end: small runs of the built dynamix (train,
evaluate, simulate, sweep), each exported as executed notebooks, HTML, and figures as 300 dpi PNG,
PDF and SVG; the training curve drawn in a given CI band; the sweep's x key chosen with --x and
its misses marked; bad input refused in one line with exit status 2; and the plotting decisions of
notebooks_export/report_style.py (log or symlog axes, colours, y limits, axis labels).
usage: report_test.py PATH/TO/dynamix"""
import csv
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.path.join(ROOT, "scripts", "report.py")
DYNAMIX = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(ROOT, "build", "apps", "dynamix"))
sys.path.insert(0, os.path.join(ROOT, "notebooks_export"))
import report_style as style  # noqa: E402
SHORT = ["--set", "training.budget_time_s=10", "--quiet"]
RUNS = {
    "train": (["train", "--steps", "1024", *SHORT], ["training"],
              ["training_curve"]),
    "evaluate": (["evaluate", "--policies", "static:128,goodput", "--seeds", "2", *SHORT],
                 ["evaluation"], ["evaluation_bars"]),
    "simulate": (["simulate", "--policy", "goodput", "--record", "iterations",
                  "--set", "training.budget_time_s=5"], ["episode"],
                 ["episode_batches", "episode_timeline"]),
    "sweep": (["sweep", "--scenario", os.path.join(ROOT, "scenarios", "studies", "scaling.yaml"),
               "--grid", "topology.fabric.nodes=8,32", "--grid", "sync.architecture=ring,ps",
               "--policies", "static:64,goodput", "--seeds", "2", *SHORT], ["sweep"],
              ["sweep_scaling"]),
    # Two keys swept together: one axis, ticks naming both values.
    "sweep_zip": (["sweep", "--scenario", os.path.join(ROOT, "scenarios", "studies", "scaling.yaml"),
                   "--grid-zip", "topology.fabric.nodes=8,16,32",
                   "--grid-zip", "topology.fabric.host_bandwidth_gbps=8,25,32",
                   "--policies", "static:64,goodput", "--seeds", "2", *SHORT], ["sweep"],
                  ["sweep_scaling"]),
}
ZIPPED = ["topology.fabric.nodes", "topology.fabric.host_bandwidth_gbps"]


def png_size_and_dpi(path):
    """Width, height and dots per inch from the PNG's IHDR and pHYs chunks; fails on anything else."""
    with open(path, "rb") as handle:
        data = handle.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise AssertionError(f"{path} is not a PNG image")
    width, height = struct.unpack(">II", data[16:24])
    at = data.find(b"pHYs")
    per_metre = struct.unpack(">I", data[at + 4:at + 8])[0] if at > 0 else 0
    return width, height, round(per_metre * 0.0254)


def report(run_dir, *extra):
    return subprocess.run([sys.executable, REPORT, run_dir, *extra], capture_output=True, text=True,
                          env={**os.environ, "DYNAMIX": DYNAMIX})


def dynamix_report(*arguments):
    return subprocess.run([DYNAMIX, "report", *arguments], capture_output=True, text=True)


class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.TemporaryDirectory(prefix="dynamix-report-")
        for name, (command, _, _) in RUNS.items():
            subprocess.run([DYNAMIX, *command, "--out", os.path.join(cls.work.name, name)],
                           check=True, stdout=subprocess.DEVNULL)
        cls.band = os.path.join(cls.work.name, "band.yaml")
        with open(cls.band, "w") as handle:
            handle.write("# dynamix reward band: written by dynamix band make\nbin_updates: 20\n"
                         "bins:\n  - {first_update: 1, last_update: 20, low: -1, high: 1}\n")

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
                    width, height, dpi = png_size_and_dpi(os.path.join(folder, figure + ".png"))
                    self.assertEqual(dpi, 300)
                    # A paper's column (3.5 in) to its text width (7 in), legends included.
                    self.assertTrue(3.3 <= width / dpi <= 7.6 and 1.5 <= height / dpi <= 7, (width, height))
                    with open(os.path.join(folder, figure + ".pdf"), "rb") as handle:
                        self.assertEqual(handle.read(5), b"%PDF-")
                    with open(os.path.join(folder, figure + ".svg")) as handle:
                        self.assertIn("<svg", handle.read())
                for extension in ("png", "pdf", "svg"):
                    self.assertEqual(sorted(f for f in os.listdir(folder) if f.endswith("." + extension)),
                                     sorted(f"{figure}.{extension}" for figure in figures))

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

    def test_a_training_without_greedy_evaluation_gets_a_sentence_not_an_empty_figure(self):
        run_dir = os.path.join(self.work.name, "train")
        self.assertEqual(report(run_dir).returncode, 0)
        folder = os.path.join(run_dir, "report")
        self.assertFalse([f for f in os.listdir(folder) if f.startswith("training_evaluation")])
        with open(os.path.join(folder, "training.ipynb")) as handle:
            self.assertIn("No greedy evaluation ran", handle.read())

    def test_the_x_key_comes_from_the_command_line_labelled_by_its_meaning(self):
        run_dir = os.path.join(self.work.name, "sweep")
        outcome = dynamix_report(run_dir, "--x", "sync.architecture", "--formats", "svg")
        self.assertEqual(outcome.returncode, 0, outcome.stderr)
        folder = os.path.join(run_dir, "report")
        self.assertEqual(sorted(f for f in os.listdir(folder) if f.startswith("sweep_")), ["sweep_scaling.svg"])
        label = style.axis_label("sync.architecture", style.knob_table(DYNAMIX))
        self.assertNotEqual(label, "sync.architecture")
        with open(os.path.join(folder, "sweep_scaling.svg")) as handle:
            svg = handle.read()
        self.assertIn(label, svg)
        # The other swept key titles each panel by its own meaning in the knob tables.
        nodes = style.axis_label("topology.fabric.nodes", style.knob_table(DYNAMIX))
        self.assertNotEqual(nodes, "topology.fabric.nodes")
        self.assertIn(f"{nodes}: 32", svg)

    def test_cells_where_every_seed_missed_are_marked_and_named_in_the_legend(self):
        # A 10 s budget: no seed reaches the target, so every time-to-target point is a marker.
        run_dir = os.path.join(self.work.name, "sweep")
        self.assertEqual(report(run_dir, "--formats", "svg,png").returncode, 0)
        with open(os.path.join(run_dir, "report", "sweep_scaling.svg")) as handle:
            svg = handle.read()
        self.assertIn("missed the target on every seed", svg)
        self.assertIn(style.INTERVAL_SHORT, svg)
        self.assertIn(style.axis_label("topology.fabric.nodes", style.knob_table(DYNAMIX)), svg)

    def test_keys_swept_together_are_one_axis_labelled_by_all_of_them(self):
        run_dir = os.path.join(self.work.name, "sweep_zip")
        outcome = report(run_dir, "--formats", "svg")
        self.assertEqual(outcome.returncode, 0, outcome.stderr)
        with open(os.path.join(run_dir, "report", "sweep_scaling.svg")) as handle:
            svg = handle.read()
        knobs = style.knob_table(DYNAMIX)
        self.assertIn(style.zip_label(ZIPPED, knobs), svg)
        # Ticks name both keys' values, even where they agree: they count different things.
        for tick in (">8 / 8<", ">16 / 25<", ">32 / 32<"):
            self.assertIn(tick, svg)
        # The zipped partner is no line style of its own (one-point series, one legend entry
        # per value).
        self.assertNotIn(style.axis_label(ZIPPED[1], knobs) + ":", svg)
        with open(os.path.join(run_dir, "report", "sweep.ipynb")) as handle:
            notebook = json.load(handle)
        self.assertNotIn("Error", json.dumps([c.get("outputs", []) for c in notebook["cells"]]))

    def test_dynamix_report_prints_its_help_and_refuses_bad_input_in_one_line(self):
        helped = dynamix_report("--help")
        self.assertEqual(helped.returncode, 0, helped.stderr)
        for option in ("RUN_DIR", "--x KEY", "--band FILE", "--formats", "Exit status"):
            self.assertIn(option, helped.stdout)
        missing = os.path.join(self.work.name, "no-such-run")
        for arguments in ([missing], [], [os.path.join(self.work.name, "simulate"), "--formats", "png,gif"],
                          [os.path.join(self.work.name, "simulate"), "--x", "topology.fabric.nodes"],
                          [os.path.join(self.work.name, "sweep"), "--x", "training.seed"],
                          [os.path.join(self.work.name, "sweep"), "--colour", "red"]):
            with self.subTest(arguments=arguments):
                outcome = dynamix_report(*arguments)
                self.assertEqual(outcome.returncode, 2)
                self.assertEqual(outcome.stderr.count("\n"), 1, outcome.stderr)
                self.assertTrue(outcome.stderr.startswith("dynamix report: "), outcome.stderr)
        self.assertFalse(os.path.exists(missing))


class ReportStyleTest(unittest.TestCase):
    def test_an_axis_is_log_over_decades_or_a_geometric_grid_and_symlog_when_zero_is_swept(self):
        cases = {(8, 32, 128, 512, 4096): "log", (1, 100): "log", (8, 16, 32): "log",
                 (0, 1e-5, 1e-4, 1e-3): "symlog", (0, 10, 100, 1000): "symlog",
                 (8, 32): "linear", (1, 2, 3, 4): "linear", (0.5, 0.6, 0.7): "linear",
                 (-1, 10, 1000): "linear", (0, 1): "linear", (5,): "linear"}
        for values, scale in cases.items():
            with self.subTest(values=values):
                self.assertEqual(style.axis_scale(values), scale)
                fig, axis = plt.subplots()
                style.apply_x_scale(axis, values)
                self.assertEqual(axis.get_xscale(), scale)
                plt.close(fig)

    def test_colours_stay_distinct_past_ten_and_twenty_lines(self):
        for count in (3, 10, 11, 16, 20, 21, 64):
            with self.subTest(count=count):
                self.assertEqual(len(set(style.colours(count))), count)
        self.assertEqual(style.colours(12)[:10], style.colours(20)[:10])

    def test_a_tiny_relative_spread_keeps_a_fifth_of_its_level_on_the_y_axis(self):
        bottom, top = style.y_limits(0.993, 1.0)
        self.assertGreaterEqual(top - bottom, 0.2 * 0.9965 - 1e-12)
        self.assertTrue(bottom <= 0.993 and top >= 1.0)
        self.assertIsNone(style.y_limits(1.0, 2.0))
        self.assertAlmostEqual(style.relative_spread([1.0, 1.007, 1.003]), 0.007)

    def test_axis_labels_come_from_the_knob_tables_else_from_the_key(self):
        knobs = style.knob_table(DYNAMIX)
        self.assertEqual(knobs["training.budget_time_s"]["unit"], "s")
        self.assertEqual(style.axis_label("training.budget_time_s", knobs),
                         "The run stops after this much simulated time (s)")
        self.assertEqual(style.axis_label("sync.message_overhead_us", knobs)[-4:], "(µs)")
        self.assertEqual(style.axis_label("topology.fabric.host_bandwidth_gbps", {}),
                         "Fabric host bandwidth (Gb/s)")
        self.assertEqual(style.axis_label("batch_size", {}), "Batch size")
        self.assertEqual(style.knob_table(os.path.join(ROOT, "no-such-dynamix")), {})
        reference = {"scenario": [{"keys": [{"key": "a.b", "type": "number", "unit": "s",
                                             "meaning": "one | two; three"}]}]}
        self.assertEqual(style.parse_knob_table(reference),
                         {"a.b": {"type": "number", "unit": "s", "meaning": "one | two; three"}})

    def test_every_swept_key_is_labelled_by_what_it_names_not_by_its_values(self):
        knobs = style.knob_table(DYNAMIX)
        # A choice's meaning describes its values ("leaf-spine, or a k-ary fat-tree"): its key
        # names it.
        self.assertEqual(style.axis_label("topology.fabric.kind", knobs), "Fabric kind")
        self.assertEqual(style.axis_label("training.precision", knobs), "Precision")
        self.assertEqual(style.axis_label("sync.ring_model", knobs), "Ring model")
        # "leaf-spine: nodes under each leaf switch" says where the key applies, then what it is.
        self.assertEqual(style.axis_label("topology.fabric.hosts_per_leaf", knobs),
                         "Nodes under each leaf switch")
        self.assertEqual(style.axis_label("topology.fabric.k", knobs), "Switch radix")
        # A list element's key finds its list's row; a meaning too long for an axis gives way to
        # the key, with the table's unit.
        self.assertEqual(style.axis_label("topology.nodes.0.link.bandwidth_gbps", knobs),
                         "Line rate of the node's uplink (Gb/s)")
        self.assertEqual(style.axis_label("network.max_window_kb", knobs), "Max window (KiB)")
        self.assertEqual(style.axis_label("variability.gpu_spread", knobs), "GPU spread")
        for key in knobs:
            with self.subTest(key=key):
                label = style.axis_label(key, knobs)
                self.assertTrue(label[:1].isupper() and "…" not in label and "[]" not in label,
                                label)

    def test_keys_swept_together_share_one_label(self):
        knobs = style.knob_table(DYNAMIX)
        nodes = style.axis_label("topology.nodes.0.count", knobs)
        self.assertEqual(style.zip_label(["topology.nodes.0.count", "topology.nodes.1.count"], knobs),
                         f"{nodes} (topology.nodes.{{0,1}}.count)")
        self.assertEqual(style.zip_label(ZIPPED, knobs),
                         " / ".join(style.axis_label(k, knobs) for k in ZIPPED))
        self.assertEqual(style.compact_keys(["a.b", "c.d.e"]), "a.b, c.d.e")

    def test_series_with_the_same_values_are_drawn_one_inside_the_other(self):
        widths = style.nested_widths(4)
        self.assertEqual(widths[-1], (1.1, 3.5))
        for wider, thinner in zip(widths, widths[1:]):
            self.assertGreater(wider[0], thinner[0])
            self.assertGreater(wider[1], thinner[1])
        self.assertEqual(style.nested_widths(1), [(1.1, 3.5)])

    def test_time_axes_show_their_values_without_an_offset_or_multiplier(self):
        style.apply_style(matplotlib)
        for values, first in (([1.2e7, 1.5e7, 1.9e7], "11000000"), ([1e7 + 1, 1e7 + 2], "10000001")):
            fig, axis = plt.subplots()
            axis.plot(range(len(values)), values)
            fig.canvas.draw()
            labels = [t.get_text() for t in axis.get_yticklabels()]
            plt.close(fig)
            self.assertEqual(axis.yaxis.get_major_formatter().get_offset(), "")
            self.assertTrue(any(label.startswith(first) for label in labels), labels)

    def test_formats_are_a_comma_separated_subset_of_png_pdf_svg(self):
        self.assertEqual(style.parse_formats("pdf, PNG,pdf"), ["pdf", "png"])
        for bad in ("", "gif", "png,eps"):
            with self.subTest(formats=bad), self.assertRaises(ValueError):
                style.parse_formats(bad)


if __name__ == "__main__":
    unittest.main(verbosity=2)
