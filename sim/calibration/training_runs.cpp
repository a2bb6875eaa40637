// Reading runs CSVs and the B_simple estimator.
#include "sim/calibration/training_runs.h"

#include <map>

#include "sim/io/csv_table.h"
#include "sim/io/input_error.h"
#include "sim/io/sources.h"

namespace dynamix {
namespace {

RunWindow parse_window(const CsvRow& row) {
  RunWindow w;
  w.line = row.line();
  w.window = row.integer("window", 0);
  w.iteration = row.count("iteration", 1);
  w.samples = *row.number("samples", true, 0, true);
  w.time_s = *row.number("time_s", true, 0, false);
  w.global_batch = row.integer("global_batch", 1);
  w.local_batch = row.integer("local_batch", 1);
  if (w.local_batch > w.global_batch) {
    row.fail("local_batch",
             "rank 0's batch <= global_batch (" + std::to_string(w.global_batch) + ")",
             excerpt(row.cell("local_batch")));
  }
  w.lr_factor = *row.number("lr_factor", true, 0, true);
  w.train_loss = *row.number("train_loss", true, 0, true);
  w.validation_accuracy = row.number("validation_accuracy", false, 0, false);
  if (w.validation_accuracy && *w.validation_accuracy > 1) {
    row.fail("validation_accuracy", "an accuracy in [0, 1] or an empty cell",
             excerpt(row.cell("validation_accuracy")));
  }
  w.local_norm_sq = *row.number("local_norm_sq", true, 0, false);
  w.global_norm_sq = *row.number("global_norm_sq", true, 0, false);
  return w;
}

/// Refuses a window that does not follow its run's previous one.
void check_order(const CsvRow& row, const RunLog& run, const RunWindow& next) {
  const int expected = run.windows.empty() ? 0 : run.windows.back().window + 1;
  if (next.window != expected) {
    row.fail("window", "window " + std::to_string(expected) + " of run '" + run.label + "'",
             excerpt(row.cell("window")));
  }
  if (run.windows.empty()) return;
  const RunWindow& last = run.windows.back();
  const std::string after = " above the previous window's (line " + std::to_string(last.line) + ")";
  if (next.iteration <= last.iteration) {
    row.fail("iteration", "a count" + after, excerpt(row.cell("iteration")));
  }
  if (next.samples <= last.samples) {
    row.fail("samples", "a count" + after, excerpt(row.cell("samples")));
  }
  if (next.time_s < last.time_s) {
    row.fail("time_s",
             "a time not below the previous window's (line " + std::to_string(last.line) + ")",
             excerpt(row.cell("time_s")));
  }
}

void check_header(std::string_view line, const std::string& path, int line_number) {
  if (line != kRunsHeader) {
    throw InputError(path, line_number, "header", std::string("the header ") + kRunsHeader,
                     excerpt(line));
  }
}

void check_validated(const RunsFile& file) {
  for (const RunLog& run : file.runs) {
    bool validated = false;
    for (const RunWindow& w : run.windows) validated = validated || w.validation_accuracy;
    if (!validated) {
      throw InputError(file.path, run.windows.front().line, "validation_accuracy",
                       "at least one validation accuracy in run '" + run.label + "'", "none");
    }
  }
}

}  // namespace

RunsFile read_runs(const std::string& path) {
  RunsFile file{.path = path, .provenance = {}, .runs = {}};
  std::map<std::string, std::size_t, std::less<>> index;
  const CsvScan scan = read_csv(
      path,
      [&](const CsvColumns&, std::string_view line, int line_number) {
        check_header(line, path, line_number);
      },
      [&](const CsvRow& row) {
        const std::string_view label = row.cell("run");
        if (label.empty()) row.fail("run", "a run label", "an empty cell");
        auto [at, fresh] = index.emplace(std::string(label), file.runs.size());
        if (fresh) file.runs.push_back({.label = std::string(label), .windows = {}});
        RunLog& run = file.runs[at->second];
        RunWindow window = parse_window(row);
        check_order(row, run, window);
        run.windows.push_back(window);
      });
  file.provenance = scan.provenance;
  if (file.runs.empty()) {
    throw InputError(path, scan.lines, "", "a header and at least one window row",
                     scan.header ? "no rows" : "no header");
  }
  check_validated(file);
  return file;
}

std::optional<NoiseScaleParts> noise_scale_parts(const RunWindow& window) {
  const double b = window.local_batch;
  const double big = window.global_batch;
  if (big <= b) return std::nullopt;
  return NoiseScaleParts{
      .gradient_sq = (big * window.global_norm_sq - b * window.local_norm_sq) / (big - b),
      .trace_covariance = (window.local_norm_sq - window.global_norm_sq) / (1.0 / b - 1.0 / big)};
}

std::optional<double> pooled_noise_scale(std::span<const NoiseScaleParts> parts) {
  double gradient_sq = 0;
  double trace = 0;
  for (const NoiseScaleParts& part : parts) {
    gradient_sq += part.gradient_sq;
    trace += part.trace_covariance;
  }
  if (!(gradient_sq > 0 && trace > 0)) return std::nullopt;
  return trace / gradient_sq;
}

int first_global_batch(const RunLog& run) { return run.windows.front().global_batch; }

}  // namespace dynamix
