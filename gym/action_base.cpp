// Action bases: the current batch, or the speed-balanced split of the global batch.
#include "gym/action_base.h"

#include <cmath>

namespace dynamix {

std::string_view action_base_name(ActionBase base) {
  return base == ActionBase::kBalanced ? "balanced" : "current";
}

std::optional<ActionBase> parse_action_base(std::string_view name) {
  if (name == "current") return ActionBase::kCurrent;
  if (name == "balanced") return ActionBase::kBalanced;
  return std::nullopt;
}

std::string action_base_names() { return "current, balanced"; }

void action_bases(ActionBase base, const WindowMetrics& window, std::span<const int> current,
                  std::vector<int>& out) {
  out.assign(current.begin(), current.end());
  if (base != ActionBase::kBalanced || window.workers.size() != current.size()) return;
  double global = 0;
  double speed_sum = 0;
  for (std::size_t w = 0; w < current.size(); ++w) {
    const double speed = window.workers[w].samples_per_s;
    if (!(speed > 0) || !std::isfinite(speed)) return;
    global += current[w];
    speed_sum += speed;
  }
  for (std::size_t w = 0; w < current.size(); ++w) {
    out[w] = static_cast<int>(std::lround(global * window.workers[w].samples_per_s / speed_sum));
  }
}

}  // namespace dynamix
