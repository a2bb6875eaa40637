// Policies by name for the command line: the baselines and ppo:PATH (a TorchScript policy.pt).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "gym/batch_size_env.h"
#include "policies/policy.h"

namespace dynamix {

/// "static:B", "random", "proportional", "goodput", "goodput+proportional", "gns" or
/// "ppo:PATH"; an InputError on `option` listing the valid names otherwise, or naming what
/// differs when a policy.pt does not fit `env_options`; NeedsLibTorch for ppo:PATH in dynamix.
std::unique_ptr<Policy> make_policy(const std::string& name, std::uint64_t seed,
                                    const EnvOptions& env_options, const std::string& option);
std::string policy_names();

/// NeedsLibTorch when making policy `name` needs LibTorch and this executable has none. An MPI
/// job checks its policies with it before the ranks join, so that dynamix-torch takes over
/// before MPI starts.
void require_policy_kind(const std::string& name, const std::string& option);

/// The decision interval to run `policy` at: its own (a learned policy's) unless the user gave
/// one, which then wins with a warning on stderr naming `label` when the two differ.
int resolve_decision_interval(const Policy& policy, const std::string& label, int given,
                              bool user_given);

}  // namespace dynamix
