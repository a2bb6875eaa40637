// VectorEnv: a persistent thread pool steps independent environments; each environment's seeds
// depend only on its index, so results depend neither on the thread count nor, with an
// exchange, on how many processes share the environments.
#include "gym/vector_env.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>

#include "sim/core/check.h"

namespace dynamix {

/// Runs task(i) for each index given, on its threads and the caller's, blocking until all are
/// done.
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

  /// The threads take the indices in the order given.
  void run(std::span<const std::size_t> indices, Task task, void* context) {
    const std::size_t tasks = indices.size();
    errors_.assign(tasks == 0 ? 0 : *std::max_element(indices.begin(), indices.end()) + 1, nullptr);
    order_ = indices;
    if (workers_.empty()) {
      for (std::size_t i = 0; i < tasks; ++i) run_one(task, context, order_[i]);
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

  void drain() {
    for (std::size_t i = next_.fetch_add(1); i < tasks_; i = next_.fetch_add(1)) {
      run_one(task_, context_, order_[i]);
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

/// Results in bytes between processes of one build (same layout, same endianness).
class Writer {
 public:
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  template <typename T>
  void put(const std::vector<T>& values) {
    put(values.size());
    for (const T& value : values) put(value);
  }
  void put(const std::vector<bool>& values) {
    put(values.size());
    for (const bool value : values) put(value);
  }
  void put(const std::optional<double>& value) {
    put(value.has_value());
    put(value.value_or(0.0));
  }
  void put(const std::string& text) {
    put(text.size());
    bytes_ += text;
  }
  template <typename... T>
  void operator()(const T&... values) {
    (put(values), ...);
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  template <typename T>
  void get(T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    DYNAMIX_CHECK(at_ + sizeof value <= bytes_.size(), "a VectorEnv exchange cut short");
    std::memcpy(&value, bytes_.data() + at_, sizeof value);
    at_ += sizeof value;
  }
  template <typename T>
  void get(std::vector<T>& values) {
    values.resize(size());
    for (T& value : values) get(value);
  }
  void get(std::vector<bool>& values) {
    values.resize(size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      bool value = false;
      get(value);
      values[i] = value;
    }
  }
  void get(std::optional<double>& value) {
    bool present = false;
    double number = 0;
    get(present);
    get(number);
    value = present ? std::optional(number) : std::nullopt;
  }
  void get(std::string& text) {
    const std::size_t length = size();
    DYNAMIX_CHECK(at_ + length <= bytes_.size(), "a VectorEnv exchange cut short");
    text.assign(bytes_.substr(at_, length));
    at_ += length;
  }
  template <typename... T>
  void operator()(T&... values) {
    (get(values), ...);
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  std::size_t size() {
    std::size_t n = 0;
    get(n);
    DYNAMIX_CHECK(n <= bytes_.size() - at_, "a VectorEnv exchange cut short");
    return n;
  }

  std::string_view bytes_;
  std::size_t at_ = 0;
};

/// The fields of a ResetResult or StepResult an exchange carries, listed once for the Writer
/// (a const result) and the Reader.
template <typename Archive, typename Result>
void carry(Archive& archive, Result& result) {
  auto& observation = result.observation;
  archive(observation.workers, observation.features, observation.values);
  if constexpr (requires { result.rewards; }) {
    archive(result.rewards, result.terminated, result.truncated);
  }
  auto& info = result.info;
  archive(info.batches, info.clamped, info.decision, info.time_s, info.window_s, info.time_scale_s,
          info.iteration, info.validation_accuracy, info.epochs, info.time_to_target_s,
          info.autoreset);
}

/// What a process's block of an exchange starts with.
enum class Outcome : char { kResults, kEnvError, kFailure };

[[noreturn]] void rethrow_for(std::size_t i) {
  try {
    throw;
  } catch (const EnvError& error) {
    throw EnvError("environment " + std::to_string(i) + ": " + error.what());
  }
}

}  // namespace

VectorEnv::VectorEnv(const std::shared_ptr<const ScenarioSource>& scenarios,
                     const EnvOptions& options, std::size_t environments, std::size_t threads,
                     EnvExchange* exchange)
    : exchange_(exchange), end_owned_(environments) {
  if (environments == 0) throw EnvError("VectorEnv: expected at least one environment, found 0");
  if (exchange_) {
    DYNAMIX_CHECK(exchange_->rank() < exchange_->ranks(),
                  "rank " << exchange_->rank() << " of " << exchange_->ranks());
    first_owned_ = environments * exchange_->rank() / exchange_->ranks();
    end_owned_ = environments * (exchange_->rank() + 1) / exchange_->ranks();
  }
  for (std::size_t i = 0; i < environments; ++i) {
    envs_.push_back(std::make_unique<BatchSizeEnv>(scenarios, options));
  }
  if (threads == 0) threads = std::max<std::size_t>(1, std::thread::hardware_concurrency());
  pool_ = std::make_unique<Pool>(std::min(threads, environments));
  next_seed_.assign(environments, 0);
  needs_reset_.assign(environments, 0);
  last_step_s_.assign(environments, 0.0);
}

VectorEnv::~VectorEnv() = default;

std::size_t VectorEnv::threads() const { return pool_->threads(); }

template <typename Result>
void VectorEnv::run_shared(std::span<const std::size_t> indices, void (*task)(void*, std::size_t),
                           void* context, std::vector<Result>& results) {
  if (!exchange_) {
    pool_->run(indices, task, context);
    return;
  }
  // A failure is everyone's: a process that threw alone would leave the others waiting.
  Writer mine;
  try {
    pool_->run(indices, task, context);
    mine.put(Outcome::kResults);
    for (std::size_t i = first_owned_; i < end_owned_; ++i) carry(mine, std::as_const(results[i]));
  } catch (const EnvError& error) {
    mine = Writer();
    mine.put(Outcome::kEnvError);
    mine.put(std::string(error.what()));
  } catch (const std::exception& error) {
    mine = Writer();
    mine.put(Outcome::kFailure);
    mine.put(std::string(error.what()));
  }
  const std::vector<std::string> blocks = exchange_->all_gather(mine.take());
  DYNAMIX_CHECK(blocks.size() == exchange_->ranks(),
                blocks.size() << " blocks from " << exchange_->ranks() << " processes");
  const std::size_t m = envs_.size();
  for (std::size_t rank = 0; rank < blocks.size(); ++rank) {
    Reader reader(blocks[rank]);
    Outcome outcome{};
    reader.get(outcome);
    if (outcome == Outcome::kResults) {
      if (rank == exchange_->rank()) continue;
      for (std::size_t i = m * rank / blocks.size(); i < m * (rank + 1) / blocks.size(); ++i) {
        carry(reader, results[i]);
      }
      DYNAMIX_CHECK(reader.done(), "process " << rank << " sent more results than its block");
      continue;
    }
    std::string message;
    reader.get(message);
    if (outcome == Outcome::kEnvError) throw EnvError(message);
    throw std::runtime_error("process " + std::to_string(rank) + ": " + message);
  }
}

std::vector<ResetResult> VectorEnv::reset(std::uint64_t seed, const ResetOptions& options) {
  const std::size_t m = envs_.size();
  std::vector<ResetResult> results(m);
  for (std::size_t i = 0; i < m; ++i) next_seed_[i] = seed + i;
  struct Context {
    VectorEnv* self;
    std::vector<ResetResult>* results;
    const ResetOptions* options;
  } context{this, &results, &options};
  order_.resize(end_owned_ - first_owned_);
  std::iota(order_.begin(), order_.end(), first_owned_);
  run_shared(
      order_,
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
      &context, results);
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
  // The slowest first (by its last step's time, then by cluster size): the threads take
  // environments in this order, and a slow one taken last would leave the others idle until it
  // is done. Each environment's result does not depend on the order.
  order_.resize(end_owned_ - first_owned_);
  std::iota(order_.begin(), order_.end(), first_owned_);
  std::stable_sort(order_.begin(), order_.end(), [this](std::size_t a, std::size_t b) {
    if (last_step_s_[a] != last_step_s_[b]) return last_step_s_[a] > last_step_s_[b];
    return envs_[a]->workers() > envs_[b]->workers();
  });
  run_shared(
      order_, [](void* self, std::size_t i) { static_cast<VectorEnv*>(self)->step_one(i); }, this,
      out);
}

void VectorEnv::step(ActionSource& source, std::vector<std::vector<int>>& actions,
                     std::vector<StepResult>& out) {
  if (!was_reset_) throw EnvError("VectorEnv::step: call reset(seed) first");
  actions.resize(envs_.size());
  for (std::size_t i = 0; i < envs_.size(); ++i) {
    if (i < first_owned_ || i >= end_owned_) source.choose(i, actions[i]);
  }
  struct Choosing {
    VectorEnv& self;
    ~Choosing() {
      self.source_ = nullptr;
      self.chosen_ = nullptr;
    }
  } choosing{*this};
  source_ = &source;
  chosen_ = &actions;
  step(actions, out);
}

void VectorEnv::step_one(std::size_t i) {
  const auto began = std::chrono::steady_clock::now();
  step_choosing(i);
  last_step_s_[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
}

void VectorEnv::step_choosing(std::size_t i) {
  BatchSizeEnv& env = *envs_[i];
  StepResult& out = (*out_)[i];
  if (source_) source_->choose(i, (*chosen_)[i]);
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
