// `dynamix report`: a run directory's executed notebooks and figures, made by scripts/report.py.
#pragma once

#include <string>
#include <vector>

#include "apps/command.h"

namespace dynamix {

/// `dynamix report RUN_DIR [--x KEY] [--band FILE] [--formats png,pdf,svg]`: runs
/// scripts/report.py under the Python the build found with these arguments and returns its exit
/// status.
int run_report(const std::vector<std::string>& args);
inline constexpr Command kReportCommand{
    "report", "a run's figures (PDF, SVG, PNG) and executed notebooks", run_report};

}  // namespace dynamix
