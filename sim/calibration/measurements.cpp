// Reading measurement CSVs.
#include "sim/calibration/measurements.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string_view>

#include "sim/io/config_node.h"
#include "sim/io/csv_table.h"
#include "sim/io/input_error.h"
#include "sim/io/sources.h"

namespace dynamix {
namespace {

MeasurementKind parse_kind(const CsvRow& row, const std::string& path, int line) {
  const std::string_view kind = row.cell("kind");
  if (kind == "allreduce") return MeasurementKind::kAllReduce;
  if (kind == "iteration") return MeasurementKind::kIteration;
  if (kind == "compute") return MeasurementKind::kCompute;
  throw InputError(path, line, "kind", "allreduce, iteration or compute", excerpt(kind));
}

Measurement parse_row(const CsvRow& row, const std::string& path, int line) {
  Measurement m;
  m.line = line;
  m.kind = parse_kind(row, path, line);
  m.ranks = row.integer("ranks", 1);
  if (m.kind == MeasurementKind::kAllReduce) {
    m.message_bytes = *row.number("message_bytes", true, 0, true);
  } else {
    m.batch_per_rank = row.integer("batch_per_rank", 1);
  }
  m.compute_s = row.number("compute_s", false, 0, false);
  m.comm_s = row.number("comm_s", false, 0, false);
  m.comm_includes_wait = true;
  m.total_s = *row.number("total_s", true, 0, true);
  return m;
}

void check_header(const CsvColumns& columns, std::string_view line, const std::string& path,
                  int line_number) {
  for (const char* required : {"kind", "ranks", "total_s"}) {
    if (!columns.contains(required)) {
      throw InputError(path, line_number, "header",
                       std::string("a column named '") + required + "'", excerpt(line));
    }
  }
}

/// One answered window report of a `dynamix serve` log as an iteration row.
Measurement window_row(const ConfigNode& metrics, int line) {
  Measurement m;
  m.kind = MeasurementKind::kIteration;
  m.line = line;
  const std::vector<ConfigNode> workers = metrics.at("workers").items();
  if (workers.empty()) metrics.at("workers").fail("at least one worker");
  double compute = 0;
  double comm = 0;
  for (const ConfigNode& worker : workers) {
    m.batches.push_back(worker.int_or("batch_size", 1, 1 << 30, 0));
    if (m.batches.back() == 0) worker.at("batch_size").fail("a batch >= 1");
    compute += worker.at_least_or("compute_s", 0, 0);
    comm += worker.at_least_or("comm_s", 0, 0);
  }
  m.ranks = static_cast<int>(workers.size());
  m.batch_per_rank = m.batches.front();
  if (std::all_of(m.batches.begin(), m.batches.end(),
                  [&](int b) { return b == m.batch_per_rank; })) {
    m.batches.clear();
  }
  m.compute_s = compute / m.ranks;
  m.comm_s = comm / m.ranks;
  m.total_s = metrics.positive("iteration_s");
  return m;
}

MeasurementFile read_window_log(const std::string& path, const std::string& text) {
  MeasurementFile file{.path = path, .provenance = {}, .rows = {}};
  std::istringstream lines(text);
  std::string line;
  int line_number = 0;
  std::string job;
  while (std::getline(lines, line)) {
    ++line_number;
    if (trim(line).empty()) continue;
    const ConfigNode record = ConfigNode::parse(line, path + ":" + std::to_string(line_number));
    if (!record.has("decision")) continue;  // a refused report: its metrics were not used
    const ConfigNode report = record.at("report");
    job = report.text_or("job_id", job);
    file.rows.push_back(window_row(report.at("metrics"), line_number));
  }
  if (file.rows.empty()) {
    throw InputError(path, line_number, "", "at least one answered window report", "none");
  }
  file.provenance.push_back("dynamix serve log of job '" + job +
                            "': " + std::to_string(file.rows.size()) + " answered windows");
  return file;
}

}  // namespace

const char* kind_name(MeasurementKind kind) {
  switch (kind) {
    case MeasurementKind::kAllReduce:
      return "allreduce";
    case MeasurementKind::kIteration:
      return "iteration";
    case MeasurementKind::kCompute:
      return "compute";
  }
  return "?";
}

std::string configuration_label(const Measurement& m) {
  std::ostringstream label;
  label << kind_name(m.kind) << " p=" << m.ranks;
  if (!m.batches.empty()) {
    label << " b=";
    for (std::size_t i = 0; i < m.batches.size(); ++i) label << (i ? "," : "") << m.batches[i];
  } else if (m.kind != MeasurementKind::kAllReduce) {
    label << " b=" << m.batch_per_rank;
  } else if (m.message_bytes >= 1048576 && std::fmod(m.message_bytes, 1048576) == 0) {
    label << ' ' << m.message_bytes / 1048576 << "MiB";
  } else if (m.message_bytes >= 1024 && std::fmod(m.message_bytes, 1024) == 0) {
    label << ' ' << m.message_bytes / 1024 << "KiB";
  } else {
    label << ' ' << m.message_bytes << 'B';
  }
  return label.str();
}

MeasurementFile read_measurements(const std::string& path) {
  if (path.ends_with(".jsonl")) return read_window_log(path, read_text(path));
  MeasurementFile file{.path = path, .provenance = {}, .rows = {}};
  // A configuration measured twice would be fitted and scored twice, silently weighted.
  std::map<std::string, int> seen;
  const CsvScan scan = read_csv(
      path,
      [&](const CsvColumns& columns, std::string_view line, int line_number) {
        check_header(columns, line, path, line_number);
      },
      [&](const CsvRow& row) {
        file.rows.push_back(parse_row(row, path, row.line()));
        const auto [first, fresh] = seen.emplace(configuration_label(file.rows.back()), row.line());
        if (!fresh) {
          row.fail("row", "one row per configuration",
                   "a second row of " + first->first + " (the first is on line " +
                       std::to_string(first->second) + ")");
        }
      });
  file.provenance = scan.provenance;
  if (file.rows.empty()) {
    throw InputError(path, scan.lines, "", "a header and at least one measurement row",
                     scan.header ? "no rows" : "no header");
  }
  return file;
}

}  // namespace dynamix
