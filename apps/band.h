// `dynamix band make|check`: a reward band for anyone's CI. `make` trains with the given options
// over a few seeds and stores, per bin of updates, the range their mean returns spanned (widened
// by a relative margin), and how much the policies learned; `check` trains once more and fails
// when the curve leaves the band, stays flat, or the policy departs from the neutral action as
// rarely as an untrained one.
#pragma once

#include <string>
#include <vector>

#include "apps/command.h"

namespace dynamix {

/// `dynamix band make|check`: 0 when made or passed, 1 when the check fails, 2 on bad input.
int run_band(const std::vector<std::string>& args);
/// Listed by dynamix, which has no LibTorch and so no run function for it: dynamix-torch
/// gives run_band (apps/dynamix_torch.cpp).
inline constexpr Command kBandCommand{
    "band", "make a reward band from seeded training runs, or check a run against one (CI)"};

}  // namespace dynamix
