// ThroughputModel: online least squares per worker.
#include "gym/throughput_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/core/check.h"

namespace dynamix {

ThroughputModel::ThroughputModel(double memory) : memory_(memory) {
  DYNAMIX_CHECK(memory > 0 && memory <= 1, "memory " << memory);
}

void ThroughputModel::reset(std::size_t workers) {
  fits_.assign(workers, Fit{});
  comm_s_ = 0;
}

void ThroughputModel::observe(const WindowMetrics& window) {
  if (fits_.size() != window.workers.size()) reset(window.workers.size());
  double comm = 0;
  for (std::size_t w = 0; w < window.workers.size(); ++w) {
    const WorkerWindow& worker = window.workers[w];
    Fit& fit = fits_[w];
    if (memory_ < 1) {
      for (double* sum : {&fit.count, &fit.sum_b, &fit.sum_t, &fit.sum_bb, &fit.sum_bt})
        *sum *= memory_;
    }
    const double b = worker.batch_size;
    const double t = worker.compute_s;
    fit.count += 1;
    fit.sum_b += b;
    fit.sum_t += t;
    fit.sum_bb += b * b;
    fit.sum_bt += b * t;
    comm += worker.comm_s;
  }
  if (!window.workers.empty()) comm_s_ = comm / static_cast<double>(window.workers.size());
}

double ThroughputModel::compute_s(std::size_t worker, double batch) const {
  const Fit& fit = fits_[worker];
  if (fit.count == 0 || fit.sum_b <= 0) return 0;
  const double mean_b = fit.sum_b / fit.count;
  const double mean_t = fit.sum_t / fit.count;
  const double var_b = fit.sum_bb / fit.count - mean_b * mean_b;
  if (var_b > 1e-6 * mean_b * mean_b) {
    const double slope = (fit.sum_bt / fit.count - mean_b * mean_t) / var_b;
    const double intercept = mean_t - slope * mean_b;
    if (slope > 0 && intercept >= 0) return intercept + slope * batch;
  }
  return mean_t / mean_b * batch;
}

double ThroughputModel::iteration_s(const std::vector<int>& batches) const {
  double slowest = 0;
  for (std::size_t w = 0; w < batches.size(); ++w)
    slowest = std::max(slowest, compute_s(w, batches[w]));
  return slowest + comm_s_;
}

double ThroughputModel::speed(std::size_t worker) const {
  const Fit& fit = fits_[worker];
  if (fit.count == 0 || fit.sum_t <= 0) return 1;
  const double typical = fit.sum_b / fit.count;
  return typical / compute_s(worker, typical);
}

std::vector<int> ThroughputModel::proportional_split(int global_batch, int low,
                                                     const std::vector<int>& high,
                                                     std::span<const double> slowdowns) const {
  const std::size_t p = high.size();
  std::vector<double> speeds(p);
  for (std::size_t w = 0; w < p; ++w) {
    speeds[w] = speed(w);
    if (w < slowdowns.size()) speeds[w] /= slowdowns[w];
  }
  const double total = std::accumulate(speeds.begin(), speeds.end(), 0.0);
  std::vector<int> batches(p);
  for (std::size_t w = 0; w < p; ++w) {
    const double share = total > 0 ? speeds[w] / total : 1.0 / static_cast<double>(p);
    batches[w] = std::clamp(static_cast<int>(std::lround(global_batch * share)), low, high[w]);
  }
  return batches;
}

}  // namespace dynamix
