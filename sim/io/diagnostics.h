// A run's diagnostics: values inside their hard range but outside where they usually lie, warned
// about once each, or refused under --strict. The command that runs owns one and hands it to the
// loaders, so that a sweep loading one scenario per cell warns once.
#pragma once

#include <iosfwd>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/io/config_node.h"
#include "sim/io/knobs.h"

namespace dynamix {

struct DiagnosticsOptions {
  /// Refuse implausible values (InputError) instead of warning about them (--strict).
  bool strict = false;
  /// Where each warning is printed, one "dynamix: warning: ..." line; nullptr keeps them only
  /// in warnings() (generated documents, tests).
  std::ostream* out = nullptr;
};

/// The warnings of one run. Safe to share between the threads of that run.
class Diagnostics {
 public:
  explicit Diagnostics(DiagnosticsOptions options = {});
  /// A run's diagnostics printed on stderr, strict or not.
  static Diagnostics on_stderr(bool strict);

  Diagnostics(const Diagnostics&) = delete;
  Diagnostics& operator=(const Diagnostics&) = delete;

  bool strict() const { return options_.strict; }

  /// Warns, or when strict fails, when the number under `key` of `section` lies outside
  /// `typical`; a warning this object already gave is not given again.
  void check_typical(const ConfigNode& section, std::string_view key, const std::string& unit,
                     const Typical& typical);

  /// The warnings given so far, each once, in order ("FILE:LINE: key value is ...").
  std::vector<std::string> warnings() const;

 private:
  const DiagnosticsOptions options_;
  mutable std::mutex mutex_;
  std::set<std::string> seen_;
  std::vector<std::string> in_order_;
};

}  // namespace dynamix
