// Synchronizer: the ring against its closed form and its per-step model, the parameter server
// against the ring, and how bandwidth, loss and background traffic slow synchronization.
#include "sim/cluster/collective.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/gpu_catalog.h"

namespace dynamix {
namespace {

using std::chrono::microseconds;
using std::chrono::seconds;

constexpr double kNicGbps = 25;
const LinkSpec kNic{kNicGbps, microseconds(2), 0};

std::vector<NodeSpec> workers(std::size_t count) {
  const GpuCatalog catalog = GpuCatalog::builtin();
  const GpuSpec* gpu = catalog.find("A100");
  REQUIRE(gpu != nullptr);
  std::vector<NodeSpec> hosts;
  for (std::size_t i = 0; i < count; ++i)
    hosts.push_back(worker_node(std::string("w").append(std::to_string(i)), *gpu));
  return hosts;
}

NodeSpec server(std::string name) {
  NodeSpec node;
  node.name = std::move(name);
  node.role = NodeRole::kServer;
  node.gpus = 0;
  return node;
}

/// What one synchronization cost, summed or maximized over workers.
struct SyncResult {
  double seconds = 0;
  double bytes_sent = 0;
  double bytes_received = 0;
  double retransmits = 0;
  double timeouts = 0;
};

/// A cluster whose links may differ from the topology's (the test degrades some of them).
class Cluster {
 public:
  Cluster(Topology topology, SyncOptions options, const std::vector<LinkSpec>& links = {},
          NetworkOptions network_options = {})
      : topology_(std::move(topology)),
        network_(sim_, links.empty() ? topology_.links() : links, network_options),
        synchronizer_(sim_, network_, topology_, options, topology_.workers(),
                      topology_.servers()) {}

  Network& network() { return network_; }
  Simulator& sim() { return sim_; }
  const Synchronizer& synchronizer() const { return synchronizer_; }

  /// Synchronizes `gradient_bytes` starting at `at` (or now) and runs until it completes.
  SyncResult synchronize(double gradient_bytes, std::optional<TimePoint> at = std::nullopt) {
    if (at) sim_.run_until(*at);
    std::optional<SyncResult> result;
    synchronizer_.start(gradient_bytes, [&](std::span<const WorkerSyncStats> stats) {
      SyncResult summed;
      for (const WorkerSyncStats& worker : stats) {
        summed.seconds = std::max(summed.seconds, to_seconds(worker.duration));
        summed.bytes_sent += worker.bytes_sent;
        summed.bytes_received += worker.bytes_received;
        summed.retransmits += worker.retransmitted_segments;
        summed.timeouts += worker.timeouts;
      }
      result = summed;
      sim_.stop();
    });
    sim_.run();
    REQUIRE(result.has_value());
    return *result;
  }

 private:
  Simulator sim_;
  Topology topology_;
  Network network_;
  Synchronizer synchronizer_;
};

/// The directed link between a host and the star's switch.
LinkId link(const Topology& topology, const std::string& from, const std::string& to) {
  const auto id = topology.find_link(from, to);
  REQUIRE(id.has_value());
  return *id;
}

SyncOptions ring(RingModel model = RingModel::kCollective) {
  return {.architecture = SyncArchitecture::kRing, .ring_model = model};
}

SyncOptions parameter_server() { return {.architecture = SyncArchitecture::kParameterServer}; }

double ring_closed_form(std::size_t p, double alpha_s, double gradient_bytes, double gbps) {
  const auto ranks = static_cast<double>(p);
  return 2 * (ranks - 1) * alpha_s + 2 * (ranks - 1) / ranks * gradient_bytes / (gbps * 1e9 / 8);
}

TEST_CASE("ring all-reduce on an uncongested uniform cluster takes 2(p-1)α + 2(p-1)/p·n/B") {
  for (const std::size_t p : {2, 8, 32}) {
    for (const double gradient_bytes : {1e6, 44.7e6, 250e6}) {
      CAPTURE(p);
      CAPTURE(gradient_bytes);
      Cluster cluster(Topology::star(workers(p), kNic), ring());
      const double alpha_s = to_seconds(cluster.synchronizer().ring_step_latency());
      CHECK(alpha_s > 0);
      const SyncResult result = cluster.synchronize(gradient_bytes);
      const double expected = ring_closed_form(p, alpha_s, gradient_bytes, kNicGbps);
      CHECK(result.seconds == doctest::Approx(expected).epsilon(0.05));
      CHECK(result.retransmits == 0);
      CHECK(result.timeouts == 0);
    }
  }
}

TEST_CASE("framing and transport efficiency slow the bandwidth term by their product") {
  const std::size_t p = 8;
  const double gradient_bytes = 100e6;
  const NetworkOptions lossy_stack{.frame_overhead_bytes = 78, .transport_efficiency = 0.6};
  CHECK(payload_fraction(lossy_stack) == doctest::Approx(1460.0 / 1538.0 * 0.6));
  Cluster ideal(Topology::star(workers(p), kNic), ring());
  Cluster real(Topology::star(workers(p), kNic), ring(), {}, lossy_stack);
  const double alpha_s = to_seconds(ideal.synchronizer().ring_step_latency());
  const double expected =
      ring_closed_form(p, alpha_s, gradient_bytes, kNicGbps * payload_fraction(lossy_stack));
  CHECK(real.synchronize(gradient_bytes).seconds == doctest::Approx(expected).epsilon(0.01));
  CHECK(ideal.synchronize(gradient_bytes).seconds < expected * 0.6);
}

TEST_CASE("a collective call pays its fixed cost once and its reduction at the set throughput") {
  const std::size_t p = 4;
  const double gradient_bytes = 40e6;
  SyncOptions options = ring();
  Cluster plain(Topology::star(workers(p), kNic), options);
  options.call_overhead = microseconds(300);
  options.reduction_gbps = 80;
  const double reduce_s = 3.0 / 4.0 * gradient_bytes * 8 / 80e9;
  CHECK(reduction_seconds(options, 3.0 / 4.0 * gradient_bytes) == doctest::Approx(reduce_s));
  for (const RingModel model : {RingModel::kCollective, RingModel::kPerStep}) {
    CAPTURE(static_cast<int>(model));
    options.ring_model = model;
    Cluster costly(Topology::star(workers(p), kNic), options);
    const double added =
        costly.synchronize(gradient_bytes).seconds - plain.synchronize(gradient_bytes).seconds;
    CHECK(added == doctest::Approx(300e-6 + reduce_s).epsilon(0.02));
  }
  std::vector<NodeSpec> hosts = workers(p);
  hosts.push_back(server("ps0"));
  SyncOptions ps = parameter_server();
  Cluster ps_plain(Topology::star(hosts, kNic), ps);
  ps.call_overhead = microseconds(300);
  ps.reduction_gbps = 80;
  Cluster ps_costly(Topology::star(hosts, kNic), ps);
  // One server adds 4 workers' copies of the whole gradient: 3 additions.
  const double ps_added =
      ps_costly.synchronize(gradient_bytes).seconds - ps_plain.synchronize(gradient_bytes).seconds;
  CHECK(ps_added == doctest::Approx(300e-6 + 3 * gradient_bytes * 8 / 80e9).epsilon(0.02));
}

TEST_CASE("multi-GPU nodes first reduce among their GPUs at the intra-node bus bandwidth") {
  const GpuCatalog catalog = GpuCatalog::builtin();
  std::vector<NodeSpec> hosts = {worker_node("dgx0", *catalog.find("V100"), 8),
                                 worker_node("dgx1", *catalog.find("V100"), 8)};
  SyncOptions options = ring();
  Cluster flat(Topology::star(hosts, kNic), options);
  options.intra_node_gbps = 1000;
  Cluster hierarchical(Topology::star(hosts, kNic), options);
  const double gradient_bytes = 100e6;
  const double added =
      hierarchical.synchronize(gradient_bytes).seconds - flat.synchronize(gradient_bytes).seconds;
  CHECK(added == doctest::Approx(2.0 * 7.0 / 8.0 * gradient_bytes * 8 / 1000e9).epsilon(0.01));
  // One node alone still pays its intra-node all-reduce.
  Cluster single(Topology::star({hosts[0]}, kNic), options);
  CHECK(single.synchronize(gradient_bytes).seconds > 0);
}

TEST_CASE("a gradient splits into DDP buckets, the last one holding the rest") {
  CHECK(gradient_buckets(100, 0) == std::vector<double>{100});
  CHECK(gradient_buckets(100, 250) == std::vector<double>{100});
  CHECK(gradient_buckets(100, 30) == std::vector<double>{30, 30, 30, 10});
  CHECK(gradient_buckets(90, 30) == std::vector<double>{30, 30, 30});
}

TEST_CASE("ring step latency is the slowest neighbour path plus the message overhead") {
  Cluster cluster(Topology::star(workers(4), kNic), ring());
  // Two 2 us links between neighbours, 5 us of default message overhead.
  CHECK(cluster.synchronizer().ring_step_latency() == microseconds(9));
}

TEST_CASE("per-step ring agrees with the collective-level ring on an uncongested network") {
  const auto compare = [](auto make_topology) {
    for (const double gradient_bytes : {1e6, 44.7e6}) {
      CAPTURE(gradient_bytes);
      Cluster collective(make_topology(), ring(RingModel::kCollective));
      Cluster per_step(make_topology(), ring(RingModel::kPerStep));
      const SyncResult a = collective.synchronize(gradient_bytes);
      const SyncResult b = per_step.synchronize(gradient_bytes);
      CHECK(b.seconds == doctest::Approx(a.seconds).epsilon(0.01));
      CHECK(b.bytes_sent == doctest::Approx(a.bytes_sent).epsilon(0.01));
    }
  };
  for (const std::size_t p : {2, 8, 32}) {
    CAPTURE(p);
    compare([p] { return Topology::star(workers(p), kNic); });
  }
  // Across racks: 4 leaves of 8 hosts, uplinks fast enough that the NICs stay the bottleneck.
  compare([] { return Topology::leaf_spine(workers(32), {.hosts_per_leaf = 8, .spines = 2}); });
}

TEST_CASE("a ring rank sends and receives 2(p-1)/p of the gradient") {
  const std::size_t p = 8;
  for (const RingModel model : {RingModel::kCollective, RingModel::kPerStep}) {
    Cluster cluster(Topology::star(workers(p), kNic), ring(model));
    const SyncResult result = cluster.synchronize(8e6);
    CHECK(result.bytes_sent == doctest::Approx(p * 2.0 * 7.0 / 8.0 * 8e6));
    CHECK(result.bytes_received == doctest::Approx(result.bytes_sent));
  }
}

TEST_CASE("a parameter-server worker sends its shards and receives the servers' pulls") {
  const std::size_t p = 4;
  std::vector<NodeSpec> hosts = workers(p);
  for (const char* name : {"ps0", "ps1"}) hosts.push_back(server(name));
  Cluster cluster(Topology::star(hosts, kNic), parameter_server());
  const SyncResult result = cluster.synchronize(8e6);
  // Each worker pushes its whole gradient (a shard to each server) and pulls it back summed.
  CHECK(result.bytes_sent == doctest::Approx(p * 8e6));
  CHECK(result.bytes_received == doctest::Approx(p * 8e6));
}

TEST_CASE("a parameter server with few servers is slower than the ring for the same gradient") {
  const double gradient_bytes = 44.7e6;
  Cluster ring_cluster(Topology::star(workers(16), kNic), ring());
  const double ring_s = ring_cluster.synchronize(gradient_bytes).seconds;
  for (const std::size_t servers : {1, 2}) {
    CAPTURE(servers);
    std::vector<NodeSpec> hosts = workers(16);
    for (std::size_t s = 0; s < servers; ++s) hosts.push_back(server("ps" + std::to_string(s)));
    Cluster ps_cluster(Topology::star(hosts, kNic), parameter_server());
    const double ps_s = ps_cluster.synchronize(gradient_bytes).seconds;
    CHECK(ps_s > ring_s);
    // Every worker's shard crosses the server NICs twice: at least 2·16·n/(k·B).
    const double server_bound_s =
        2.0 * 16.0 * gradient_bytes / (static_cast<double>(servers) * kNicGbps * 1e9 / 8);
    CHECK(ps_s >= server_bound_s);
  }
}

TEST_CASE("with incast the parameter server reports timeouts and the ring none") {
  std::vector<NodeSpec> hosts = workers(16);
  hosts.push_back(server("ps0"));
  const double gradient_bytes = 44.7e6;
  Cluster ps_cluster(Topology::star(hosts, kNic), parameter_server());
  const SyncResult ps = ps_cluster.synchronize(gradient_bytes);
  CHECK(ps.timeouts > 0);
  CHECK(ps.retransmits > 0);

  Cluster ring_cluster(Topology::star(workers(16), kNic), ring());
  const SyncResult ring_result = ring_cluster.synchronize(gradient_bytes);
  CHECK(ring_result.timeouts == 0);
  CHECK(ring_result.retransmits == 0);

  // Without incast modelling the same push/pull has no timeouts and is faster.
  std::vector<NodeSpec> same_hosts = workers(16);
  same_hosts.push_back(server("ps0"));
  Cluster calm(Topology::star(same_hosts, kNic), parameter_server(), {}, {.incast = false});
  const SyncResult calm_result = calm.synchronize(gradient_bytes);
  CHECK(calm_result.timeouts == 0);
  CHECK(calm_result.seconds < ps.seconds);
}

TEST_CASE("halving the bottleneck link's bandwidth lengthens synchronization") {
  const double gradient_bytes = 44.7e6;
  for (const SyncOptions& options : {ring(), ring(RingModel::kPerStep), parameter_server()}) {
    const bool is_ring = options.architecture == SyncArchitecture::kRing;
    CAPTURE(is_ring);
    std::vector<NodeSpec> hosts = workers(8);
    if (!is_ring) hosts.push_back(server("ps0"));
    const Topology topology = Topology::star(hosts, kNic);
    // Worker 0's NIC paces the ring; the server's NIC is the parameter server's bottleneck.
    const std::string host = is_ring ? "w0" : "ps0";
    std::vector<LinkSpec> halved = topology.links();
    halved[link(topology, host, "switch")].bandwidth_gbps /= 2;
    halved[link(topology, "switch", host)].bandwidth_gbps /= 2;
    Cluster full(topology, options);
    Cluster slow(topology, options, halved);
    const double full_s = full.synchronize(gradient_bytes).seconds;
    const double slow_s = slow.synchronize(gradient_bytes).seconds;
    CHECK(slow_s > 1.2 * full_s);
    if (is_ring) {
      // The slowest ring member paces the whole ring: the bandwidth term doubles.
      CHECK(slow_s == doctest::Approx(2 * full_s).epsilon(0.05));
    }
  }
}

TEST_CASE("loss raises retransmits, bytes on the wire and communication time") {
  const double gradient_bytes = 44.7e6;
  const Topology topology = Topology::star(workers(8), kNic);
  Cluster clean(topology, ring());
  const SyncResult clean_result = clean.synchronize(gradient_bytes);
  double previous_s = clean_result.seconds;
  double previous_retransmits = clean_result.retransmits;
  for (const double loss : {1e-4, 1e-3, 1e-2}) {
    CAPTURE(loss);
    std::vector<LinkSpec> lossy = topology.links();
    lossy[link(topology, "w0", "switch")].loss_rate = loss;
    Cluster cluster(topology, ring(), lossy);
    const SyncResult result = cluster.synchronize(gradient_bytes);
    CHECK(result.retransmits > previous_retransmits);
    CHECK(result.seconds > previous_s);
    CHECK(result.bytes_sent > clean_result.bytes_sent);
    previous_s = result.seconds;
    previous_retransmits = result.retransmits;
  }
}

TEST_CASE("background traffic slows synchronization while it lasts") {
  const double gradient_bytes = 44.7e6;
  const Topology topology = Topology::star(workers(8), kNic);
  Cluster quiet(topology, ring());
  const double quiet_s = quiet.synchronize(gradient_bytes).seconds;

  SUBCASE("set_background_gbps") {
    Cluster busy(topology, ring());
    const LinkId uplink = link(topology, "w0", "switch");
    busy.network().set_background_gbps(uplink, kNicGbps / 2);
    const double busy_s = busy.synchronize(gradient_bytes).seconds;
    CHECK(busy_s == doctest::Approx(2 * quiet_s).epsilon(0.05));
    busy.network().set_background_gbps(uplink, 0);
    CHECK(busy.synchronize(gradient_bytes).seconds == doctest::Approx(quiet_s));
  }
  SUBCASE("a trace") {
    // 20 of 25 Gb/s taken for the first 10 s, then nothing.
    BandwidthTrace trace{.steps = {{Duration{0}, 20}, {seconds(10), 0}}};
    Cluster traced(topology, ring());
    traced.network().add_trace(link(topology, "w0", "switch"), trace);
    const double burst_s = traced.synchronize(gradient_bytes).seconds;
    CHECK(burst_s > 3 * quiet_s);
    const double after_s = traced.synchronize(gradient_bytes, kTimeZero + seconds(11)).seconds;
    CHECK(after_s == doctest::Approx(quiet_s));
  }
}

TEST_CASE("a synchronization starting after a finished one costs the same") {
  Cluster cluster(Topology::star(workers(8), kNic), ring(RingModel::kPerStep));
  const SyncResult first = cluster.synchronize(10e6);
  const SyncResult second = cluster.synchronize(10e6);
  CHECK(second.seconds == doctest::Approx(first.seconds));
  CHECK(second.bytes_sent == doctest::Approx(first.bytes_sent));
}

}  // namespace
}  // namespace dynamix
