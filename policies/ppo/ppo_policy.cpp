// The learned policy behind the common Policy interface.
#include "policies/ppo/ppo_policy.h"

namespace dynamix {

PpoPolicy::PpoPolicy(const std::filesystem::path& file, const ObservationSchema& schema,
                     const EnvOptions& options)
    : module_(file) {
  const PolicyMetadata& metadata = module_.metadata();
  // The policy decides with its own action set, as with its own k, unless the command gives one.
  require_compatible(metadata, schema.to_json(),
                     options.actions.empty() ? metadata.actions : options.actions, file.string());
}

std::optional<int> PpoPolicy::neutral_action() const {
  const PolicyMetadata& metadata = module_.metadata();
  const std::optional<std::size_t> neutral =
      dynamix::neutral_action(metadata.action_base, metadata.actions);
  return neutral ? std::optional(static_cast<int>(*neutral)) : std::nullopt;
}

std::vector<int> PpoPolicy::decide(const DecisionContext& context, const Observation& observation) {
  decide_greedy(module_, context.window, context.batches, observation, context.options.min_batch,
                decision_);
  actions_ = decision_.actions;
  return decision_.batches;
}

}  // namespace dynamix
