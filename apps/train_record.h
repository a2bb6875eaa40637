// What `dynamix train` records of a run: run.json, the settings a resume must repeat, and the
// command that resumes it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "apps/policy_selection.h"
#include "apps/train_options.h"
#include "apps/train_shipping.h"
#include "policies/ppo/ppo_trainer.h"
#include "sim/scenario/scenario.h"

namespace dynamix {

/// The command that resumes this run: its own options (a resume must repeat them) and --resume.
std::string resume_command(const std::vector<std::string>& args);

/// run.json: each option once, keyed as Python names them: train's own rows at the top, every PPO
/// option (those train does not expose too) under "ppo", the environment's under "environment";
/// the build and the inputs (provenance), the CPU kernels its math ran on, the randomization
/// ranges with --randomize, and the resolved scenario.
void write_train_run_json(const std::filesystem::path& file, const TrainOptions& run,
                          std::int64_t updates, const Scenario& scenario,
                          const std::optional<Shipped>& shipped, const PolicySelection* selection);

/// What a resume must repeat beside the PPO and environment options (the trainer's own): the
/// scenario by name and resolved configuration, and every other row of train's table that a run
/// records, shown as the table shows them.
RunSettings run_settings(const TrainOptions& o, const Scenario& scenario);

}  // namespace dynamix
