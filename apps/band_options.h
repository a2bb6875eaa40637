// What `dynamix band make` and `band check` take on their command lines, declared in knob tables
// in the build without LibTorch too, so that the reference and the registry list them.
#pragma once

#include <optional>
#include <string>

#include "sim/io/knobs.h"

namespace dynamix {

/// Everything `dynamix band make` takes.
struct BandMakeOptions {
  std::string train_options;
  int seeds = 4;
  int bin_updates = 20;
  double margin = 0.05;
  double guard = 0.2;
  int eval_seeds = 3;
  std::string out;
};

const KnobTable<BandMakeOptions>& band_make_knobs();

/// Everything `dynamix band check` takes.
struct BandCheckOptions {
  std::string band;
  std::optional<int> seed;
  std::string keep;
};

const KnobTable<BandCheckOptions>& band_check_knobs();

}  // namespace dynamix
