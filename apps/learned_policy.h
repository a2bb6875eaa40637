// The learned policy kind, ppo:FILE (a TorchScript policy.pt). dynamix-torch links
// learned_policy_torch.cpp, which loads it with LibTorch; dynamix links learned_policy_none.cpp,
// whose NeedsLibTorch hands the command line to dynamix-torch.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "gym/batch_size_env.h"
#include "policies/policy.h"

namespace dynamix {

/// A policy file as ppo:FILE names it: FILE, or FILE@trust:SHA256 to let a file of that SHA-256
/// run its own TorchScript code.
struct PolicyFileSpec {
  std::string file;
  /// Lower-case hex; empty: only dynamix's own code runs (PolicyCode::kDynamix).
  std::string trusted_sha256;
};
inline constexpr std::string_view kTrustMarker = "@trust:";
/// The spec after "ppo:"; InputError naming `option` for a malformed SHA-256.
PolicyFileSpec parse_policy_file(const std::string& spec, const std::string& option);

/// The policy in `file` (a PolicyFileSpec), refused (an InputError) unless it fits `env_options`;
/// NeedsLibTorch naming `option` in an executable without LibTorch.
std::unique_ptr<Policy> make_learned_policy(const std::string& file, const EnvOptions& env_options,
                                            const std::string& option);

/// Nothing where learned policies can be made; NeedsLibTorch naming `option` and `spec`
/// (ppo:FILE) in an executable without LibTorch.
void require_learned_policies(const std::string& spec, const std::string& option);

}  // namespace dynamix
