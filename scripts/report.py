#!/usr/bin/python3
"""Executes the notebooks in notebooks_export/ that fit a dynamix run directory, headless, and
exports them into RUN_DIR/report/: the executed .ipynb, an HTML page each, and PNG figures.

usage: scripts/report.sh RUN_DIR [--band FILE]

Which notebooks run follows from the files in RUN_DIR: train_curve.csv (training), results.csv
of evaluate (evaluation) or of sweep (sweep), iterations.csv or windows.csv (episode). --band
draws a CI reward band (first_update,last_update,low,high, as scripts/reward_band.py writes it)
around the training curve; RUN_DIR/reward_band.csv is used when present. The report folder is
written under a temporary name and renamed into place; an existing RUN_DIR/report is replaced
only when dynamix wrote it.
"""
import argparse
import csv
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(ROOT, "notebooks_export")
MARKER = ".dynamix-run"


class InputError(Exception):
    """Bad input: one line for the user, exit status 2."""


class NotebookError(Exception):
    """A notebook failed on this run directory: one line, exit status 1."""


def header(path):
    with open(path, newline="") as handle:
        return next(csv.reader(handle), [])


def notebooks_for(run_dir):
    """The notebooks whose inputs the run directory holds, in report order."""
    def has(name):
        return os.path.isfile(os.path.join(run_dir, name))

    chosen = []
    if has("train_curve.csv"):
        chosen.append("training")
    if has("results.csv"):
        columns = header(os.path.join(run_dir, "results.csv"))
        if columns[:1] == ["cell"]:
            chosen.append("sweep")
        elif "scenario" in columns:
            chosen.append("evaluation")
    if has("iterations.csv") or has("windows.csv"):
        chosen.append("episode")
    return chosen


def check_run_directory(run_dir, band):
    if not os.path.isfile(os.path.join(run_dir, MARKER)):
        raise InputError(f"RUN_DIR: expected a run directory that dynamix wrote (holding {MARKER}), "
                         f"found '{run_dir}'")
    if band and not os.path.isfile(band):
        raise InputError(f"--band: expected a reward band CSV file, found '{band}'")
    report = os.path.join(run_dir, "report")
    if os.path.lexists(report) and not os.path.isfile(os.path.join(report, MARKER)):
        raise InputError(f"RUN_DIR: expected no report folder or one that dynamix wrote, found "
                         f"'{report}', which was not written by dynamix")
    chosen = notebooks_for(run_dir)
    if not chosen:
        raise InputError("RUN_DIR: expected train_curve.csv, results.csv, iterations.csv or "
                         f"windows.csv, found none in '{run_dir}'")
    return chosen


def execute(name, run_dir, staging, band):
    """Runs notebook `name` with its parameters cell set, writing .ipynb, .html and PNGs."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    from nbconvert import HTMLExporter

    notebook = nbformat.read(os.path.join(NOTEBOOKS, name + ".ipynb"), as_version=4)
    parameters = next(c for c in notebook.cells if "parameters" in c.metadata.get("tags", []))
    parameters.source = (f"RUN_DIR = {os.path.abspath(run_dir)!r}\n"
                         f"FIGURES = {os.path.abspath(staging)!r}\nBAND = {band!r}\n"
                         f"CATALOG = {os.path.join(ROOT, 'catalog', 'workloads.yaml')!r}")
    try:
        NotebookClient(notebook, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": staging}}).execute()
    except CellExecutionError as error:
        raise NotebookError(f"notebooks_export/{name}.ipynb failed on {run_dir}: "
                            f"{str(error).strip().splitlines()[-1]}") from error
    nbformat.write(notebook, os.path.join(staging, name + ".ipynb"))
    html, _ = HTMLExporter().from_notebook_node(notebook)
    with open(os.path.join(staging, name + ".html"), "w", encoding="utf-8") as handle:
        handle.write(html)


def write_report(run_dir, band):
    # The kernel inherits it: no debugger warning about frozen modules on every run.
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    chosen = check_run_directory(run_dir, band)
    if not band and os.path.isfile(os.path.join(run_dir, "reward_band.csv")):
        band = os.path.join(run_dir, "reward_band.csv")
    band = os.path.abspath(band) if band else ""
    report = os.path.join(run_dir, "report")
    staging = f"{report}.partial-{os.getpid()}"
    os.makedirs(staging)
    try:
        with open(os.path.join(staging, MARKER), "w") as marker:
            marker.write("dynamix report\n")
        for name in chosen:
            execute(name, run_dir, staging, band)
        if os.path.lexists(report):
            shutil.rmtree(report)
        os.rename(staging, report)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return report, chosen


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", metavar="RUN_DIR")
    parser.add_argument("--band", default="", help="CI reward band CSV for the training curve")
    args = parser.parse_args()
    try:
        report, chosen = write_report(args.run_dir.rstrip("/") or "/", args.band)
    except InputError as error:
        print(f"dynamix report: {error}", file=sys.stderr)
        return 2
    except NotebookError as error:
        print(f"dynamix report: {error}", file=sys.stderr)
        return 1
    figures = sorted(f for f in os.listdir(report) if f.endswith(".png"))
    print(f"wrote {report}/: {', '.join(n + '.{ipynb,html}' for n in chosen)}; figures: {', '.join(figures)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
