// Fidelity tables.
#include "apps/fidelity_report.h"

#include <iomanip>
#include <sstream>

#include "apps/command_line.h"
#include "sim/calibration/agreement.h"
#include "studies/run_directory.h"

namespace dynamix {
namespace {

/// A relative error as a percentage: signed, or its magnitude.
std::string percent(double fraction, bool signed_value = true) {
  std::ostringstream text;
  if (signed_value) text << std::showpos;
  text << std::fixed << std::setprecision(1) << 100 * fraction << '%';
  return text.str();
}

/// "measured simulated error" in ms, or dashes where nothing was measured.
std::string triple(std::optional<double> measured, double simulated) {
  std::ostringstream text;
  if (!measured || *measured <= 0) {
    text << std::setw(9) << "-" << std::setw(9) << format_rounded(1e3 * simulated) << std::setw(9)
         << "-";
  } else {
    text << std::setw(9) << format_rounded(1e3 * *measured) << std::setw(9)
         << format_rounded(1e3 * simulated) << std::setw(9)
         << percent(relative_error(simulated, *measured));
  }
  return text.str();
}

}  // namespace

void print_fidelity_table(std::ostream& out, std::span<const FidelityRow> rows) {
  out << std::left << std::setw(30) << "configuration" << std::setw(9) << "subset" << std::right
      << std::setw(27) << "compute ms: meas  sim  err" << std::setw(27) << "comm ms: meas  sim  err"
      << std::setw(27) << "total ms: meas  sim  err" << '\n';
  for (const FidelityRow& row : rows) {
    const Measurement& m = row.measured;
    const bool allreduce = m.kind == MeasurementKind::kAllReduce;
    out << std::left << std::setw(29) << configuration_label(m) << ' ' << std::setw(9)
        << (row.fitted ? "fit" : "held-out") << std::right
        << (allreduce ? std::string(26, ' ') + "-" : triple(m.compute_s, row.simulated.compute_s))
        << triple(m.comm_s, row.simulated.comm_s) << triple(m.total_s, row.simulated.total_s)
        << '\n';
  }
}

void print_fidelity_summary(std::ostream& out, std::span<const FidelityRow> rows,
                            std::optional<bool> fitted, const std::string& label) {
  for (const FidelitySummary& s : summarize(rows, fitted)) {
    out << label << ' ' << kind_name(s.kind) << " (" << s.configurations
        << " configurations): median |error| total "
        << percent(s.total.median_absolute_error, false);
    if (s.kind == MeasurementKind::kIteration) {
      if (s.compute.count > 0)
        out << ", compute " << percent(s.compute.median_absolute_error, false);
      if (s.comm.count > 0) out << ", comm " << percent(s.comm.median_absolute_error, false);
    }
    out << "; Kendall tau " << format_rounded(s.kendall_tau) << '\n';
  }
}

void write_fidelity_csv(const std::filesystem::path& file, std::span<const FidelityRow> rows) {
  CsvWriter csv(file,
                {"configuration", "kind", "ranks", "message_bytes", "batch_per_rank", "subset",
                 "measured_compute_s", "simulated_compute_s", "measured_comm_s", "simulated_comm_s",
                 "measured_total_s", "simulated_total_s", "total_relative_error"});
  const auto optional_cell = [&csv](std::optional<double> value) {
    if (value) {
      csv << *value;
    } else {
      csv << std::string_view{};
    }
  };
  for (const FidelityRow& row : rows) {
    const Measurement& m = row.measured;
    csv << configuration_label(m) << kind_name(m.kind) << m.ranks << m.message_bytes
        << m.batch_per_rank << (row.fitted ? "fit" : "held-out");
    optional_cell(m.compute_s);
    csv << row.simulated.compute_s;
    optional_cell(m.comm_s);
    csv << row.simulated.comm_s << m.total_s << row.simulated.total_s
        << relative_error(row.simulated.total_s, m.total_s);
    csv.end_row();
  }
  csv.close();
}

}  // namespace dynamix
