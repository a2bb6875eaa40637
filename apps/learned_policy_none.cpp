// ppo:FILE without LibTorch: dynamix, which hands the command line to dynamix-torch.
#include <memory>
#include <string>

#include "apps/command.h"
#include "apps/learned_policy.h"

namespace dynamix {

std::unique_ptr<Policy> make_learned_policy(const std::string& file, const EnvOptions&,
                                            const std::string& option) {
  throw NeedsLibTorch(option, "ppo:" + file);
}

void require_learned_policies(const std::string& spec, const std::string& option) {
  throw NeedsLibTorch(option, spec);
}

}  // namespace dynamix
