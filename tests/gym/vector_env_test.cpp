// VectorEnv: seeds per environment, next-step autoreset, the same results for any thread count.
#include "gym/vector_env.h"

#include <doctest/doctest.h>

#include <barrier>
#include <string>
#include <thread>

#include "gym/env_knobs.h"

namespace dynamix {
namespace {

std::shared_ptr<const ScenarioSource> short_episodes() {
  return std::make_shared<FixedScenario>(std::make_shared<const Scenario>(
      load_scenario(kDefaultScenario, {"training.budget_epochs=1"})));
}

std::vector<std::vector<int>> actions_for(const VectorEnv& vector_env, int decision) {
  std::vector<std::vector<int>> actions(vector_env.size());
  for (std::size_t i = 0; i < actions.size(); ++i) {
    actions[i].assign(vector_env.env(i).workers(), static_cast<int>((decision + i) % 5));
  }
  return actions;
}

// Every step's rewards and flags, flattened.
std::vector<double> trajectory(std::size_t threads) {
  VectorEnv vector_env(short_episodes(), evaluation_env_options(), 3, threads);
  CHECK(vector_env.threads() == threads);
  std::vector<double> trace;
  for (const ResetResult& reset : vector_env.reset(100)) trace.push_back(reset.info.time_s);
  std::vector<StepResult> results;
  for (int decision = 0; decision < 30; ++decision) {
    vector_env.step(actions_for(vector_env, decision), results);
    for (const StepResult& step : results) {
      trace.insert(trace.end(), step.rewards.begin(), step.rewards.end());
      trace.insert(trace.end(), step.observation.values.begin(), step.observation.values.end());
      trace.push_back(step.terminated + 2 * step.truncated + 4 * step.info.autoreset);
    }
  }
  return trace;
}

TEST_CASE("VectorEnv gives identical results for 1, 2 and 3 threads") {
  const std::vector<double> one = trajectory(1);
  CHECK(trajectory(2) == one);
  CHECK(trajectory(3) == one);
}

TEST_CASE("Environment i's episode e uses seed + i + e·M, reset on the step after it ended") {
  const std::size_t m = 2;
  VectorEnv vector_env(short_episodes(), evaluation_env_options(), m, 2);
  const std::vector<ResetResult> resets = vector_env.reset(50);
  BatchSizeEnv reference(short_episodes(), evaluation_env_options());
  CHECK(resets[1].observation.values == reference.reset(51).observation.values);

  std::vector<StepResult> results;
  std::vector<bool> ended(m, false);
  std::vector<std::uint64_t> episode(m, 0);
  int episodes_checked = 0;
  for (int decision = 0; decision < 40; ++decision) {
    const auto actions = actions_for(vector_env, decision);
    vector_env.step(actions, results);
    for (std::size_t i = 0; i < m; ++i) {
      if (ended[i]) {
        CHECK(results[i].info.autoreset);
        CHECK_FALSE(results[i].terminated);
        CHECK_FALSE(results[i].truncated);
        for (float reward : results[i].rewards) CHECK(reward == 0);
        ++episode[i];
        CHECK(results[i].observation.values ==
              reference.reset(50 + i + episode[i] * m).observation.values);
        ++episodes_checked;
      } else {
        CHECK_FALSE(results[i].info.autoreset);
      }
      ended[i] = results[i].terminated || results[i].truncated;
    }
  }
  CHECK(episodes_checked >= 4);
}

TEST_CASE("VectorEnv misuse is an EnvError naming the environment") {
  VectorEnv vector_env(short_episodes(), evaluation_env_options(), 2, 2);
  CHECK_THROWS_WITH_AS(vector_env.step(actions_for(vector_env, 0)),
                       "VectorEnv::step: call reset(seed) first", EnvError);
  vector_env.reset(1);
  CHECK_THROWS_WITH_AS(vector_env.step(std::vector<std::vector<int>>(3)),
                       "VectorEnv::step: expected 2 action vectors (one per environment), found 3",
                       EnvError);
  auto actions = actions_for(vector_env, 0);
  actions[1].pop_back();
  CHECK_THROWS_WITH_AS(vector_env.step(actions),
                       "environment 1: step: expected 8 action indices (one per worker), found 7",
                       EnvError);
  CHECK_THROWS_AS(VectorEnv(short_episodes(), evaluation_env_options(), 0), EnvError);
}

}  // namespace
}  // namespace dynamix

namespace dynamix {
namespace {

/// Processes as threads: all_gather through shared slots and a barrier.
class ThreadExchange : public EnvExchange {
 public:
  struct Board {
    explicit Board(std::size_t ranks) : slots(ranks), barrier(static_cast<std::ptrdiff_t>(ranks)) {}
    std::vector<std::string> slots;
    std::barrier<> barrier;
  };
  ThreadExchange(Board& board, std::size_t rank) : board_(board), rank_(rank) {}
  std::size_t rank() const override { return rank_; }
  std::size_t ranks() const override { return board_.slots.size(); }
  std::vector<std::string> all_gather(const std::string& mine) override {
    board_.slots[rank_] = mine;
    board_.barrier.arrive_and_wait();
    std::vector<std::string> all = board_.slots;
    board_.barrier.arrive_and_wait();
    return all;
  }

 private:
  Board& board_;
  std::size_t rank_;
};

/// Chooses what shared_trajectory's caller would pass: (decision + i) mod 5 for each worker of
/// environment i; counts its calls.
class CountingSource : public ActionSource {
 public:
  CountingSource(const std::vector<std::size_t>& workers, int decision)
      : workers_(workers), decision_(decision), calls_(workers.size()) {}
  void choose(std::size_t i, std::vector<int>& actions) override {
    actions.assign(workers_[i], static_cast<int>((static_cast<std::size_t>(decision_) + i) % 5));
    ++calls_[i];
  }
  const std::vector<int>& calls() const { return calls_; }

 private:
  const std::vector<std::size_t>& workers_;
  int decision_;
  std::vector<int> calls_;
};

/// Every result's observation, rewards, flags and times over 30 decisions of M = 5
/// environments, as the process of `exchange` (or a lone process) sees them; with `chosen`, the
/// actions come from an ActionSource on the stepping threads.
std::vector<double> shared_trajectory(EnvExchange* exchange, bool chosen = false,
                                      std::size_t threads = 1) {
  VectorEnv vector_env(short_episodes(), evaluation_env_options(), 5, threads, exchange);
  std::vector<double> trace;
  std::vector<std::size_t> workers;
  for (const ResetResult& reset : vector_env.reset(100)) {
    trace.push_back(reset.info.time_s);
    workers.push_back(reset.observation.workers);
  }
  std::vector<StepResult> results;
  for (int decision = 0; decision < 30; ++decision) {
    std::vector<std::vector<int>> actions(workers.size());
    if (chosen) {
      CountingSource source(workers, decision);
      vector_env.step(source, actions, results);
      CHECK(source.calls() == std::vector<int>(workers.size(), 1));
    } else {
      for (std::size_t i = 0; i < actions.size(); ++i)
        actions[i].assign(workers[i], static_cast<int>((decision + i) % 5));
      vector_env.step(actions, results);
    }
    for (std::size_t i = 0; i < results.size(); ++i) {
      const StepResult& step = results[i];
      workers[i] = step.observation.workers;
      trace.insert(trace.end(), step.rewards.begin(), step.rewards.end());
      trace.insert(trace.end(), step.observation.values.begin(), step.observation.values.end());
      trace.insert(trace.end(), step.info.batches.begin(), step.info.batches.end());
      trace.push_back(step.terminated + 2 * step.truncated + 4 * step.info.autoreset);
      trace.push_back(step.info.time_s + step.info.window_s + step.info.epochs);
      trace.push_back(step.info.time_to_target_s.value_or(-1));
    }
  }
  return trace;
}

}  // namespace

TEST_CASE(
    "A VectorEnv spread over 2 or 3 processes gives every process the lone process's results") {
  const std::vector<double> alone = shared_trajectory(nullptr);
  for (const std::size_t ranks : {std::size_t{2}, std::size_t{3}, std::size_t{7}}) {
    ThreadExchange::Board board(ranks);
    std::vector<std::vector<double>> seen(ranks);
    std::vector<std::thread> processes;
    for (std::size_t r = 0; r < ranks; ++r) {
      processes.emplace_back([&, r] {
        ThreadExchange exchange(board, r);
        seen[r] = shared_trajectory(&exchange);
      });
    }
    for (std::thread& process : processes) process.join();
    for (std::size_t r = 0; r < ranks; ++r) {
      INFO(ranks << " processes, rank " << r);
      CHECK(seen[r] == alone);
    }
  }
}

TEST_CASE("Actions chosen on the stepping threads give the results of actions passed in") {
  const std::vector<double> passed = shared_trajectory(nullptr);
  CHECK(shared_trajectory(nullptr, true, 1) == passed);
  CHECK(shared_trajectory(nullptr, true, 3) == passed);
  // Spread over processes, each chooses every environment's actions: its own where it steps
  // them, the others' on its own thread.
  ThreadExchange::Board board(2);
  std::vector<std::vector<double>> seen(2);
  std::vector<std::thread> processes;
  for (std::size_t r = 0; r < 2; ++r) {
    processes.emplace_back([&, r] {
      ThreadExchange exchange(board, r);
      seen[r] = shared_trajectory(&exchange, true, 2);
    });
  }
  for (std::thread& process : processes) process.join();
  CHECK(seen[0] == passed);
  CHECK(seen[1] == passed);
}

TEST_CASE("A spread VectorEnv throws the same error on every process, naming the environment") {
  ThreadExchange::Board board(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> processes;
  for (std::size_t r = 0; r < 2; ++r) {
    processes.emplace_back([&, r] {
      ThreadExchange exchange(board, r);
      VectorEnv vector_env(short_episodes(), evaluation_env_options(), 4, 1, &exchange);
      const std::vector<ResetResult> resets = vector_env.reset(1);
      std::vector<std::vector<int>> actions(resets.size());
      for (std::size_t i = 0; i < resets.size(); ++i)
        actions[i].assign(resets[i].observation.workers, 0);
      actions[3].push_back(0);  // one action too many for environment 3, on process 1
      try {
        vector_env.step(actions);
      } catch (const EnvError& error) {
        errors[r] = error.what();
      }
    });
  }
  for (std::thread& process : processes) process.join();
  CHECK(errors[0].starts_with("environment 3: "));
  CHECK(errors[1] == errors[0]);
}

}  // namespace dynamix
