// Closed-form TCP throughput models (Mathis 1997, Padhye 1998) and the incast round size.
#include "sim/network/tcp.h"

#include <algorithm>
#include <cmath>

#include "sim/core/check.h"
#include "sim/network/max_min.h"

namespace dynamix {

double window_cap_bytes_per_s(double max_window_bytes, Duration rtt) {
  if (rtt.count() <= 0) return kUnbounded;
  return max_window_bytes / to_seconds(rtt);
}

double mathis_rate_bytes_per_s(double mss_bytes, Duration rtt, double loss,
                               double segments_per_ack) {
  DYNAMIX_CHECK(loss >= 0 && loss < 1, "loss probability " << loss);
  if (loss == 0 || rtt.count() <= 0) return kUnbounded;
  return mss_bytes / to_seconds(rtt) * std::sqrt(3.0 / (2.0 * segments_per_ack * loss));
}

double padhye_rate_bytes_per_s(double mss_bytes, Duration rtt, double loss, Duration rto,
                               double segments_per_ack, LossRecovery recovery) {
  DYNAMIX_CHECK(loss >= 0 && loss < 1, "loss probability " << loss);
  if (loss == 0) return kUnbounded;
  const double b = segments_per_ack;
  const double round_trips = to_seconds(rtt) * std::sqrt(2.0 * b * loss / 3.0);
  const double timeouts =
      to_seconds(rto) * timeout_fraction(loss, b, recovery) * loss * (1.0 + 32.0 * loss * loss);
  return mss_bytes / (round_trips + timeouts);
}

double timeout_fraction(double loss, double segments_per_ack, LossRecovery recovery) {
  if (recovery == LossRecovery::kSack) return loss * loss;
  return std::min(1.0, 3.0 * std::sqrt(3.0 * segments_per_ack * loss / 8.0));
}

Duration retransmission_timeout(Duration rtt, Duration min_rto) { return rtt + min_rto; }

double incast_senders_per_round(double buffer_bytes, double drain_bytes, double burst_bytes) {
  DYNAMIX_CHECK(burst_bytes > 0, "incast burst of " << burst_bytes << " bytes");
  return std::max(1.0, std::floor((buffer_bytes + drain_bytes) / burst_bytes));
}

}  // namespace dynamix
