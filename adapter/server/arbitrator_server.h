// The arbitrator over gRPC: answers Decide, logs every report, refuses malformed or
// unauthenticated ones with a status that says what is wrong, and keeps serving within bounded
// threads, streams, connections and memory.
#pragma once

#include <chrono>
#include <memory>
#include <ostream>
#include <string>

#include "adapter/server/arbitrator.h"
#include "adapter/server/connection_gate.h"
#include "adapter/server/decision_log.h"

namespace dynamix {

/// A decision the policy did not finish within its deadline. The thread running it is still
/// inside the policy (a TorchScript file is a program: it may never return), so every later
/// decision is refused as well.
class PolicyTimeout : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Runs the arbitrator's decisions on a thread of its own under a deadline, so that a policy
/// whose forward loops costs a report its deadline and never takes the server with it.
class DecisionRunner {
 public:
  DecisionRunner(const Arbitrator& arbitrator, std::chrono::milliseconds deadline);
  /// Joins the thread, or leaves a wedged one behind (see wedged()).
  ~DecisionRunner();
  DecisionRunner(const DecisionRunner&) = delete;
  DecisionRunner& operator=(const DecisionRunner&) = delete;

  /// Arbitrator::decide on the runner's thread: its ReportError and other exceptions, or
  /// PolicyTimeout. One caller at a time.
  void decide(const wire::WindowReport& report, wire::LogRecord& record);
  /// One decision on Arbitrator::sample_report; PolicyFileError naming the policy if it does not
  /// finish within the deadline.
  void warm_up();
  /// A decision never returned: the process must end with std::_Exit, since a thread is still
  /// inside the policy.
  bool wedged() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

/// How the server listens and whom it answers.
struct ServerOptions {
  /// Host (an IPv6 one without brackets) and port to listen on; port 0 picks a free one.
  std::string host = "127.0.0.1";
  int port = 50051;
  /// Every call must carry `authorization: Bearer TOKEN`; empty: no token asked for.
  std::string token{};
  /// PEM server certificate chain and private key: TLS when both are given.
  std::string tls_certificate{};
  std::string tls_key{};
  /// PEM CA bundle: clients must present a certificate it signed (TLS only).
  std::string tls_client_ca{};
  /// The one job decided for; empty: the first job decided for (JobSequence).
  std::string job_id{};
};

/// The bounds the server holds to, whatever its clients send (documented in adapter/README.md);
/// GateLimits (connection_gate.h) bound connections and streams.
struct ServerLimits {
  static constexpr int kMaxThreads = 16;
  static constexpr int kMaxStreamsPerConnection = 4;
  static constexpr std::size_t kMemoryBytes = 256u << 20;
  static constexpr int kHandshakeTimeoutMs = 5'000;
  static constexpr int kMaxConnectionIdleMs = 60'000;
  static constexpr int kMaxConnectionAgeMs = 600'000;
  static constexpr int kMaxConnectionAgeGraceMs = 10'000;
  static constexpr int kMinPingIntervalMs = 10'000;
  /// Messages up to this multiple of max_report_bytes() reach the handler, which refuses and
  /// logs those above it; gRPC drops anything larger unread.
  static constexpr std::size_t kReceiveSlack = 4;
};

class ArbitratorServer {
 public:
  /// Serves through `runner` on options.host and port with the limits of ServerLimits, behind a
  /// ConnectionGate unless TLS is asked for (the gate cannot read encrypted frames; gRPC then
  /// listens itself); InputError naming --listen if it cannot bind (a port another server holds
  /// included: no SO_REUSEPORT).
  /// Refusals are written to `log` and, one line each, to `messages`.
  ArbitratorServer(const Arbitrator& arbitrator, DecisionRunner& runner, DecisionLogWriter& log,
                   const ServerOptions& options, std::ostream& messages);
  ~ArbitratorServer();
  ArbitratorServer(const ArbitratorServer&) = delete;
  ArbitratorServer& operator=(const ArbitratorServer&) = delete;

  /// The port bound.
  int port() const;
  /// Finishes the calls in flight and stops.
  void shutdown();
  /// Connections the gate refused or cut so far (zeros under TLS).
  GateCounts gate_counts() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dynamix
