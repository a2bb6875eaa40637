// The bounds every decision is held to, apart from the protocol's messages: `dynamix serve`'s
// options table (apps/serve_options.h) declares them in the build without gRPC too.
#pragma once

namespace dynamix {

/// The bounds every decision is held to, on the arbitrator and (with the same defaults) in the
/// worker: a policy, or whoever answers in its place, cannot swing a job.
struct GuardRails {
  /// Largest factor by which one decision may change the reported window's global batch.
  double max_batch_change = 2.0;
  /// Largest factor by which one decision may change the LR factor in force.
  double max_lr_change = 2.0;
  /// Largest LR factor a decision may give.
  double max_lr_factor = 64.0;
};

}  // namespace dynamix
