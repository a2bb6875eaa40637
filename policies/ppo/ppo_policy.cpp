// The learned policy behind the common Policy interface.
#include "policies/ppo/ppo_policy.h"

#include <algorithm>

#include "sim/core/check.h"

namespace dynamix {

PpoPolicy::PpoPolicy(const std::filesystem::path& file, const ObservationSchema& schema,
                     const EnvOptions& options)
    : module_(file) {
  require_compatible(module_.metadata(), schema.to_json(), options.actions, file.string());
}

std::vector<int> PpoPolicy::decide(const BatchSizeEnv& env, const Observation& observation) {
  actions_ = module_.greedy_actions(observation);
  const std::vector<int>& actions = actions_;
  DYNAMIX_CHECK(env.batches().size() == actions.size(),
                env.batches().size() << " batches for " << actions.size() << " workers");
  std::vector<int> batches;
  action_bases(module_.metadata().action_base, env.window(), env.batches(), batches);
  for (std::size_t i = 0; i < actions.size(); ++i) {
    batches[i] =
        std::max(env.options().min_batch,
                 batches[i] + module_.metadata().actions[static_cast<std::size_t>(actions[i])]);
  }
  return batches;
}

}  // namespace dynamix
