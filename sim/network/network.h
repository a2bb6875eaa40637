// Flow-level network: transfers share links max-min fairly under TCP window, loss and incast.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "sim/core/simulator.h"
#include "sim/core/time.h"
#include "sim/network/bandwidth_trace.h"
#include "sim/network/link.h"
#include "sim/network/tcp.h"

namespace dynamix {

struct NetworkOptions {
  /// TCP maximum segment size: a 1500-byte Ethernet MTU less 40 bytes of IPv4 and TCP headers.
  double mss_bytes = 1460;
  /// Largest TCP window W_max of the cap W_max / RTT; 4 MiB is SimGrid's network/TCP-gamma.
  double max_window_bytes = 4194304;
  /// Smallest retransmission timeout: Linux TCP_RTO_MIN.
  Duration min_rto = std::chrono::milliseconds(200);
  /// Segments acknowledged per ACK, Padhye's b: 2 with delayed ACKs (RFC 1122, RFC 5681).
  double segments_per_ack = 2;
  /// Which losses end in a retransmission timeout (tcp.h). Reno's, Padhye's model, by default;
  /// scripts/tcp_study.py measured Linux (SACK, RACK-TLP) timing out far less (docs/network.md).
  LossRecovery loss_recovery = LossRecovery::kReno;
  /// Initial congestion window, each sender's burst in an incast round (RFC 6928: 10 segments).
  double initial_window_segments = 10;
  /// Egress buffer per switch port: 4 MiB shared by 48 ports (Broadcom Triumph, as measured by
  /// Alizadeh et al., DCTCP, SIGCOMM'10).
  double switch_buffer_bytes = 4.0 * 1024 * 1024 / 48;
  /// Whether synchronized senders into one port pay incast timeouts.
  bool incast = true;
  /// Background traffic never leaves less than this fraction of a link's capacity (assumed), so
  /// every transfer finishes.
  double min_available_fraction = 0.01;
  /// Bytes on the wire per segment beyond the MSS payload: 0 models line rate; 78 is IPv4 + TCP
  /// headers (40) + Ethernet header, FCS, preamble and inter-frame gap (38), so that a 1500-byte
  /// MTU carries at most 1460/1538 = 94.9% payload.
  double frame_overhead_bytes = 0;
  /// Fraction of the framed line rate the transport reaches: 1 is ideal; kernel TCP sockets
  /// rarely exceed ~0.6 (NCCL maintainers), RDMA reaches ~0.96 of bus bandwidth (nccl-tests).
  double transport_efficiency = 1;
};

/// The share of a link's capacity that carries payload: framing times transport efficiency.
double payload_fraction(const NetworkOptions& options);

/// What one member route of a transfer cost on the wire (expected values, deterministic).
struct MemberStats {
  /// Payload bytes sent, retransmissions included (headers not counted).
  double wire_bytes = 0;
  double retransmitted_segments = 0;
  /// Retransmission timeouts: those of random loss (Padhye's Q) plus incast rounds.
  double timeouts = 0;
};

struct TransferStats {
  TimePoint start;
  TimePoint end;
  double payload_bytes_per_member = 0;
  /// One per member route, in the order given.
  std::vector<MemberStats> members;
  /// Time spent in incast timeouts before the payload started to move (part of end - start).
  Duration incast_stall{};
};

using TransferId = std::uint64_t;

/// A transfer's member routes, shared: a collective starts a transfer on the same routes every
/// iteration, and copying them each time cost more than the rest of starting it.
using SharedRoutes = std::shared_ptr<const std::vector<Route>>;

/// Links shared by transfers at flow level. Rates are max-min fair (progressive filling) and
/// recomputed only when a transfer starts or ends or a capacity changes, at most once per
/// simulated instant. The Network schedules events on `sim`, so it must not outlive it.
class Network {
 public:
  Network(Simulator& sim, std::vector<LinkSpec> links, NetworkOptions options = {});
  Network(Network&&) noexcept;
  Network& operator=(Network&&) noexcept;
  /// Cancels the network's pending events; callbacks of unfinished transfers never fire.
  ~Network();

  /// Moves `bytes_per_member` along each member route. All members progress at ONE common rate
  /// (a coupled group: the slowest member paces them, as the p flows of a ring all-reduce do;
  /// a plain point-to-point flow is a group of one member). on_done fires (as a simulator event)
  /// when the payload has arrived. Propagation latency is NOT included (callers add it).
  TransferId start_transfer(std::vector<Route> members, double bytes_per_member,
                            std::function<void(const TransferStats&)> on_done);
  /// As above, with the common rate also capped at `rate_limit_bytes_per_s` (an application
  /// that sends at most that fast, as a co-located job's flow does).
  TransferId start_transfer(std::vector<Route> members, double bytes_per_member,
                            std::function<void(const TransferStats&)> on_done,
                            double rate_limit_bytes_per_s);
  /// As start_transfer, on routes that other transfers share (a collective's, every iteration);
  /// a rate limit of 0 sets none.
  TransferId start_transfer_on(SharedRoutes members, double bytes_per_member,
                               std::function<void(const TransferStats&)> on_done,
                               double rate_limit_bytes_per_s = 0);
  /// Background cross-traffic on a link from now on (available = capacity - background).
  void set_background_gbps(LinkId link, double gbps);
  /// Replays a trace of background traffic on a link from now, scheduling its change points.
  void add_trace(LinkId link, const BandwidthTrace& trace);

  /// Sum of one-way link latencies.
  Duration latency(const Route& route) const;
  /// Round-trip time of a flow on `route`: twice its one-way latency.
  Duration rtt(const Route& route) const;
  /// Packet loss probability along a route: 1 - Π(1 - loss_l).
  double loss(const Route& route) const;
  /// TCP cap of one flow on `route`: min(W_max / RTT, Padhye's loss-limited rate).
  double flow_cap_bytes_per_s(const Route& route) const;

  /// Current common rate of a live transfer (0 while it waits out an incast stall).
  double rate_bytes_per_s(TransferId id) const;
  bool is_live(TransferId id) const;

  double background_gbps(LinkId id) const;
  /// Capacity less background, never below min_available_fraction of capacity.
  double available_gbps(LinkId id) const;
  const NetworkOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dynamix
