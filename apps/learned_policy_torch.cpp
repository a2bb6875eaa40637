// ppo:FILE with LibTorch: the TorchScript policy, in dynamix-torch.
#include <memory>
#include <string>

#include "apps/learned_policy.h"
#include "gym/observation.h"
#include "policies/export/sha256.h"
#include "policies/ppo/ppo_policy.h"

namespace dynamix {

std::unique_ptr<Policy> make_learned_policy(const std::string& spec, const EnvOptions& env_options,
                                            const std::string& option) {
  const PolicyFileSpec file = parse_policy_file(spec, option);
  const std::string archive = read_policy_archive(file.file);
  PolicyCode code = PolicyCode::kDynamix;
  if (!file.trusted_sha256.empty()) {
    require_pinned(sha256_of(archive), file.trusted_sha256, kTrustMarker, file.file);
    code = PolicyCode::kTrusted;
  }
  return std::make_unique<PpoPolicy>(archive, file.file, code, ObservationBuilder().schema(),
                                     env_options);
}

void require_learned_policies(const std::string&, const std::string&) {}

}  // namespace dynamix
