// `dynamix oracle`: the fastest global-batch schedule that reaches the target on every seed.
#pragma once

#include <string>
#include <vector>

#include "apps/command.h"

namespace dynamix {

int run_oracle(const std::vector<std::string>& args);
inline constexpr Command kOracleCommand{
    "oracle", "search batch schedules for the fastest that always reaches the target", run_oracle};

/// InputError on --seeds unless a schedule search's confirmation round (every finalist on every
/// seed) fits kMaxEpisodes.
void require_search_fits(int seeds);

}  // namespace dynamix
