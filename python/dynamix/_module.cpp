// The Python bindings: BatchSizeEnv and VectorEnv with the Gymnasium API's shapes, numpy arrays
// that view the environment's buffers (no copy), and the GIL released while simulating.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/scenarios.h"
#include "gym/batch_size_env.h"
#include "gym/scenario_source.h"
#include "gym/vector_env.h"
#include "sim/io/input_error.h"

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

/// What make_env and make_vector_env take beside the scenario.
struct Options {
  std::vector<std::string> overrides;
  int decision_interval = 10;
  std::string action_base = "balanced";
  int min_batch = 32;
  int max_batch = 1024;
  int initial_batch = 0;
  bool stop_at_target = true;
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

std::vector<int> as_actions(const py::array_t<int, py::array::c_style | py::array::forcecast>& a) {
  return std::vector<int>(a.data(), a.data() + a.size());
}

/// One environment; obs and rewards are read-only views valid until Python drops them.
class PyEnv {
 public:
  PyEnv(const std::string& scenario, const Options& o)
      : source_(scenario_source(scenario, o)),
        env_(source_, env_options(o)),
        randomized_(o.randomize) {}
  /// The cluster's workers when every episode runs on one scenario; none when they vary.
  std::optional<std::size_t> fixed_workers() const {
    if (randomized_) return std::nullopt;
    return source_->scenario_for(0)->worker_hosts.size();
  }

  py::tuple reset(std::uint64_t seed) {
    ResetResult reset;
    {
      py::gil_scoped_release release;
      reset = env_.reset(seed);
    }
    result_.observation = std::move(reset.observation);
    return py::make_tuple(observation(), info_dict(reset.info, keys_));
  }

  py::tuple step(const py::array_t<int, py::array::c_style | py::array::forcecast>& actions) {
    const std::vector<int> chosen = as_actions(actions);
    {
      py::gil_scoped_release release;
      env_.step(chosen, result_);
    }
    py::array_t<float> obs = observation();
    const auto workers = static_cast<py::ssize_t>(result_.rewards.size());
    py::array_t<float> rewards = rewards_.publish(result_.rewards, {workers});
    return py::make_tuple(obs, rewards, result_.terminated, result_.truncated,
                          info_dict(result_.info, keys_));
  }

  std::size_t workers() const { return env_.workers(); }
  const BatchSizeEnv& env() const { return env_; }

 private:
  py::array_t<float> observation() {
    Observation& o = result_.observation;
    return observation_.publish(
        o.values, {static_cast<py::ssize_t>(o.workers), static_cast<py::ssize_t>(o.features)});
  }

  std::shared_ptr<const ScenarioSource> source_;
  BatchSizeEnv env_;
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
      : vector_(scenario_source(scenario, o), env_options(o), environments, threads) {}

  py::tuple reset(std::uint64_t seed) {
    std::vector<ResetResult> results;
    {
      py::gil_scoped_release release;
      results = vector_.reset(seed);
    }
    py::list infos;
    for (std::size_t i = 0; i < results.size(); ++i) {
      steps_.resize(results.size());
      steps_[i].observation = std::move(results[i].observation);
      infos.append(info_dict(results[i].info, keys_));
    }
    return py::make_tuple(stacked_observations(), infos);
  }

  py::tuple step(const py::array_t<int, py::array::c_style | py::array::forcecast>& actions) {
    const std::size_t m = vector_.size();
    if (actions.ndim() != 2 || static_cast<std::size_t>(actions.shape(0)) != m) {
      throw EnvError("actions: expected an array [" + std::to_string(m) + ", workers]");
    }
    const auto workers = static_cast<std::size_t>(actions.shape(1));
    actions_.resize(m);
    for (std::size_t i = 0; i < m; ++i) {
      actions_[i].assign(actions.data() + i * workers, actions.data() + (i + 1) * workers);
    }
    {
      py::gil_scoped_release release;
      vector_.step(actions_, steps_);
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

  std::size_t size() const { return vector_.size(); }
  const BatchSizeEnv& env(std::size_t i) const { return vector_.env(i); }

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

  VectorEnv vector_;
  InfoKeys keys_;
  std::vector<StepResult> steps_;
  std::vector<std::vector<int>> actions_;
  std::vector<float> scratch_;
  std::vector<float> rewards_scratch_;
  Published observations_;
  Published rewards_;
};

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

}  // namespace
}  // namespace dynamix

PYBIND11_MODULE(_dynamix, m) {
  using namespace dynamix;
  m.doc() = "dynamix's batch-size environment (C++), see the dynamix package";
  py::register_exception<EnvError>(m, "EnvError", PyExc_ValueError);
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);
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
  py::class_<PyEnv>(m, "Env")
      .def(py::init<const std::string&, const Options&>())
      .def("reset", &PyEnv::reset, py::arg("seed"))
      .def("step", &PyEnv::step, py::arg("actions"))
      .def_property_readonly("workers", &PyEnv::workers)
      .def_property_readonly("fixed_workers", &PyEnv::fixed_workers)
      .def_property_readonly("scenario", [](const PyEnv& e) { return e.env().scenario().name; })
      .def("schema", [](const PyEnv& e) { return schema_dict(e.env()); });
  py::class_<PyVectorEnv>(m, "VectorEnv")
      .def(py::init<const std::string&, std::size_t, std::size_t, const Options&>())
      .def("reset", &PyVectorEnv::reset, py::arg("seed"))
      .def("step", &PyVectorEnv::step, py::arg("actions"))
      .def_property_readonly("num_envs", &PyVectorEnv::size)
      .def("workers", [](const PyVectorEnv& v, std::size_t i) { return v.env(i).workers(); })
      .def("schema", [](const PyVectorEnv& v) { return schema_dict(v.env(0)); });
}
