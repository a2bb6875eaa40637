// A network link's parameters and the ids that name links and routes.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/time.h"

namespace dynamix {

using LinkId = std::uint32_t;

/// One direction of a physical link.
struct LinkSpec {
  /// Capacity, gigabits per second (> 0).
  double bandwidth_gbps = 0;
  /// Propagation plus switching, one way.
  Duration latency{};
  /// Per-packet drop probability in [0, 1).
  double loss_rate = 0;
};

/// Directed links from a source host to a destination host, in order.
using Route = std::vector<LinkId>;

}  // namespace dynamix
