// The PPO options' table: range checks and the exact text checkpoints keep come from its rows.
#include "policies/ppo/ppo_options.h"

#include <limits>

#include "sim/io/input_error.h"
#include "sim/io/shared_options.h"

namespace dynamix {

namespace {

using Rows = KnobRows<PpoOptions, ExactNumbers>;

constexpr int kMaxRolloutSteps = 1 << 20;
constexpr int kMaxEpochs = 10000;
constexpr int kMaxMinibatches = 1 << 20;
constexpr std::size_t kMaxHiddenLayers = 16;
constexpr int kMaxHiddenWidth = 1 << 14;

constexpr Range kPositive{.low = 0, .low_open = true, .finite = true};
constexpr Range kNonNegative{.low = 0, .finite = true};
constexpr Range kUnit{.low = 0, .high = 1};

template <typename Member>
auto field(Member member) {
  return [member](auto& options) -> auto& { return options.*member; };
}

std::vector<Knob<PpoOptions>> schedule_knobs() {
  return {
      SharedRows<PpoOptions>::seed(field(&PpoOptions::seed)),
      Rows::quantity({.key = "rollout-steps", .meaning = "decisions per environment per update"},
                     field(&PpoOptions::rollout_steps), integers(1, kMaxRolloutSteps)),
      Rows::quantity({.key = "reset-interval",
                      .unit = "updates",
                      .meaning = "updates between fresh resets of every environment (0: never)"},
                     field(&PpoOptions::reset_interval),
                     integers(0, std::numeric_limits<std::int32_t>::max())),
      Rows::quantity({.key = "epochs", .meaning = "optimization passes over each rollout"},
                     field(&PpoOptions::epochs), integers(1, kMaxEpochs)),
      Rows::quantity({.key = "minibatches", .meaning = "minibatches per epoch"},
                     field(&PpoOptions::minibatches), integers(1, kMaxMinibatches)),
      Rows::quantity({.key = "learning-rate", .meaning = "Adam learning rate (annealed to 0)"},
                     field(&PpoOptions::learning_rate), kPositive),
      Rows::flag({.key = "anneal-learning-rate",
                  .meaning = "anneal the learning rate linearly to zero over the run"},
                 field(&PpoOptions::anneal_learning_rate)),
      Rows::quantity({.key = "adam-epsilon", .meaning = "Adam epsilon"},
                     field(&PpoOptions::adam_epsilon), kPositive)};
}

std::vector<Knob<PpoOptions>> loss_knobs() {
  return {
      Rows::quantity({.key = "gamma", .meaning = "discount per reference window of simulated time"},
                     field(&PpoOptions::gamma), Range{.low = 0, .low_open = true, .high = 1}),
      Rows::flag({.key = "discount-by-time",
                  .meaning = "discount a decision by the simulated time its window took"},
                 field(&PpoOptions::discount_by_time)),
      Rows::quantity({.key = "gae-lambda", .meaning = "GAE lambda per decision"},
                     field(&PpoOptions::gae_lambda), kUnit),
      Rows::quantity({.key = "clip-range", .meaning = "surrogate clipping range (epsilon)"},
                     field(&PpoOptions::clip_range), kPositive),
      Rows::flag({.key = "clip-value-loss",
                  .meaning = "also clip the value update around the rollout's value estimate"},
                 field(&PpoOptions::clip_value_loss)),
      Rows::quantity({.key = "initial-hold",
                      .meaning = "probability that the untrained policy keeps a worker's batch"},
                     field(&PpoOptions::initial_hold_probability),
                     Range{.low = 0, .high = 1, .high_open = true}),
      Rows::quantity({.key = "entropy-coef", .meaning = "entropy bonus coefficient"},
                     field(&PpoOptions::entropy_coef), kNonNegative),
      Rows::quantity({.key = "value-coef", .meaning = "value loss coefficient"},
                     field(&PpoOptions::value_coef), kNonNegative),
      Rows::quantity({.key = "max-grad-norm", .meaning = "global gradient norm bound"},
                     field(&PpoOptions::max_grad_norm), kPositive),
      Rows::quantity({.key = "target-kl",
                      .meaning = "stop an update's epochs once the approximate KL exceeds this "
                                 "(0: never)"},
                     field(&PpoOptions::target_kl), kNonNegative),
      Rows::flag({.key = "normalize-advantages", .meaning = "normalize advantages per minibatch"},
                 field(&PpoOptions::normalize_advantages))};
}

std::vector<Knob<PpoOptions>> exploration_and_network_knobs() {
  return {
      Rows::flag({.key = "single-explorer",
                  .meaning = "one worker per environment explores per decision; the others "
                             "act greedily"},
                 field(&PpoOptions::single_explorer)),
      Rows::flag({.key = "coordinated-exploration",
                  .meaning = "workers of an environment sample their actions with one shared "
                             "random number (always with the global, noise and goodput "
                             "bases)"},
                 field(&PpoOptions::coordinated_exploration)),
      Rows::integer_list(
          {.key = "hidden-sizes", .meaning = "hidden layer widths of the actor and of the critic"},
          field(&PpoOptions::hidden_sizes), integers(1, kMaxHiddenWidth), kMaxHiddenLayers),
      Rows::quantity(
          {.key = "observation-clip", .meaning = "normalized observations are clipped to +-this"},
          field(&PpoOptions::observation_clip), kPositive)};
}

KnobTable<PpoOptions> make_ppo_knobs() {
  std::vector<Knob<PpoOptions>> rows = schedule_knobs();
  for (auto part : {loss_knobs(), exploration_and_network_knobs()}) {
    for (Knob<PpoOptions>& knob : part) rows.push_back(std::move(knob));
  }
  return Rows::table("", "the PPO trainer's hyper-parameters", std::move(rows));
}

}  // namespace

const KnobTable<PpoOptions>& ppo_knobs() {
  // Built once: the rows are immutable and hold no state.
  static const KnobTable<PpoOptions> table = make_ppo_knobs();
  return table;
}

void validate(const PpoOptions& options) {
  if (const auto refused = first_violation(ppo_knobs(), options)) {
    throw InputError("--" + refused->key, 0, "", refused->expected, refused->found);
  }
}

RunSettings settings(const PpoOptions& options) { return shown_values(ppo_knobs(), options); }

}  // namespace dynamix
