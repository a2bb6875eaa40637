// ColocatedTraffic: an alternating renewal process per job whose on periods are rate-capped
// transfers.
#include "sim/network/colocated_traffic.h"

#include "sim/core/check.h"

namespace dynamix {

ColocatedTraffic::ColocatedTraffic(Simulator& sim, Network& network,
                                   const std::vector<ColocatedJob>& jobs, std::uint64_t seed)
    : sim_(sim), network_(network) {
  jobs_.reserve(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const ColocatedJob& spec = jobs[j];
    DYNAMIX_CHECK(spec.rate_gbps > 0 && spec.mean_on_s > 0 && spec.mean_off_s > 0,
                  "co-located job " << j << " rate_gbps " << spec.rate_gbps << " mean_on_s "
                                    << spec.mean_on_s << " mean_off_s " << spec.mean_off_s);
    DYNAMIX_CHECK(!spec.route.empty(), "co-located job " << j << " has an empty route");
    jobs_.push_back({spec, Rng(seed, stream_id("colocated", j))});
  }
  for (std::size_t j = 0; j < jobs_.size(); ++j) switch_off(j);
}

ColocatedTraffic::~ColocatedTraffic() {
  for (const Job& job : jobs_) {
    if (job.timer_pending) sim_.cancel(job.timer);
  }
}

bool ColocatedTraffic::is_on(std::size_t job) const {
  DYNAMIX_CHECK(job < jobs_.size(), "co-located job " << job << " of " << jobs_.size());
  return jobs_[job].on;
}

std::int64_t ColocatedTraffic::periods(std::size_t job) const {
  DYNAMIX_CHECK(job < jobs_.size(), "co-located job " << job << " of " << jobs_.size());
  return jobs_[job].periods;
}

void ColocatedTraffic::switch_off(std::size_t job) {
  Job& state = jobs_[job];
  state.on = false;
  const double off_s = state.rng.exponential(1 / state.spec.mean_off_s);
  state.timer = sim_.schedule_after(ceil_seconds(off_s), [this, job] { switch_on(job); });
  state.timer_pending = true;
}

void ColocatedTraffic::switch_on(std::size_t job) {
  Job& state = jobs_[job];
  state.timer_pending = false;
  state.on = true;
  ++state.periods;
  const double on_s = state.rng.exponential(1 / state.spec.mean_on_s);
  const double bytes_per_s = state.spec.rate_gbps * 1e9 / 8;
  network_.start_transfer(
      {state.spec.route}, bytes_per_s * on_s,
      [this, job](const TransferStats&) { switch_off(job); }, bytes_per_s);
}

}  // namespace dynamix
