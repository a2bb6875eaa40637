// Per-worker batch sizes from the command line: one static batch, a list, or an epoch schedule.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dynamix {

/// Batch per worker, possibly changing at epoch boundaries ("--schedule 0:64,10:128").
class BatchPlan {
 public:
  /// Parses the mutually exclusive options; empty strings mean "not given". Errors are
  /// InputErrors naming the option.
  static BatchPlan parse(const std::string& batch_size, const std::string& batch_sizes,
                         const std::string& schedule, std::size_t workers, int default_batch);
  /// The batches for the iteration that starts after `epochs` epochs.
  const std::vector<int>& at_epoch(double epochs) const;
  /// A short description for summary.json ("static:128", "schedule:0:64,10:128", ...).
  const std::string& description() const { return description_; }

 private:
  struct Phase {
    double from_epoch;
    std::vector<int> batches;
  };
  std::vector<Phase> phases_;
  std::string description_;
};

}  // namespace dynamix
