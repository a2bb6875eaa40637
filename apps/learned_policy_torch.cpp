// ppo:FILE with LibTorch: the TorchScript policy, in dynamix-torch.
#include <memory>
#include <string>

#include "apps/learned_policy.h"
#include "gym/observation.h"
#include "policies/ppo/ppo_policy.h"

namespace dynamix {

std::unique_ptr<Policy> make_learned_policy(const std::string& file, const EnvOptions& env_options,
                                            const std::string&) {
  return std::make_unique<PpoPolicy>(file, ObservationBuilder().schema(), env_options);
}

void require_learned_policies(const std::string&, const std::string&) {}

}  // namespace dynamix
