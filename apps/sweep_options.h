// What `dynamix sweep` takes on its command line, declared once in a knob table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apps/sweep.h"
#include "sim/io/knobs.h"

namespace dynamix {

/// Everything `dynamix sweep` takes on its command line.
struct SweepOptions {
  SweepSpec spec;
  /// KEY=V1,V2,... per axis, as given.
  std::vector<std::string> grid;
  /// KEY=V1,V2,... tied together into one axis (--grid-zip), as given.
  std::vector<std::string> grid_zip;
  std::string policies = "static:64,static:128,static:256,goodput+proportional";
  /// out, resume, jobs (one per core by default) and quiet; the limit is max_episodes'.
  SweepRun run;
  std::optional<std::int64_t> max_episodes;
  bool strict = false;

  SweepOptions();
};

/// Sweep's options in --help order, defaults from SweepOptions{}.
const KnobTable<SweepOptions>& sweep_knobs();

}  // namespace dynamix
