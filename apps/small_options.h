// What the small commands take on their command lines (config, scenarios, export), declared in
// knob tables as every command's options are, in the build without LibTorch too (export's), so
// that the reference and the registry list them.
#pragma once

#include <string>
#include <vector>

#include "sim/io/knobs.h"

namespace dynamix {

/// Everything `dynamix config` takes.
struct ConfigOptions {
  std::string scenario_path;
  std::vector<std::string> overrides;
  bool markdown = false;
  bool json = false;
};

const KnobTable<ConfigOptions>& config_knobs();

/// Everything `dynamix scenarios` takes.
struct ScenariosOptions {
  bool validation = false;
  bool dynamic = false;
  bool budget = false;
};

const KnobTable<ScenariosOptions>& scenarios_knobs();

/// Everything `dynamix export` takes.
struct ExportOptions {
  std::string checkpoint;
  std::string out;
};

const KnobTable<ExportOptions>& export_knobs();

}  // namespace dynamix
