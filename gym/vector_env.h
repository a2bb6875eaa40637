// VectorEnv: M BatchSizeEnvs stepped on threads, seeds seed+i, next-step autoreset; results are
// identical for any thread count.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gym/batch_size_env.h"

namespace dynamix {

/// The processes one VectorEnv is spread over (`mpirun -n R dynamix train`): each steps its own
/// block of the environments, and every process sees every environment's result.
class EnvExchange {
 public:
  virtual ~EnvExchange() = default;
  /// This process, 0 … ranks() − 1.
  virtual std::size_t rank() const = 0;
  virtual std::size_t ranks() const = 0;
  /// Every process's `mine`, in rank order, on every process (each process calls it).
  virtual std::vector<std::string> all_gather(const std::string& mine) = 0;
};

/// Chooses environments' actions where each is stepped: rows of different environments are
/// independent, so the choosing spreads over the stepping threads.
class ActionSource {
 public:
  virtual ~ActionSource() = default;
  /// Environment i's actions for its current observation, into `actions` (none for one awaiting
  /// its reset). Called for different environments on several threads at once.
  virtual void choose(std::size_t i, std::vector<int>& actions) = 0;
};

class VectorEnv {
 public:
  /// `threads` = 0 uses one thread per core (at most M). Throws EnvError for M = 0 or invalid
  /// options. With an `exchange` (which must outlive the VectorEnv), this process steps only
  /// environments [M·r/R, M·(r+1)/R) of rank r of R, and reset() and step() return every
  /// environment's result, the same bytes as one process stepping all of them.
  VectorEnv(const std::shared_ptr<const ScenarioSource>& scenarios, const EnvOptions& options,
            std::size_t environments, std::size_t threads = 0, EnvExchange* exchange = nullptr);
  ~VectorEnv();
  VectorEnv(const VectorEnv&) = delete;
  VectorEnv& operator=(const VectorEnv&) = delete;

  std::size_t size() const { return envs_.size(); }
  /// Threads stepping the environments (the caller's included).
  std::size_t threads() const;
  BatchSizeEnv& env(std::size_t i) { return *envs_[i]; }
  const BatchSizeEnv& env(std::size_t i) const { return *envs_[i]; }
  /// Resets environment i with seed + i and `options`; its episode e (counting from this reset)
  /// uses seed + i + e·M, whatever the thread count. Autoresets use the default options.
  std::vector<ResetResult> reset(std::uint64_t seed, const ResetOptions& options = {});
  /// Steps every environment with its action vector. An environment whose episode ended on
  /// the previous step resets instead (with the next seed of its own sequence), ignores its
  /// actions and reports info.autoreset = true, zero rewards and no termination (Gymnasium
  /// >= 1.0 next-step autoreset). EnvError (naming the environment) for misuse; with an
  /// exchange, every process throws the error of the lowest failing environment.
  std::vector<StepResult> step(std::span<const std::vector<int>> actions);
  /// The same into `out` (resized to M), reusing its storage.
  void step(std::span<const std::vector<int>> actions, std::vector<StepResult>& out);
  /// As above, each environment's actions chosen by `source` into actions[i] (resized to M) on
  /// the thread that then steps it; with an exchange, those of other processes' environments on
  /// the caller's thread first.
  void step(ActionSource& source, std::vector<std::vector<int>>& actions,
            std::vector<StepResult>& out);

 private:
  class Pool;
  /// Environment i's actions (from a source) and step, timed into last_step_s_.
  void step_one(std::size_t i);
  void step_choosing(std::size_t i);
  /// Runs task(i) for each i of `indices` on the pool; with an exchange, then shares the
  /// results (written by `write`, read into every other environment's slot by `read`) and
  /// throws the first failure of any process on all of them.
  template <typename Result>
  void run_shared(std::span<const std::size_t> indices, void (*task)(void*, std::size_t),
                  void* context, std::vector<Result>& results);

  std::vector<std::unique_ptr<BatchSizeEnv>> envs_;
  std::vector<std::uint64_t> next_seed_;
  /// Written by pool threads, one element each: not vector<bool>, whose bits share words.
  std::vector<std::uint8_t> needs_reset_;
  /// Seconds each environment's last step took here: only the order threads take them in.
  std::vector<double> last_step_s_;
  std::unique_ptr<Pool> pool_;
  EnvExchange* exchange_ = nullptr;
  /// The environments this process steps: [first_owned_, end_owned_).
  std::size_t first_owned_ = 0;
  std::size_t end_owned_ = 0;
  bool was_reset_ = false;
  /// The order step() hands environments to the threads.
  std::vector<std::size_t> order_;
  std::span<const std::vector<int>> actions_;
  std::vector<StepResult>* out_ = nullptr;
  /// While step(source, …) runs: the source and where its choices go.
  ActionSource* source_ = nullptr;
  std::vector<std::vector<int>>* chosen_ = nullptr;
};

}  // namespace dynamix
