// What the arbitrator's gate (connection_gate.h) knows of one HTTP/2 connection from the frame
// headers going by (RFC 9113 4.1), and the bounds it holds each connection to. Free of gRPC and
// of sockets, so that tests and the fuzz target feed it frame sequences directly.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string_view>

namespace dynamix {

using GateClock = std::chrono::steady_clock;

struct GateLimits {
  /// Connections relayed at once. A new one past it takes the place of the connection idle the
  /// longest (no stream open), or is closed when none is idle.
  int max_connections = 64;
  /// Connections from one peer address at once, the same way within that address's own.
  int max_connections_per_peer = 32;
  /// Streams a client may have unanswered on one connection: opened (HEADERS) and not yet
  /// ended by the server's trailers or a reset, whether the client finished sending or not.
  int max_open_streams = 4;
  /// A stream the client has not finished sending within this is a half-open stream.
  std::chrono::milliseconds stream_deadline{5000};
  /// The client's connection preface and SETTINGS (and, under TLS, its handshake) within this.
  std::chrono::milliseconds preface_deadline{5000};
  /// A connection without a stream for this long is closed (gRPC clients reconnect at once).
  std::chrono::milliseconds idle_timeout{30000};
  /// Streams a client may reset within reset_window (the rapid-reset pattern, CVE-2023-44487).
  int max_resets = 32;
  std::chrono::milliseconds reset_window{10000};
  /// Largest header block (HEADERS and its CONTINUATION frames), bytes.
  std::size_t max_header_block_bytes = 64 << 10;
  /// Request bytes (DATA) serve has not answered yet, over every connection together.
  std::size_t max_pending_bytes = std::size_t{64} << 20;
  /// Bytes buffered per direction of a connection before the gate stops reading its source.
  std::size_t buffer_bytes = 256 << 10;
};

/// Scans one direction of an HTTP/2 connection's bytes for frame headers, after the client's
/// 24-byte connection preface when `client`.
class FrameScanner {
 public:
  struct Frame {
    std::uint32_t length = 0;
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
    const auto length = static_cast<std::uint32_t>((std::uint32_t{header_[0]} << 16) |
                                                   (std::uint32_t{header_[1]} << 8) | header_[2]);
    skip_ = length;
    on_frame(Frame{length, header_[3], header_[4],
                   ((std::uint32_t{header_[5]} & 0x7f) << 24) | (std::uint32_t{header_[6]} << 16) |
                       (std::uint32_t{header_[7]} << 8) | header_[8]});
  }
}

/// One connection's streams as the frame headers tell them, and why it must be cut, if it must.
/// A reason is a static string naming the bound ("" to keep the connection).
class ConnectionLedger {
 public:
  ConnectionLedger(const GateLimits& limits, GateClock::time_point accepted)
      : limits_(limits), last_active_(accepted), accepted_(accepted) {}

  /// Bytes from the client (plaintext, the preface first).
  std::string_view client_bytes(const std::uint8_t* data, std::size_t size,
                                GateClock::time_point now);
  /// Bytes from the server.
  void server_bytes(const std::uint8_t* data, std::size_t size, GateClock::time_point now);
  /// The deadline it has passed at `now`: a half-open stream, no preface, idle; or "".
  std::string_view overdue(GateClock::time_point now) const;

  /// No stream open: a connection the gate may close to make room.
  bool idle() const { return streams_.empty(); }
  /// Whether the client ever opened a stream: the gate makes room by closing the connections
  /// that never did first, so that silent connections cannot push out a client between calls.
  bool ever_opened() const { return ever_opened_; }
  /// When a stream last opened or ended (the connection's start before any).
  GateClock::time_point last_active() const { return last_active_; }
  /// DATA bytes of the streams serve has not answered.
  std::size_t pending_bytes() const { return pending_bytes_; }

 private:
  struct Stream {
    GateClock::time_point opened;
    bool sent = false;  // the client's END_STREAM
    std::size_t bytes = 0;
  };
  void end_stream(std::uint32_t id, GateClock::time_point now);

  GateLimits limits_;
  FrameScanner client_frames_{true};
  FrameScanner server_frames_{false};
  std::map<std::uint32_t, Stream> streams_;
  std::deque<GateClock::time_point> resets_;
  GateClock::time_point last_active_;
  GateClock::time_point accepted_;
  std::size_t pending_bytes_ = 0;
  std::size_t header_block_bytes_ = 0;
  bool in_header_block_ = false;
  bool settings_seen_ = false;
  bool ever_opened_ = false;
};

}  // namespace dynamix
