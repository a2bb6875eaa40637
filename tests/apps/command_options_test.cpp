// The commands' options come from their knob tables: every command's --help (train, evaluate,
// sweep, simulate, oracle, serve) shows every row with its default as written, the tables'
// defaults are the commands' option structs', the reference lists every table, and the PPO and
// environment options train, evaluate and simulate take are rows of those components' tables.
#include <doctest/doctest.h>

#include "apps/evaluate_options.h"
#include "apps/oracle_options.h"
#include "apps/serve_options.h"
#include "apps/simulate_options.h"
#include "apps/sweep_options.h"
#include "apps/train_options.h"
#include "dynamix_config.h"
#include "gym/env_knobs.h"
#include "tests/apps/run_dynamix.h"

namespace dynamix {
namespace {

using namespace testing;

/// The line of `help` that names --KEY in its option column ("  --KEY arg", "  -j [ --KEY ] arg"),
/// not in another option's help text; empty if none.
std::string option_line(const std::string& help, const std::string& key) {
  for (const std::string& line : split(help, '\n')) {
    std::string_view named = line;
    named.remove_prefix(std::min(named.size(), named.find_first_not_of(' ')));
    // A short name comes first: "-j [ --jobs ]".
    if (named.size() > 5 && named[0] == '-' && named[1] != '-' && named.substr(2, 3) == " [ ") {
      named.remove_prefix(5);
    }
    const std::string option = "--" + key;
    if (named.starts_with(option) &&
        (named.size() == option.size() || named[option.size()] == ' ')) {
      return line;
    }
  }
  return "";
}

/// CHECKs that `dynamix COMMAND --help` shows each row: --KEY, with "arg (=DEFAULT)" where the
/// row has a default short enough to stand beside it (else in its help text), and its meaning.
template <typename Target>
void check_help(const std::string& command, const KnobTable<Target>& table) {
  const Outcome help = dynamix(command + " --help");
  REQUIRE(help.status == 0);
  CHECK(help.stdout_text.starts_with(table.meaning.substr(0, 20)));
  for (const Knob<Target>& knob : table.knobs) {
    CAPTURE(knob.key);
    const std::string line = option_line(help.stdout_text, knob.key);
    CHECK_FALSE(line.empty());
    const bool shown = knob.type != "true or false" && knob.type != "list" &&
                       !knob.default_value.empty() && knob.default_value != "none" &&
                       knob.default_value != "required";
    if (shown && knob.default_value.size() > 24) {
      CHECK(help.stdout_text.find(knob.default_value.substr(0, 8)) != std::string::npos);
    } else if (shown) {
      CHECK(line.find(" arg (=" + knob.default_value + ")") != std::string::npos);
    } else {
      CHECK(line.find("(=") == std::string::npos);
    }
    CHECK(help.stdout_text.find(knob.meaning.substr(0, 15)) != std::string::npos);
  }
}

/// CHECKs that each row's default is its value in `defaults`, but for `declared` (rows whose
/// default is said in words).
template <typename Target>
void check_defaults(const KnobTable<Target>& table, const Target& defaults,
                    const std::vector<std::string>& declared) {
  for (const Knob<Target>& knob : table.knobs) {
    CAPTURE(knob.key);
    if (std::find(declared.begin(), declared.end(), knob.key) != declared.end()) continue;
    CHECK(knob.default_value == knob.show(defaults));
  }
}

TEST_CASE("Every command's --help shows every row of its table with its default") {
  check_help("train", train_knobs());
  check_help("sweep", sweep_knobs());
  check_help("evaluate", evaluate_knobs());
  check_help("simulate", simulate_knobs());
  check_help("oracle", oracle_knobs());
#ifdef DYNAMIX_ADAPTER
  check_help("serve", serve_knobs());
#endif
}

TEST_CASE("The commands' tables take their defaults from their option structs") {
  check_defaults(train_knobs(), TrainOptions{}, {"scenario", "out"});
  check_defaults(sweep_knobs(), SweepOptions{}, {"scenario", "out", "jobs"});
  check_defaults(evaluate_knobs(), EvaluateOptions{}, {"out", "jobs"});
  check_defaults(simulate_knobs(), SimulateOptions{}, {"scenario", "out"});
  check_defaults(oracle_knobs(), OracleArgs{}, {"out", "jobs"});
  check_defaults(serve_knobs(), ServeOptions{}, {"policy", "workers", "log"});
  CHECK(find_knob(train_knobs(), "out")->default_value == "required");
  CHECK(find_knob(train_knobs(), "learning-rate")->default_value == "0.001");
  CHECK(find_knob(evaluate_knobs(), "decision-interval")->default_value == "none");
  CHECK(find_knob(simulate_knobs(), "decision-interval")->default_value == "10");
  CHECK(find_knob(serve_knobs(), "max-batch-change")->default_value == "2");
  // The reference is the same on every machine.
  CHECK(find_knob(oracle_knobs(), "jobs")->default_value == "one per core");
}

TEST_CASE("The reference lists every command's options table") {
  const std::string reference = contents(kSourceDir / "docs" / "configuration.md");
  for (const std::string command : {"train", "evaluate", "sweep", "simulate", "oracle", "serve"}) {
    CAPTURE(command);
    CHECK(reference.find("### `dynamix " + command + "`\n") != std::string::npos);
    CHECK(reference.find("(`apps/" + command + "_options.cpp`)") != std::string::npos);
  }
}

TEST_CASE("The PPO and environment options the commands take are rows of those tables") {
  const auto check_rows = [](const auto& table) {
    for (const auto& knob : table.knobs) {
      const Knob<PpoOptions>* ppo = find_knob(ppo_knobs(), knob.key);
      const Knob<EnvOptions>* env = find_knob(env_knobs(), knob.key);
      if (ppo == nullptr && env == nullptr) continue;
      CAPTURE(knob.key);
      CHECK(knob.range == (ppo ? ppo->range : env->range));
      CHECK(knob.meaning == (ppo ? ppo->meaning : env->meaning));
    }
  };
  check_rows(train_knobs());
  // evaluate's own --decision-interval and --initial-batch differ from the environment's.
  for (const char* key : {"decision-lag", "max-batch-change", "max-lr-change"}) {
    CAPTURE(key);
    CHECK(find_knob(evaluate_knobs(), key)->range == find_knob(env_knobs(), key)->range);
    CHECK(find_knob(simulate_knobs(), key)->range == find_knob(env_knobs(), key)->range);
    CHECK(find_knob(simulate_knobs(), key)->meaning == find_knob(env_knobs(), key)->meaning);
  }
  CHECK(find_knob(train_knobs(), "decision-interval")->default_value ==
        find_knob(env_knobs(), "decision-interval")->default_value);
  CHECK(find_knob(train_knobs(), "action-base")->default_value ==
        find_knob(env_knobs(), "action-base")->default_value);
}

TEST_CASE("A malformed value is refused as Boost.Program_options refused it, naming --option") {
  const Outcome refused = dynamix("train --gamma high --out x");
  CHECK(refused.status == 2);
  CHECK(refused.stderr_text ==
        "dynamix: command line: expected valid options (see --help), found the argument "
        "('high') for option '--gamma' is invalid\n");
}

}  // namespace
}  // namespace dynamix
