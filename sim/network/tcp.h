// TCP at flow level: throughput caps, expected retransmissions and timeouts, incast rounds.
#pragma once

#include "sim/core/time.h"

namespace dynamix {

/// Window cap of SimGrid's CM02 model: W_max / RTT; unbounded at zero RTT.
double window_cap_bytes_per_s(double max_window_bytes, Duration rtt);

/// Mathis et al. (CCR'97): (MSS / RTT)·√(3 / (2·b·p)), b segments acknowledged per ACK;
/// unbounded without loss or at zero RTT.
double mathis_rate_bytes_per_s(double mss_bytes, Duration rtt, double loss,
                               double segments_per_ack);

/// How a sender recovers lost segments, which decides how many losses end in a timeout.
enum class LossRecovery {
  /// Padhye's Reno without SACK: a loss in a window too small for three duplicate ACKs
  /// times out, Q ≈ min(1, 3 / E[W]).
  kReno,
  /// SACK with RACK-TLP (RFC 8985; Linux's default since 4.18): losses are repaired within
  /// round trips, a lost retransmission detected by time and sent again, so one times out only
  /// when two transmissions in a row are lost, Q = p² (scripts/tcp_study.py measured 2–4·p²
  /// timeouts per retransmission at p = 0.01 on Linux 6.18, docs/network.md).
  kSack,
};

/// Padhye et al. (SIGCOMM'98, eq. 31 without its window term):
/// MSS / (RTT·√(2bp/3) + T0·Q·p·(1 + 32p²)), Q = timeout_fraction; unbounded without loss.
double padhye_rate_bytes_per_s(double mss_bytes, Duration rtt, double loss, Duration rto,
                               double segments_per_ack,
                               LossRecovery recovery = LossRecovery::kReno);

/// The fraction of loss indications that end in a timeout: Reno's Q ≈ min(1, 3 / E[W]) with
/// E[W] ≈ √(8 / (3bp)), i.e. min(1, 3·√(3bp/8)) (Padhye); SACK's p².
double timeout_fraction(double loss, double segments_per_ack,
                        LossRecovery recovery = LossRecovery::kReno);

/// Retransmission timeout of an established connection: Linux keeps RTTVAR at least RTO_min
/// (tcp_rtt_estimator), so RTO = SRTT + max(4·RTTVAR, RTO_min) ≈ RTT + RTO_min.
Duration retransmission_timeout(Duration rtt, Duration min_rto);

/// Incast (Phanishayee et al., FAST'08): synchronized senders each burst `burst_bytes` into one
/// egress port that holds `buffer_bytes` and drains `drain_bytes` while the burst arrives. The
/// port absorbs this many senders per round (at least one); the rest lose their window tail.
double incast_senders_per_round(double buffer_bytes, double drain_bytes, double burst_bytes);

}  // namespace dynamix
