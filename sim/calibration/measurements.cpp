// Reading measurement CSVs.
#include "sim/calibration/measurements.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>
#include <string_view>

#include "sim/io/config_node.h"
#include "sim/io/input_error.h"
#include "sim/io/sources.h"

namespace dynamix {
namespace {

/// The cells of one row by column name, with what is needed to name a bad one.
class Row {
 public:
  Row(const std::string& path, int line, const std::map<std::string, std::size_t>& columns,
      std::vector<std::string_view> fields)
      : path_(path), line_(line), columns_(columns), fields_(std::move(fields)) {}

  std::string_view cell(const std::string& column) const {
    const auto found = columns_.find(column);
    return found == columns_.end() ? std::string_view{} : fields_[found->second];
  }
  /// A finite number >= minimum (> minimum when `open`); nullopt for an empty optional cell.
  std::optional<double> number(const std::string& column, bool required, double minimum,
                               bool open) const {
    if (required && !columns_.contains(column)) {
      throw InputError(path_, line_, "header", "a column named '" + column + "' for this row");
    }
    const std::string_view text = cell(column);
    if (text.empty()) {
      if (required) throw InputError(path_, line_, column, "a number", "an empty cell");
      return std::nullopt;
    }
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    const bool parsed = error == std::errc{} && end == text.data() + text.size();
    if (!parsed || !std::isfinite(value) || value < minimum || (open && value == minimum)) {
      std::ostringstream expected;
      expected << "a finite number " << (open ? "> " : ">= ") << minimum;
      throw InputError(path_, line_, column, expected.str(), excerpt(text));
    }
    return value;
  }
  int integer(const std::string& column, int minimum) const {
    const double value = *number(column, true, minimum, false);
    if (value != std::floor(value) || value > 1e9) {
      throw InputError(path_, line_, column, "a whole number >= " + std::to_string(minimum),
                       excerpt(cell(column)));
    }
    return static_cast<int>(value);
  }

 private:
  const std::string& path_;
  int line_;
  const std::map<std::string, std::size_t>& columns_;
  std::vector<std::string_view> fields_;
};

MeasurementKind parse_kind(const Row& row, const std::string& path, int line) {
  const std::string_view kind = row.cell("kind");
  if (kind == "allreduce") return MeasurementKind::kAllReduce;
  if (kind == "iteration") return MeasurementKind::kIteration;
  if (kind == "compute") return MeasurementKind::kCompute;
  throw InputError(path, line, "kind", "allreduce, iteration or compute", excerpt(kind));
}

Measurement parse_row(const Row& row, const std::string& path, int line) {
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

std::map<std::string, std::size_t> parse_header(std::string_view line, const std::string& path,
                                                int line_number) {
  std::map<std::string, std::size_t> columns;
  const auto fields = split_fields(line);
  for (std::size_t i = 0; i < fields.size(); ++i) columns.emplace(std::string(fields[i]), i);
  for (const char* required : {"kind", "ranks", "total_s"}) {
    if (!columns.contains(required)) {
      throw InputError(path, line_number, "header",
                       std::string("a column named '") + required + "'", excerpt(line));
    }
  }
  return columns;
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
  const std::string text = read_text(path);
  if (path.ends_with(".jsonl")) return read_window_log(path, text);
  MeasurementFile file{.path = path, .provenance = {}, .rows = {}};
  std::map<std::string, std::size_t> columns;
  // A configuration measured twice would be fitted and scored twice, silently weighted.
  std::map<std::string, int> seen;
  int line_number = 0;
  std::size_t begin = 0;
  while (begin < text.size()) {
    const auto newline = text.find('\n', begin);
    const std::string_view line = trim(std::string_view(text).substr(begin, newline - begin));
    begin = newline == std::string::npos ? text.size() : newline + 1;
    ++line_number;
    if (line.empty()) continue;
    if (line.front() == '#') {
      if (columns.empty()) file.provenance.emplace_back(trim(line.substr(1)));
      continue;
    }
    if (columns.empty()) {
      columns = parse_header(line, path, line_number);
      continue;
    }
    auto fields = split_fields(line);
    if (fields.size() != columns.size()) {
      throw InputError(path, line_number, "row",
                       std::to_string(columns.size()) + " comma-separated cells",
                       std::to_string(fields.size()));
    }
    file.rows.push_back(
        parse_row(Row(path, line_number, columns, std::move(fields)), path, line_number));
    const auto [first, fresh] = seen.emplace(configuration_label(file.rows.back()), line_number);
    if (!fresh) {
      throw InputError(path, line_number, "row", "one row per configuration",
                       "a second row of " + first->first + " (the first is on line " +
                           std::to_string(first->second) + ")");
    }
  }
  if (file.rows.empty()) {
    throw InputError(path, line_number, "", "a header and at least one measurement row",
                     columns.empty() ? "no header" : "no rows");
  }
  return file;
}

}  // namespace dynamix
