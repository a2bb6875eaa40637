// `mpirun -n R dynamix train`, R > 1: what the ranks other than 0 do, and what every rank shares.
#pragma once

#include <string>
#include <vector>

#include "apps/train_options.h"
#include "gym/vector_env.h"
#include "studies/ranks.h"

namespace boost::program_options {
class variables_map;
}  // namespace boost::program_options

namespace dynamix {

/// The action set as text, to share with the other ranks.
std::string actions_text(const std::vector<int>& actions);

/// The action set actions_text() wrote.
std::vector<int> actions_of(const std::string& text);

/// Whether every rank trains on: rank 0's word (`lead_goes_on` there), on every rank.
bool go_on(Ranks* ranks, bool lead_goes_on);

/// A VectorEnv spread over the ranks of `mpirun -n R dynamix train`.
class RankExchange : public EnvExchange {
 public:
  explicit RankExchange(Ranks& ranks) : ranks_(ranks) {}
  std::size_t rank() const override { return ranks_.rank(); }
  std::size_t ranks() const override { return ranks_.size(); }
  std::vector<std::string> all_gather(const std::string& mine) override {
    return ranks_.all_gather(mine);
  }

 private:
  Ranks& ranks_;
};

/// A rank other than 0: checks the options as rank 0 does, agrees with it on the run, and follows
/// it; 2 when either refused the input (rank 0 says why).
int join_training(const boost::program_options::variables_map& values, TrainOptions& o,
                  Ranks& ranks, const std::string& definition);

}  // namespace dynamix
