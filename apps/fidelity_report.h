// Printing and writing measured-against-simulated comparisons (dynamix fidelity, calibrate).
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <span>
#include <string>

#include "sim/calibration/fidelity.h"

namespace dynamix {

/// One line per configuration: measured and simulated compute, communication and total time
/// (ms) with relative errors, and whether it was fitted or held out.
void print_fidelity_table(std::ostream& out, std::span<const FidelityRow> rows);

/// One line per kind: median absolute errors and Kendall's tau, for the rows selected as in
/// summarize(); `label` names the selection ("held-out", "fitted", "all").
void print_fidelity_summary(std::ostream& out, std::span<const FidelityRow> rows,
                            std::optional<bool> fitted, const std::string& label);

/// The same rows as a tidy CSV (times in seconds; cells empty where nothing was measured).
void write_fidelity_csv(const std::filesystem::path& file, std::span<const FidelityRow> rows);

}  // namespace dynamix
