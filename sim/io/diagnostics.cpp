// Plausibility warnings: one line each, once per run, or InputErrors when strict.
#include "sim/io/diagnostics.h"

#include <iostream>

namespace dynamix {

Diagnostics::Diagnostics(DiagnosticsOptions options) : options_(options) {}

Diagnostics Diagnostics::on_stderr(bool strict) {
  return Diagnostics({.strict = strict, .out = &std::cerr});
}

void Diagnostics::check_typical(const ConfigNode& section, std::string_view key,
                                const std::string& unit, const Typical& typical) {
  const auto node = section.find(key);
  if (!node || !node->is_scalar()) return;
  const auto warning = implausibility(node->path(), node->as_number(), unit, typical);
  if (!warning) return;
  if (options_.strict)
    node->fail("a typical value (--strict)", warning->substr(node->path().size() + 1));
  const std::string line = node->origin() + ": " + *warning;
  const std::lock_guard lock(mutex_);
  if (!seen_.insert(line).second) return;
  in_order_.push_back(line);
  if (options_.out) *options_.out << "dynamix: warning: " << line << '\n';
}

std::vector<std::string> Diagnostics::warnings() const {
  const std::lock_guard lock(mutex_);
  return in_order_;
}

}  // namespace dynamix
