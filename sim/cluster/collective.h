// Gradient synchronization timed through the network: ring all-reduce and a BytePS-style
// parameter server.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "sim/cluster/topology.h"
#include "sim/core/simulator.h"
#include "sim/network/network.h"

namespace dynamix {

enum class SyncArchitecture { kRing, kParameterServer };
/// kCollective moves the ring's 2(p-1)/p·n bytes per rank as one coupled transfer;
/// kPerStep runs its 2(p-1) steps of n/p bytes one after another (higher fidelity, more events).
enum class RingModel { kCollective, kPerStep };

struct SyncOptions {
  /// Ring all-reduce or parameter server.
  SyncArchitecture architecture = SyncArchitecture::kRing;
  /// Collective-level or per-step ring.
  RingModel ring_model = RingModel::kCollective;
  /// Parameter servers (BytePS shards the gradient evenly over them); by default every server
  /// node of the topology, or one colocated with the first worker when it has none.
  std::optional<int> servers = std::nullopt;
  /// Software latency per message (NCCL/BytePS launch and protocol), added to path latency;
  /// multiplied by the core sharing of the busiest machine (NodeSpec::core_sharing).
  Duration message_overhead = std::chrono::microseconds(5);
  /// DDP's own work per gradient bucket (autograd hooks, copying gradients into and out of the
  /// bucket), before the bucket's collective starts; TrainingRun pays it when it has more than
  /// one worker, a bare collective never.
  Duration bucket_overhead{};
  /// Fixed cost of one collective call (enqueue, rendezvous, completion), paid once per call.
  Duration call_overhead{};
  /// Throughput of the reduction arithmetic, in Gb/s of gradient reduced; 0: free. A ring rank
  /// reduces (p-1)/p of the gradient; a server reduces every worker's shard.
  double reduction_gbps = 0;
  /// DDP gradient bucket: the gradient is all-reduced in buckets of this many bytes, each as soon
  /// as the backward pass has produced it; 0: one all-reduce after the whole backward pass.
  double bucket_bytes = 0;
  /// Share of a worker's compute time that is the backward pass (the rest is forward).
  double backward_fraction = 2.0 / 3.0;
  /// Bus bandwidth among one node's GPUs (NVLink, PCIe), in Gb/s; 0: free. A node of g GPUs
  /// first all-reduces among them, moving 2(g-1)/g of the gradient at this rate.
  double intra_node_gbps = 0;
};

/// Most DDP buckets one synchronization may be split into.
inline constexpr double kMaxGradientBuckets = 4096;
/// A gradient of `gradient_bytes` in buckets of `bucket_bytes` (the last one holds the rest); one
/// bucket when bucket_bytes is 0 or at least the gradient.
std::vector<double> gradient_buckets(double gradient_bytes, double bucket_bytes);

/// Seconds to reduce `bytes` of gradient at options.reduction_gbps (0 when it is free).
double reduction_seconds(const SyncOptions& options, double bytes);

/// What one worker spent, sent and received during one synchronization.
struct WorkerSyncStats {
  Duration duration{};
  double bytes_sent = 0;
  /// Wire bytes that reached it over the network: its ring predecessor's sends, or its pulls
  /// from the parameter servers (a server on its own host sends it nothing over the network).
  double bytes_received = 0;
  double retransmitted_segments = 0;
  double timeouts = 0;
};

/// Synchronizes the gradients of a fixed set of workers. One synchronization runs at a time.
class Synchronizer {
 public:
  using DoneCallback = std::function<void(std::span<const WorkerSyncStats>)>;

  /// `worker_hosts` in ring order; `server_hosts` place the parameter servers (may coincide
  /// with workers). Routes are precomputed here.
  Synchronizer(Simulator& sim, Network& network, Topology& topology, SyncOptions options,
               std::vector<std::size_t> worker_hosts, std::vector<std::size_t> server_hosts);

  /// Starts reducing `gradient_bytes` from every worker now; `on_done` fires when every worker
  /// holds the result.
  void start(double gradient_bytes, DoneCallback on_done);
  /// The ring's per-step latency α: the slowest neighbour path plus the message overhead.
  Duration ring_step_latency() const { return ring_alpha_; }
  const SyncOptions& options() const { return options_; }

 private:
  void start_between_nodes(double gradient_bytes);
  void start_ring_collective(double gradient_bytes);
  void start_ring_step(double chunk_bytes, int steps_left);
  void start_parameter_server(double gradient_bytes);
  /// The route of parameter-server message `message` (a push, then the pulls; see send()).
  const SharedRoutes& routes_of(std::size_t message) const;
  /// Sends message `message` of this synchronization; deliver() runs when it has arrived.
  void send(std::size_t message);
  void deliver(std::size_t message);
  /// Every worker's pull from `server`.
  void pull_all(std::size_t server);
  /// Runs `then` after the call overhead (at once when there is none).
  void after_call_overhead(std::function<void()> then);
  void add_member_stats(std::size_t worker, const MemberStats& member);
  /// Every ring member's sends, and what its successor received of them.
  void add_ring_stats(const TransferStats& done);
  void finish_worker(std::size_t worker);

  Simulator& sim_;
  Network& network_;
  SyncOptions options_;
  std::vector<std::size_t> worker_hosts_;
  std::vector<std::size_t> server_hosts_;
  SharedRoutes ring_routes_;
  Duration message_overhead_{};
  Duration ring_alpha_{};
  /// The largest 2(g-1)/g over the workers' GPU counts g.
  double intra_node_share_ = 0;
  /// One route each, empty between a host and itself.
  std::vector<std::vector<SharedRoutes>> push_routes_;  // [worker][server]
  std::vector<std::vector<SharedRoutes>> pull_routes_;  // [server][worker]

  TimePoint started_;
  DoneCallback on_done_;
  std::vector<WorkerSyncStats> stats_;
  /// A per-step ring's chunk of this synchronization.
  double chunk_bytes_ = 0;
  double shard_bytes_ = 0;
  /// A server's sum of the other workers' shards, before anyone can pull.
  Duration server_reduction_{};
  /// What each message delivered, from its transfer's end until it arrives.
  std::vector<MemberStats> arrived_;
  std::vector<int> pushes_pending_;  // per server
  std::vector<int> pulls_pending_;   // per worker
  std::size_t workers_pending_ = 0;
};

}  // namespace dynamix
