// VectorEnv: a persistent thread pool steps independent environments; each environment's seeds
// depend only on its index, so results do not depend on the thread count.
#include "gym/vector_env.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>

namespace dynamix {

/// Runs task(0..n-1) on its threads and the caller's, blocking until all are done.
class VectorEnv::Pool {
 public:
  using Task = void (*)(void* context, std::size_t index);

  explicit Pool(std::size_t threads) {
    for (std::size_t t = 1; t < threads; ++t) workers_.emplace_back([this] { serve(); });
  }

  ~Pool() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
  }

  std::size_t threads() const { return workers_.size() + 1; }

  /// Tasks are taken in `order` (a permutation of 0..tasks-1) when given, else in index order.
  void run(std::size_t tasks, Task task, void* context, std::span<const std::size_t> order = {}) {
    errors_.assign(tasks, nullptr);
    order_ = order;
    if (workers_.empty()) {
      for (std::size_t i = 0; i < tasks; ++i) run_one(task, context, index_of(i));
    } else {
      {
        std::lock_guard lock(mutex_);
        task_ = task;
        context_ = context;
        tasks_ = tasks;
        next_.store(0);
        busy_ = workers_.size();
        ++generation_;
      }
      wake_.notify_all();
      drain();
      std::unique_lock lock(mutex_);
      done_.wait(lock, [this] { return busy_ == 0; });
    }
    // The lowest failing index, so the error does not depend on scheduling.
    for (const std::exception_ptr& error : errors_) {
      if (error) std::rethrow_exception(error);
    }
  }

 private:
  void run_one(Task task, void* context, std::size_t index) {
    try {
      task(context, index);
    } catch (...) {
      errors_[index] = std::current_exception();
    }
  }

  std::size_t index_of(std::size_t taken) const { return order_.empty() ? taken : order_[taken]; }

  void drain() {
    for (std::size_t i = next_.fetch_add(1); i < tasks_; i = next_.fetch_add(1)) {
      run_one(task_, context_, index_of(i));
    }
  }

  void serve() {
    std::uint64_t seen = 0;
    while (true) {
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
      }
      drain();
      {
        std::lock_guard lock(mutex_);
        --busy_;
      }
      done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::uint64_t generation_ = 0;
  std::size_t busy_ = 0;
  bool stopping_ = false;
  Task task_ = nullptr;
  void* context_ = nullptr;
  std::size_t tasks_ = 0;
  std::atomic<std::size_t> next_{0};
  std::vector<std::exception_ptr> errors_;
  std::span<const std::size_t> order_;
};

namespace {

[[noreturn]] void rethrow_for(std::size_t i) {
  try {
    throw;
  } catch (const EnvError& error) {
    throw EnvError("environment " + std::to_string(i) + ": " + error.what());
  }
}

}  // namespace

VectorEnv::VectorEnv(std::shared_ptr<const ScenarioSource> scenarios, EnvOptions options,
                     std::size_t environments, std::size_t threads) {
  if (environments == 0) throw EnvError("VectorEnv: expected at least one environment, found 0");
  for (std::size_t i = 0; i < environments; ++i) {
    envs_.push_back(std::make_unique<BatchSizeEnv>(scenarios, options));
  }
  if (threads == 0) threads = std::max<std::size_t>(1, std::thread::hardware_concurrency());
  pool_ = std::make_unique<Pool>(std::min(threads, environments));
  next_seed_.assign(environments, 0);
  needs_reset_.assign(environments, 0);
}

VectorEnv::~VectorEnv() = default;

std::size_t VectorEnv::threads() const { return pool_->threads(); }

std::vector<ResetResult> VectorEnv::reset(std::uint64_t seed, const ResetOptions& options) {
  const std::size_t m = envs_.size();
  std::vector<ResetResult> results(m);
  for (std::size_t i = 0; i < m; ++i) next_seed_[i] = seed + i;
  struct Context {
    VectorEnv* self;
    std::vector<ResetResult>* results;
    const ResetOptions* options;
  } context{this, &results, &options};
  pool_->run(
      m,
      [](void* raw, std::size_t i) {
        auto& c = *static_cast<Context*>(raw);
        try {
          (*c.results)[i] = c.self->envs_[i]->reset(c.self->next_seed_[i], *c.options);
        } catch (const EnvError&) {
          rethrow_for(i);
        }
        c.self->next_seed_[i] += c.self->envs_.size();
        c.self->needs_reset_[i] = c.self->envs_[i]->episode_over() ? 1 : 0;
      },
      &context);
  was_reset_ = true;
  return results;
}

std::vector<StepResult> VectorEnv::step(std::span<const std::vector<int>> actions) {
  std::vector<StepResult> out;
  step(actions, out);
  return out;
}

void VectorEnv::step(std::span<const std::vector<int>> actions, std::vector<StepResult>& out) {
  if (!was_reset_) throw EnvError("VectorEnv::step: call reset(seed) first");
  if (actions.size() != envs_.size()) {
    throw EnvError("VectorEnv::step: expected " + std::to_string(envs_.size()) +
                   " action vectors (one per environment), found " +
                   std::to_string(actions.size()));
  }
  out.resize(envs_.size());
  actions_ = actions;
  out_ = &out;
  // Largest clusters first: the threads take environments in this order, and a large one taken
  // last would leave the others idle until it is done. Each environment's result does not
  // depend on the order.
  order_.resize(envs_.size());
  std::iota(order_.begin(), order_.end(), std::size_t{0});
  std::stable_sort(order_.begin(), order_.end(), [this](std::size_t a, std::size_t b) {
    return envs_[a]->workers() > envs_[b]->workers();
  });
  pool_->run(
      envs_.size(), [](void* self, std::size_t i) { static_cast<VectorEnv*>(self)->step_one(i); },
      this, order_);
}

void VectorEnv::step_one(std::size_t i) {
  BatchSizeEnv& env = *envs_[i];
  StepResult& out = (*out_)[i];
  try {
    if (needs_reset_[i]) {
      ResetResult reset = env.reset(next_seed_[i]);
      next_seed_[i] += envs_.size();
      out.observation = std::move(reset.observation);
      out.rewards.assign(env.workers(), 0.0f);
      out.terminated = false;
      out.truncated = false;
      out.info = std::move(reset.info);
      out.info.autoreset = true;
      needs_reset_[i] = env.episode_over() ? 1 : 0;
      return;
    }
    env.step(actions_[i], out);
  } catch (const EnvError&) {
    rethrow_for(i);
  }
  needs_reset_[i] = out.terminated || out.truncated ? 1 : 0;
}

}  // namespace dynamix
