// Policies by name for the command line: the baselines and ppo:PATH (a TorchScript policy.pt).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gym/batch_size_env.h"
#include "gym/env_knobs.h"
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

/// One entry of a policy list (evaluate's --policies): "SPEC" or "LABEL=SPEC".
struct PolicyEntry {
  std::string label;
  std::string spec;
  EnvOptions env_options = env_preset("evaluation");
  bool oracle = false;
};

/// The entries of a comma-separated policy list, each labelled by its LABEL=, a learned policy
/// by its file's stem ("ppo:runs/a/policy.pt" -> "policy"), others by their spec; an InputError
/// on --policies for an empty list, an empty label or spec, or a label given twice.
std::vector<PolicyEntry> parse_policy_entries(const std::string& list);

/// NeedsLibTorch for a policy of `list` that this executable cannot make, so that dynamix-torch
/// takes an MPI job over before its ranks join.
void require_policy_kinds(const std::string& list);

/// Each entry's environment: the evaluation's, at a learned policy's own decision interval
/// unless --decision-interval was given.
void resolve_env_options(std::vector<PolicyEntry>& entries, const EnvOptions& base,
                         bool interval_given);

}  // namespace dynamix
