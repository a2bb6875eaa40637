// make_policy: baselines by name, ppo:PATH through the learned policy kind (apps/learned_policy.h:
// LibTorch's in dynamix-torch, a NeedsLibTorch in dynamix).
#include "apps/policy_factory.h"

#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

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

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

PolicyEntry parse_entry(const std::string& text) {
  const std::size_t equals = text.find('=');
  const std::size_t colon = text.find(':');
  if (equals != std::string::npos && (colon == std::string::npos || equals < colon)) {
    if (equals == 0 || equals + 1 == text.size()) {
      throw InputError("--policies", 0, "", "LABEL=POLICY with both parts", "'" + text + "'");
    }
    return {text.substr(0, equals), text.substr(equals + 1), {}};
  }
  // A learned policy is labelled by its file's stem ("ppo:runs/a/policy.pt" -> "policy").
  const std::string label = text.starts_with("ppo:") && text.size() > 4
                                ? std::filesystem::path(text.substr(4)).stem().string()
                                : text;
  return {label.empty() ? text : label, text, {}};
}

}  // namespace

std::vector<PolicyEntry> parse_policy_entries(const std::string& list) {
  std::vector<PolicyEntry> entries;
  std::set<std::string> labels;
  for (const std::string& item : split_list(list)) {
    PolicyEntry entry = parse_entry(item);
    if (!labels.insert(entry.label).second) {
      throw InputError("--policies", 0, "", "a distinct label per policy (LABEL=POLICY)",
                       "'" + entry.label + "' twice");
    }
    entries.push_back(std::move(entry));
  }
  if (entries.empty()) throw InputError("--policies", 0, "", "at least one policy", "none");
  return entries;
}

void require_policy_kinds(const std::string& list) {
  try {
    for (const PolicyEntry& entry : parse_policy_entries(list)) {
      require_policy_kind(entry.spec, "--policies");
    }
  } catch (const InputError&) {
    // Rank 0 reports it, once, after the ranks have joined.
  }
}

void resolve_env_options(std::vector<PolicyEntry>& entries, const EnvOptions& base,
                         bool interval_given) {
  for (PolicyEntry& entry : entries) {
    entry.env_options = base;
    entry.env_options.decision_interval =
        resolve_decision_interval(*make_policy(entry.spec, 1, base, "--policies"), entry.label,
                                  base.decision_interval, interval_given);
  }
}

}  // namespace dynamix
