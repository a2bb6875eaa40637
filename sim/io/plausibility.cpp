// Plausibility warnings: one line each on stderr, once per run, or InputErrors under --strict.
#include "sim/io/plausibility.h"

#include <atomic>
#include <iostream>
#include <mutex>
#include <set>

namespace dynamix {
namespace {

// Process-wide on purpose: a sweep loads one scenario per cell, on several threads, and a run
// must print each warning once whatever the number of loads.
std::atomic<bool> strict_flag{false};

struct Printed {
  std::mutex mutex;
  std::set<std::string> seen;
  std::vector<std::string> in_order;
};

Printed& printed() {
  // Function-local: avoids the static initialization order fiasco.
  static Printed instance;
  return instance;
}

}  // namespace

void set_strict_plausibility(bool strict) { strict_flag = strict; }

bool strict_plausibility() { return strict_flag; }

void check_typical(const ConfigNode& section, std::string_view key, const std::string& unit,
                   const Typical& typical) {
  const auto node = section.find(key);
  if (!node || !node->is_scalar()) return;
  const auto warning = implausibility(node->path(), node->as_number(), unit, typical);
  if (!warning) return;
  if (strict_flag)
    node->fail("a typical value (--strict)", warning->substr(node->path().size() + 1));
  const std::string line = node->origin() + ": " + *warning;
  Printed& state = printed();
  const std::lock_guard lock(state.mutex);
  if (!state.seen.insert(line).second) return;
  state.in_order.push_back(line);
  std::cerr << "dynamix: warning: " << line << '\n';
}

std::vector<std::string> printed_warnings() {
  Printed& state = printed();
  const std::lock_guard lock(state.mutex);
  return state.in_order;
}

}  // namespace dynamix
