// One HTTP/2 connection's streams from its frame headers, against the gate's bounds.
#include "adapter/server/http2_ledger.h"

namespace dynamix {
namespace {

// RFC 9113 6: frame types and flags.
constexpr std::uint8_t kData = 0x0;
constexpr std::uint8_t kHeaders = 0x1;
constexpr std::uint8_t kResetStream = 0x3;
constexpr std::uint8_t kSettings = 0x4;
constexpr std::uint8_t kContinuation = 0x9;
constexpr std::uint8_t kEndStream = 0x1;
constexpr std::uint8_t kEndHeaders = 0x4;

}  // namespace

void ConnectionLedger::end_stream(std::uint32_t id, GateClock::time_point now) {
  const auto found = streams_.find(id);
  if (found == streams_.end()) return;
  pending_bytes_ -= found->second.bytes;
  streams_.erase(found);
  last_active_ = now;
}

std::string_view ConnectionLedger::client_bytes(const std::uint8_t* data, std::size_t size,
                                                GateClock::time_point now) {
  std::string_view cut;
  client_frames_.feed(data, size, [&](const FrameScanner::Frame& frame) {
    if (!cut.empty()) return;
    if (in_header_block_ && frame.type != kContinuation) {
      cut = "a header block interrupted";  // RFC 9113 6.10: only CONTINUATION may follow
      return;
    }
    switch (frame.type) {
      case kSettings:
        settings_seen_ = true;
        break;
      case kHeaders: {
        header_block_bytes_ = frame.length;
        in_header_block_ = !(frame.flags & kEndHeaders);
        auto [stream, opened] = streams_.try_emplace(frame.stream, Stream{.opened = now});
        if (opened) last_active_ = now;
        ever_opened_ = true;
        if (frame.flags & kEndStream) stream->second.sent = true;
        if (static_cast<int>(streams_.size()) > limits_.max_open_streams) {
          cut = "more streams open than allowed";
        }
        break;
      }
      case kContinuation:
        header_block_bytes_ += frame.length;
        in_header_block_ = !(frame.flags & kEndHeaders);
        break;
      case kData: {
        const auto stream = streams_.find(frame.stream);
        if (stream == streams_.end()) break;  // gRPC answers a closed stream itself
        stream->second.bytes += frame.length;
        pending_bytes_ += frame.length;
        if (frame.flags & kEndStream) stream->second.sent = true;
        break;
      }
      case kResetStream:
        end_stream(frame.stream, now);
        resets_.push_back(now);
        while (now - resets_.front() > limits_.reset_window) resets_.pop_front();
        if (static_cast<int>(resets_.size()) > limits_.max_resets) cut = "streams reset too fast";
        break;
      default:
        break;
    }
    if (cut.empty() && header_block_bytes_ > limits_.max_header_block_bytes) {
      cut = "a header block too large";
    }
  });
  return cut;
}

void ConnectionLedger::server_bytes(const std::uint8_t* data, std::size_t size,
                                    GateClock::time_point now) {
  server_frames_.feed(data, size, [&](const FrameScanner::Frame& frame) {
    // The server ends a stream with its trailers (HEADERS with END_STREAM) or a reset.
    if (frame.type == kResetStream || (frame.type == kHeaders && (frame.flags & kEndStream))) {
      end_stream(frame.stream, now);
    }
  });
}

std::string_view ConnectionLedger::overdue(GateClock::time_point now) const {
  if (!settings_seen_ && now - accepted_ > limits_.preface_deadline) {
    return "no connection preface in time";
  }
  for (const auto& [id, stream] : streams_) {
    if (!stream.sent && now - stream.opened > limits_.stream_deadline) return "a half-open stream";
  }
  if (streams_.empty() && now - last_active_ > limits_.idle_timeout) return "idle";
  return "";
}

}  // namespace dynamix
