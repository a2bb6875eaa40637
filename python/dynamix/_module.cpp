// The Python bindings: BatchSizeEnv and VectorEnv with the Gymnasium API's shapes, numpy arrays
// that view the environment's buffers (no copy), and the GIL released while simulating.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gym/batch_size_env.h"
#include "gym/env_knobs.h"
#include "gym/scenario_source.h"
#include "gym/vector_env.h"
#include "python/dynamix/policy_files.h"
#include "sim/io/input_error.h"
#include "sim/scenario/scenario_names.h"

namespace py = pybind11;

namespace dynamix {
namespace {

/// The last published contents of a buffer, viewed by numpy without a copy. A view Python still
/// holds is never written again: the next result then goes to a fresh buffer.
class Published {
 public:
  /// Publishes `scratch` (swapped out; it gets a buffer to reuse) and returns a read-only view.
  py::array_t<float> publish(std::vector<float>& scratch, const std::vector<py::ssize_t>& shape) {
    if (current_.use_count() > 1) current_ = std::make_shared<std::vector<float>>();
    std::swap(*current_, scratch);
    auto* owner = new std::shared_ptr<std::vector<float>>(current_);
    py::capsule base(owner,
                     [](void* p) { delete static_cast<std::shared_ptr<std::vector<float>>*>(p); });
    py::array_t<float> view(shape, current_->data(), base);
    py::detail::array_proxy(view.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return view;
  }

 private:
  std::shared_ptr<std::vector<float>> current_ = std::make_shared<std::vector<float>>();
};

/// What make_env and make_vector_env take beside the scenario; the environment's defaults are
/// EnvOptions{}'s, those of env_knobs() and of `dynamix train`.
struct Options {
  std::vector<std::string> overrides;
  int decision_interval = EnvOptions{}.decision_interval;
  std::string action_base{action_base_name(EnvOptions{}.action_base)};
  int min_batch = EnvOptions{}.min_batch;
  int max_batch = EnvOptions{}.max_batch;
  int initial_batch = EnvOptions{}.initial_batch;
  bool stop_at_target = EnvOptions{}.stop_at_target;
  bool randomize = false;
  int min_workers = SamplerOptions{}.min_workers;
  int max_workers = SamplerOptions{}.max_workers;
};

EnvOptions env_options(const Options& o) {
  EnvOptions options;
  options.decision_interval = o.decision_interval;
  const auto base = parse_action_base(o.action_base);
  if (!base)
    throw EnvError("action_base: expected one of " + action_base_names() + ", found '" +
                   o.action_base + "'");
  options.action_base = *base;
  options.min_batch = o.min_batch;
  options.max_batch = o.max_batch;
  options.initial_batch = o.initial_batch;
  options.stop_at_target = o.stop_at_target;
  return options;
}

std::shared_ptr<const ScenarioSource> scenario_source(const std::string& scenario,
                                                      const Options& o) {
  const std::string path = resolve_scenario(scenario, "scenario");
  if (o.randomize) {
    SamplerOptions sampler;
    sampler.base = path;
    sampler.overrides = o.overrides;
    sampler.min_workers = o.min_workers;
    sampler.max_workers = o.max_workers;
    return std::make_shared<ScenarioSampler>(sampler);
  }
  return std::make_shared<FixedScenario>(
      std::make_shared<const Scenario>(load_scenario(path, o.overrides)));
}

/// The environment's options table, one dict a row: Python's name (decision_interval for
/// --decision-interval), the command line's key, type, unit, range, default and meaning.
py::list env_knob_rows() {
  py::list rows;
  for (const Knob<EnvOptions>& knob : env_knobs().knobs) {
    std::string name = knob.key;
    std::replace(name.begin(), name.end(), '-', '_');
    py::dict row;
    row["name"] = name;
    row["key"] = knob.key;
    row["type"] = knob.type;
    row["unit"] = knob.unit;
    row["range"] = knob.range;
    row["default"] = knob.default_value;
    row["meaning"] = knob.meaning;
    rows.append(row);
  }
  return rows;
}

/// The info dict's keys, made once per environment rather than once per step.
struct InfoKeys {
  py::str batches{"batches"}, clamped{"clamped"}, decision{"decision"}, iteration{"iteration"},
      time_s{"time_s"}, window_s{"window_s"}, epochs{"epochs"},
      validation_accuracy{"validation_accuracy"}, time_to_target_s{"time_to_target_s"},
      autoreset{"autoreset"};
};

py::list int_list(const std::vector<int>& values) {
  py::list list(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    PyList_SET_ITEM(list.ptr(), static_cast<py::ssize_t>(i), PyLong_FromLong(values[i]));
  }
  return list;
}

py::list bool_list(const std::vector<bool>& values) {
  py::list list(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    PyObject* value = values[i] ? Py_True : Py_False;
    Py_INCREF(value);
    PyList_SET_ITEM(list.ptr(), static_cast<py::ssize_t>(i), value);
  }
  return list;
}

py::dict info_dict(const StepInfo& info, const InfoKeys& k) {
  py::dict d;
  d[k.batches] = int_list(info.batches);
  d[k.clamped] = bool_list(info.clamped);
  d[k.decision] = py::int_(info.decision);
  d[k.iteration] = py::int_(info.iteration);
  d[k.time_s] = py::float_(info.time_s);
  d[k.window_s] = py::float_(info.window_s);
  d[k.epochs] = py::float_(info.epochs);
  d[k.validation_accuracy] = py::float_(info.validation_accuracy);
  d[k.time_to_target_s] =
      info.time_to_target_s ? py::object(py::float_(*info.time_to_target_s)) : py::none();
  d[k.autoreset] = py::bool_(info.autoreset);
  return d;
}

/// Feature names and bounds of the observation schema, for observation_space.
py::dict schema_dict(const BatchSizeEnv& env) {
  py::list names, low, high;
  const ObservationSchema& schema = env.schema();
  for (const auto* block : {&schema.local, &schema.global}) {
    for (const FeatureSpec& f : *block) {
      names.append(f.name);
      low.append(f.low);
      high.append(f.high);
    }
  }
  py::dict d;
  d["names"] = names;
  d["low"] = low;
  d["high"] = high;
  d["actions"] = env.options().actions;
  d["version"] = schema.version;
  return d;
}

/// One object's calls, one at a time: the GIL is released while simulating, so a second thread
/// could otherwise enter mid-call and break the simulator's invariants (or VectorEnv's pool).
class Exclusive {
 public:
  explicit Exclusive(const char* type) : type_(type) {}

  /// Holds the object for the duration of one call.
  class Call {
   public:
    Call(Exclusive& owner, const char* method, bool after_close = false) : owner_(owner) {
      if (owner.busy_.exchange(true)) {
        throw owner.refusal(method,
                            "is already in use by another thread; it is not thread-safe (give "
                            "each thread its own)");
      }
      if (owner.closed_ && !after_close) {
        owner.busy_.store(false);
        throw owner.refusal(method, "is closed");
      }
    }
    ~Call() { owner_.busy_.store(false); }
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;

   private:
    Exclusive& owner_;
  };

  void close() { closed_ = true; }

 private:
  std::runtime_error refusal(const char* method, const char* why) const {
    return std::runtime_error(std::string(type_) + "." + method + ": this " + type_ + " " + why);
  }

  const char* type_;
  std::atomic<bool> busy_{false};
  bool closed_ = false;
};

std::string index_name(py::ssize_t flat, const py::array& array) {
  std::string index;
  for (py::ssize_t d = array.ndim() - 1; d >= 0; --d) {
    index = std::to_string(flat % array.shape(d)) + (index.empty() ? "" : ", ") + index;
    flat /= array.shape(d);
  }
  return "actions[" + index + "]";
}

/// Action indices from integers, or from floats that hold integers; NaN, infinities, fractions
/// and other types are refused rather than cast (a cast NaN reads as -2147483648).
std::vector<int> action_indices(const py::handle& actions, std::size_t choices, py::array& array) {
  array = py::array::ensure(actions);
  const char kind = array ? array.dtype().kind() : 'O';
  if (kind != 'i' && kind != 'u' && kind != 'f') {
    throw py::type_error("actions: expected integer action indices, found " +
                         (array ? "an array of " + std::string(py::str(array.dtype()))
                                : std::string(py::str(py::type::of(actions)))));
  }
  const py::array_t<double, py::array::c_style | py::array::forcecast> values(array);
  std::vector<int> indices(static_cast<std::size_t>(values.size()));
  for (py::ssize_t i = 0; i < values.size(); ++i) {
    const double v = values.data()[i];
    std::string problem;
    if (!std::isfinite(v)) {
      problem = " is not finite";
    } else if (v != std::trunc(v)) {
      problem = " is not an integer";
    } else if (v < INT_MIN || v > INT_MAX) {
      problem = " is outside the action set [0, " + std::to_string(choices) + ")";
    }
    if (!problem.empty()) {
      throw EnvError(index_name(i, array) + ": " + std::string(py::repr(array.attr("item")(i))) +
                     problem);
    }
    indices[static_cast<std::size_t>(i)] = static_cast<int>(v);
  }
  return indices;
}

/// One environment; obs and rewards are read-only views valid until Python drops them.
class PyEnv {
 public:
  PyEnv(const std::string& scenario, const Options& o)
      : source_(scenario_source(scenario, o)),
        env_(std::in_place, source_, env_options(o)),
        randomized_(o.randomize) {}
  /// The cluster's workers when every episode runs on one scenario; none when they vary.
  std::optional<std::size_t> fixed_workers() {
    Exclusive::Call call(exclusive_, "fixed_workers");
    if (randomized_) return std::nullopt;
    return source_->scenario_for(0)->worker_hosts.size();
  }

  py::tuple reset(std::uint64_t seed) {
    Exclusive::Call call(exclusive_, "reset");
    ResetResult reset;
    {
      py::gil_scoped_release release;
      reset = env_->reset(seed);
    }
    result_.observation = std::move(reset.observation);
    return py::make_tuple(observation(), info_dict(reset.info, keys_));
  }

  py::tuple step(const py::handle& actions) {
    Exclusive::Call call(exclusive_, "step");
    py::array array;
    const std::vector<int> chosen = action_indices(actions, env_->options().actions.size(), array);
    {
      py::gil_scoped_release release;
      env_->step(chosen, result_);
    }
    py::array_t<float> obs = observation();
    const auto workers = static_cast<py::ssize_t>(result_.rewards.size());
    py::array_t<float> rewards = rewards_.publish(result_.rewards, {workers});
    return py::make_tuple(obs, rewards, result_.terminated, result_.truncated,
                          info_dict(result_.info, keys_));
  }

  /// Frees the simulator; later calls raise.
  void close() {
    Exclusive::Call call(exclusive_, "close", true);
    exclusive_.close();
    env_.reset();
  }

  std::size_t workers() {
    Exclusive::Call call(exclusive_, "workers");
    return env_->workers();
  }
  std::string scenario() {
    Exclusive::Call call(exclusive_, "scenario");
    return env_->scenario().name;
  }
  py::dict schema() {
    Exclusive::Call call(exclusive_, "schema");
    return schema_dict(*env_);
  }
  std::map<std::string, std::string> policy_files() {
    Exclusive::Call call(exclusive_, "policy_files");
    return policy_extra_files(*env_);
  }

 private:
  py::array_t<float> observation() {
    Observation& o = result_.observation;
    return observation_.publish(
        o.values, {static_cast<py::ssize_t>(o.workers), static_cast<py::ssize_t>(o.features)});
  }

  Exclusive exclusive_{"BatchSizeEnv"};
  std::shared_ptr<const ScenarioSource> source_;
  std::optional<BatchSizeEnv> env_;
  bool randomized_;
  InfoKeys keys_;
  StepResult result_;
  Published observation_;
  Published rewards_;
};

/// M environments stepped on threads; arrays stacked [M, workers, ...] (one cluster size).
class PyVectorEnv {
 public:
  PyVectorEnv(const std::string& scenario, std::size_t environments, std::size_t threads,
              const Options& o)
      : vector_(std::make_unique<VectorEnv>(scenario_source(scenario, o), env_options(o),
                                            environments, threads)) {}

  py::tuple reset(std::uint64_t seed) {
    Exclusive::Call call(exclusive_, "reset");
    std::vector<ResetResult> results;
    {
      py::gil_scoped_release release;
      results = vector_->reset(seed);
    }
    py::list infos;
    for (std::size_t i = 0; i < results.size(); ++i) {
      steps_.resize(results.size());
      steps_[i].observation = std::move(results[i].observation);
      infos.append(info_dict(results[i].info, keys_));
    }
    return py::make_tuple(stacked_observations(), infos);
  }

  py::tuple step(const py::handle& given) {
    Exclusive::Call call(exclusive_, "step");
    const std::size_t m = vector_->size();
    py::array actions;
    const std::vector<int> chosen =
        action_indices(given, vector_->env(0).options().actions.size(), actions);
    if (actions.ndim() != 2 || static_cast<std::size_t>(actions.shape(0)) != m) {
      throw EnvError("actions: expected an array [" + std::to_string(m) + ", workers]");
    }
    const auto workers = static_cast<std::size_t>(actions.shape(1));
    actions_.resize(m);
    for (std::size_t i = 0; i < m; ++i) {
      actions_[i].assign(chosen.begin() + i * workers, chosen.begin() + (i + 1) * workers);
    }
    {
      py::gil_scoped_release release;
      vector_->step(actions_, steps_);
    }
    py::array_t<float> obs = stacked_observations();
    rewards_scratch_.clear();
    std::vector<std::uint8_t> terminated, truncated;
    py::list infos;
    for (const StepResult& s : steps_) {
      rewards_scratch_.insert(rewards_scratch_.end(), s.rewards.begin(), s.rewards.end());
      terminated.push_back(s.terminated);
      truncated.push_back(s.truncated);
      infos.append(info_dict(s.info, keys_));
    }
    py::array_t<float> rewards = rewards_.publish(
        rewards_scratch_, {static_cast<py::ssize_t>(m), static_cast<py::ssize_t>(workers)});
    return py::make_tuple(obs, rewards, py::array(py::cast(terminated)).attr("astype")("bool"),
                          py::array(py::cast(truncated)).attr("astype")("bool"), infos);
  }

  /// Stops the threads and frees the simulators; later calls raise.
  void close() {
    Exclusive::Call call(exclusive_, "close", true);
    exclusive_.close();
    vector_.reset();
  }

  std::size_t size() {
    Exclusive::Call call(exclusive_, "num_envs");
    return vector_->size();
  }
  std::size_t workers(std::size_t i) {
    Exclusive::Call call(exclusive_, "workers");
    if (i >= vector_->size()) {
      throw py::index_error("workers: environment " + std::to_string(i) + " of " +
                            std::to_string(vector_->size()));
    }
    return vector_->env(i).workers();
  }
  py::dict schema() {
    Exclusive::Call call(exclusive_, "schema");
    return schema_dict(vector_->env(0));
  }
  std::map<std::string, std::string> policy_files() {
    Exclusive::Call call(exclusive_, "policy_files");
    return policy_extra_files(vector_->env(0));
  }

 private:
  py::array_t<float> stacked_observations() {
    const Observation& first = steps_.front().observation;
    scratch_.clear();
    for (const StepResult& s : steps_) {
      if (s.observation.workers != first.workers) {
        throw EnvError(
            "make_vector_env: environments with different worker counts cannot be "
            "stacked; use make_env per environment");
      }
      scratch_.insert(scratch_.end(), s.observation.values.begin(), s.observation.values.end());
    }
    return observations_.publish(
        scratch_, {static_cast<py::ssize_t>(steps_.size()), static_cast<py::ssize_t>(first.workers),
                   static_cast<py::ssize_t>(first.features)});
  }

  Exclusive exclusive_{"VectorEnv"};
  std::unique_ptr<VectorEnv> vector_;
  InfoKeys keys_;
  std::vector<StepResult> steps_;
  std::vector<std::vector<int>> actions_;
  std::vector<float> scratch_;
  std::vector<float> rewards_scratch_;
  Published observations_;
  Published rewards_;
};

}  // namespace
}  // namespace dynamix

PYBIND11_MODULE(_dynamix, m) {
  using namespace dynamix;
  m.doc() = "dynamix's batch-size environment (C++), see the dynamix package";
  py::register_exception<EnvError>(m, "EnvError", PyExc_ValueError);
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);
  m.def("env_knobs", &env_knob_rows,
        "The environment's options: name, key, type, unit, range, default and meaning of each");
  py::class_<Options>(m, "Options")
      .def(py::init<>())
      .def_readwrite("overrides", &Options::overrides)
      .def_readwrite("decision_interval", &Options::decision_interval)
      .def_readwrite("action_base", &Options::action_base)
      .def_readwrite("min_batch", &Options::min_batch)
      .def_readwrite("max_batch", &Options::max_batch)
      .def_readwrite("initial_batch", &Options::initial_batch)
      .def_readwrite("stop_at_target", &Options::stop_at_target)
      .def_readwrite("randomize", &Options::randomize)
      .def_readwrite("min_workers", &Options::min_workers)
      .def_readwrite("max_workers", &Options::max_workers);
  bind_policy_files(m);
  py::class_<PyEnv>(m, "Env")
      .def(py::init<const std::string&, const Options&>())
      .def("reset", &PyEnv::reset, py::arg("seed"))
      .def("step", &PyEnv::step, py::arg("actions"))
      .def("close", &PyEnv::close)
      .def_property_readonly("workers", &PyEnv::workers)
      .def_property_readonly("fixed_workers", &PyEnv::fixed_workers)
      .def_property_readonly("scenario", &PyEnv::scenario)
      .def("schema", &PyEnv::schema)
      .def("policy_files", &PyEnv::policy_files);
  py::class_<PyVectorEnv>(m, "VectorEnv")
      .def(py::init<const std::string&, std::size_t, std::size_t, const Options&>())
      .def("reset", &PyVectorEnv::reset, py::arg("seed"))
      .def("step", &PyVectorEnv::step, py::arg("actions"))
      .def("close", &PyVectorEnv::close)
      .def_property_readonly("num_envs", &PyVectorEnv::size)
      .def("workers", &PyVectorEnv::workers)
      .def("schema", &PyVectorEnv::schema)
      .def("policy_files", &PyVectorEnv::policy_files);
}
