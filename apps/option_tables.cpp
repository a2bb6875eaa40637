// The registry's list of tables.
#include "apps/option_tables.h"

#include "apps/band_options.h"
#include "apps/calibrate_options.h"
#include "apps/evaluate_options.h"
#include "apps/oracle_options.h"
#include "apps/serve_options.h"
#include "apps/simulate_options.h"
#include "apps/small_options.h"
#include "apps/sweep_options.h"
#include "apps/train_options.h"
#include "gym/env_knobs.h"
#include "policies/ppo/ppo_options.h"

namespace dynamix {

namespace {

template <typename Target>
OptionTable listed(std::string name, std::string title, std::string where,
                   const KnobTable<Target>& table) {
  return {std::move(name), std::move(title), std::move(where), table.meaning, knob_options(table)};
}

}  // namespace

std::vector<OptionTable> option_tables() {
  return {
      listed("env", "Environment", "gym/env_knobs.cpp", env_knobs()),
      listed("ppo", "PPO", "policies/ppo/ppo_options.cpp", ppo_knobs()),
      listed("train", "`dynamix train`", "apps/train_options.cpp", train_knobs()),
      listed("evaluate", "`dynamix evaluate`", "apps/evaluate_options.cpp", evaluate_knobs()),
      listed("sweep", "`dynamix sweep`", "apps/sweep_options.cpp", sweep_knobs()),
      listed("simulate", "`dynamix simulate`", "apps/simulate_options.cpp", simulate_knobs()),
      listed("oracle", "`dynamix oracle`", "apps/oracle_options.cpp", oracle_knobs()),
      listed("serve", "`dynamix serve`", "apps/serve_options.cpp", serve_knobs()),
      listed("replay", "`dynamix replay`", "apps/serve_options.cpp", replay_knobs()),
      listed("config", "`dynamix config`", "apps/small_options.cpp", config_knobs()),
      listed("scenarios", "`dynamix scenarios`", "apps/small_options.cpp", scenarios_knobs()),
      listed("export", "`dynamix export`", "apps/small_options.cpp", export_knobs()),
      listed("calibrate", "`dynamix calibrate`", "apps/calibrate_options.cpp", calibrate_knobs()),
      listed("calibrate --dynamics", "`dynamix calibrate --dynamics`", "apps/calibrate_options.cpp",
             dynamics_knobs()),
      listed("fidelity", "`dynamix fidelity`", "apps/calibrate_options.cpp", fidelity_knobs()),
      listed("band make", "`dynamix band make`", "apps/band_options.cpp", band_make_knobs()),
      listed("band check", "`dynamix band check`", "apps/band_options.cpp", band_check_knobs()),
  };
}

}  // namespace dynamix
