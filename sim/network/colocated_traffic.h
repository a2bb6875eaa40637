// Other jobs sharing the fabric: each a flow between two endpoints that switches on and off,
// simulated in the max-min model beside the training job's own transfers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/random.h"
#include "sim/core/simulator.h"
#include "sim/network/link.h"
#include "sim/network/network.h"

namespace dynamix {

/// One co-located job's traffic: while on, it sends rate_gbps × (the on period) bytes along
/// `route`, at most at rate_gbps and less when max-min sharing gives it less (a period then
/// lasts until its bytes are sent); then it is off. On and off periods are exponential.
struct ColocatedJob {
  /// The endpoints' names (hosts, or the two ends of one link), for outputs and errors.
  std::string from;
  std::string to;
  Route route;
  double rate_gbps = 10;
  double mean_on_s = 30;
  double mean_off_s = 30;
};

/// Runs the jobs' on/off processes on `network` from the simulator's current time, each job
/// starting with an off period; deterministic per (seed, job). Must not outlive `sim` or
/// `network`.
class ColocatedTraffic {
 public:
  ColocatedTraffic(Simulator& sim, Network& network, const std::vector<ColocatedJob>& jobs,
                   std::uint64_t seed);
  ColocatedTraffic(const ColocatedTraffic&) = delete;
  ColocatedTraffic& operator=(const ColocatedTraffic&) = delete;
  /// Cancels the pending switch-on timers.
  ~ColocatedTraffic();

  std::size_t jobs() const { return jobs_.size(); }
  /// Whether job `job`'s flow is sending now.
  bool is_on(std::size_t job) const;
  /// On periods started so far by job `job`.
  std::int64_t periods(std::size_t job) const;

 private:
  struct Job {
    ColocatedJob spec;
    Rng rng;
    EventId timer{};
    bool timer_pending = false;
    bool on = false;
    std::int64_t periods = 0;
  };
  void switch_off(std::size_t job);
  void switch_on(std::size_t job);

  Simulator& sim_;
  Network& network_;
  std::vector<Job> jobs_;
};

}  // namespace dynamix
