// The gate's view of one HTTP/2 connection: each bound a hostile client tried in the audit cuts
// the connection, and a well-behaved one is never cut.
#include "adapter/server/http2_ledger.h"

#include <doctest/doctest.h>

#include <string_view>
#include <vector>

namespace dynamix {
namespace {

using namespace std::chrono_literals;

constexpr std::uint8_t kData = 0x0, kHeaders = 0x1, kReset = 0x3, kSettings = 0x4,
                       kContinuation = 0x9;
constexpr std::uint8_t kEndStream = 0x1, kEndHeaders = 0x4;

/// Frames as a client or server writes them (payload bytes of `length`, all 0).
struct Wire {
  std::vector<std::uint8_t> bytes;
  Wire& frame(std::uint32_t length, std::uint8_t type, std::uint8_t flags, std::uint32_t stream) {
    for (const int shift : {16, 8, 0}) bytes.push_back(static_cast<std::uint8_t>(length >> shift));
    bytes.push_back(type);
    bytes.push_back(flags);
    for (const int shift : {24, 16, 8, 0}) {
      bytes.push_back(static_cast<std::uint8_t>(stream >> shift));
    }
    bytes.insert(bytes.end(), length, 0);
    return *this;
  }
};

Wire preface() {
  Wire wire;
  wire.bytes.assign(FrameScanner::kPrefaceBytes, 'P');
  return wire.frame(0, kSettings, 0, 0);
}

const GateClock::time_point kStart{};

std::string_view feed(ConnectionLedger& ledger, const Wire& wire,
                      GateClock::time_point now = kStart) {
  return ledger.client_bytes(wire.bytes.data(), wire.bytes.size(), now);
}

}  // namespace

TEST_CASE("A well-behaved client's calls pass, each ended by the server's trailers") {
  const GateLimits limits;
  ConnectionLedger ledger(limits, kStart);
  CHECK(feed(ledger, preface()).empty());
  for (std::uint32_t stream = 1; stream < 200; stream += 2) {  // more calls than any bound
    Wire call;
    call.frame(120, kHeaders, kEndHeaders, stream).frame(900, kData, kEndStream, stream);
    CHECK(feed(ledger, call).empty());
    CHECK(ledger.pending_bytes() == 900);
    Wire answer;
    answer.frame(30, kHeaders, kEndHeaders, stream).frame(60, kData, 0, stream);
    answer.frame(20, kHeaders, kEndHeaders | kEndStream, stream);
    ledger.server_bytes(answer.bytes.data(), answer.bytes.size(), kStart);
    CHECK(ledger.idle());
    CHECK(ledger.pending_bytes() == 0);
  }
  CHECK(ledger.ever_opened());
  CHECK(ledger.overdue(kStart + 29s).empty());
  CHECK(ledger.overdue(kStart + 31s) == "idle");
}

TEST_CASE("Rapid reset, CONTINUATION floods and too many streams are cut") {
  const GateLimits limits;
  {
    ConnectionLedger ledger(limits, kStart);
    Wire flood = preface();
    for (std::uint32_t stream = 1; stream < 2 * 33; stream += 2) {
      flood.frame(100, kHeaders, kEndHeaders, stream).frame(4, kReset, 0, stream);
    }
    CHECK(feed(ledger, flood) == "streams reset too fast");
  }
  {
    ConnectionLedger ledger(limits, kStart);  // resets spread over time pass
    CHECK(feed(ledger, preface()).empty());
    for (int i = 0; i < 100; ++i) {
      Wire one;
      one.frame(100, kHeaders, kEndHeaders, 2 * i + 1).frame(4, kReset, 0, 2 * i + 1);
      CHECK(feed(ledger, one, kStart + i * 1s).empty());
    }
  }
  {
    ConnectionLedger ledger(limits, kStart);
    Wire flood = preface();
    flood.frame(100, kHeaders, 0, 1);
    for (int i = 0; i < 5; ++i) flood.frame(16000, kContinuation, 0, 1);  // past 64 KiB
    CHECK(feed(ledger, flood) == "a header block too large");
  }
  {
    ConnectionLedger ledger(limits, kStart);
    Wire interrupted = preface();
    interrupted.frame(100, kHeaders, 0, 1).frame(10, kData, 0, 1);
    CHECK(feed(ledger, interrupted) == "a header block interrupted");
  }
  {
    ConnectionLedger ledger(limits, kStart);  // complete requests never answered
    Wire calls = preface();
    for (std::uint32_t stream = 1; stream < 10; stream += 2) {
      calls.frame(100, kHeaders, kEndHeaders, stream).frame(50, kData, kEndStream, stream);
    }
    CHECK(feed(ledger, calls) == "more streams open than allowed");
  }
}

TEST_CASE("Deadlines: no preface, a half-sent stream, an idle connection") {
  const GateLimits limits;
  ConnectionLedger silent(limits, kStart);
  CHECK(silent.overdue(kStart + 4s).empty());
  CHECK(silent.overdue(kStart + 6s) == "no connection preface in time");
  CHECK(!silent.ever_opened());
  ConnectionLedger half(limits, kStart);
  Wire open = preface();
  open.frame(100, kHeaders, kEndHeaders, 1).frame(10, kData, 0, 1);
  CHECK(feed(half, open).empty());
  CHECK(!half.idle());
  CHECK(half.overdue(kStart + 4s).empty());
  CHECK(half.overdue(kStart + 6s) == "a half-open stream");
  CHECK(half.pending_bytes() == 10);
}

}  // namespace dynamix
