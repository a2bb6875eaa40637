// The Python bindings: BatchSizeEnv and VectorEnv with the Gymnasium API's shapes, numpy arrays
// over buffers the environment hands over (no copy), and the GIL released while simulating.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gym/action_base.h"
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

/// A new array of `shape` (at most 3 dimensions), over `data` kept alive by `base` or, without
/// them, uninitialized: numpy's constructor without pybind11's shape and stride vectors, which
/// cost more than the array itself on the vector step, whose infos make 26 arrays.
template <typename T>
py::array_t<T> new_array(std::initializer_list<std::size_t> shape, void* data = nullptr,
                         py::handle base = {}) {
  const auto& api = py::detail::npy_api::get();
  Py_intptr_t dims[3] = {};
  std::copy(shape.begin(), shape.end(), dims);
  PyObject* array = api.PyArray_NewFromDescr_(
      api.PyArray_Type_, py::dtype::of<T>().release().ptr(), static_cast<int>(shape.size()), dims,
      nullptr, data, data == nullptr ? 0 : py::detail::npy_api::NPY_ARRAY_WRITEABLE_, nullptr);
  if (array == nullptr) throw py::error_already_set();
  auto result = py::reinterpret_steal<py::array_t<T>>(array);
  if (base && api.PyArray_SetBaseObject_(array, base.inc_ref().ptr()) != 0) {
    throw py::error_already_set();
  }
  return result;
}

/// The last published contents of a buffer, viewed by numpy without a copy. A view Python still
/// holds is never written again (the next result then goes to a fresh buffer), so the view is the
/// caller's own, writable array: writing it changes nothing in the environment.
class Published {
 public:
  /// Publishes `scratch` (swapped out; it gets a buffer to reuse) and returns a writable view.
  py::array_t<float> publish(std::vector<float>& scratch,
                             std::initializer_list<std::size_t> shape) {
    if (current_.use_count() > 1) current_ = std::make_shared<std::vector<float>>();
    std::swap(*current_, scratch);
    auto* owner = new std::shared_ptr<std::vector<float>>(current_);
    py::capsule base(owner,
                     [](void* p) { delete static_cast<std::shared_ptr<std::vector<float>>*>(p); });
    return new_array<float>(shape, current_->data(), base);
  }

 private:
  std::shared_ptr<std::vector<float>> current_ = std::make_shared<std::vector<float>>();
};

/// What make_env and make_vector_env take beside the scenario. The environment's options start
/// at a preset's, by name ("training", what `dynamix train` learns in, unless use_preset says
/// otherwise) and are set by name through their table rows (set_env_option), so Python takes
/// every row of env_knobs() with its range checks.
struct Options {
  std::vector<std::string> overrides;
  std::string preset = "training";
  EnvOptions env = env_preset("training");
  bool randomize = false;
  int min_workers = SamplerOptions{}.min_workers;
  int max_workers = SamplerOptions{}.max_workers;
};

/// The row of env_knobs() that Python names `name` (decision_interval for --decision-interval).
const Knob<EnvOptions>* env_knob(const std::string& name) {
  for (const Knob<EnvOptions>& knob : env_knobs().knobs) {
    if (snake_case(knob.key) == name) return &knob;
  }
  return nullptr;
}

[[noreturn]] void refuse_value(const std::string& name, const std::string& range,
                               const std::string& found) {
  throw EnvError(name + ": expected " + range + ", found " + found);
}

/// Stores `texts` (one text for a value, one per element for a list, which the row appends to
/// its default, empty) into the environment option `name`, checked by its row.
void set_env_option(Options& o, const std::string& name, const std::vector<std::string>& texts) {
  const Knob<EnvOptions>* knob = env_knob(name);
  if (knob == nullptr) throw py::type_error("unknown environment option '" + name + "'");
  if (knob->type != "list" && texts.size() != 1)
    throw EnvError(name + ": expected one value (" + knob->range + "), found a list");
  for (const std::string& text : texts) {
    const KnobParse parse = knob->parse(text, o.env);
    if (parse.outcome == KnobParse::Outcome::kMalformed)
      refuse_value(name, knob->range, "'" + text + "'");
    if (parse.outcome == KnobParse::Outcome::kOutOfRange)
      refuse_value(name, knob->range, parse.found);
  }
}

/// Starts the environment's options over at the preset `name`'s.
void use_preset(Options& o, const std::string& name) {
  o.env = env_preset(name, "preset");
  o.preset = name;
}

/// What the environment resolved to: the preset's name, every row of env_knobs() by Python's name
/// (as the command line gives it), and the reward's shaping discount, which the preset sets.
py::dict resolved_options(const Options& o) {
  py::dict resolved;
  resolved["preset"] = o.preset;
  // The action set as the environment resolves it: the base's own unless given.
  EnvOptions shown = o.env;
  if (shown.actions.empty()) shown.actions = default_actions(shown.action_base);
  for (const Knob<EnvOptions>& knob : env_knobs().knobs) {
    resolved[py::str(snake_case(knob.key))] = knob.show(shown);
  }
  resolved["shaping_discount"] = o.env.reward.shaping_discount;
  resolved["shaping_discount_by_time"] = o.env.reward.shaping_discount_by_time;
  return resolved;
}

/// The environment option `name`'s value as the command line would give it.
std::string env_option_value(const Options& o, const std::string& name) {
  const Knob<EnvOptions>* knob = env_knob(name);
  if (knob == nullptr) throw py::type_error("unknown environment option '" + name + "'");
  return knob->show(o.env);
}

std::shared_ptr<const ScenarioSource> scenario_source(const std::string& scenario,
                                                      const Options& o) {
  const std::string path = resolve_scenario(scenario, "scenario");
  if (o.randomize) {
    // The family dynamix train --randomize trains on: every catalog workload, SGD and Adam.
    SamplerOptions sampler = training_family(path, o.overrides, 0);
    sampler.min_workers = o.min_workers;
    sampler.max_workers = o.max_workers;
    return std::make_shared<ScenarioSampler>(sampler);
  }
  return std::make_shared<FixedScenario>(
      std::make_shared<const Scenario>(load_scenario(path, o.overrides)));
}

/// The worker count the spaces are sized for, known before reset: the scenario's, or for a
/// randomized family its largest (smaller clusters are padded with zero rows and masked), since
/// Gymnasium's spaces and batched arrays cannot change shape between episodes.
std::size_t padded_workers(const ScenarioSource& source, const Options& o) {
  if (o.randomize) return static_cast<std::size_t>(o.max_workers);
  return source.scenario_for(0)->worker_hosts.size();
}

/// Appends `values` (rows of `width`) to `out`, then zero rows up to `padded` rows.
void append_padded(std::vector<float>& out, const std::vector<float>& values, std::size_t width,
                   std::size_t padded) {
  out.insert(out.end(), values.begin(), values.end());
  out.resize(out.size() + padded * width - values.size(), 0.0f);
}

/// The environment's options table, one dict a row: Python's name (decision_interval for
/// --decision-interval), the command line's key, type, unit, range, default and meaning.
py::list env_knob_rows() {
  py::list rows;
  for (const Knob<EnvOptions>& knob : env_knobs().knobs) {
    py::dict row;
    row["name"] = snake_case(knob.key);
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
      autoreset{"autoreset"}, workers{"workers"};
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
  d[k.workers] = py::int_(info.batches.size());
  return d;
}

/// One array of the vector infos (held by their dict) and the layout it was made with: the caller
/// may change an array's shape, strides, dtype or flags in place (arr.shape = ...).
class InfoColumn {
 public:
  template <typename T>
  static py::array of(std::size_t rows, std::size_t columns) {
    return columns == 0 ? new_array<T>({rows}) : new_array<T>({rows, columns});
  }

  explicit InfoColumn(const py::array& array) : array_(array.ptr()), layout_(layout(array_)) {}

  /// The array, borrowed from the infos' dict.
  PyObject* array() const { return array_; }
  template <typename T>
  T* data() const {
    return static_cast<T*>(layout_.data);
  }

  /// Whether nothing but the infos' dict holds the array (no view, buffer or weak reference
  /// either) and its layout is as made; only asked while the dict holds it.
  bool reusable() const {
    const auto offset = Py_TYPE(array_)->tp_weaklistoffset;
    if (Py_REFCNT(array_) != 1 ||
        (offset > 0 &&
         *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(array_) + offset) != nullptr)) {
      return false;
    }
    return layout(array_) == layout_;
  }

 private:
  struct Layout {
    void* data;
    PyObject* descr;
    PyObject* base;
    int flags;
    int ndim;
    std::array<py::ssize_t, 2> shape, strides;
    bool operator==(const Layout&) const = default;
  };

  static Layout layout(PyObject* array) {
    const auto* p = py::detail::array_proxy(array);
    Layout l{p->data, p->descr, p->base, p->flags, p->nd, {}, {}};
    if (p->nd > 2) return l;
    std::copy(p->dimensions, p->dimensions + p->nd, l.shape.begin());
    std::copy(p->strides, p->strides + p->nd, l.strides.begin());
    return l;
  }

  PyObject* array_;
  Layout layout_;
};

/// The M infos in Gymnasium's vector convention: a dict of arrays over the environments, each
/// key beside its `_key` mask; time_to_target_s is NaN (and masked out) until the target is hit.
/// Making 24 arrays and their dict costs more than the step's other binding work together, so the
/// last ones are filled again when the caller holds none of them, nor a weak reference, any more.
class VectorInfo {
 public:
  py::dict make(const std::vector<StepResult>& s, std::size_t padded) {
    if (!reusable()) allocate(s.size(), padded);
    fill(s, padded);
    return dict_;
  }

 private:
  bool reusable() const {
    if (!dict_ || Py_REFCNT(dict_.ptr()) != 1 ||
        PyDict_GET_SIZE(dict_.ptr()) != static_cast<py::ssize_t>(columns_.size())) {
      return false;
    }
    py::ssize_t position = 0;
    PyObject *key, *value;
    for (std::size_t k = 0; PyDict_Next(dict_.ptr(), &position, &key, &value); ++k) {
      if (key != names_[k].ptr() || value != columns_[k].array() || !columns_[k].reusable()) {
        return false;
      }
    }
    return true;
  }

  void allocate(std::size_t m, std::size_t padded) {
    dict_ = py::dict();
    columns_.clear();
    auto add = [&](const py::array& array) {
      const py::str& name = names_[columns_.size()];
      if (PyDict_SetItem(dict_.ptr(), name.ptr(), array.ptr()) != 0) throw py::error_already_set();
      columns_.emplace_back(array);
    };
    auto value_and_mask = [&](const py::array& value) {
      add(value);
      add(InfoColumn::of<bool>(m, 0));
    };
    value_and_mask(InfoColumn::of<std::int64_t>(m, padded));
    value_and_mask(InfoColumn::of<bool>(m, padded));
    value_and_mask(InfoColumn::of<bool>(m, padded));
    for (int k = 0; k < 3; ++k) value_and_mask(InfoColumn::of<std::int64_t>(m, 0));
    for (int k = 0; k < 4; ++k) value_and_mask(InfoColumn::of<double>(m, 0));
    value_and_mask(InfoColumn::of<bool>(m, 0));
    value_and_mask(InfoColumn::of<double>(m, 0));
  }

  /// Writes every element: each key's values (the padding too), then the masks.
  void fill(const std::vector<StepResult>& s, std::size_t padded) const {
    using Info = const StepInfo&;
    std::size_t k = 0;
    auto workers = [&](auto get) {
      using T = decltype(get(s[0].info, 0));
      T* data = columns_[k].data<T>();
      std::fill(data, data + s.size() * padded, T{});
      for (std::size_t i = 0; i < s.size(); ++i) {
        for (std::size_t w = 0; w < s[i].info.batches.size(); ++w) {
          data[i * padded + w] = get(s[i].info, w);
        }
      }
      k += 2;
    };
    auto each = [&](auto get) {
      auto* data = columns_[k].data<decltype(get(s[0].info))>();
      for (std::size_t i = 0; i < s.size(); ++i) data[i] = get(s[i].info);
      k += 2;
    };
    workers([](Info i, std::size_t w) { return std::int64_t{i.batches[w]}; });
    workers([](Info i, std::size_t w) { return bool{i.clamped[w]}; });
    workers([](Info, std::size_t) { return true; });
    each([](Info i) { return static_cast<std::int64_t>(i.batches.size()); });
    each([](Info i) { return std::int64_t{i.decision}; });
    each([](Info i) { return std::int64_t{i.iteration}; });
    each([](Info i) { return double{i.time_s}; });
    each([](Info i) { return double{i.window_s}; });
    each([](Info i) { return double{i.epochs}; });
    each([](Info i) { return double{i.validation_accuracy}; });
    each([](Info i) { return bool{i.autoreset}; });
    each([](Info i) { return i.time_to_target_s.value_or(std::nan("")); });
    for (k = 1; k + 2 < columns_.size(); k += 2) {
      bool* mask = columns_[k].data<bool>();
      std::fill(mask, mask + s.size(), true);
    }
    each([](Info i) { return i.time_to_target_s.has_value(); });
  }

  static std::vector<py::str> make_names() {
    std::vector<py::str> names;
    for (const char* key :
         {"batches", "clamped", "worker_mask", "workers", "decision", "iteration", "time_s",
          "window_s", "epochs", "validation_accuracy", "autoreset", "time_to_target_s"}) {
      names.emplace_back(key);
      names.emplace_back(std::string("_") + key);
    }
    return names;
  }

  /// Each key beside its mask's, in the order of columns_.
  std::vector<py::str> names_ = make_names();
  std::vector<InfoColumn> columns_;
  py::dict dict_{py::reinterpret_steal<py::dict>(py::handle())};
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
    if (!index.empty()) index.insert(0, ", ");
    index.insert(0, std::to_string(flat % array.shape(d)));
    flat /= array.shape(d);
  }
  return "actions[" + index + "]";
}

std::string outside_action_set(std::size_t choices) {
  return " is outside the action set [0, " + std::to_string(choices) + ")";
}

/// Why an action value is no index into `choices` actions; empty when it is one.
std::string action_problem(double v, std::size_t choices) {
  if (!std::isfinite(v)) return " is not finite";
  if (v != std::trunc(v)) return " is not an integer";
  if (v < 0 || v >= static_cast<double>(choices)) return outside_action_set(choices);
  return {};
}

EnvError action_error(const py::array& array, py::ssize_t i, const std::string& problem) {
  return EnvError(index_name(i, array) + ": " + std::string(py::repr(array.attr("item")(i))) +
                  problem);
}

/// Action indices read in place from a C-contiguous, aligned, native array of T (numpy's default
/// integers, MultiDiscrete.sample's), which the cast to double below would copy; false for others.
template <typename T>
bool integer_indices(const py::array& array, std::size_t choices, std::vector<int>& indices) {
  if (!py::isinstance<py::array_t<T, py::array::c_style>>(array) ||
      (array.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_) == 0) {
    return false;
  }
  const T* values = static_cast<const T*>(array.data());
  indices.resize(static_cast<std::size_t>(array.size()));
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (values[i] < 0 || static_cast<std::uint64_t>(values[i]) >= choices) {
      throw action_error(array, static_cast<py::ssize_t>(i), outside_action_set(choices));
    }
    indices[i] = static_cast<int>(values[i]);
  }
  return true;
}

/// Action indices from an integer array in [0, choices): what gymnasium's MultiDiscrete.contains
/// accepts (Gymnasium 1.4's refuses float arrays, even of whole numbers). Anything else is refused,
/// naming the first offending element (a float array's values are checked first), rather than cast
/// (a cast NaN reads as -2147483648, 1.7 as 1).
std::vector<int> action_indices(const py::handle& actions, std::size_t choices, py::array& array) {
  array = py::array::ensure(actions);
  const char kind = array ? array.dtype().kind() : 'O';
  if (kind != 'i' && kind != 'u' && kind != 'f') {
    throw py::type_error("actions: expected integer action indices, found " +
                         (array ? "an array of " + std::string(py::str(array.dtype()))
                                : std::string(py::str(py::type::of(actions)))));
  }
  std::vector<int> indices;
  if (integer_indices<std::int64_t>(array, choices, indices) ||
      integer_indices<std::int32_t>(array, choices, indices)) {
    return indices;
  }
  const py::array_t<double, py::array::c_style | py::array::forcecast> values(array);
  indices.resize(static_cast<std::size_t>(values.size()));
  for (py::ssize_t i = 0; i < values.size(); ++i) {
    const double v = values.data()[i];
    const std::string problem = action_problem(v, choices);
    if (!problem.empty()) throw action_error(array, i, problem);
    indices[static_cast<std::size_t>(i)] = static_cast<int>(v);
  }
  if (kind == 'f' && !indices.empty()) {
    throw action_error(array, 0,
                       " is a float; expected integer action indices (cast with astype(int))");
  }
  return indices;
}

/// One environment; obs and rewards are arrays of padded_workers() rows, the first workers real.
class PyEnv {
 public:
  PyEnv(const std::string& scenario, const Options& o)
      : source_(scenario_source(scenario, o)),
        env_(std::in_place, source_, o.env),
        padded_(dynamix::padded_workers(*source_, o)) {}
  std::size_t padded_workers() const { return padded_; }

  py::tuple reset(std::uint64_t seed, int initial_batch) {
    Exclusive::Call call(exclusive_, "reset");
    ResetResult reset;
    {
      py::gil_scoped_release release;
      reset = env_->reset(seed, {.initial_batch = initial_batch});
    }
    result_.observation = std::move(reset.observation);
    return py::make_tuple(observation(), info_dict(reset.info, keys_));
  }

  py::tuple step(const py::handle& actions) {
    Exclusive::Call call(exclusive_, "step");
    py::array array;
    std::vector<int> chosen = action_indices(actions, env_->options().actions.size(), array);
    if (chosen.size() == padded_ && env_->workers() < padded_) chosen.resize(env_->workers());
    {
      py::gil_scoped_release release;
      env_->step(chosen, result_);
    }
    py::array_t<float> obs = observation();
    if (result_.rewards.size() < padded_) result_.rewards.resize(padded_, 0.0f);
    py::array_t<float> rewards = rewards_.publish(result_.rewards, {padded_});
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
    if (o.workers > padded_) {
      throw EnvError("observation: " + std::to_string(o.workers) + " workers, more than the " +
                     std::to_string(padded_) + " the spaces hold");
    }
    o.values.resize(padded_ * o.features, 0.0f);
    return observation_.publish(o.values, {padded_, o.features});
  }

  Exclusive exclusive_{"BatchSizeEnv"};
  std::shared_ptr<const ScenarioSource> source_;
  std::optional<BatchSizeEnv> env_;
  std::size_t padded_;
  InfoKeys keys_;
  StepResult result_;
  Published observation_;
  Published rewards_;
};

/// M environments stepped on threads; arrays stacked [M, padded workers, ...], each
/// environment's rows past its worker count zero.
class PyVectorEnv {
 public:
  PyVectorEnv(const std::string& scenario, std::size_t environments, std::size_t threads,
              const Options& o)
      : PyVectorEnv(scenario_source(scenario, o), environments, threads, o) {}
  std::size_t padded_workers() const { return padded_; }

  py::tuple reset(std::uint64_t seed, int initial_batch) {
    Exclusive::Call call(exclusive_, "reset");
    std::vector<ResetResult> results;
    {
      py::gil_scoped_release release;
      results = vector_->reset(seed, {.initial_batch = initial_batch});
    }
    steps_.resize(results.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
      steps_[i].observation = std::move(results[i].observation);
      steps_[i].info = std::move(results[i].info);
    }
    return py::make_tuple(stacked_observations(), info_.make(steps_, padded_));
  }

  py::tuple step(const py::handle& given) {
    Exclusive::Call call(exclusive_, "step");
    const std::size_t m = vector_->size();
    py::array actions;
    const std::vector<int> chosen =
        action_indices(given, vector_->env(0).options().actions.size(), actions);
    if (actions.ndim() != 2 || static_cast<std::size_t>(actions.shape(0)) != m ||
        static_cast<std::size_t>(actions.shape(1)) != padded_) {
      throw EnvError("actions: expected an array [" + std::to_string(m) + ", " +
                     std::to_string(padded_) + "] (environments, workers), found shape " +
                     std::string(py::str(actions.attr("shape"))));
    }
    actions_.resize(m);
    for (std::size_t i = 0; i < m; ++i) {
      const auto row = chosen.begin() + static_cast<std::ptrdiff_t>(i * padded_);
      actions_[i].assign(row, row + static_cast<std::ptrdiff_t>(vector_->env(i).workers()));
    }
    {
      py::gil_scoped_release release;
      vector_->step(actions_, steps_);
    }
    py::array_t<float> obs = stacked_observations();
    rewards_scratch_.clear();
    for (const StepResult& s : steps_) append_padded(rewards_scratch_, s.rewards, 1, padded_);
    py::array_t<float> rewards = rewards_.publish(rewards_scratch_, {m, padded_});
    py::array_t<bool> terminated = new_array<bool>({m});
    py::array_t<bool> truncated = new_array<bool>({m});
    for (std::size_t i = 0; i < m; ++i) {
      terminated.mutable_data()[i] = steps_[i].terminated;
      truncated.mutable_data()[i] = steps_[i].truncated;
    }
    return py::make_tuple(obs, rewards, terminated, truncated, info_.make(steps_, padded_));
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
  PyVectorEnv(const std::shared_ptr<const ScenarioSource>& source, std::size_t environments,
              std::size_t threads, const Options& o)
      : vector_(std::make_unique<VectorEnv>(source, o.env, environments, threads)),
        padded_(dynamix::padded_workers(*source, o)) {}

  py::array_t<float> stacked_observations() {
    const std::size_t features = steps_.front().observation.features;
    scratch_.clear();
    for (const StepResult& s : steps_) {
      if (s.observation.workers > padded_) {
        throw EnvError("observation: " + std::to_string(s.observation.workers) +
                       " workers, more than the " + std::to_string(padded_) + " the spaces hold");
      }
      append_padded(scratch_, s.observation.values, features, padded_);
    }
    return observations_.publish(scratch_, {steps_.size(), padded_, features});
  }

  Exclusive exclusive_{"VectorEnv"};
  VectorInfo info_;
  std::unique_ptr<VectorEnv> vector_;
  std::size_t padded_;
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
  m.def(
      "env_presets",
      [] {
        py::dict presets;
        for (const EnvPreset& preset : env_presets()) presets[preset.name] = preset.meaning;
        return presets;
      },
      "The environment presets by name, each with who starts from it");
  m.def("env_knobs", &env_knob_rows,
        "The environment's options: name, key, type, unit, range, default and meaning of each");
  py::class_<Options>(m, "Options")
      .def(py::init<>())
      .def_readwrite("overrides", &Options::overrides)
      .def("set_env", &set_env_option, py::arg("name"), py::arg("texts"),
           "Sets an environment option (a row of env_knobs()) from its text(s), checked")
      .def("env_value", &env_option_value, py::arg("name"),
           "An environment option's value as the command line would give it")
      .def("use_preset", &use_preset, py::arg("name"),
           "Starts the environment's options over at a preset's: training or evaluation")
      .def("resolved", &resolved_options,
           "The preset and every environment option as resolved, with the shaping discount")
      .def_readwrite("randomize", &Options::randomize)
      .def_readwrite("min_workers", &Options::min_workers)
      .def_readwrite("max_workers", &Options::max_workers);
  bind_policy_files(m);
  py::class_<PyEnv>(m, "Env")
      .def(py::init<const std::string&, const Options&>())
      .def("reset", &PyEnv::reset, py::arg("seed"), py::arg("initial_batch") = 0)
      .def("step", &PyEnv::step, py::arg("actions"))
      .def("close", &PyEnv::close)
      .def_property_readonly("workers", &PyEnv::workers)
      .def_property_readonly("padded_workers", &PyEnv::padded_workers)
      .def_property_readonly("scenario", &PyEnv::scenario)
      .def("schema", &PyEnv::schema)
      .def("policy_files", &PyEnv::policy_files);
  py::class_<PyVectorEnv>(m, "VectorEnv")
      .def(py::init<const std::string&, std::size_t, std::size_t, const Options&>())
      .def("reset", &PyVectorEnv::reset, py::arg("seed"), py::arg("initial_batch") = 0)
      .def("step", &PyVectorEnv::step, py::arg("actions"))
      .def("close", &PyVectorEnv::close)
      .def_property_readonly("num_envs", &PyVectorEnv::size)
      .def_property_readonly("padded_workers", &PyVectorEnv::padded_workers)
      .def("workers", &PyVectorEnv::workers)
      .def("schema", &PyVectorEnv::schema)
      .def("policy_files", &PyVectorEnv::policy_files);
}
