// The arbitrator's front door: accepts TCP connections itself, caps their number, and relays each
// to gRPC over a socket pair while it reads the HTTP/2 frame headers going by, so that a client
// opening more streams than allowed, or leaving one half-sent, is disconnected. gRPC 1.51 (Debian
// 12) enforces MAX_CONCURRENT_STREAMS only once a client has acknowledged the server's SETTINGS,
// which a hostile client never does: every half-open stream then costs the server memory.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace grpc {
class Server;
}

namespace dynamix {

struct GateLimits {
  /// Connections relayed at once; more are accepted and closed at once.
  int max_connections = 64;
  /// Streams a client may have open (HEADERS sent, END_STREAM not yet) on one connection.
  int max_open_streams = 4;
  /// A stream the client has not finished sending within this is a half-open stream.
  std::chrono::milliseconds stream_deadline{5000};
  /// Bytes buffered per direction of a connection before the gate stops reading its source.
  std::size_t buffer_bytes = 256 << 10;
};

/// What the gate has refused since it started.
struct GateCounts {
  std::uint64_t connections_refused = 0;
  std::uint64_t connections_cut = 0;
};

/// Scans one direction of an HTTP/2 connection's bytes for frame headers (RFC 9113 4.1), after
/// the client's 24-byte connection preface when `client`.
class FrameScanner {
 public:
  struct Frame {
    std::uint8_t type = 0;
    std::uint8_t flags = 0;
    std::uint32_t stream = 0;
  };
  explicit FrameScanner(bool client) : skip_(client ? kPrefaceBytes : 0) {}
  /// Feeds `size` bytes; calls on_frame(Frame) for each frame header completed.
  template <typename OnFrame>
  void feed(const std::uint8_t* data, std::size_t size, OnFrame&& on_frame);

  static constexpr std::size_t kPrefaceBytes = 24;

 private:
  std::uint64_t skip_;
  std::uint8_t header_[9] = {};
  std::size_t have_ = 0;
};

template <typename OnFrame>
void FrameScanner::feed(const std::uint8_t* data, std::size_t size, OnFrame&& on_frame) {
  while (size > 0) {
    if (skip_ > 0) {
      const std::size_t skipped = skip_ < size ? static_cast<std::size_t>(skip_) : size;
      skip_ -= skipped;
      data += skipped;
      size -= skipped;
      continue;
    }
    header_[have_++] = *data++;
    --size;
    if (have_ < sizeof header_) continue;
    have_ = 0;
    skip_ = (std::uint64_t{header_[0]} << 16) | (std::uint64_t{header_[1]} << 8) | header_[2];
    on_frame(Frame{header_[3], header_[4],
                   ((std::uint32_t{header_[5]} & 0x7f) << 24) | (std::uint32_t{header_[6]} << 16) |
                       (std::uint32_t{header_[7]} << 8) | header_[8]});
  }
}

class ConnectionGate {
 public:
  /// Binds host:port (no SO_REUSEPORT); InputError naming --listen if it cannot.
  ConnectionGate(const std::string& host, int port, GateLimits limits);
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
