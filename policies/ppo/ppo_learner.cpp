// The PPO learner in LibTorch: actor-critic MLPs, sampling, clipped updates, checkpoints.
#include "policies/ppo/ppo_learner.h"

#include <torch/torch.h>

#include <cmath>
#include <numeric>
#include <sstream>

#include "policies/export/torch_error.h"
#include "policies/ppo/categorical.h"
#include "policies/ppo/dense_network.h"
#include "sim/core/check.h"
#include "sim/core/random.h"
#include "sim/io/durable_file.h"
#include "sim/io/input_error.h"

namespace dynamix {

namespace {

struct ActorCritic : torch::nn::Module {
  ActorCritic(std::size_t features, std::size_t actions, const std::vector<int>& hidden) {
    actor = make_mlp("actor", features, hidden, actions);
    critic = make_mlp("critic", features, hidden, 1);
  }

  std::vector<torch::nn::Linear> make_mlp(const std::string& name, std::size_t inputs,
                                          const std::vector<int>& hidden, std::size_t outputs) {
    std::vector<torch::nn::Linear> layers;
    std::int64_t width = static_cast<std::int64_t>(inputs);
    for (std::size_t i = 0; i <= hidden.size(); ++i) {
      const std::int64_t next = i < hidden.size() ? hidden[i] : static_cast<std::int64_t>(outputs);
      layers.push_back(register_module(name + std::to_string(i), torch::nn::Linear(width, next)));
      width = next;
    }
    return layers;
  }

  static torch::Tensor run(const std::vector<torch::nn::Linear>& layers, torch::Tensor x) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      // addmm(bias, x, Wᵀ) is what Linear computes for 2-D input; the exported module uses it too.
      x = torch::addmm(layers[i]->bias, x, layers[i]->weight.t());
      if (i + 1 < layers.size()) x = torch::tanh(x);
    }
    return x;
  }

  torch::Tensor logits(const torch::Tensor& x) const { return run(actor, x); }
  torch::Tensor value(const torch::Tensor& x) const { return run(critic, x).squeeze(1); }

  std::vector<torch::nn::Linear> actor;
  std::vector<torch::nn::Linear> critic;
};

// Orthogonal initialization as torch.nn.init.orthogonal_, drawn from our own stream so the
// weights depend on the seed alone, not on LibTorch's global generator.
void orthogonal(const torch::Tensor& weight, double gain, Rng& rng) {
  const std::int64_t rows = weight.size(0);
  const std::int64_t cols = weight.size(1);
  torch::Tensor normal = torch::empty({rows, cols}, torch::kFloat64);
  double* data = normal.data_ptr<double>();
  for (std::int64_t i = 0; i < rows * cols; ++i) data[i] = rng.normal();
  const bool wide = rows < cols;
  if (wide) normal = normal.t();
  auto [q, r] = torch::linalg_qr(normal);
  q = q * torch::sign(torch::diagonal(r));
  if (wide) q = q.t();
  weight.copy_(q * gain);
}

void initialize(ActorCritic& model, std::uint64_t seed) {
  torch::NoGradGuard no_grad;
  Rng rng(seed, stream_id("ppo.init"));
  auto init = [&](std::vector<torch::nn::Linear>& layers, double head_gain) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      orthogonal(layers[i]->weight, i + 1 < layers.size() ? std::sqrt(2.0) : head_gain, rng);
      layers[i]->bias.zero_();
    }
  };
  init(model.actor, 0.01);
  init(model.critic, 1.0);
}

torch::Tensor rows_of(std::span<const float> values, std::size_t features) {
  DYNAMIX_CHECK(values.size() % features == 0,
                values.size() << " values are not rows of " << features << " features");
  return torch::from_blob(
      const_cast<float*>(values.data()),
      {static_cast<std::int64_t>(values.size() / features), static_cast<std::int64_t>(features)},
      torch::kFloat32);
}

std::string state_key(const torch::Tensor& parameter) {
  return c10::guts::to_string(parameter.unsafeGetTensorImpl());
}

std::string parameter_entry(std::size_t index) { return "parameter" + std::to_string(index); }

bool finite(const torch::Tensor& tensor) { return torch::isfinite(tensor).all().item<bool>(); }

/// A rollout's arrays as tensors over their memory (no copies but the actions').
struct RolloutTensors {
  torch::Tensor observations;
  torch::Tensor actions;
  torch::Tensor old_log_probs;
  torch::Tensor old_values;
  torch::Tensor advantages;
  torch::Tensor returns;
};

RolloutTensors tensors_of(const Rollout& rollout, std::size_t features) {
  const auto n = static_cast<std::int64_t>(rollout.size());
  DYNAMIX_CHECK(
      rollout.observations.size() == rollout.size() * features &&
          rollout.log_probs.size() == rollout.size() && rollout.values.size() == rollout.size() &&
          rollout.advantages.size() == rollout.size() && rollout.returns.size() == rollout.size(),
      "rollout arrays of different lengths");
  auto tensor = [n](const std::vector<float>& v) {
    return torch::from_blob(const_cast<float*>(v.data()), {n}, torch::kFloat32);
  };
  return {.observations = rows_of(rollout.observations, features),
          .actions = torch::from_blob(const_cast<int*>(rollout.actions.data()), {n}, torch::kInt32)
                         .to(torch::kInt64),
          .old_log_probs = tensor(rollout.log_probs),
          .old_values = tensor(rollout.values),
          .advantages = tensor(rollout.advantages),
          .returns = tensor(rollout.returns)};
}

/// The critic's loss on a minibatch, clipped around the rollout's values when the options say.
torch::Tensor value_loss(const torch::Tensor& new_values, const RolloutTensors& rollout,
                         const torch::Tensor& index, const PpoOptions& o) {
  const torch::Tensor target = rollout.returns.index_select(0, index);
  torch::Tensor loss = (new_values - target).pow(2);
  if (o.clip_value_loss) {
    const torch::Tensor old = rollout.old_values.index_select(0, index);
    const torch::Tensor clipped = old + torch::clamp(new_values - old, -o.clip_range, o.clip_range);
    loss = torch::max(loss, (clipped - target).pow(2));
  }
  return 0.5 * loss.mean();
}

/// The clipped surrogate on a minibatch, its advantages normalized when the options say.
torch::Tensor policy_loss(const torch::Tensor& ratio, const RolloutTensors& rollout,
                          const torch::Tensor& index, const PpoOptions& o) {
  torch::Tensor advantage = rollout.advantages.index_select(0, index);
  if (o.normalize_advantages && advantage.size(0) > 1) {
    advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8);
  }
  return torch::max(-advantage * ratio,
                    -advantage * torch::clamp(ratio, 1 - o.clip_range, 1 + o.clip_range))
      .mean();
}

/// Sums over an update's minibatches.
void add(UpdateLosses& sum, const UpdateLosses& step) {
  sum.policy_loss += step.policy_loss;
  sum.value_loss += step.value_loss;
  sum.entropy += step.entropy;
  sum.approx_kl += step.approx_kl;
  sum.clip_fraction += step.clip_fraction;
  sum.gradient_steps += step.gradient_steps;
}

/// A network's layers as plain numbers, input first.
std::vector<DenseLayer> layers_of(const std::vector<torch::nn::Linear>& linears) {
  std::vector<DenseLayer> layers;
  for (const torch::nn::Linear& linear : linears) {
    const torch::Tensor w = linear->weight.detach().contiguous();
    const torch::Tensor b = linear->bias.detach().contiguous();
    DenseLayer layer;
    layer.outputs = static_cast<std::size_t>(w.size(0));
    layer.inputs = static_cast<std::size_t>(w.size(1));
    layer.weight.assign(w.data_ptr<float>(), w.data_ptr<float>() + w.numel());
    layer.bias.assign(b.data_ptr<float>(), b.data_ptr<float>() + b.numel());
    layers.push_back(std::move(layer));
  }
  return layers;
}

}  // namespace

struct PpoLearner::Impl {
  std::size_t features;
  std::size_t actions;
  PpoOptions options;
  std::shared_ptr<ActorCritic> model;
  std::unique_ptr<torch::optim::Adam> optimizer;
  /// The actor and the critic as they are now, for acting: rollouts run many small forward
  /// passes, which LibTorch's per-call overhead and libm's scalar tanh would dominate.
  DenseNetwork actor_forward;
  DenseNetwork critic_forward;
  ActScratch scratch;

  /// Copies the networks' current weights into the forward passes used for acting.
  void refresh_forward() {
    actor_forward = DenseNetwork(layers_of(model->actor));
    critic_forward = DenseNetwork(layers_of(model->critic));
  }

  /// One clipped-surrogate gradient step on the rollout's `rows`; its losses.
  UpdateLosses minibatch_step(const RolloutTensors& rollout, std::span<std::int64_t> rows);
};

PpoLearner::PpoLearner(std::size_t features, std::size_t actions, const PpoOptions& options,
                       std::optional<std::size_t> hold_action)
    : impl_(std::make_unique<Impl>()) {
  DYNAMIX_CHECK(features > 0 && actions > 0, features << " features, " << actions << " actions");
  validate(options);
  impl_->features = features;
  impl_->actions = actions;
  impl_->options = options;
  impl_->model = std::make_shared<ActorCritic>(features, actions, options.hidden_sizes);
  initialize(*impl_->model, options.seed);
  const double hold = options.initial_hold_probability;
  if (hold_action && actions > 1 && hold > 1.0 / static_cast<double>(actions)) {
    DYNAMIX_CHECK(*hold_action < actions && hold < 1,
                  "hold action " << *hold_action << ", probability " << hold);
    torch::NoGradGuard no_grad;
    const double others = (1 - hold) / static_cast<double>(actions - 1);
    impl_->model->actor.back()->bias[static_cast<std::int64_t>(*hold_action)].fill_(
        std::log(hold / others));
  }
  impl_->optimizer = std::make_unique<torch::optim::Adam>(
      impl_->model->parameters(),
      torch::optim::AdamOptions(options.learning_rate).eps(options.adam_epsilon));
  impl_->refresh_forward();
}

PpoLearner::~PpoLearner() = default;

std::size_t PpoLearner::features() const { return impl_->features; }
std::size_t PpoLearner::actions() const { return impl_->actions; }

void PpoLearner::act(std::span<const float> observations, std::span<const double> uniforms,
                     std::span<int> actions, std::span<float> log_probs, std::span<float> values) {
  act(observations, uniforms, actions, log_probs, values, impl_->scratch);
}

void PpoLearner::act(std::span<const float> observations, std::span<const double> uniforms,
                     std::span<int> actions, std::span<float> log_probs, std::span<float> values,
                     ActScratch& scratch) const {
  const std::size_t features = impl_->features;
  const std::size_t n = impl_->actions;
  DYNAMIX_CHECK(observations.size() % features == 0,
                observations.size() << " values are not rows of " << features << " features");
  const std::size_t rows = observations.size() / features;
  DYNAMIX_CHECK(uniforms.size() == rows && actions.size() == rows && log_probs.size() == rows &&
                    values.size() == rows,
                "outputs for " << rows << " rows");
  if (scratch.logits.size() < rows * n) scratch.logits.resize(rows * n);
  impl_->actor_forward.forward(observations, std::span(scratch.logits).first(rows * n),
                               scratch.actor);
  impl_->critic_forward.forward(observations, values, scratch.critic);
  for (std::size_t row = 0; row < rows; ++row) {
    const float* logits = scratch.logits.data() + row * n;
    // log π = l − max − log Σ exp(l − max), in double, as a log-softmax that cannot overflow.
    const double highest = *std::max_element(logits, logits + n);
    double sum = 0;
    for (std::size_t a = 0; a < n; ++a) sum += std::exp(static_cast<double>(logits[a]) - highest);
    const double log_sum = highest + std::log(sum);
    const double u = uniforms[row];
    double cumulative = 0;
    std::size_t chosen = n - 1;
    for (std::size_t a = 0; a < n; ++a) {
      cumulative += std::exp(static_cast<double>(logits[a]) - log_sum);
      if (u < cumulative) {
        chosen = a;
        break;
      }
    }
    actions[row] = static_cast<int>(chosen);
    log_probs[row] = static_cast<float>(static_cast<double>(logits[chosen]) - log_sum);
  }
}

void PpoLearner::values(std::span<const float> observations, std::span<float> values) {
  impl_->critic_forward.forward(observations, values, impl_->scratch.critic);
}

std::vector<float> PpoLearner::logits(std::span<const float> observations) {
  torch::NoGradGuard no_grad;
  const torch::Tensor l = impl_->model->logits(rows_of(observations, impl_->features)).contiguous();
  return std::vector<float>(l.data_ptr<float>(), l.data_ptr<float>() + l.numel());
}

UpdateLosses PpoLearner::Impl::minibatch_step(const RolloutTensors& rollout,
                                              std::span<std::int64_t> rows) {
  const PpoOptions& o = options;
  const torch::Tensor index =
      torch::from_blob(rows.data(), {static_cast<std::int64_t>(rows.size())}, torch::kInt64);
  const torch::Tensor observations = rollout.observations.index_select(0, index);
  const torch::Tensor logits = model->logits(observations);
  const torch::Tensor new_values = model->value(observations);
  const torch::Tensor new_log_probs =
      categorical::log_prob(logits, rollout.actions.index_select(0, index));
  const torch::Tensor entropy = categorical::entropy(logits).mean();
  const torch::Tensor log_ratio = new_log_probs - rollout.old_log_probs.index_select(0, index);
  const torch::Tensor ratio = log_ratio.exp();
  UpdateLosses step{.gradient_steps = 1};
  {
    torch::NoGradGuard no_grad;
    // Schulman's unbiased low-variance KL estimator (k3), as in the PPO reference code.
    step.approx_kl = ((ratio - 1) - log_ratio).mean().item<double>();
    step.clip_fraction =
        ((ratio - 1).abs() > o.clip_range).to(torch::kFloat32).mean().item<double>();
  }
  const torch::Tensor policy = policy_loss(ratio, rollout, index, o);
  const torch::Tensor value = value_loss(new_values, rollout, index, o);
  const torch::Tensor loss = policy - o.entropy_coef * entropy + o.value_coef * value;
  optimizer->zero_grad();
  loss.backward();
  torch::nn::utils::clip_grad_norm_(model->parameters(), o.max_grad_norm);
  optimizer->step();
  step.policy_loss = policy.item<double>();
  step.value_loss = value.item<double>();
  step.entropy = entropy.item<double>();
  return step;
}

UpdateLosses PpoLearner::update(const Rollout& rollout, double learning_rate, Rng& rng) {
  const PpoOptions& o = impl_->options;
  const RolloutTensors tensors = tensors_of(rollout, impl_->features);
  const auto n = static_cast<std::int64_t>(rollout.size());
  UpdateLosses losses;
  if (n == 0) return losses;
  for (auto& group : impl_->optimizer->param_groups()) {
    static_cast<torch::optim::AdamOptions&>(group.options()).lr(learning_rate);
  }
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  const std::int64_t minibatches = std::max(1, o.minibatches);
  for (int epoch = 0; epoch < o.epochs; ++epoch) {
    std::iota(order.begin(), order.end(), 0);
    for (std::size_t i = order.size(); i-- > 1;) std::swap(order[i], order[rng.below(i + 1)]);
    double epoch_kl = 0;
    int epoch_steps = 0;
    for (std::int64_t m = 0; m < minibatches; ++m) {
      const std::int64_t begin = n * m / minibatches;
      const std::int64_t end = n * (m + 1) / minibatches;
      if (end == begin) continue;
      const UpdateLosses step = impl_->minibatch_step(
          tensors, std::span(order).subspan(static_cast<std::size_t>(begin),
                                            static_cast<std::size_t>(end - begin)));
      add(losses, step);
      epoch_kl += step.approx_kl;
      ++epoch_steps;
    }
    if (o.target_kl > 0 && epoch_steps > 0 && epoch_kl / epoch_steps > o.target_kl) break;
  }
  if (losses.gradient_steps > 0) {
    const double steps = losses.gradient_steps;
    losses.policy_loss /= steps;
    losses.value_loss /= steps;
    losses.entropy /= steps;
    losses.approx_kl /= steps;
    losses.clip_fraction /= steps;
  }
  impl_->refresh_forward();
  return losses;
}

std::vector<DenseLayer> PpoLearner::actor_layers() const { return layers_of(impl_->model->actor); }

std::vector<float> PpoLearner::parameters() const {
  std::vector<float> out;
  for (const torch::Tensor& p : impl_->model->parameters()) {
    const torch::Tensor c = p.detach().contiguous();
    out.insert(out.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return out;
}

void PpoLearner::save(const std::filesystem::path& file, const CheckpointExtras& extras) const {
  // Serialized in memory, then written durably: LibTorch's file writer throws from its
  // destructor when a write fails (a full disk, a file-size limit), which ends the process.
  std::ostringstream bytes;
  try {
    torch::serialize::OutputArchive archive;
    torch::serialize::OutputArchive model;
    impl_->model->save(model);
    archive.write("model", model);
    // Adam's own save keys its state by tensor address, which differs run to run; by
    // parameter index the file depends on the training state alone.
    torch::serialize::OutputArchive adam;
    const auto& state = impl_->optimizer->state();
    const std::vector<torch::Tensor> parameters = impl_->model->parameters();
    for (std::size_t i = 0; i < parameters.size(); ++i) {
      const auto found = state.find(state_key(parameters[i]));
      if (found == state.end()) continue;
      const auto& moments = static_cast<const torch::optim::AdamParamState&>(*found->second);
      torch::serialize::OutputArchive entry;
      entry.write("step", c10::IValue(moments.step()));
      entry.write("exp_avg", moments.exp_avg(), true);
      entry.write("exp_avg_sq", moments.exp_avg_sq(), true);
      adam.write(parameter_entry(i), entry);
    }
    archive.write("adam", adam);
    c10::List<std::string> keys;
    c10::List<std::string> values;
    for (const auto& [key, value] : extras) {
      keys.push_back(key);
      values.push_back(value);
    }
    archive.write("extra_keys", c10::IValue(keys));
    archive.write("extra_values", c10::IValue(values));
    archive.save_to(bytes);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& error) {
    throw InputError(file.string(), 0, "", "a writable checkpoint path", torch_error_line(error));
  }
  write_durably(file, std::move(bytes).str());
}

namespace {

torch::serialize::InputArchive open_checkpoint(const std::filesystem::path& file) {
  if (!std::filesystem::exists(file)) {
    throw InputError(file.string(), 0, "", "a PPO checkpoint", "no such file");
  }
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(file.string());
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& error) {
    throw InputError(file.string(), 0, "", "a PPO checkpoint",
                     "an unreadable file (" + torch_error_line(error) + ")");
  }
  return archive;
}

}  // namespace

namespace {

using NamedParameters = torch::OrderedDict<std::string, torch::Tensor>;
using AdamState =
    ska::flat_hash_map<std::string, std::unique_ptr<torch::optim::OptimizerParamState>>;

/// Refuses loaded parameters of other shapes than the current ones, or not finite.
void check_parameters(const NamedParameters& loaded, const std::vector<torch::Tensor>& current,
                      const std::string& source) {
  for (std::size_t i = 0; i < current.size(); ++i) {
    if (loaded[i].value().sizes() != current[i].sizes()) {
      std::ostringstream found;
      found << "a parameter of shape " << loaded[i].value().sizes() << " where "
            << current[i].sizes() << " was expected";
      throw InputError(source, 0, "model: " + loaded[i].key(),
                       "the network of this trainer's options", found.str());
    }
    if (!finite(loaded[i].value())) {
      throw InputError(source, 0, "model: " + loaded[i].key(), "finite weights", "NaN or infinity");
    }
  }
}

/// One parameter's Adam moments from its archive entry, checked against the parameter.
std::unique_ptr<torch::optim::AdamParamState> read_moments(torch::serialize::InputArchive& entry,
                                                           const torch::Tensor& parameter,
                                                           const std::string& source,
                                                           const std::string& where) {
  c10::IValue step;
  torch::Tensor exp_avg;
  torch::Tensor exp_avg_sq;
  if (!entry.try_read("step", step) || !step.isInt() || step.toInt() < 1 ||
      !entry.try_read("exp_avg", exp_avg, true) ||
      !entry.try_read("exp_avg_sq", exp_avg_sq, true) || exp_avg.sizes() != parameter.sizes() ||
      exp_avg_sq.sizes() != parameter.sizes() || exp_avg.scalar_type() != torch::kFloat32 ||
      exp_avg_sq.scalar_type() != torch::kFloat32 || !finite(exp_avg) || !finite(exp_avg_sq) ||
      (exp_avg_sq < 0).any().item<bool>()) {
    throw InputError(source, 0, where,
                     "Adam moments of the parameter's shape, finite, a step count >= 1",
                     "other values");
  }
  auto moments = std::make_unique<torch::optim::AdamParamState>();
  moments->step(step.toInt());
  moments->exp_avg(exp_avg.clone());
  moments->exp_avg_sq(exp_avg_sq.clone());
  return moments;
}

/// The Adam state of the checkpoint's "adam" archive, keyed for the current parameters.
AdamState read_adam_state(torch::serialize::InputArchive& archive, const NamedParameters& loaded,
                          const std::vector<torch::Tensor>& current, const std::string& source) {
  torch::serialize::InputArchive adam;
  archive.read("adam", adam);
  AdamState restored;
  for (std::size_t i = 0; i < current.size(); ++i) {
    torch::serialize::InputArchive entry;
    if (!adam.try_read(parameter_entry(i), entry)) continue;
    restored[state_key(current[i])] =
        read_moments(entry, current[i], source, "adam: " + loaded[i].key());
  }
  return restored;
}

}  // namespace

void PpoLearner::load(const std::filesystem::path& file) {
  torch::serialize::InputArchive archive = open_checkpoint(file);
  const std::string source = file.string();
  try {
    torch::serialize::InputArchive model;
    archive.read("model", model);
    // Module::load adopts whatever shapes the file has: stage it and compare before copying.
    ActorCritic staged(impl_->features, impl_->actions, impl_->options.hidden_sizes);
    staged.load(model);
    const NamedParameters loaded = staged.named_parameters();
    std::vector<torch::Tensor> current = impl_->model->parameters();
    check_parameters(loaded, current, source);
    AdamState restored = read_adam_state(archive, loaded, current, source);
    torch::NoGradGuard no_grad;
    for (std::size_t i = 0; i < current.size(); ++i) current[i].copy_(loaded[i].value());
    impl_->optimizer->state() = std::move(restored);
    impl_->refresh_forward();
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& error) {
    throw InputError(source, 0, "model", "the network of this trainer's options",
                     torch_error_line(error));
  }
}

CheckpointExtras PpoLearner::read_extras(const std::filesystem::path& file) {
  torch::serialize::InputArchive archive = open_checkpoint(file);
  c10::IValue keys;
  c10::IValue values;
  try {
    if (archive.try_read("extra_keys", keys) && archive.try_read("extra_values", values) &&
        keys.isList() && values.isList()) {
      const c10::List<c10::IValue> key_list = keys.toList();
      const c10::List<c10::IValue> value_list = values.toList();
      CheckpointExtras extras;
      for (std::size_t i = 0; i < key_list.size() && key_list.size() == value_list.size(); ++i) {
        if (!key_list.get(i).isString() || !value_list.get(i).isString()) break;
        extras.emplace_back(key_list.get(i).toStringRef(), value_list.get(i).toStringRef());
      }
      if (extras.size() == key_list.size()) return extras;
    }
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& error) {
    throw InputError(file.string(), 0, "", "a PPO checkpoint", torch_error_line(error));
  }
  throw InputError(file.string(), 0, "", "a PPO checkpoint", "an archive without trainer state");
}

PolicySnapshot untrained_snapshot(PolicyMetadata metadata, std::size_t features,
                                  std::uint64_t seed) {
  PpoOptions options;
  options.seed = seed;
  const PpoLearner learner(features, metadata.actions.size(), options);
  PolicySnapshot snapshot;
  snapshot.metadata = std::move(metadata);
  snapshot.observation_mean.assign(features, 0.f);
  snapshot.observation_std.assign(features, 1.f);
  snapshot.layers = learner.actor_layers();
  return snapshot;
}

}  // namespace dynamix
