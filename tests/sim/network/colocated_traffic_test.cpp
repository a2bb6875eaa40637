// Co-located jobs: rate-capped flows that switch on and off, share links max-min fairly with the
// training job's transfers, and repeat per seed.
#include "sim/network/colocated_traffic.h"

#include <doctest/doctest.h>

#include <vector>

namespace dynamix {
namespace {

using std::chrono::microseconds;
using std::chrono::seconds;

constexpr double kGbps8 = 8;

ColocatedJob job_on_link_zero(double rate_gbps) {
  return {.from = "a",
          .to = "b",
          .route = {0},
          .rate_gbps = rate_gbps,
          .mean_on_s = 5,
          .mean_off_s = 5};
}

TEST_CASE(
    "A rate-limited transfer never exceeds its limit and takes the rest of a link otherwise") {
  Simulator sim;
  Network network(sim, {{kGbps8, microseconds(1), 0}});
  const TransferId capped = network.start_transfer({{0}}, 1e6, {}, 2e8);
  const TransferId open = network.start_transfer({{0}}, 1e6, {});
  CHECK(network.rate_bytes_per_s(capped) == doctest::Approx(2e8));
  CHECK(network.rate_bytes_per_s(open) == doctest::Approx(8e8));
}

/// Samples, once a second for `span_s`, whether the job is on and the rate a probe flow on
/// link 0 gets.
struct Timeline {
  std::vector<bool> on;
  std::vector<double> probe_rates;
};

Timeline sample(const ColocatedJob& job, std::uint64_t seed, int span_s) {
  Simulator sim;
  Network network(sim, {{kGbps8, microseconds(1), 0}});
  ColocatedTraffic traffic(sim, network, {job}, seed);
  const TransferId probe = network.start_transfer({{0}}, 1e18, {});
  Timeline timeline;
  for (int second = 1; second <= span_s; ++second) {
    sim.run_until(kTimeZero + seconds(second));
    timeline.on.push_back(traffic.is_on(0));
    timeline.probe_rates.push_back(network.rate_bytes_per_s(probe));
  }
  return timeline;
}

TEST_CASE(
    "A co-located job takes its rate from the training job's flows while on, none while off") {
  const Timeline timeline = sample(job_on_link_zero(2), 4, 600);
  int on = 0;
  for (std::size_t i = 0; i < timeline.on.size(); ++i) {
    // 2 Gb/s of an 8 Gb/s link while on, below its fair share: the probe keeps 6 Gb/s; all of
    // it while off.
    CHECK(timeline.probe_rates[i] == doctest::Approx(timeline.on[i] ? 7.5e8 : 1e9));
    on += timeline.on[i] ? 1 : 0;
  }
  // Equal mean on and off periods: on about half the time (600 s is ~60 cycles).
  CHECK(on > 200);
  CHECK(on < 400);
}

TEST_CASE("A co-located job above its fair share gets only half the link, and stays on longer") {
  const Timeline capped = sample(job_on_link_zero(2), 4, 600);
  const Timeline greedy = sample(job_on_link_zero(100), 4, 600);
  for (std::size_t i = 0; i < greedy.on.size(); ++i) {
    CHECK(greedy.probe_rates[i] == doctest::Approx(greedy.on[i] ? 5e8 : 1e9));
  }
  int capped_on = 0, greedy_on = 0;
  for (std::size_t i = 0; i < capped.on.size(); ++i) {
    capped_on += capped.on[i] ? 1 : 0;
    greedy_on += greedy.on[i] ? 1 : 0;
  }
  // Its bytes are rate x period; sent at the half it gets, a period lasts rate/half as long.
  CHECK(greedy_on > capped_on);
}

TEST_CASE("Co-located traffic repeats per seed and differs between seeds") {
  CHECK(sample(job_on_link_zero(2), 4, 300).on == sample(job_on_link_zero(2), 4, 300).on);
  CHECK(sample(job_on_link_zero(2), 4, 300).on != sample(job_on_link_zero(2), 5, 300).on);
}

}  // namespace
}  // namespace dynamix
