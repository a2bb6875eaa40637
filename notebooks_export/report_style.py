"""The figure decisions the report notebooks share: print sizes and fonts, the formats written,
axis labels from the knob tables of `dynamix config`, when an axis goes log or symlog, colours
that stay distinct past ten lines, seed intervals, and y limits that do not magnify a tiny spread.
Plain functions, so tests/scripts/report_test.py checks each decision without drawing."""
import json
import os
import re
import subprocess

import numpy as np

FORMATS = ("png", "pdf", "svg")
# PNG at print resolution; PDF and SVG are vector, so DPI only matters for their rasterised parts.
DPI = 300
# A two-column paper's full text width and one column (IEEE/ACM: 7.16 and 3.5 inches).
WIDE_IN = 7.0
COLUMN_IN = 3.5
FONT_PT = {"font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "xtick.labelsize": 7,
           "ytick.labelsize": 7, "legend.fontsize": 7, "figure.titlesize": 9}
INTERVAL = "95% percentile-bootstrap interval of the mean over seeds"
INTERVAL_SHORT = "95% bootstrap CI of the mean over seeds"
UNIT_SUFFIXES = {"_s": "s", "_ms": "ms", "_us": "µs", "_ns": "ns", "_gbps": "Gb/s", "_mbps": "Mb/s",
                 "_gb": "GB", "_mb": "MB", "_kib": "KiB", "_kb": "KiB", "_bytes": "bytes",
                 "_tflops": "TFLOP/s", "_pct": "%"}

ACRONYMS = {"gpu": "GPU", "gpus": "GPUs", "cpu": "CPU", "lr": "LR", "rto": "RTO", "tcp": "TCP"}


def apply_style(matplotlib):
    """Paper fonts, and text kept as text in SVG and as Type 42 fonts in PDF (editable, embeddable)."""
    matplotlib.rcParams.update(FONT_PT)
    matplotlib.rcParams.update({"svg.fonttype": "none", "pdf.fonttype": 42, "savefig.dpi": DPI,
                                "axes.grid": True, "grid.alpha": 0.3, "grid.linewidth": 0.5,
                                # Ticks say the values themselves: no "1e7" offset or multiplier below a billion.
                                "axes.formatter.useoffset": False, "axes.formatter.limits": (-5, 9)})


def parse_formats(text):
    """The formats of --formats ("png,pdf"), in the order given; ValueError names a bad one."""
    formats = [f.strip().lower() for f in text.split(",") if f.strip()]
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        raise ValueError(f"expected a comma-separated list of {', '.join(FORMATS)}, found '{text}'")
    return list(dict.fromkeys(formats))


def save(fig, folder, name, formats=FORMATS):
    """Writes folder/name.FORMAT for each format, the legend below the axes included; returns the
    paths, the PNG first when there is one (the notebook shows it)."""
    paths = []
    for extension in formats:
        path = os.path.join(folder, f"{name}.{extension}")
        # No creation date: the same run gives the same PDF and SVG bytes.
        metadata = {"pdf": {"CreationDate": None}, "svg": {"Date": None}}.get(extension)
        fig.savefig(path, dpi=DPI, bbox_inches="tight", pad_inches=0.03, metadata=metadata)
        paths.append(path)
    return sorted(paths, key=lambda p: not p.endswith(".png"))


def parse_knob_table(reference):
    """{key: {"type", "unit", "meaning"}} from the output of `dynamix config --json`: every
    scenario and topology key."""
    knobs = {}
    for table in reference.get("scenario", []) + reference.get("topology", []):
        for key in table["keys"]:
            knobs[key["key"]] = {"type": key["type"], "unit": key["unit"],
                                 "meaning": key["meaning"]}
    return knobs


def knob_table(dynamix):
    """The knob tables of the dynamix executable at `dynamix`; {} when it cannot say."""
    if not dynamix or not os.access(dynamix, os.X_OK):
        return {}
    try:
        done = subprocess.run([dynamix, "config", "--json"], capture_output=True, text=True,
                              timeout=60)
        return parse_knob_table(json.loads(done.stdout)) if done.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return {}


CLAUSE_END = re.compile(r";|, |: | \(| - ")


def first_clause(text):
    """(the text up to its first clause separator, that separator, the rest)."""
    end = CLAUSE_END.search(text)
    return (text[:end.start()], end.group(), text[end.end():]) if end else (text, "", "")


def knob_row(key, knobs):
    """The row of `key`; a list element's key (topology.nodes.0.link.bandwidth_gbps) finds the
    list's row (topology.nodes[].link.bandwidth_gbps)."""
    return knobs.get(key) or knobs.get(re.sub(r"\.\d+(?=\.)", "[]", key))


def short_meaning(knob, limit=48):
    """The name a knob's meaning starts with, capitalised, or None where the meaning does not start
    with one. A choice's meaning describes its values ("fp32, or mixed precision"), so a choice has
    none; a one-word clause before a colon says where the key applies ("leaf-spine: nodes under
    each leaf switch") and the name follows it; a first clause longer than `limit` is no label."""
    if knob["type"].startswith("one of"):
        return None
    clause, separator, rest = first_clause(knob["meaning"])
    if separator == ": " and " " not in clause:
        clause = first_clause(rest)[0]
    clause = clause.strip()
    if not clause or len(clause) > limit:
        return None
    return clause[:1].upper() + clause[1:]


def key_words(key):
    """The key's last part (after its section when nested) in words, and the unit its suffix names
    (keys carry units: host_bandwidth_gbps)."""
    parts = re.sub(r"\.\d+(?=\.)|\[\]", "", key).split(".")
    suffix = next((s for s in UNIT_SUFFIXES if parts[-1].endswith(s)), "")
    words = (parts[-1][: -len(suffix)] if suffix else parts[-1]).replace("_", " ")
    if len(parts) >= 3:
        words = f"{parts[-2]} {words}"
    words = " ".join(ACRONYMS.get(word, word) for word in words.split(" "))
    return words[:1].upper() + words[1:], UNIT_SUFFIXES.get(suffix, "")


def axis_label(key, knobs):
    """"Name (unit)": the name the knob's meaning starts with (short_meaning), else the key in words
    (key_words); the unit from the knob tables, else from the key's suffix."""
    knob = knob_row(key, knobs)
    words, unit = key_words(key)
    if knob:
        words = short_meaning(knob) or words
        unit = "µs" if knob["unit"] == "us" else knob["unit"]
    return words + (f" ({unit})" if unit else "")


def zip_label(keys, knobs):
    """The label of keys swept together (--grid-zip): their labels joined by " / ", or, where
    they say the same thing ("Nodes this entry declares" twice), that once with the keys."""
    labels = list(dict.fromkeys(axis_label(k, knobs) for k in keys))
    return " / ".join(labels) if len(labels) == len(keys) else f"{labels[0]} ({compact_keys(keys)})"


def compact_keys(keys):
    """Keys that differ in one part written once, "topology.nodes.{0,1}.count"; others listed."""
    parts = [k.split(".") for k in keys]
    differing = [i for i in range(len(parts[0])) if len({p[i] for p in parts}) > 1]
    if len({len(p) for p in parts}) != 1 or len(differing) != 1:
        return ", ".join(keys)
    i = differing[0]
    return ".".join([*parts[0][:i], "{" + ",".join(p[i] for p in parts) + "}", *parts[0][i + 1:]])


def nested_widths(count):
    """(line width, marker size) of each of `count` series, widest first: a series drawn over
    another with the same values stays visible as a thinner line inside a wider one."""
    steps = max(count - 1, 1)
    return [(1.1 + 1.1 * (count - 1 - i) / steps, 3.5 + 2.0 * (count - 1 - i) / steps)
            for i in range(count)]


def axis_scale(values):
    """"log" when the positive values span two decades or more, or form a geometric grid (each at
    least twice the one before, three or more of them); "symlog" when 0 is among values whose
    non-zero part would be log; "linear" otherwise (and for any negative value)."""
    values = np.unique(np.asarray(values, dtype=float))
    values = values[np.isfinite(values)]
    if len(values) < 2 or (values < 0).any():
        return "linear"
    positive = values[values > 0]
    if len(positive) < 2:
        return "linear"
    ratios = positive[1:] / positive[:-1]
    geometric = len(positive) >= 3 and (ratios >= 2).all()
    spans_decades = positive.max() >= 100 * positive.min()
    if not (geometric or spans_decades):
        return "linear"
    return "symlog" if (values == 0).any() else "log"


def apply_x_scale(axis, values):
    """Sets the scale axis_scale chooses, ticks at the swept values written plainly; symlog's
    linear part is the smallest non-zero value, so 0 sits half a decade below it."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    scale = axis_scale(values)
    ticks = sorted(set(float(v) for v in values if np.isfinite(v)))
    if scale == "log":
        axis.set_xscale("log")
        axis.set_xlim(ticks[0] / 1.3, ticks[-1] * 1.3)
    elif scale == "symlog":
        positive = min(v for v in ticks if v > 0)
        axis.set_xscale("symlog", linthresh=positive, linscale=0.5)
        axis.set_xlim(-0.3 * positive, ticks[-1] * 1.3)
    if scale != "linear" or len(ticks) <= 8:
        axis.xaxis.set_major_locator(FixedLocator(ticks))
        axis.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axis.xaxis.set_minor_locator(NullLocator())
    return scale


def colours(count):
    """`count` distinguishable colours: tab10 up to 10; tab20 up to 20, its dark shades first so
    the first ten stay ten hues; beyond 20 evenly spaced samples of the perceptual viridis map."""
    from matplotlib import cm

    if count <= 10:
        return [cm.tab10(i) for i in range(count)]
    if count <= 20:
        order = list(range(0, 20, 2)) + list(range(1, 20, 2))
        return [cm.tab20(order[i]) for i in range(count)]
    return [cm.viridis(x) for x in np.linspace(0, 0.92, count)]


def bootstrap(values, seed=1, resamples=2000):
    """Mean and 95% percentile-bootstrap interval, as dynamix evaluate computes them; a single
    value is its own interval."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if len(values) == 0:
        return np.nan, np.nan, np.nan
    rng = np.random.default_rng(seed)
    means = rng.choice(values, size=(resamples, len(values))).mean(axis=1)
    return values.mean(), np.quantile(means, 0.025), np.quantile(means, 0.975)


def y_limits(low, high, min_relative=0.2):
    """Limits that show data from `low` to `high` without magnifying a small relative spread: the
    axis spans at least `min_relative` of the midpoint, kept at or above 0 for positive data.
    None when the data need no help (matplotlib's own limits do)."""
    low, high = float(low), float(high)
    middle = (low + high) / 2
    if not np.isfinite(middle) or middle == 0 or high - low >= min_relative * abs(middle):
        return None
    half = min_relative * abs(middle) / 2
    bottom = middle - half
    if low >= 0 > bottom:
        bottom = 0.0
    return bottom, middle + half


def relative_spread(values):
    """(max - min) / min of the positive finite values: how far apart the plotted means are."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    return (values.max() - values.min()) / values.min() if len(values) >= 2 else 0.0


def run_scenario(run_dir):
    """(name, first line of description) of the scenario that a run directory's run.json (sweep)
    or summary.json (simulate) resolved; ("", "") when it names none. A sweep's first cell stands
    for the sweep."""
    import json

    run = {}
    for name in ("run.json", "summary.json"):
        try:
            with open(os.path.join(run_dir, name)) as handle:
                run = json.load(handle)
            break
        except (OSError, ValueError):
            continue
    config = run.get("config") or (run.get("cells") or [{}])[0].get("config") or {}
    name = config.get("name") or os.path.splitext(os.path.basename(str(run.get("scenario") or "")))[0]
    description = str(config.get("description") or "").strip().splitlines()
    return str(name), description[0] if description else ""


def run_title(run_dir):
    """The scenario's name for a figure title, "" when the run names none."""
    return run_scenario(run_dir)[0]
