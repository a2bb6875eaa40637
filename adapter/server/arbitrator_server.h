// The arbitrator over gRPC: answers Decide, logs every report, refuses malformed ones with a
// status that says what is wrong, and keeps serving.
#pragma once

#include <memory>
#include <mutex>
#include <ostream>
#include <string>

#include "adapter/server/arbitrator.h"
#include "adapter/server/decision_log.h"

namespace dynamix {

class ArbitratorServer {
 public:
  /// Serves `arbitrator` on `address` (host:port; port 0 picks a free one) with gRPC's
  /// receive limit at max_report_bytes(); InputError naming --listen if it cannot bind.
  /// Refusals are also written to `messages`, one line each.
  ArbitratorServer(const Arbitrator& arbitrator, DecisionLogWriter& log, const std::string& address,
                   std::ostream& messages);
  ~ArbitratorServer();
  ArbitratorServer(const ArbitratorServer&) = delete;
  ArbitratorServer& operator=(const ArbitratorServer&) = delete;

  /// The port bound.
  int port() const;
  /// Finishes the calls in flight and stops.
  void shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dynamix
