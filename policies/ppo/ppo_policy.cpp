// The learned policy behind the common Policy interface.
#include "policies/ppo/ppo_policy.h"

namespace dynamix {

PpoPolicy::PpoPolicy(const std::filesystem::path& file, const ObservationSchema& schema,
                     const EnvOptions& options)
    : PpoPolicy(read_policy_archive(file), file, PolicyCode::kDynamix, schema, options) {}

PpoPolicy::PpoPolicy(const std::string& archive, const std::filesystem::path& file, PolicyCode code,
                     const ObservationSchema& schema, const EnvOptions& options)
    : module_(archive, file, code), rules_(rule_book_for(module_.metadata())) {
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

std::optional<std::string> PpoPolicy::last_rule() const {
  if (!rules_ || actions_.empty()) return std::nullopt;
  const int rule = module_.metadata().actions[rules_->last_choice()];
  return std::string(kSelectableRules[static_cast<std::size_t>(rule)]);
}

void PpoPolicy::begin_episode(const DecisionContext& context) {
  if (rules_) rules_->begin_episode(context);
}

std::vector<int> PpoPolicy::decide(const DecisionContext& context, const Observation& observation) {
  decide_greedy(module_, context, observation, context.options.min_batch, decision_, rules_.get());
  actions_ = decision_.actions;
  return decision_.batches;
}

}  // namespace dynamix
