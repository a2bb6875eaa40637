// make_policy: baselines by name, ppo:PATH through the TorchScript policy (in dynamix-torch;
// dynamix hands a command line naming one over to it before any policy is made).
#include "apps/policy_factory.h"

#include <iostream>

#include "policies/baselines/baselines.h"
#ifdef DYNAMIX_TORCH
#include "policies/ppo/ppo_policy.h"
#endif
#include "sim/io/input_error.h"

namespace dynamix {

std::unique_ptr<Policy> make_policy(const std::string& name, std::uint64_t seed,
                                    const EnvOptions& env_options, const std::string& option) {
  if (name.starts_with("ppo:")) {
    if (name.size() == 4) {
      throw InputError(option, 0, "", "ppo:PATH naming a policy.pt file", "'" + name + "'");
    }
#ifdef DYNAMIX_TORCH
    return std::make_unique<PpoPolicy>(name.substr(4), ObservationBuilder().schema(), env_options);
#else
    static_cast<void>(env_options);
    throw InputError(option, 0, "", "a command line that names ppo:PATH, which dynamix-torch runs",
                     "'" + name + "' where dynamix made policies itself");
#endif
  }
  return make_baseline(name, seed, option);
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

}  // namespace dynamix
