// Arbitrator decision latency over loopback gRPC: a rank 0's report in, the decision out,
// observation, policy, LR factor and the log's append included. Target: p99 <= 2 ms at 32
// workers.
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>

#include "adapter/proto/dynamix.grpc.pb.h"
#include "adapter/server/arbitrator.h"
#include "adapter/server/arbitrator_server.h"
#include "gym/batch_size_env.h"
#include "gym/env_knobs.h"
#include "policies/export/torch_threads.h"
#include "policies/ppo/ppo_learner.h"

namespace dynamix {
namespace {

namespace fs = std::filesystem;

/// A randomly initialized policy of this build's schema (latency does not depend on training).
fs::path write_policy(const fs::path& directory) {
  const ObservationBuilder builder;
  const EnvOptions options = evaluation_env_options();
  const std::size_t features = builder.schema().features_per_worker();
  const PolicySnapshot snapshot =
      untrained_snapshot({.schema_json = builder.schema().to_json(),
                          .actions = default_actions(options.action_base),
                          .action_base = options.action_base,
                          .min_batch = options.min_batch,
                          .max_batch = options.max_batch,
                          .decision_interval = options.decision_interval},
                         features, 5);
  save_torchscript_policy(snapshot, directory / "policy.pt");
  return directory / "policy.pt";
}

wire::WindowReport report_for(std::size_t workers) {
  WindowMetrics window;
  window.iterations = 10;
  window.time_s = 12;
  window.iteration_s = 0.25;
  window.train_loss = 1.2;
  window.train_accuracy = 0.6;
  window.epochs = 1.5;
  for (std::size_t w = 0; w < workers; ++w) {
    const double speed = 400.0 + 37.0 * static_cast<double>(w % 11);
    window.workers.push_back({.gpu_type = w % 2 ? "V100" : "A100",
                              .batch_size = 64,
                              .compute_s = 64 / speed,
                              .comm_s = 0.05,
                              .wait_s = 0.02,
                              .throughput_gbps = 9.5,
                              .retransmit_rate = 1e-4,
                              .cpu_time_ratio = 0.2,
                              .memory_util = 0.4,
                              .samples_per_s = speed,
                              .grad_std_norm = 0.3,
                              .grad_var_norm = 0.09});
  }
  wire::WindowReport report;
  report.set_protocol_version(wire::PROTOCOL_VERSION_1);
  report.set_job_id("bench");
  report.set_window_index(0);
  report.set_iteration(10);
  *report.mutable_metrics() = to_wire_metrics(window);
  report.set_lr_rule(wire::LR_RULE_LINEAR);
  report.set_reference_batch(static_cast<double>(64 * workers));
  return report;
}

double percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1))];
}

void BM_ArbitratorDecision(benchmark::State& state) {
  const auto workers = static_cast<std::size_t>(state.range(0));
  std::ostringstream name;
  name << "dynamix_arbitrator_bench_" << ::getpid();
  const fs::path directory = fs::temp_directory_path() / name.str();
  fs::create_directories(directory);
  {
    const Arbitrator arbitrator(write_policy(directory), {.workers = workers});
    DecisionRunner runner(arbitrator, std::chrono::seconds(10));
    DecisionLogWriter log(directory, {});
    std::ostringstream messages;
    ArbitratorServer server(arbitrator, runner, log, {.host = "127.0.0.1", .port = 0}, messages);
    auto stub = wire::Arbitrator::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(server.port()), grpc::InsecureChannelCredentials()));
    const wire::WindowReport report = report_for(workers);
    std::vector<double> latencies_ms;
    for (auto _ : state) {
      grpc::ClientContext context;
      wire::Decision decision;
      const auto start = std::chrono::steady_clock::now();
      const grpc::Status status = stub->Decide(&context, report, &decision);
      latencies_ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
      if (!status.ok() || decision.batches_size() != static_cast<int>(workers)) {
        state.SkipWithError(status.error_message().c_str());
        break;
      }
    }
    if (!latencies_ms.empty()) {
      state.counters["p50_ms"] = percentile(latencies_ms, 0.50);
      state.counters["p99_ms"] = percentile(latencies_ms, 0.99);
    }
  }
  fs::remove_all(directory);
}
BENCHMARK(BM_ArbitratorDecision)
    ->Arg(32)
    ->ArgName("workers")
    ->Iterations(2000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ArbitratorDecision)
    ->Arg(1024)
    ->ArgName("workers")
    ->Iterations(200)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace dynamix
