// make_policy: baselines by name, ppo:PATH through the learned policy kind (apps/learned_policy.h:
// LibTorch's in dynamix-torch, a NeedsLibTorch in dynamix).
#include "apps/policy_factory.h"

#include <iostream>

#include "apps/learned_policy.h"
#include "policies/baselines/baselines.h"
#include "sim/io/input_error.h"
#include "sim/io/sha256.h"

namespace dynamix {

std::unique_ptr<Policy> make_policy(const std::string& name, std::uint64_t seed,
                                    const EnvOptions& env_options, const std::string& option) {
  if (name.starts_with("ppo:")) {
    if (name.size() == 4) {
      throw InputError(option, 0, "", "ppo:PATH naming a policy.pt file", "'" + name + "'");
    }
    return make_learned_policy(name.substr(4), env_options, option);
  }
  return make_baseline(name, seed, option);
}

void require_policy_kind(const std::string& name, const std::string& option) {
  if (name.starts_with("ppo:")) require_learned_policies(name, option);
}

std::string policy_names() { return baseline_names() + ", ppo:PATH"; }

int resolve_decision_interval(const Policy& policy, const std::string& label, int given,
                              bool user_given) {
  const int own = policy.decision_interval();
  if (own <= 0) return given;
  if (!user_given) return own;
  if (given != own) {
    std::cerr << "dynamix: warning: --decision-interval " << given << " overrides the " << own
              << " iterations " << label << " was trained with\n";
  }
  return given;
}

PolicyFileSpec parse_policy_file(const std::string& spec, const std::string& option) {
  const std::size_t marker = spec.rfind(kTrustMarker);
  if (marker == std::string::npos) return {spec, ""};
  return {spec.substr(0, marker),
          checked_sha256(spec.substr(marker + kTrustMarker.size()), option)};
}

}  // namespace dynamix
