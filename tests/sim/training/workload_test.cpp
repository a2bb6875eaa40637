// Workload catalog and the scenario `training:` map: contents, defaults and bad input.
#include "sim/training/workload.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/io/input_error.h"
#include "sim/scenario/scenario.h"
#include "sim/training/training_options.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

using testing::error_of;

/// A one-node scenario with this `training:` line; errors name the file "scenario.yaml".
Scenario setup_from(const std::string& training) {
  const testing::TempDirectory directory;
  const std::string path = directory.write(
      "scenario.yaml", training +
                           "topology: {switches: [tor], nodes: [{name: w, gpu: A100, cpu_cores: 8, "
                           "link: {to: tor, bandwidth_gbps: 25, latency_us: 2}}]}\n");
  try {
    return load_scenario(path);
  } catch (const InputError& error) {
    throw InputError("scenario.yaml", error.line(), error.where(), error.expected(), error.found());
  }
}

TEST_CASE("The builtin workload catalog has every required workload with positive figures") {
  const WorkloadCatalog catalog = WorkloadCatalog::builtin();
  for (const char* name :
       {"vgg11-cifar10", "resnet18-cifar10", "resnet34-cifar10", "resnet50-cifar10",
        "vgg11-cifar100", "resnet18-cifar100", "resnet34-cifar100", "resnet50-cifar100",
        "resnet50-imagenet", "gpt2small-wikitext103"}) {
    CAPTURE(name);
    const Workload* workload = catalog.find(name);
    REQUIRE(workload != nullptr);
    CHECK(workload->cost.parameters > 1e6);
    CHECK(workload->cost.flops_per_sample > 1e8);
    CHECK(workload->cost.activation_bytes_per_sample > 0);
    CHECK(workload->cost.cpu_seconds_per_sample > 0);
    CHECK(workload->dataset_size > 0);
    const StatisticalModel& model = workload->statistics;
    CHECK(model.final_accuracy > model.initial_accuracy);
    CHECK(model.final_noise_scale > model.initial_noise_scale);
    CHECK(model.target_accuracy < std::max(model.final_accuracy, model.final_accuracy_adam));
  }
  CHECK(catalog.find("resnet19-cifar10") == nullptr);
  CHECK(catalog.at("resnet18-cifar10").cost.parameters == 11173962);
}

TEST_CASE("The workload table lists one row per workload with its figures") {
  const WorkloadCatalog catalog = WorkloadCatalog::builtin();
  std::ostringstream out;
  print_workload_table(catalog, out);
  const std::string table = out.str();
  CHECK(table.starts_with("name"));
  CHECK(table.find("resnet50-imagenet") != std::string::npos);
  CHECK(table.find("25.56") != std::string::npos);
  CHECK(std::count(table.begin(), table.end(), '\n') ==
        static_cast<std::ptrdiff_t>(catalog.all().size() + 1));
}

TEST_CASE("A training map picks the optimizer's LR rule, target and budget by default") {
  const Scenario sgd = setup_from("training: {workload: resnet18-cifar10}\n");
  CHECK(sgd.workload.name == "resnet18-cifar10");
  CHECK(sgd.training.optimizer == Optimizer::kSgd);
  CHECK(sgd.training.lr_rule == LrRule::kLinear);
  CHECK(sgd.training.target_accuracy == 0.90);
  CHECK(sgd.training.budget_epochs == 200);
  CHECK(!sgd.training.budget_time_s);
  CHECK(sgd.cost.optimizer_state_bytes_per_parameter == 4);

  const Scenario adam = setup_from(
      "training:\n  workload: vgg11-cifar10\n  optimizer: adam\n  target_accuracy: 0.85\n"
      "  budget_time_s: 3600\n");
  CHECK(adam.training.lr_rule == LrRule::kSqrt);
  CHECK(adam.training.target_accuracy == 0.85);
  CHECK(adam.training.budget_time_s == 3600);
  CHECK(!adam.training.budget_epochs);
  CHECK(adam.cost.optimizer_state_bytes_per_parameter == 8);
}

TEST_CASE("Bad training input names the value and what was expected") {
  CHECK(error_of([] { setup_from("training: {workload: resnet19-cifar10}\n"); })
            .starts_with("scenario.yaml:1: training.workload: expected one of vgg11-cifar10, "
                         "resnet18-cifar10,"));
  CHECK(
      error_of([] {
        setup_from("training: {workload: resnet19-cifar10}\n");
      }).ends_with("found unknown workload 'resnet19-cifar10'; did you mean 'resnet18-cifar10'?"));
  CHECK(error_of([] { setup_from("training: {workload: resnet18-cifar10, optimizer: lamb}\n"); }) ==
        "scenario.yaml:1: training.optimizer: expected one of sgd, adam, found unknown optimizer "
        "'lamb'");
  CHECK(error_of([] { setup_from("training: {workload: resnet18-cifar10, lr_rule: cubic}\n"); }) ==
        "scenario.yaml:1: training.lr_rule: expected one of none, linear, sqrt, adascale, found "
        "unknown LR rule 'cubic'");
  CHECK(error_of(
            [] { setup_from("training: {workload: resnet18-cifar10, target_accuracy: 1.5}\n"); }) ==
        "scenario.yaml:1: training.target_accuracy: expected a number in (0, 1), found '1.5'");
  CHECK(error_of([] {
          setup_from("training: {workload: resnet18-cifar10, target_accuracy: 0}\n");
        }) == "scenario.yaml:1: training.target_accuracy: expected a number in (0, 1), found '0'");
  CHECK(error_of([] {
          setup_from("training: {workload: resnet18-cifar10, epochs: 3}\n");
        }).starts_with("scenario.yaml:1: training.epochs: expected one of the known keys"));
  CHECK(error_of([] {
          TrainingOptions options;
          options.target_accuracy = 1.0;
          make_training_setup(WorkloadCatalog::builtin().at("resnet18-cifar10"), options);
        }) == "training: target_accuracy: expected a number in (0, 1), found 1.000000");
}

std::string load_error(const std::string& entry) {
  const testing::TempDirectory dir;
  const std::string path = dir.write("workloads.yaml", "workloads:\n  - name: tiny\n" + entry);
  const std::string message = error_of([&] { WorkloadCatalog::load(path); });
  return message.substr(message.find(".yaml") + 5);
}

TEST_CASE("A catalog file with an unknown key or a bad value is rejected with its line") {
  CHECK(load_error("    modle: x\n") ==
        ":3: workloads.0.modle: expected one of the known keys (name, model, dataset, source, "
        "parameters, flops_per_sample, activation_bytes_per_sample, cpu_seconds_per_sample, "
        "bytes_per_parameter, dataset_size, validation_size, classes, reference_batch, "
        "reference_epochs, "
        "final_accuracy, final_accuracy_adam, final_train_accuracy, initial_loss, final_loss, "
        "initial_noise_scale, final_noise_scale, target_accuracy, gradient_statistic_noise, "
        "gradient_statistic_noise_samples, gradient_statistic_noise_floor, convergence_exponent, "
        "convergence_knee, noise_scale_estimate_ratio, plateau_share, plateau_progress), found "
        "unknown key 'modle'; did you mean 'model'?");
  CHECK(load_error("    model: m\n    dataset: d\n    parameters: -1\n") ==
        ":5: workloads.0.parameters: expected a number > 0, found '-1'");
  const std::string complete =
      "    model: m\n    dataset: d\n    parameters: 1000\n    flops_per_sample: 1\n"
      "    activation_bytes_per_sample: 1\n    cpu_seconds_per_sample: 1.0e-9\n"
      "    validation_size: 100\n    classes: 10\n    reference_batch: 1\n"
      "    reference_epochs: 1\n    final_accuracy: 0.9\n    final_accuracy_adam: 0.9\n"
      "    final_train_accuracy: 0.9\n    initial_loss: 2\n    final_loss: 1\n"
      "    initial_noise_scale: 1\n    final_noise_scale: 1\n    target_accuracy: 0.5\n";
  CHECK(load_error(complete + "    dataset_size: 1\n") ==
        ":21: workloads.0.dataset_size: expected an integer >= 1000, found '1'");
  CHECK(load_error(complete + "    dataset_size: 1000\n    gradient_statistic_noise: -0.1\n") ==
        ":22: workloads.0.gradient_statistic_noise: expected a number >= 0, found '-0.1'");
  CHECK(load_error(complete + "    dataset_size: 1000\n    gradient_statistic_noise: 6\n") ==
        ":22: workloads.0.gradient_statistic_noise: expected a number in [0, 5], found '6'");
  CHECK(error_of([] {
          WorkloadCatalog::builtin().at("bert");
        }).ends_with("found unknown workload 'bert'"));
}

TEST_CASE(
    "The convergence shape and the batch-dependent noise keys are optional and range-checked") {
  const std::string complete =
      "    model: m\n    dataset: d\n    parameters: 1000\n    flops_per_sample: 1\n"
      "    activation_bytes_per_sample: 1\n    cpu_seconds_per_sample: 1.0e-9\n"
      "    validation_size: 100\n    classes: 10\n    reference_batch: 1\n"
      "    reference_epochs: 1\n    final_accuracy: 0.9\n    final_accuracy_adam: 0.9\n"
      "    final_train_accuracy: 0.9\n    initial_loss: 2\n    final_loss: 1\n"
      "    initial_noise_scale: 1\n    final_noise_scale: 1\n    target_accuracy: 0.5\n"
      "    dataset_size: 1000\n";
  const auto error = [&](const std::string& line) { return load_error(complete + line); };
  CHECK(error("    convergence_exponent: 0\n") ==
        ":22: workloads.0.convergence_exponent: expected an exponent in [0.05, 5], found '0'");
  CHECK(error("    convergence_exponent: 7.5\n") ==
        ":22: workloads.0.convergence_exponent: expected an exponent in [0.05, 5], found '7.5'");
  CHECK(error("    convergence_knee: -0.01\n") ==
        ":22: workloads.0.convergence_knee: expected a knee in [1e-06, 10], found '-0.01'");
  CHECK(error("    convergence_knee: .nan\n") ==
        ":22: workloads.0.convergence_knee: expected a number, found '.nan'");
  CHECK(error("    convergence_knee: fast\n").starts_with(":22: workloads.0.convergence_knee: "));
  CHECK(error("    gradient_statistic_noise_samples: 0.5\n") ==
        ":22: workloads.0.gradient_statistic_noise_samples: expected a per-worker batch in [1, "
        "1e9], found '0.5'");
  CHECK(
      error("    gradient_statistic_noise_samples: 64\n    gradient_statistic_noise_floor: 6\n") ==
      ":23: workloads.0.gradient_statistic_noise_floor: expected a number in [0, 5], found '6'");
  CHECK(error("    gradient_statistic_noise_floor: 0.5\n") ==
        ":22: workloads.0.gradient_statistic_noise_floor: expected "
        "gradient_statistic_noise_samples beside it (the floor of a batch-dependent noise), found "
        "a floor without it");

  CHECK(error("    noise_scale_estimate_ratio: 0\n") ==
        ":22: workloads.0.noise_scale_estimate_ratio: expected a ratio B_simple / B_noise in "
        "[0.001, 1000], found '0'");
  CHECK(error("    noise_scale_estimate_ratio: 2000\n") ==
        ":22: workloads.0.noise_scale_estimate_ratio: expected a ratio B_simple / B_noise in "
        "[0.001, 1000], found '2000'");
  CHECK(error("    noise_scale_estimate_ratio: .inf\n")
            .starts_with(":22: workloads.0.noise_scale_estimate_ratio: expected "));
  CHECK(error("    plateau_share: 1.5\n    plateau_progress: 0.1\n") ==
        ":22: workloads.0.plateau_share: expected a share in [0, 1], found '1.5'");
  CHECK(error("    plateau_share: 0.3\n    plateau_progress: 0\n") ==
        ":23: workloads.0.plateau_progress: expected a progress in [0.0001, 100], found '0'");
  CHECK(error("    plateau_share: 0.3\n") ==
        ":22: workloads.0.plateau_share: expected plateau_progress beside it (the plateau phase's "
        "scale), found a share without it");
  CHECK(error("    plateau_progress: 0.1\n") ==
        ":22: workloads.0.plateau_progress: expected plateau_share beside it (the share the "
        "plateau phase closes), found a scale without it");

  const testing::TempDirectory dir;
  const std::string path = dir.write(
      "workloads.yaml", "workloads:\n  - name: tiny\n" + complete +
                            "    convergence_exponent: 0.4\n    convergence_knee: 0.0005\n"
                            "    gradient_statistic_noise_samples: 64\n"
                            "    gradient_statistic_noise_floor: 1.2\n"
                            "    noise_scale_estimate_ratio: 0.25\n"
                            "    plateau_share: 0.3\n    plateau_progress: 0.2\n");
  const StatisticalModel given = WorkloadCatalog::load(path).at("tiny").statistics;
  CHECK(given.convergence_exponent == 0.4);
  CHECK(given.convergence_knee == 0.0005);
  CHECK(given.gradient_statistic_noise_samples == 64);
  CHECK(given.gradient_statistic_noise_floor == 1.2);
  CHECK(given.noise_scale_estimate_ratio == 0.25);
  CHECK(given.plateau_share == 0.3);
  CHECK(given.plateau_progress == 0.2);
  const std::string plain = dir.write("plain.yaml", "workloads:\n  - name: tiny\n" + complete);
  CHECK(WorkloadCatalog::load(plain).at("tiny").statistics.noise_scale_estimate_ratio == 1.0);
  const WorkloadCatalog catalog = WorkloadCatalog::builtin();
  for (const Workload& shipped : catalog.all()) {
    CAPTURE(shipped.name);
    CHECK_FALSE(shipped.statistics.convergence_exponent.has_value());
    CHECK_FALSE(shipped.statistics.convergence_knee.has_value());
    CHECK_FALSE(shipped.statistics.gradient_statistic_noise_samples.has_value());
    CHECK(shipped.statistics.noise_scale_estimate_ratio == 1.0);
    CHECK(shipped.statistics.plateau_share == 0);
  }
}

}  // namespace
}  // namespace dynamix
