// The calibration commands' options tables.
#include "apps/calibrate_options.h"

#include "sim/io/shared_options.h"
#include "sim/training/workload.h"

namespace dynamix {

namespace {

/// The cluster model's rows over `Target`'s ModelOptions.
template <typename Target>
std::vector<Knob<Target>> model_rows() {
  using Rows = KnobRows<Target, ExactNumbers>;
  using Shared = SharedRows<Target>;
  const auto model = [](auto member) {
    return [member](auto& options) -> auto& { return options.model.*member; };
  };
  return {
      Shared::scenario(model(&ModelOptions::scenario), ModelOptions{}.scenario),
      Shared::set(model(&ModelOptions::overrides)),
      Rows::text({.key = "ranks-key",
                  .meaning = "scenario key that sets a configuration's number of ranks"},
                 model(&ModelOptions::ranks_key)),
      Rows::text({.key = "measured",
                  .meaning = "measurement CSV (scripts/measure_cluster.py's schema, "
                             "docs/calibration.md); calibrate without it measures this machine "
                             "with the embedded script"},
                 model(&ModelOptions::measured)),
      Rows::text({.key = "fit-kinds", .meaning = "kinds of measurement fitted"},
                 model(&ModelOptions::fit_kinds)),
      Rows::text(
          {.key = "fit-ranks", .meaning = "rank counts fitted, e.g. 2", .default_value = "all"},
          model(&ModelOptions::fit_ranks)),
      Rows::text({.key = "fit-sizes", .meaning = "all-reduce message bytes fitted ('' for all)"},
                 model(&ModelOptions::fit_sizes)),
      Rows::text({.key = "fit-batches",
                  .meaning = "per-rank batches of the iteration rows fitted ('' for all)"},
                 model(&ModelOptions::fit_batches))};
}

template <typename Member>
auto field(Member member) {
  return [member](auto& options) -> auto& { return options.*member; };
}

KnobTable<CalibrateOptions> make_calibrate_knobs() {
  using Rows = KnobRows<CalibrateOptions, ExactNumbers>;
  std::vector<Knob<CalibrateOptions>> rows = model_rows<CalibrateOptions>();
  rows.push_back(Rows::texts(
      {.key = "fit",
       .meaning = "a knob searched in log space: KEY=LOW:HIGH[:INITIAL] (default: the loopback "
                  "link bandwidth, sync.message_overhead_us, sync.call_overhead_us, "
                  "sync.reduction_gbps, sync.bucket_overhead_us, and the --device's "
                  "colocation_slowdown and oversubscription_skew)"},
      field(&CalibrateOptions::fit)));
  rows.push_back(Rows::text(
      {.key = "device",
       .meaning = "scenario device whose time_points become the measured single-rank compute "
                  "sweep"},
      field(&CalibrateOptions::device)));
  rows.push_back(Rows::text({.key = "python", .meaning = "Python with torch, for measuring"},
                            field(&CalibrateOptions::python)));
  rows.push_back(Rows::text({.key = "measure-options",
                             .meaning = "options passed to the measurement script, e.g. "
                                        "'--quick' or '--quiet-file F'"},
                            field(&CalibrateOptions::measure_options)));
  rows.push_back(SharedRows<CalibrateOptions>::out(field(&CalibrateOptions::out)));
  const CalibrateOptions defaults;
  return Rows::table("",
                     "dynamix calibrate: fit a scenario's network and sync knobs to measurements "
                     "of a cluster (--scenario: the measured cluster, its topology holding the "
                     "most ranks measured; with --dynamics RUNS.csv: a workload's training "
                     "dynamics; --dynamics F --help)",
                     std::move(rows), defaults);
}

KnobTable<FidelityOptions> make_fidelity_knobs() {
  std::vector<Knob<FidelityOptions>> rows = model_rows<FidelityOptions>();
  for (Knob<FidelityOptions>& row : rows) {
    if (row.key == "measured") row.default_value = "required";
  }
  rows.push_back(SharedRows<FidelityOptions>::out(field(&FidelityOptions::out)));
  rows.back().default_value = "none: the comparison is printed only";
  return KnobRows<FidelityOptions, ExactNumbers>::table(
      "", "dynamix fidelity: measured against simulated compute, communication and total times",
      std::move(rows));
}

KnobTable<DynamicsOptions> make_dynamics_knobs() {
  using Rows = KnobRows<DynamicsOptions, ExactNumbers>;
  return Rows::table(
      "",
      "dynamix calibrate --dynamics: fit a workload's training dynamics (docs/calibration.md) to "
      "logs of real runs",
      {Rows::text({.key = "dynamics",
                   .meaning = "runs CSV: one row per window of k iterations (docs/calibration.md)",
                   .default_value = "required"},
                  field(&DynamicsOptions::runs)),
       Rows::text({.key = "workload",
                   .meaning = "the workload whose statistical model is fitted; its cost and "
                              "sizes are kept",
                   .default_value = "required"},
                  field(&DynamicsOptions::workload)),
       Rows::text({.key = "catalog",
                   .meaning = "workload catalog holding --workload (catalog/workloads.yaml's "
                              "format)",
                   .default_value = "the built-in catalog"},
                  field(&DynamicsOptions::catalog)),
       Rows::text({.key = "dynamics-fit-runs",
                   .meaning = "labels of the runs fitted, e.g. b256_s0,b4096_s0 (default: those "
                              "--dynamics-fit-batches picks)"},
                  field(&DynamicsOptions::fit_runs)),
       Rows::text({.key = "dynamics-fit-batches",
                   .meaning = "first global batches of the runs fitted, e.g. 256,4096 (default: "
                              "the smallest and largest when there are three or more, else all)"},
                  field(&DynamicsOptions::fit_batches)),
       Rows::text({.key = "optimizer", .meaning = "the runs' optimizer: sgd or adam"},
                  field(&DynamicsOptions::optimizer)),
       Rows::quantity({.key = "target-accuracy",
                       .meaning = "accuracy of the time-to-target comparison",
                       .default_value = "the workload's"},
                      field(&DynamicsOptions::target_accuracy),
                      Range{.low = 0, .low_open = true, .high = 1, .high_open = true}),
       Rows::quantity({.key = "noise-scale-weight",
                       .meaning = "weight of the measured B_simple in the fit (0: the noise scale "
                                  "from the accuracy and loss curves alone)"},
                      field(&DynamicsOptions::noise_scale_weight), Range{.low = 0, .finite = true}),
       Rows::quantity(
           {.key = "noise-scale-estimate-ratio",
            .meaning = "hold the workload's noise_scale_estimate_ratio κ = B_simple / "
                       "B_noise at this value (1: B_simple taken for B_noise itself)",
            .default_value = "fitted"},
           field(&DynamicsOptions::noise_scale_estimate_ratio),
           Range{.low = kMinNoiseScaleEstimateRatio, .high = kMaxNoiseScaleEstimateRatio}),
       Rows::flag({.key = "fit-plateau",
                   .meaning = "fit the plateau term too: plateau_share and plateau_progress, a "
                              "second phase approaching the final accuracy exponentially "
                              "(default: held at the workload's, none unless it has them)"},
                  field(&DynamicsOptions::fit_plateau)),
       SharedRows<DynamicsOptions>::out(field(&DynamicsOptions::out))});
}

}  // namespace

const KnobTable<CalibrateOptions>& calibrate_knobs() {
  // Built once: the rows are immutable and hold no state.
  static const KnobTable<CalibrateOptions> table = make_calibrate_knobs();
  return table;
}

const KnobTable<FidelityOptions>& fidelity_knobs() {
  static const KnobTable<FidelityOptions> table = make_fidelity_knobs();
  return table;
}

const KnobTable<DynamicsOptions>& dynamics_knobs() {
  static const KnobTable<DynamicsOptions> table = make_dynamics_knobs();
  return table;
}

}  // namespace dynamix
