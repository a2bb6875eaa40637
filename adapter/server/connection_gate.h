// The arbitrator's front door: accepts TCP connections itself (terminating TLS when asked), caps
// their number, and relays each to gRPC over a socket pair while it reads the HTTP/2 frame headers
// going by (ConnectionLedger), so that a client passing a bound is disconnected before gRPC
// spends memory on it. gRPC 1.51 (Debian 12) enforces MAX_CONCURRENT_STREAMS only once a client
// has acknowledged the server's SETTINGS, which a hostile client never does; it counts reset
// streams by nothing; and it cannot take a TLS connection from a descriptor.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "adapter/server/http2_ledger.h"

namespace grpc {
class Server;
}

namespace dynamix {

/// What the gate has refused since it started.
struct GateCounts {
  /// Closed at once: no room, and no idle connection to make room.
  std::uint64_t connections_refused = 0;
  /// Cut for passing a bound (ConnectionLedger's reasons).
  std::uint64_t connections_cut = 0;
  /// Closed to make room for a new one, idle the longest.
  std::uint64_t connections_evicted = 0;
};

/// TLS the gate terminates itself: PEM texts.
struct GateTls {
  std::string certificate;
  std::string key;
  /// Clients must present a certificate one of these signed; empty: none asked for.
  std::string client_ca;
};

class ConnectionGate {
 public:
  /// Binds host:port (no SO_REUSEPORT); InputError naming --listen if it cannot, or --tls-cert
  /// if OpenSSL refuses `tls`. With `tls`, clients speak TLS (ALPN h2) to the gate, which
  /// relays the plaintext to gRPC under the same bounds.
  ConnectionGate(const std::string& host, int port, GateLimits limits,
                 const std::optional<GateTls>& tls = std::nullopt);
  /// Stops relaying and closes every connection.
  ~ConnectionGate();
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  int port() const;
  /// Starts accepting and relaying to `server`, which must outlive the gate's run.
  void start(grpc::Server& server);
  /// Stops the relay thread and closes every connection (idempotent).
  void stop();
  GateCounts counts() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dynamix
