// How well simulated times agree with measured ones: relative errors, their median, and the rank
// agreement (Kendall's tau) of configurations.
#pragma once

#include <span>

namespace dynamix {

/// (simulated - measured) / measured.
double relative_error(double simulated, double measured);

/// The median of |e| over `errors`; 0 when empty.
double median_absolute(std::span<const double> errors);

/// Kendall's tau-b between two equally long sequences (ties in either count as neither
/// concordant nor discordant, and shrink the denominator); 1 when fewer than two pairs differ.
double kendall_tau(std::span<const double> a, std::span<const double> b);

}  // namespace dynamix
