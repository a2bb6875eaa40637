#!/usr/bin/python3
"""Executes the notebooks in notebooks_export/ that fit a dynamix run directory, headless, and
exports them into RUN_DIR/report/: the executed .ipynb, an HTML page each, and every figure as
PNG (300 dpi), PDF and SVG, sized for a paper's text width.

Which notebooks run follows from the files in RUN_DIR: train_curve.csv (training), results.csv
of evaluate (evaluation) or of sweep (sweep), iterations.csv or windows.csv (episode). Axis
labels come from the knob tables of `dynamix config --json` (the dynamix executable named by
$DYNAMIX, else build/apps/dynamix of this checkout, else dynamix on PATH), falling back to the
key. The report folder is written under a temporary name and renamed into place; an existing
RUN_DIR/report is replaced only when dynamix wrote it.

Also run as scripts/report.sh or scripts/report.py with the same arguments. Exit status: 0
written; 1 a notebook failed; 2 bad input (one line on stderr naming the option or file).
"""
import argparse
import csv
import glob
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(ROOT, "notebooks_export")
MARKER = ".dynamix-run"
sys.path.insert(0, NOTEBOOKS)
import report_style  # noqa: E402  (the notebooks' own helpers, beside them)

FORMATS = report_style.FORMATS


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


def grid_keys(run_dir):
    """The grid keys of a sweep's results.csv: the columns between cell and policy."""
    columns = header(os.path.join(run_dir, "results.csv"))
    return columns[1:columns.index("policy")] if "policy" in columns else columns[1:]


def check_run_directory(run_dir, options):
    if not os.path.isfile(os.path.join(run_dir, MARKER)):
        raise InputError(f"RUN_DIR: expected a run directory that dynamix wrote (holding {MARKER}), "
                         f"found '{run_dir}'")
    if options.band and not os.path.isfile(options.band):
        raise InputError(f"--band: expected a reward band file (dynamix band make), found '{options.band}'")
    report = os.path.join(run_dir, "report")
    if os.path.lexists(report) and not os.path.isfile(os.path.join(report, MARKER)):
        raise InputError(f"RUN_DIR: expected no report folder or one that dynamix wrote, found "
                         f"'{report}', which was not written by dynamix")
    chosen = notebooks_for(run_dir)
    if not chosen:
        raise InputError("RUN_DIR: expected train_curve.csv, results.csv, iterations.csv or "
                         f"windows.csv, found none in '{run_dir}'")
    if options.x and "sweep" not in chosen:
        raise InputError(f"--x: expected a run directory of dynamix sweep (the x axis is a grid "
                         f"key), found none in '{run_dir}'")
    if options.x and options.x not in grid_keys(run_dir):
        raise InputError(f"--x: expected one of the sweep's grid keys ({', '.join(grid_keys(run_dir))}), "
                         f"found '{options.x}'")
    return chosen


def parse_formats(text):
    try:
        return report_style.parse_formats(text)
    except ValueError as error:
        raise InputError(f"--formats: {error}") from error


def dynamix_executable():
    """The dynamix whose knob tables label the axes: $DYNAMIX, this checkout's build, PATH's."""
    candidates = [os.environ.get("DYNAMIX", "")]
    candidates += sorted(glob.glob(os.path.join(ROOT, "build*", "apps", "dynamix")))
    candidates.append(shutil.which("dynamix") or "")
    found = next((c for c in candidates if c and os.access(c, os.X_OK)), "")
    # The notebooks run in the staging folder: a relative path would name nothing there.
    return os.path.abspath(found) if found else ""


def execute(name, run_dir, staging, parameters):
    """Runs notebook `name` with its parameters cell set, writing .ipynb, .html and figures."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    from nbconvert import HTMLExporter

    notebook = nbformat.read(os.path.join(NOTEBOOKS, name + ".ipynb"), as_version=4)
    cell = next(c for c in notebook.cells if "parameters" in c.metadata.get("tags", []))
    cell.source = "\n".join(f"{key} = {value!r}" for key, value in parameters.items())
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


def write_report(run_dir, options):
    # The kernel inherits it: no debugger warning about frozen modules on every run.
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    formats = parse_formats(options.formats)
    chosen = check_run_directory(run_dir, options)
    band = options.band
    if not band and os.path.isfile(os.path.join(run_dir, "reward_band.yaml")):
        band = os.path.join(run_dir, "reward_band.yaml")
    band = os.path.abspath(band) if band else ""
    report = os.path.join(run_dir, "report")
    staging = f"{report}.partial-{os.getpid()}"
    os.makedirs(staging)
    try:
        with open(os.path.join(staging, MARKER), "w") as marker:
            marker.write("dynamix report\n")
        parameters = {"RUN_DIR": os.path.abspath(run_dir), "FIGURES": os.path.abspath(staging),
                      "BAND": band, "CATALOG": os.path.join(ROOT, "catalog", "workloads.yaml"),
                      "X_KEY": options.x, "FORMATS": formats, "DYNAMIX": dynamix_executable(),
                      "NOTEBOOKS": NOTEBOOKS}
        for name in chosen:
            execute(name, run_dir, staging, parameters)
        if os.path.lexists(report):
            shutil.rmtree(report)
        os.rename(staging, report)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return report, chosen


class Parser(argparse.ArgumentParser):
    def error(self, message):
        """A bad command line is one line and exit status 2, like every other input error."""
        print(f"dynamix report: {message} (dynamix report --help)", file=sys.stderr)
        sys.exit(2)


def parse_arguments(argv):
    parser = Parser(prog="dynamix report", description=__doc__,
                    formatter_class=argparse.RawDescriptionHelpFormatter,
                    usage="dynamix report RUN_DIR [--x KEY] [--band FILE] [--formats png,pdf,svg]")
    parser.add_argument("run_dir", metavar="RUN_DIR",
                        help="a run directory that dynamix train, evaluate, simulate or sweep wrote")
    parser.add_argument("--x", default="", metavar="KEY",
                        help="the sweep's grid key on the x axis (default: the first numeric one)")
    parser.add_argument("--band", default="", metavar="FILE",
                        help="reward band (YAML, as dynamix band make writes it) drawn around "
                             "the training curve; default RUN_DIR/reward_band.yaml when present")
    parser.add_argument("--formats", default=",".join(FORMATS), metavar="LIST",
                        help="figure formats, comma-separated, of png, pdf, svg (default: all three)")
    return parser.parse_args(argv)


def main(argv):
    args = parse_arguments(argv)
    try:
        report, chosen = write_report(args.run_dir.rstrip("/") or "/", args)
    except InputError as error:
        print(f"dynamix report: {error}", file=sys.stderr)
        return 2
    except NotebookError as error:
        print(f"dynamix report: {error}", file=sys.stderr)
        return 1
    figures = sorted(f for f in os.listdir(report) if f.rsplit(".", 1)[-1] in FORMATS)
    print(f"wrote {report}/: {', '.join(n + '.{ipynb,html}' for n in chosen)}; figures: {', '.join(figures)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
