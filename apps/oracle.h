// `dynamix oracle`: the fastest global-batch schedule that reaches the target on every seed.
#pragma once

#include <string>
#include <vector>

namespace dynamix {

int run_oracle(const std::vector<std::string>& args);

/// InputError on --seeds unless a schedule search's confirmation round (every finalist on every
/// seed) fits kMaxEpisodes.
void require_search_fits(int seeds);

}  // namespace dynamix
