// The commands' options come from the registry's knob tables: every command's --help lists
// exactly its table's rows with their defaults, the tables' defaults are the commands' option
// structs', the reference lists every table, and no option is declared twice: a key means and
// ranges the same in every table that takes it.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "apps/evaluate_options.h"
#include "apps/option_tables.h"
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

/// The options `help` lists in its option column, in order.
std::vector<std::string> listed_options(const std::string& help) {
  std::vector<std::string> keys;
  for (const std::string& line : split(help, '\n')) {
    std::string_view named = line;
    const std::size_t indent = named.find_first_not_of(' ');
    // Option lines are indented by two; their help text's continuation lines by far more.
    if (indent != 2) continue;
    named.remove_prefix(indent);
    if (named.size() > 5 && named[0] == '-' && named[1] != '-' && named.substr(2, 3) == " [ ") {
      named.remove_prefix(5);
    }
    if (!named.starts_with("--")) continue;
    named.remove_prefix(2);
    keys.emplace_back(named.substr(0, named.find(' ')));
  }
  return keys;
}

/// CHECKs that `dynamix COMMAND --help` lists exactly the table's rows (and --help), each with
/// "arg (=DEFAULT)" where the row has a default short enough to stand beside it (else in its help
/// text), and its meaning: no option of a command is declared outside its table.
void check_help(const OptionTable& table) {
  CAPTURE(table.name);
  // --dynamics takes a value: calibrate reads the next word as its file, not as an option.
  const std::string command =
      table.name == "calibrate --dynamics" ? "calibrate --dynamics runs.csv" : table.name;
  const Outcome help = dynamix(command + " --help");
  REQUIRE(help.status == 0);
  CHECK(help.stdout_text.starts_with(table.meaning.substr(0, 20)));
  std::vector<std::string> keys{"help"};
  for (const KnobOption& option : table.options) {
    CAPTURE(option.key);
    keys.push_back(option.key);
    const std::string line = option_line(help.stdout_text, option.key);
    CHECK_FALSE(line.empty());
    const bool shown = option.type != "true or false" && option.type != "list" &&
                       !option.default_value.empty() && option.default_value != "none" &&
                       option.default_value != "required";
    if (shown && option.default_value.size() > 24) {
      CHECK(help.stdout_text.find(option.default_value.substr(0, 8)) != std::string::npos);
    } else if (shown) {
      CHECK(line.find(" arg (=" + option.default_value + ")") != std::string::npos);
    } else {
      CHECK(line.find("(=") == std::string::npos);
    }
    CHECK(help.stdout_text.find(option.meaning.substr(0, 15)) != std::string::npos);
  }
  std::vector<std::string> listed = listed_options(help.stdout_text);
  std::sort(keys.begin(), keys.end());
  std::sort(listed.begin(), listed.end());
  CHECK(listed == keys);
}

/// The registry's command tables that this build runs (serve needs the adapter).
std::vector<OptionTable> command_tables() {
  std::vector<OptionTable> tables;
  for (OptionTable& table : option_tables()) {
    if (table.name == "env" || table.name == "ppo") continue;
#ifndef DYNAMIX_ADAPTER
    if (table.name == "serve" || table.name == "replay") continue;
#endif
#ifndef DYNAMIX_PPO
    if (table.name == "train" || table.name == "export" || table.name.starts_with("band")) continue;
#endif
    tables.push_back(std::move(table));
  }
  return tables;
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

TEST_CASE("Every command's --help lists exactly the rows of its table, with their defaults") {
  for (const OptionTable& table : command_tables()) check_help(table);
}

TEST_CASE("The commands' tables take their defaults from their option structs") {
  const TrainOptions train;  // Named: GCC 12 warns of a temporary's vectors (-Werror).
  check_defaults(train_knobs(), train, {"scenario", "out"});
  check_defaults(sweep_knobs(), SweepOptions{}, {"scenario", "out", "jobs"});
  check_defaults(evaluate_knobs(), EvaluateOptions{}, {"scenario", "out", "jobs"});
  check_defaults(simulate_knobs(), SimulateOptions{}, {"scenario", "out", "seed"});
  check_defaults(oracle_knobs(), OracleArgs{}, {"scenario", "out", "jobs"});
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

/// Why a table may range an option otherwise than its declaration elsewhere does.
struct RangeOfItsOwn {
  std::string table, key;
};

/// serve's guard rails are enforced by the worker too (adapter/python), which takes no 0 for
/// "none": a simulated environment's may be off, a real job's may not.
const std::vector<RangeOfItsOwn> kRangesOfTheirOwn = {{"serve", "max-batch-change"},
                                                      {"serve", "max-lr-change"}};

TEST_CASE("Every option is declared once: it means and ranges the same in every table") {
  std::map<std::string, std::pair<std::string, KnobOption>> first;
  std::size_t shared = 0;
  for (const OptionTable& table : option_tables()) {
    std::set<std::string> keys;
    for (const KnobOption& option : table.options) {
      CAPTURE(table.name);
      CAPTURE(option.key);
      CHECK(keys.insert(option.key).second);
      CHECK_FALSE(option.meaning.empty());
      const auto emplaced = first.try_emplace(option.key, table.name, option);
      if (emplaced.second) continue;
      const auto found = emplaced.first;
      ++shared;
      const KnobOption& declared = found->second.second;
      CAPTURE(found->second.first);
      CHECK(option.meaning == declared.meaning);
      CHECK(option.unit == declared.unit);
      CHECK(option.source == declared.source);
      // A text may be taken once or repeated (one --scenario, or several to compare).
      const bool texts = (option.type == "text" || option.type == "list") &&
                         (declared.type == "text" || declared.type == "list");
      const bool own = std::any_of(kRangesOfTheirOwn.begin(), kRangesOfTheirOwn.end(),
                                   [&](const RangeOfItsOwn& range) {
                                     return range.table == table.name && range.key == option.key;
                                   });
      if (!texts && !own) {
        CHECK(option.type == declared.type);
        CHECK(option.range == declared.range);
      }
    }
  }
  // --scenario, --set, --seed, --decision-interval, ... are each taken by several tables.
  CHECK(shared >= 30);
}

TEST_CASE("The environment's options take the command's defaults") {
  CHECK(find_knob(train_knobs(), "decision-interval")->default_value ==
        find_knob(env_knobs(), "decision-interval")->default_value);
  CHECK(find_knob(train_knobs(), "action-base")->default_value ==
        find_knob(env_knobs(), "action-base")->default_value);
  CHECK(find_knob(evaluate_knobs(), "initial-batch")->default_value == "64");
  CHECK(find_knob(env_knobs(), "initial-batch")->default_value == "0");
}

TEST_CASE("A malformed value is refused as Boost.Program_options refused it, naming --option") {
  const Outcome refused = dynamix("train --gamma high --out x");
  CHECK(refused.status == 2);
  CHECK(refused.stderr_text ==
        "dynamix: command line: expected valid options (see --help), found the argument "
        "('high') for option '--gamma' is invalid\n");
}

TEST_CASE("Every source file of apps/ is a small room: 300 lines at most") {
  // The commands parse, wire and print; what they compute lives in the libraries (issue 39).
  int files = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(kSourceDir / "apps")) {
    const std::string extension = entry.path().extension().string();
    if (extension != ".cpp" && extension != ".h") continue;
    CAPTURE(entry.path().filename().string());
    std::ifstream in(entry.path());
    const auto lines =
        std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n');
    CHECK(lines <= 300);
    ++files;
  }
  CHECK(files > 40);
}

}  // namespace
}  // namespace dynamix
