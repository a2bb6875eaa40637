// What an exported policy carries beside its weights, as extra files of the TorchScript archive,
// and how it is checked against the environment that will run it.
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gym/action_base.h"
#include "gym/batch_size_env.h"
#include "gym/env_knobs.h"
#include "sim/io/input_error.h"

namespace dynamix {

/// A missing, unreadable or incompatible policy or checkpoint; an InputError, so commands exit 2.
class PolicyFileError : public InputError {
 public:
  using InputError::InputError;
};

struct PolicyMetadata {
  /// The archive format this build writes and reads ("version").
  static constexpr int kFormatVersion = 2;
  int version = kFormatVersion;
  /// ObservationSchema::to_json() of the training environment ("schema.json").
  std::string schema_json;
  /// Batch change, in samples, of each action index ("actions.json").
  std::vector<int> actions;
  /// What the changes are added to ("action_base": current or balanced).
  ActionBase action_base = ActionBase::kCurrent;
  /// Batch bounds of the training environment ("bounds.json").
  int min_batch = 0;
  int max_batch = 0;
  /// Iterations between decisions, k ("decision_interval").
  int decision_interval = 0;
  /// Features per worker that schema.json declares (not stored on its own).
  std::size_t features = 0;
};

/// Largest batch bound and action change a policy file may hold (the decision interval:
/// kMaxDecisionInterval).
inline constexpr int kMaxPolicyBatch = 1 << 24;
inline constexpr int kMaxPolicyActions = 256;
inline constexpr std::size_t kMaxPolicyFeatures = 4096;

/// The metadata of a policy trained on `env`: its schema, action set, base, bounds and interval.
PolicyMetadata metadata_of(const BatchSizeEnv& env);

/// The archive's extra files, by name.
std::map<std::string, std::string> to_extra_files(const PolicyMetadata& metadata);
/// Reads to_extra_files()'s output, every value range-checked; PolicyFileError naming `source`
/// and the file at fault.
PolicyMetadata from_extra_files(const std::map<std::string, std::string>& files,
                                const std::string& source);
/// The names of the extra files every policy archive has.
std::vector<std::string> extra_file_names();

/// One way a policy does not fit an environment.
struct Incompatibility {
  /// "schema.json: local[3].name", "actions.json".
  std::string where;
  /// The environment's side.
  std::string expected;
  /// The policy's side.
  std::string found;
};

/// Every difference in observation schema or action set; empty when the policy fits.
std::vector<Incompatibility> incompatibilities(const PolicyMetadata& metadata,
                                               const std::string& schema_json,
                                               std::span<const int> actions);
/// Throws PolicyFileError naming `source` and the first difference (with a count of the rest).
void require_compatible(const PolicyMetadata& metadata, const std::string& schema_json,
                        std::span<const int> actions, const std::string& source);

}  // namespace dynamix
