// Range checks of the PPO options in one place, and their exact text for checkpoints.
#include "policies/ppo/ppo_options.h"

#include <charconv>
#include <cmath>

#include "sim/io/input_error.h"

namespace dynamix {

namespace {

constexpr int kMaxRolloutSteps = 1 << 20;
constexpr int kMaxEpochs = 10000;
constexpr int kMaxMinibatches = 1 << 20;
constexpr int kMaxHiddenLayers = 16;
constexpr int kMaxHiddenWidth = 1 << 14;

/// The shortest text that reads back as `value`, in fixed notation where that fits.
std::string exact(double value) {
  char text[64];
  auto [end, error] = std::to_chars(text, text + sizeof(text), value, std::chars_format::fixed);
  if (error != std::errc()) end = std::to_chars(text, text + sizeof(text), value).ptr;
  return {text, end};
}

std::string exact(bool value) { return value ? "true" : "false"; }

[[noreturn]] void refuse(const std::string& name, const std::string& expected,
                         const std::string& found) {
  throw InputError("--" + name, 0, "", expected, found);
}

void require_integer(const std::string& name, long long value, long long low, long long high) {
  if (value >= low && value <= high) return;
  refuse(name, "an integer in [" + std::to_string(low) + ", " + std::to_string(high) + "]",
         std::to_string(value));
}

/// `low_open`/`high_open`: whether the bound itself is excluded; an infinite bound is open.
void require_number(const std::string& name, double value, double low, bool low_open, double high,
                    bool high_open) {
  const bool above = low_open ? value > low : value >= low;
  const bool below = high_open ? value < high : value <= high;
  if (std::isfinite(value) && above && below) return;
  std::string expected;
  if (std::isinf(high)) {
    expected = "a finite number " + std::string(low_open ? "> " : ">= ") + exact(low);
  } else {
    expected = "a number in " + std::string(low_open ? "(" : "[") + exact(low) + ", " +
               exact(high) + (high_open ? ")" : "]");
  }
  refuse(name, expected, exact(value));
}

std::string join(const std::vector<int>& values) {
  std::string text;
  for (int value : values) {
    if (!text.empty()) text += ' ';
    text += std::to_string(value);
  }
  return text;
}

}  // namespace

void validate(const PpoOptions& o) {
  const double infinity = INFINITY;
  require_integer("rollout-steps", o.rollout_steps, 1, kMaxRolloutSteps);
  require_integer("reset-interval", o.reset_interval, 0, INT32_MAX);
  require_integer("epochs", o.epochs, 1, kMaxEpochs);
  require_integer("minibatches", o.minibatches, 1, kMaxMinibatches);
  require_number("learning-rate", o.learning_rate, 0, true, infinity, true);
  require_number("adam-epsilon", o.adam_epsilon, 0, true, infinity, true);
  require_number("gamma", o.gamma, 0, true, 1, false);
  require_number("gae-lambda", o.gae_lambda, 0, false, 1, false);
  require_number("clip-range", o.clip_range, 0, true, infinity, true);
  require_number("initial-hold", o.initial_hold_probability, 0, false, 1, true);
  require_number("entropy-coef", o.entropy_coef, 0, false, infinity, true);
  require_number("value-coef", o.value_coef, 0, false, infinity, true);
  require_number("max-grad-norm", o.max_grad_norm, 0, true, infinity, true);
  require_number("target-kl", o.target_kl, 0, false, infinity, true);
  require_number("observation-clip", o.observation_clip, 0, true, infinity, true);
  if (o.hidden_sizes.size() > kMaxHiddenLayers) {
    refuse("hidden-sizes", "at most " + std::to_string(kMaxHiddenLayers) + " layers",
           std::to_string(o.hidden_sizes.size()));
  }
  for (int width : o.hidden_sizes) require_integer("hidden-sizes", width, 1, kMaxHiddenWidth);
}

RunSettings settings(const PpoOptions& o) {
  return {{"seed", std::to_string(o.seed)},
          {"rollout-steps", std::to_string(o.rollout_steps)},
          {"reset-interval", std::to_string(o.reset_interval)},
          {"epochs", std::to_string(o.epochs)},
          {"minibatches", std::to_string(o.minibatches)},
          {"learning-rate", exact(o.learning_rate)},
          {"anneal-learning-rate", exact(o.anneal_learning_rate)},
          {"adam-epsilon", exact(o.adam_epsilon)},
          {"gamma", exact(o.gamma)},
          {"discount-by-time", exact(o.discount_by_time)},
          {"gae-lambda", exact(o.gae_lambda)},
          {"clip-range", exact(o.clip_range)},
          {"clip-value-loss", exact(o.clip_value_loss)},
          {"initial-hold", exact(o.initial_hold_probability)},
          {"entropy-coef", exact(o.entropy_coef)},
          {"value-coef", exact(o.value_coef)},
          {"max-grad-norm", exact(o.max_grad_norm)},
          {"target-kl", exact(o.target_kl)},
          {"normalize-advantages", exact(o.normalize_advantages)},
          {"single-explorer", exact(o.single_explorer)},
          {"coordinated-exploration", exact(o.coordinated_exploration)},
          {"hidden-sizes", join(o.hidden_sizes)},
          {"observation-clip", exact(o.observation_clip)}};
}

}  // namespace dynamix
