// Ring all-reduce (Patarasuk & Yuan 2009; NCCL's 2(p-1)/p·n per rank) and BytePS-style
// parameter-server push/pull (Jiang et al., OSDI'20), both driven by the flow-level network.
#include "sim/cluster/collective.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "sim/core/check.h"

namespace dynamix {

double reduction_seconds(const SyncOptions& options, double bytes) {
  return options.reduction_gbps > 0 ? bytes * 8 / (options.reduction_gbps * 1e9) : 0;
}

std::vector<double> gradient_buckets(double gradient_bytes, double bucket_bytes) {
  if (bucket_bytes <= 0 || bucket_bytes >= gradient_bytes) return {gradient_bytes};
  const double count = std::ceil(gradient_bytes / bucket_bytes);
  DYNAMIX_CHECK(count <= kMaxGradientBuckets,
                gradient_bytes << " bytes in buckets of " << bucket_bytes);
  std::vector<double> buckets(static_cast<std::size_t>(count), bucket_bytes);
  buckets.back() = gradient_bytes - bucket_bytes * (count - 1);
  return buckets;
}

Synchronizer::Synchronizer(Simulator& sim, Network& network, Topology& topology,
                           SyncOptions options, std::vector<std::size_t> worker_hosts,
                           std::vector<std::size_t> server_hosts)
    : sim_(sim),
      network_(network),
      options_(options),
      worker_hosts_(std::move(worker_hosts)),
      server_hosts_(std::move(server_hosts)) {
  const std::size_t p = worker_hosts_.size();
  DYNAMIX_CHECK(p > 0, "a synchronizer needs workers");
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  if (options_.architecture == SyncArchitecture::kRing) {
    for (std::size_t i = 0; i < p; ++i)
      pairs.emplace_back(worker_hosts_[i], worker_hosts_[(i + 1) % p]);
  } else {
    DYNAMIX_CHECK(!server_hosts_.empty(), "a parameter server needs servers");
    for (std::size_t w : worker_hosts_) {
      for (std::size_t s : server_hosts_) {
        pairs.emplace_back(w, s);
        pairs.emplace_back(s, w);
      }
    }
  }
  topology.precompute_routes(pairs);
  // A message waits for its peer to be scheduled: on a machine with more ranks than cores the
  // software latency grows with the sharing.
  double sharing = 1;
  for (const std::size_t host : worker_hosts_)
    sharing = std::max(sharing, topology.hosts()[host].core_sharing);
  message_overhead_ =
      Duration{std::llround(static_cast<double>(options_.message_overhead.count()) * sharing)};
  auto route_between = [&](std::size_t from, std::size_t to) {
    return from == to ? Route{} : topology.route(from, to);
  };
  auto one_route = [&](std::size_t from, std::size_t to) {
    return std::make_shared<const std::vector<Route>>(1, route_between(from, to));
  };
  if (options_.architecture == SyncArchitecture::kRing) {
    Duration slowest{};
    std::vector<Route> ring;
    if (p > 1) {
      for (std::size_t i = 0; i < p; ++i) {
        ring.push_back(route_between(worker_hosts_[i], worker_hosts_[(i + 1) % p]));
        slowest = std::max(slowest, network_.latency(ring.back()));
      }
    }
    ring_routes_ = std::make_shared<const std::vector<Route>>(std::move(ring));
    ring_alpha_ = slowest + message_overhead_;
  } else {
    push_routes_.assign(p, {});
    pull_routes_.assign(server_hosts_.size(), {});
    for (std::size_t w = 0; w < p; ++w) {
      for (std::size_t s = 0; s < server_hosts_.size(); ++s) {
        push_routes_[w].push_back(one_route(worker_hosts_[w], server_hosts_[s]));
        pull_routes_[s].push_back(one_route(server_hosts_[s], worker_hosts_[w]));
      }
    }
  }
  for (const std::size_t host : worker_hosts_) {
    const double gpus = topology.hosts()[host].gpus;
    intra_node_share_ = std::max(intra_node_share_, 2 * (gpus - 1) / gpus);
  }
  stats_.resize(p);
}

void Synchronizer::start(double gradient_bytes, DoneCallback on_done) {
  DYNAMIX_CHECK(workers_pending_ == 0, "a synchronization is already running");
  on_done_ = std::move(on_done);
  started_ = sim_.now();
  std::fill(stats_.begin(), stats_.end(), WorkerSyncStats{});
  workers_pending_ = worker_hosts_.size();
  // Hierarchical: the GPUs of each node first reduce among themselves over the node's bus.
  const double intra_s = options_.intra_node_gbps > 0 ? intra_node_share_ * gradient_bytes * 8 /
                                                            (options_.intra_node_gbps * 1e9)
                                                      : 0;
  if (intra_s > 0) {
    sim_.schedule_after(ceil_seconds(intra_s),
                        [this, gradient_bytes] { start_between_nodes(gradient_bytes); });
  } else {
    start_between_nodes(gradient_bytes);
  }
}

void Synchronizer::start_between_nodes(double gradient_bytes) {
  if (options_.architecture == SyncArchitecture::kParameterServer) {
    start_parameter_server(gradient_bytes);
  } else if (worker_hosts_.size() == 1) {
    sim_.schedule_after(Duration{0}, [this] { finish_worker(0); });
  } else if (options_.ring_model == RingModel::kCollective) {
    start_ring_collective(gradient_bytes);
  } else {
    const auto steps = static_cast<int>(2 * (worker_hosts_.size() - 1));
    after_call_overhead([this, gradient_bytes, steps] {
      start_ring_step(gradient_bytes / static_cast<double>(worker_hosts_.size()), steps);
    });
  }
}

void Synchronizer::start_ring_collective(double gradient_bytes) {
  const auto p = static_cast<double>(worker_hosts_.size());
  const double bytes_per_rank = 2.0 * (p - 1.0) / p * gradient_bytes;
  const Duration latency =
      ring_alpha_ * static_cast<std::int64_t>(2 * (worker_hosts_.size() - 1)) +
      options_.call_overhead +
      ceil_seconds(reduction_seconds(options_, (p - 1.0) / p * gradient_bytes));
  network_.start_transfer_on(ring_routes_, bytes_per_rank,
                             [this, latency](const TransferStats& done) {
                               add_ring_stats(done);
                               sim_.schedule_after(latency, [this] {
                                 for (std::size_t i = 0; i < worker_hosts_.size(); ++i)
                                   finish_worker(i);
                               });
                             });
}

void Synchronizer::start_ring_step(double chunk_bytes, int steps_left) {
  // Callbacks capture (this, steps left) alone, which fits std::function's own storage.
  chunk_bytes_ = chunk_bytes;
  network_.start_transfer_on(
      ring_routes_, chunk_bytes, [this, steps_left](const TransferStats& done) {
        add_ring_stats(done);
        // The first p-1 steps reduce the chunk they received.
        const bool reduces = steps_left >= static_cast<int>(worker_hosts_.size());
        const Duration after =
            ring_alpha_ +
            (reduces ? ceil_seconds(reduction_seconds(options_, chunk_bytes_)) : Duration{});
        sim_.schedule_after(after, [this, steps_left] {
          if (steps_left > 1) {
            start_ring_step(chunk_bytes_, steps_left - 1);
          } else {
            for (std::size_t i = 0; i < worker_hosts_.size(); ++i) finish_worker(i);
          }
        });
      });
}

void Synchronizer::start_parameter_server(double gradient_bytes) {
  const std::size_t workers = worker_hosts_.size();
  const std::size_t servers = server_hosts_.size();
  shard_bytes_ = gradient_bytes / static_cast<double>(servers);
  pushes_pending_.assign(servers, static_cast<int>(workers));
  pulls_pending_.assign(workers, static_cast<int>(servers));
  arrived_.resize(2 * workers * servers);
  // The server sums the shards of the other workers before anyone can pull.
  server_reduction_ =
      ceil_seconds(reduction_seconds(options_, static_cast<double>(workers - 1) * shard_bytes_));
  after_call_overhead([this] {
    for (std::size_t message = 0; message < worker_hosts_.size() * server_hosts_.size();
         ++message) {
      send(message);
    }
  });
}

// Message m < W·S pushes worker m / S's shard to server m % S; message W·S + s·W + w pulls
// server s's result to worker w. Callbacks capture (this, m) alone: they fit std::function's
// own storage, so a message allocates nothing.
const SharedRoutes& Synchronizer::routes_of(std::size_t message) const {
  const std::size_t workers = worker_hosts_.size();
  const std::size_t servers = server_hosts_.size();
  const std::size_t pushes = workers * servers;
  return message < pushes
             ? push_routes_[message / servers][message % servers]
             : pull_routes_[(message - pushes) / workers][(message - pushes) % workers];
}

void Synchronizer::send(std::size_t message) {
  const SharedRoutes& routes = routes_of(message);
  if (routes->front().empty()) {
    arrived_[message] = MemberStats{};
    sim_.schedule_after(Duration{0}, [this, message] { deliver(message); });
    return;
  }
  network_.start_transfer_on(routes, shard_bytes_, [this, message](const TransferStats& done) {
    arrived_[message] = done.members.front();
    const Duration latency = network_.latency(routes_of(message)->front()) + message_overhead_;
    sim_.schedule_after(latency, [this, message] { deliver(message); });
  });
}

void Synchronizer::deliver(std::size_t message) {
  const std::size_t workers = worker_hosts_.size();
  const std::size_t servers = server_hosts_.size();
  const std::size_t pushes = workers * servers;
  const MemberStats& member = arrived_[message];
  if (message < pushes) {
    const std::size_t s = message % servers;
    add_member_stats(message / servers, member);
    if (--pushes_pending_[s] > 0) return;
    if (server_reduction_ == Duration::zero()) {
      pull_all(s);
    } else {
      sim_.schedule_after(server_reduction_, [this, s] { pull_all(s); });
    }
    return;
  }
  const std::size_t target = (message - pushes) % workers;
  WorkerSyncStats& stats = stats_[target];
  stats.bytes_received += member.wire_bytes;
  stats.retransmitted_segments += member.retransmitted_segments;
  stats.timeouts += member.timeouts;
  if (--pulls_pending_[target] == 0) finish_worker(target);
}

void Synchronizer::pull_all(std::size_t server) {
  const std::size_t workers = worker_hosts_.size();
  const std::size_t first = workers * server_hosts_.size() + server * workers;
  for (std::size_t target = 0; target < workers; ++target) send(first + target);
}

void Synchronizer::after_call_overhead(std::function<void()> then) {
  if (options_.call_overhead == Duration::zero()) {
    then();
  } else {
    sim_.schedule_after(options_.call_overhead, std::move(then));
  }
}

void Synchronizer::add_member_stats(std::size_t worker, const MemberStats& member) {
  WorkerSyncStats& stats = stats_[worker];
  stats.bytes_sent += member.wire_bytes;
  stats.retransmitted_segments += member.retransmitted_segments;
  stats.timeouts += member.timeouts;
}

void Synchronizer::add_ring_stats(const TransferStats& done) {
  const std::size_t p = worker_hosts_.size();
  for (std::size_t i = 0; i < p; ++i) {
    add_member_stats(i, done.members[i]);
    // Ring route i runs from worker i to worker i + 1.
    stats_[(i + 1) % p].bytes_received += done.members[i].wire_bytes;
  }
}

void Synchronizer::finish_worker(std::size_t worker) {
  stats_[worker].duration = sim_.now() - started_;
  DYNAMIX_CHECK(workers_pending_ > 0, "worker " << worker << " finished twice");
  if (--workers_pending_ == 0) on_done_(stats_);
}

}  // namespace dynamix
