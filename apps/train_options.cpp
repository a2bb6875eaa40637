// `dynamix train`'s options table.
#include "apps/train_options.h"

#include "apps/command_line.h"
#include "apps/knob_options.h"
#include "gym/action_base.h"
#include "gym/env_knobs.h"
#include "sim/io/input_error.h"
#include "sim/io/shared_options.h"
#include "sim/scenario/scenario_names.h"

namespace dynamix {

namespace {

using Rows = KnobRows<TrainOptions, ExactNumbers>;
using Row = Knob<TrainOptions>;

constexpr std::int64_t kMaxSteps = 1'000'000'000'000;
constexpr std::int64_t kMaxEnvironments = 4096;
constexpr std::int64_t kMaxThreads = 4096;

template <typename Member>
auto field(Member member) {
  return [member](auto& options) -> auto& { return options.*member; };
}

using Shared = SharedRows<TrainOptions>;

/// A row of the PPO or the environment's table; its default is train's own.
Row ppo_row(const std::string& key) {
  return Shared::part(
      ppo_knobs(), key, [](auto& options) -> auto& { return options.ppo; });
}

Row env_row(const std::string& key) {
  return Shared::part(
      env_knobs(), key, [](auto& options) -> auto& { return options.env; });
}

std::vector<Row> scenario_rows() {
  return {
      Shared::scenario(field(&TrainOptions::scenario_path)),
      Shared::set(field(&TrainOptions::overrides)),
      Rows::flag({.key = "randomize",
                  .meaning = "train on the scenario's randomized family (4-256 workers, fabric, "
                             "GPU mix, network, ring or parameter servers, starting batch, every "
                             "catalog workload, SGD and Adam)"},
                 field(&TrainOptions::randomize)),
      Rows::quantity({.key = "family-budget", .meaning = kFamilyBudgetHelp},
                     field(&TrainOptions::family_budget), integers(0, kMaxFamilyBudget)),
      Rows::texts({.key = "train-on",
                   .meaning = "train on these scenarios instead of --scenario's, repeatable "
                              "('dynamic': the seven shipped dynamic training clusters; "
                              "'budget': the six epoch-budget training clusters; 'shipped': "
                              "the five shipped scenarios); the "
                              "episodes cycle over them (--set does not apply to them), and "
                              "--scenario is what the training curve evaluates on"},
                  field(&TrainOptions::train_on)),
      ppo_row("seed"),
      Rows::quantity({.key = "steps",
                      .meaning = "environment decisions to train on, all environments together"},
                     field(&TrainOptions::steps), integers(1, kMaxSteps)),
      Rows::quantity({.key = "envs", .meaning = "parallel environments"},
                     field(&TrainOptions::environments), integers(1, kMaxEnvironments)),
      Rows::quantity({.key = "threads",
                      .meaning = "environment threads, 0 = one per core; results do not depend "
                                 "on it",
                      .recorded = false},
                     field(&TrainOptions::threads), integers(0, kMaxThreads)),
      env_row("decision-interval"),
      Rows::texts(
          {.key = "select-on",
           .meaning = "scenario to select the policy on, repeatable ('validation': the six "
                      "embedded validation clusters; 'dynamic-validation': the four held-out "
                      "dynamic ones; 'dynamic': the seven dynamic training ones, on other "
                      "seeds): best_snapshot.pt is the evaluated policy that did best there "
                      "against the per-scenario best rule, last_policy.pt the final one; "
                      "policy.pt is the best snapshot, or the fixed point (goodput:100 on the "
                      "goodput base, the anchor on the rule base) where the snapshot did worse "
                      "there, missed where it reached, or did not beat every single rule"},
          field(&TrainOptions::select_on)),
      env_row("action-base"),
      env_row("actions")};
}

std::vector<Row> run_rows() {
  return {Rows::quantity(
              {.key = "eval-every", .meaning = "updates between evaluations of the greedy policy"},
              field(&TrainOptions::eval_every), integers(1)),
          Shared::eval_seeds(field(&TrainOptions::eval_seeds)),
          Rows::quantity({.key = "checkpoint-every", .meaning = "updates between checkpoints"},
                         field(&TrainOptions::checkpoint_every), integers(1)),
          Shared::resume(field(&TrainOptions::resume)),
          Shared::quiet(field(&TrainOptions::quiet)),
          Shared::strict(field(&TrainOptions::strict)),
          Shared::out(field(&TrainOptions::out))};
}

KnobTable<TrainOptions> make_train_knobs() {
  std::vector<Row> rows = scenario_rows();
  for (const char* key : {"learning-rate", "rollout-steps", "gamma", "gae-lambda", "entropy-coef",
                          "single-explorer", "coordinated-exploration", "initial-hold"}) {
    rows.push_back(ppo_row(key));
  }
  for (Row& row : run_rows()) rows.push_back(std::move(row));
  // Named, not a default argument's temporary: GCC 12 then warns of its vectors (-Werror).
  const TrainOptions defaults;
  return Rows::table("", "dynamix train: PPO pretraining of a batch-size policy", std::move(rows),
                     defaults);
}

/// `names` with each named set (scenario_set: "dynamic", "budget", ...) replaced by its paths and
/// each shipped scenario's short name by its embedded path.
std::vector<std::string> expand_scenario_sets(const std::vector<std::string>& names,
                                              const std::string& option) {
  std::vector<std::string> paths;
  for (const std::string& name : names) {
    if (const std::optional<std::vector<std::string>> set = scenario_set(name)) {
      paths.insert(paths.end(), set->begin(), set->end());
    } else {
      paths.push_back(resolve_scenario(name, option));
    }
  }
  return paths;
}

}  // namespace

const KnobTable<TrainOptions>& train_knobs() {
  // Built once: the rows are immutable and hold no state.
  static const KnobTable<TrainOptions> table = make_train_knobs();
  return table;
}

void read_train_options(const boost::program_options::variables_map& values, TrainOptions& o) {
  read_knob_options(values, train_knobs(), o);
  o.scenario_path = resolve_scenario(o.scenario_path);
  if (o.env.actions.empty()) o.env.actions = default_actions(o.env.action_base);
  if (const std::optional<int> bad = invalid_action(o.env.action_base, o.env.actions)) {
    throw InputError("--actions", 0, "", action_rule(o.env.action_base), std::to_string(*bad));
  }
  // The shaping discounts as the learner does, so that it teaches time to target (docs/ppo.md).
  o.env.reward.shaping_discount = o.ppo.gamma;
  o.env.reward.shaping_discount_by_time = o.ppo.discount_by_time;
  if (o.randomize) o.sampler = training_family(o.scenario_path, o.overrides, o.family_budget);
  o.select_on = expand_scenario_sets(o.select_on, "--select-on");
  if (o.randomize && !o.train_on.empty()) {
    throw InputError("--train-on", 0, "", "either --train-on or --randomize", "both");
  }
  o.train_on = expand_scenario_sets(o.train_on, "--train-on");
}

std::shared_ptr<const ScenarioSource> episode_source(const TrainOptions& o,
                                                     std::shared_ptr<const Scenario> scenario,
                                                     Diagnostics& diagnostics) {
  if (o.randomize) return std::make_shared<ScenarioSampler>(o.sampler, diagnostics);
  if (!o.train_on.empty()) {
    std::vector<std::shared_ptr<const Scenario>> scenarios;
    for (const std::string& path : o.train_on) {
      scenarios.push_back(std::make_shared<const Scenario>(load_scenario(path, {}, diagnostics)));
    }
    return std::make_shared<ScenarioList>(std::move(scenarios));
  }
  return std::make_shared<FixedScenario>(std::move(scenario));
}

}  // namespace dynamix
