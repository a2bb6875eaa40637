// The ranks of `mpirun -n R dynamix train` other than 0, and what they share with it.
#include "apps/train_ranks.h"

#include "apps/train_record.h"
#include "policies/ppo/ppo_trainer.h"
#include "sim/io/diagnostics.h"

namespace dynamix {
namespace {

/// As one of the ranks of `mpirun -n R dynamix train`, R > 1: every rank steps its block of the
/// environments and learns alike from all of them; rank 0 owns --out, evaluates, selects and
/// decides when to stop. The same policy.pt as one process.
int follow_training(const TrainOptions& o, Ranks& ranks) {
  Diagnostics quiet;
  const auto scenario =
      std::make_shared<const Scenario>(load_scenario(o.scenario_path, o.overrides, quiet));
  RankExchange exchange(ranks);
  VectorEnv envs(episode_source(o, scenario, quiet), o.env,
                 static_cast<std::size_t>(o.environments), static_cast<std::size_t>(o.threads),
                 &exchange);
  PpoTrainer trainer(envs, o.ppo, run_settings(o, *scenario));
  const std::string checkpoint = ranks.share({}).front();
  if (!checkpoint.empty()) trainer.load_checkpoint(checkpoint);
  trainer.train(o.steps, [&](const UpdateStats&) { return go_on(&ranks, true); });
  return 0;
}

}  // namespace

std::string actions_text(const std::vector<int>& actions) {
  std::string text;
  for (int action : actions) text += std::to_string(action) + ",";
  return text;
}

std::vector<int> actions_of(const std::string& text) {
  std::vector<int> actions;
  for (std::size_t start = 0, end; (end = text.find(',', start)) != std::string::npos;
       start = end + 1) {
    actions.push_back(std::stoi(text.substr(start, end - start)));
  }
  return actions;
}

bool go_on(Ranks* ranks, bool lead_goes_on) {
  if (ranks == nullptr) return lead_goes_on;
  return ranks->share({lead_goes_on ? "1" : "0"}).front() == "1";
}

/// A rank other than 0: checks the options as rank 0 does, agrees with it on the run, and follows
/// it; 2 when either refused the input (rank 0 says why).
int join_training(const boost::program_options::variables_map& values, TrainOptions& o,
                  Ranks& ranks, const std::string& definition) {
  try {
    read_train_options(values, o);
  } catch (const std::exception&) {
    ranks.agree(nullptr, "training run");
    return 2;
  }
  if (!ranks.agree(&definition, "training run")) return 2;
  o.env.actions = actions_of(ranks.share({}).front());
  return follow_training(o, ranks);
}

}  // namespace dynamix
