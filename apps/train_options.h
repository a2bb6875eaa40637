// What `dynamix train` takes on its command line, declared once in a knob table: its own
// options, and the PPO and environment options it exposes, rows of their components' tables.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gym/batch_size_env.h"
#include "gym/scenario_source.h"
#include "policies/ppo/ppo_options.h"
#include "sim/io/diagnostics.h"
#include "sim/io/knobs.h"
#include "sim/scenario/scenario.h"

namespace boost::program_options {
class variables_map;
}  // namespace boost::program_options

namespace dynamix {

/// Everything `dynamix train` takes on its command line.
struct TrainOptions {
  std::string scenario_path = kDefaultScenario;
  std::vector<std::string> overrides;
  std::string out;
  std::int64_t steps = 200000;
  int environments = 8;
  int threads = 0;
  int eval_every = 20;
  /// Five: with two, the selected policy missed one of the validation clusters on 1 of 5
  /// evaluation seeds for two of three training seeds (docs/ppo.md).
  int eval_seeds = 5;
  int checkpoint_every = 10;
  bool randomize = false;
  /// With --randomize: each sample's time budget as this multiple of a reference job's time to
  /// its target (SamplerOptions::reference_budget_factor); 0 keeps the base's.
  int family_budget = 0;
  bool resume = false;
  bool quiet = false;
  bool strict = false;
  /// PPO's defaults, which the docs show once.
  PpoOptions ppo;
  /// The training preset (gym/env_knobs.h).
  EnvOptions env = env_preset("training");
  /// The ranges of the randomized family (base and overrides set with --randomize).
  SamplerOptions sampler;
  /// Scenarios the policy is selected on (--select-on; "validation" and "dynamic-validation"
  /// expanded).
  std::vector<std::string> select_on;
  /// Scenarios the episodes cycle over instead of --scenario's (--train-on; "dynamic"
  /// expanded); --scenario stays the one the training curve evaluates on.
  std::vector<std::string> train_on;
};

/// Train's options in --help order, defaults from TrainOptions{}: its own rows, and the rows of
/// ppo_knobs() and env_knobs() it exposes.
const KnobTable<TrainOptions>& train_knobs();

/// Reads the options through train's table (InputError naming the first out of range); resolves
/// the scenario, the named scenario sets, the action set and the randomized family.
void read_train_options(const boost::program_options::variables_map& values, TrainOptions& o);

/// What train's environments draw their episodes from: the scenario, or its randomized family.
std::shared_ptr<const ScenarioSource> episode_source(const TrainOptions& o,
                                                     std::shared_ptr<const Scenario> scenario,
                                                     Diagnostics& diagnostics);

}  // namespace dynamix
