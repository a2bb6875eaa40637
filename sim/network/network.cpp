// Transfers as max-min variables: lazy progress, one pending network event, incast rounds.
#include "sim/network/network.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <unordered_map>
#include <utility>

#include "sim/core/check.h"
#include "sim/network/max_min.h"
#include "sim/network/tcp.h"

namespace dynamix {
namespace {

constexpr double kBytesPerGigabit = 1e9 / 8;
// Rounding in remaining / rate must not push an exact finish into the next nanosecond; the
// slack is far below a nanosecond for any simulated span shorter than a day.
constexpr double kFinishSlack = 1e-14;

Duration time_to_send(double bytes, double rate_bytes_per_s) {
  return ceil_seconds(bytes / rate_bytes_per_s * (1 - kFinishSlack));
}

double done_epsilon_bytes(double bytes_per_member) { return 1e-9 * bytes_per_member + 1e-6; }

struct Transfer {
  TransferId id = 0;
  SharedRoutes members;
  double bytes_per_member = 0;
  double remaining_bytes = 0;
  double rate_bytes_per_s = 0;
  double bound_bytes_per_s = kUnbounded;
  TimePoint start;
  TimePoint active_from;
  std::vector<MemberStats> stats;
  std::function<void(const TransferStats&)> on_done;
};

struct TraceReplay {
  LinkId link = 0;
  BandwidthTrace trace;
  TimePoint cycle_origin;
  std::size_t next_step = 0;
  EventId event;
};

// What starting a transfer needs of one member route; the links' latency and loss never change.
struct MemberPath {
  Duration rtt{};
  double loss = 0;
  double cap_bytes_per_s = 0;
  double timeout_fraction = 0;
};

// The synchronized burst arriving at one egress port: senders that started within one RTT.
struct PortBurst {
  TimePoint until;
  std::size_t senders = 0;
};

}  // namespace

struct Network::Impl {
  Impl(Simulator& simulator, std::vector<LinkSpec> link_specs, NetworkOptions network_options);
  ~Impl();

  double available_bytes_per_s(LinkId id) const;
  /// What payload can use of the available capacity.
  double payload_bytes_per_s(LinkId id) const {
    return available_bytes_per_s(id) * payload_fraction(options);
  }
  void check_route(const Route& route) const;
  Duration latency(const Route& route) const;
  double loss(const Route& route) const;
  double flow_cap_bytes_per_s(const Route& route) const;
  MemberPath member_path(const Route& route) const;
  /// The paths of `routes`' members, remembered while others hold the routes too (a collective
  /// starts a transfer on the same routes every iteration).
  std::span<const MemberPath> member_paths(const SharedRoutes& routes);
  std::size_t incast_round(LinkId port, Duration rtt);

  TransferId start_transfer(SharedRoutes members, double bytes_per_member,
                            std::function<void(const TransferStats&)> on_done);
  void set_background_gbps(LinkId id, double gbps);
  void schedule_trace_step(std::size_t replay);
  void apply_trace_step(std::size_t replay);

  const Transfer* find(TransferId id) const;
  void mark_dirty();
  void settle();
  void advance();
  void solve();
  void schedule_next();
  void on_network_event();

  Simulator& sim;
  std::vector<LinkSpec> links;
  NetworkOptions options;
  std::vector<double> background_gbps;
  std::vector<PortBurst> bursts;
  MaxMinProblem problem;
  MaxMinSolver solver;
  std::vector<std::size_t> variable_transfer;
  std::vector<Transfer> live;
  std::vector<Transfer> finished;
  /// The member paths of route sets someone else holds too, keyed by address; each entry holds
  /// its set, so an address cannot be reused while it is here.
  std::unordered_map<const std::vector<Route>*, std::pair<SharedRoutes, std::vector<MemberPath>>>
      paths;
  std::vector<MemberPath> unshared_paths;
  /// Member-stats vectors of finished transfers, for the next transfers to reuse: never more
  /// than were live at once.
  std::vector<std::vector<MemberStats>> spare_stats;
  std::vector<TraceReplay> traces;
  TransferId next_id = 1;
  TimePoint progressed_to;
  EventId next_event;
  TimePoint next_event_time = kTimeInfinity;
  bool event_pending = false;
  bool dirty = false;
};

double payload_fraction(const NetworkOptions& options) {
  return options.mss_bytes / (options.mss_bytes + options.frame_overhead_bytes) *
         options.transport_efficiency;
}

Network::Impl::Impl(Simulator& simulator, std::vector<LinkSpec> link_specs,
                    NetworkOptions network_options)
    : sim(simulator),
      links(std::move(link_specs)),
      options(network_options),
      background_gbps(links.size(), 0.0),
      bursts(links.size()),
      progressed_to(simulator.now()) {
  DYNAMIX_CHECK(options.mss_bytes > 0, "mss_bytes " << options.mss_bytes);
  DYNAMIX_CHECK(options.max_window_bytes > 0, "max_window_bytes " << options.max_window_bytes);
  DYNAMIX_CHECK(options.segments_per_ack >= 1, "segments_per_ack " << options.segments_per_ack);
  DYNAMIX_CHECK(options.initial_window_segments > 0,
                "initial_window_segments " << options.initial_window_segments);
  DYNAMIX_CHECK(options.switch_buffer_bytes >= 0,
                "switch_buffer_bytes " << options.switch_buffer_bytes);
  DYNAMIX_CHECK(options.min_available_fraction > 0 && options.min_available_fraction <= 1,
                "min_available_fraction " << options.min_available_fraction);
  DYNAMIX_CHECK(options.frame_overhead_bytes >= 0,
                "frame_overhead_bytes " << options.frame_overhead_bytes);
  DYNAMIX_CHECK(options.transport_efficiency > 0 && options.transport_efficiency <= 1,
                "transport_efficiency " << options.transport_efficiency);
  for (std::size_t id = 0; id < links.size(); ++id) {
    const LinkSpec& spec = links[id];
    DYNAMIX_CHECK(spec.bandwidth_gbps > 0 && std::isfinite(spec.bandwidth_gbps),
                  "link " << id << " bandwidth_gbps " << spec.bandwidth_gbps);
    DYNAMIX_CHECK(spec.latency.count() >= 0, "link " << id << " latency " << spec.latency.count());
    DYNAMIX_CHECK(spec.loss_rate >= 0 && spec.loss_rate < 1,
                  "link " << id << " loss_rate " << spec.loss_rate);
  }
  problem.capacities.resize(links.size());
  for (std::size_t id = 0; id < links.size(); ++id) {
    problem.capacities[id] = payload_bytes_per_s(static_cast<LinkId>(id));
  }
}

Network::Impl::~Impl() {
  if (event_pending) sim.cancel(next_event);
  for (const TraceReplay& replay : traces) sim.cancel(replay.event);
}

double Network::Impl::available_bytes_per_s(LinkId id) const {
  const double capacity = links[id].bandwidth_gbps;
  return std::max(capacity - background_gbps[id], options.min_available_fraction * capacity) *
         kBytesPerGigabit;
}

void Network::Impl::check_route(const Route& route) const {
  for (const LinkId id : route) {
    DYNAMIX_CHECK(id < links.size(), "route uses link " << id << " of " << links.size());
  }
}

Duration Network::Impl::latency(const Route& route) const {
  check_route(route);
  Duration total{};
  for (const LinkId id : route) total += links[id].latency;
  return total;
}

double Network::Impl::loss(const Route& route) const {
  check_route(route);
  double delivered = 1;
  for (const LinkId id : route) delivered *= 1 - links[id].loss_rate;
  return 1 - delivered;
}

double Network::Impl::flow_cap_bytes_per_s(const Route& route) const {
  const Duration rtt = 2 * latency(route);
  return std::min(window_cap_bytes_per_s(options.max_window_bytes, rtt),
                  padhye_rate_bytes_per_s(options.mss_bytes, rtt, loss(route),
                                          retransmission_timeout(rtt, options.min_rto),
                                          options.segments_per_ack, options.loss_recovery));
}

MemberPath Network::Impl::member_path(const Route& route) const {
  const Duration rtt = 2 * latency(route);
  const double p = loss(route);
  return {.rtt = rtt,
          .loss = p,
          .cap_bytes_per_s = flow_cap_bytes_per_s(route),
          .timeout_fraction = timeout_fraction(p, options.segments_per_ack, options.loss_recovery)};
}

std::span<const MemberPath> Network::Impl::member_paths(const SharedRoutes& routes) {
  // Enough for a parameter server of 1,024 workers and 32 servers (2·W·S route sets).
  constexpr std::size_t kRememberedRouteSets = 1 << 16;
  const auto found = paths.find(routes.get());
  if (found != paths.end()) return found->second.second;
  if (routes.use_count() > 1 && paths.size() == kRememberedRouteSets) {
    // Forget the sets only this cache still holds (their collective is gone).
    std::erase_if(paths, [](const auto& entry) { return entry.second.first.use_count() == 1; });
  }
  std::vector<MemberPath>* out = &unshared_paths;
  if (routes.use_count() > 1 && paths.size() < kRememberedRouteSets) {
    auto& [kept, remembered] = paths[routes.get()];
    kept = routes;
    out = &remembered;
  }
  out->clear();
  for (const Route& route : *routes) out->push_back(member_path(route));
  return *out;
}

std::size_t Network::Impl::incast_round(LinkId port, Duration rtt) {
  PortBurst& burst = bursts[port];
  const TimePoint now = sim.now();
  if (burst.senders == 0 || now > burst.until) burst = {now, 0};
  burst.until = std::max(burst.until, now + rtt);
  const std::size_t position = burst.senders++;
  const double per_round = incast_senders_per_round(
      options.switch_buffer_bytes, available_bytes_per_s(port) * to_seconds(rtt),
      options.initial_window_segments * options.mss_bytes);
  return static_cast<std::size_t>(static_cast<double>(position) / per_round);
}

TransferId Network::Impl::start_transfer(SharedRoutes shared, double bytes_per_member,
                                         std::function<void(const TransferStats&)> on_done) {
  DYNAMIX_CHECK(shared && !shared->empty(), "transfer without member routes");
  const std::vector<Route>& members = *shared;
  DYNAMIX_CHECK(bytes_per_member >= 0 && std::isfinite(bytes_per_member),
                "transfer of " << bytes_per_member << " bytes per member");
  Transfer transfer;
  transfer.id = next_id++;
  transfer.bytes_per_member = bytes_per_member;
  transfer.remaining_bytes = bytes_per_member;
  transfer.start = sim.now();
  transfer.on_done = std::move(on_done);
  if (!spare_stats.empty()) {
    transfer.stats = std::move(spare_stats.back());
    spare_stats.pop_back();
  }
  transfer.stats.assign(members.size(), MemberStats{});

  const double segments = bytes_per_member / options.mss_bytes;
  const double burst_bytes =
      std::min(options.initial_window_segments * options.mss_bytes, bytes_per_member);
  Duration stall{};
  const std::span<const MemberPath> paths_of = member_paths(shared);
  for (std::size_t m = 0; m < members.size(); ++m) {
    const Route& route = members[m];
    const MemberPath& path = paths_of[m];
    const Duration rtt = path.rtt;
    const double p = path.loss;
    transfer.bound_bytes_per_s = std::min(transfer.bound_bytes_per_s, path.cap_bytes_per_s);

    MemberStats& stats = transfer.stats[m];
    stats.wire_bytes = bytes_per_member / (1 - p);
    stats.retransmitted_segments = segments * p / (1 - p);
    stats.timeouts = stats.retransmitted_segments * path.timeout_fraction;
    if (options.incast && !route.empty() && bytes_per_member > 0) {
      const std::size_t round = incast_round(route.back(), rtt);
      if (round > 0) {
        const double rounds = static_cast<double>(round);
        stats.timeouts += rounds;
        stats.retransmitted_segments += rounds * burst_bytes / options.mss_bytes;
        stats.wire_bytes += rounds * burst_bytes;
        stall = std::max(
            stall, static_cast<std::int64_t>(round) * retransmission_timeout(rtt, options.min_rto));
      }
    }
  }
  transfer.members = std::move(shared);
  transfer.active_from = transfer.start + stall;
  const TransferId id = transfer.id;
  live.push_back(std::move(transfer));
  mark_dirty();
  return id;
}

void Network::Impl::set_background_gbps(LinkId id, double gbps) {
  DYNAMIX_CHECK(id < links.size(), "background on link " << id << " of " << links.size());
  DYNAMIX_CHECK(gbps >= 0 && std::isfinite(gbps), "background of " << gbps << " Gb/s");
  advance();
  background_gbps[id] = gbps;
  problem.capacities[id] = payload_bytes_per_s(id);
  mark_dirty();
}

void Network::Impl::schedule_trace_step(std::size_t replay_index) {
  TraceReplay& replay = traces[replay_index];
  const auto& steps = replay.trace.steps;
  const bool cycles = replay.trace.repeat && replay.trace.period().count() > 0;
  if (replay.next_step == (cycles ? steps.size() - 1 : steps.size())) {
    if (!cycles) return;
    replay.cycle_origin += replay.trace.period();
    replay.next_step = 0;
  }
  replay.event = sim.schedule_at(replay.cycle_origin + steps[replay.next_step].offset,
                                 [this, replay_index] { apply_trace_step(replay_index); });
}

void Network::Impl::apply_trace_step(std::size_t replay_index) {
  TraceReplay& replay = traces[replay_index];
  const LinkId link = replay.link;
  const double gbps = replay.trace.steps[replay.next_step++].background_gbps;
  set_background_gbps(link, gbps);
  schedule_trace_step(replay_index);
}

const Transfer* Network::Impl::find(TransferId id) const {
  const auto it =
      std::lower_bound(live.begin(), live.end(), id,
                       [](const Transfer& t, TransferId value) { return t.id < value; });
  return it != live.end() && it->id == id ? &*it : nullptr;
}

void Network::Impl::mark_dirty() {
  dirty = true;
  const TimePoint now = sim.now();
  if (event_pending && next_event_time == now) return;
  if (event_pending) sim.cancel(next_event);
  next_event = sim.schedule_at(now, [this] { on_network_event(); });
  next_event_time = now;
  event_pending = true;
}

void Network::Impl::advance() {
  const TimePoint now = sim.now();
  const double elapsed_s = to_seconds(now - progressed_to);
  progressed_to = now;
  if (elapsed_s <= 0) return;
  for (Transfer& transfer : live) {
    if (transfer.rate_bytes_per_s == 0) continue;
    transfer.remaining_bytes =
        std::isinf(transfer.rate_bytes_per_s)
            ? 0
            : std::max(0.0, transfer.remaining_bytes - transfer.rate_bytes_per_s * elapsed_s);
  }
}

void Network::Impl::solve() {
  const TimePoint now = sim.now();
  problem.clear_variables();
  variable_transfer.clear();
  for (std::size_t index = 0; index < live.size(); ++index) {
    Transfer& transfer = live[index];
    transfer.rate_bytes_per_s = 0;
    if (transfer.active_from > now) continue;
    problem.add_variable(transfer.bound_bytes_per_s);
    for (const Route& route : *transfer.members) {
      for (const LinkId id : route) problem.add_usage(id);
    }
    variable_transfer.push_back(index);
  }
  const std::vector<double>& rates = solver.solve(problem);
  for (std::size_t variable = 0; variable < rates.size(); ++variable) {
    live[variable_transfer[variable]].rate_bytes_per_s = rates[variable];
  }
}

void Network::Impl::schedule_next() {
  const TimePoint now = sim.now();
  TimePoint next = kTimeInfinity;
  for (const Transfer& transfer : live) {
    if (transfer.active_from > now) {
      next = std::min(next, transfer.active_from);
    } else if (transfer.remaining_bytes <= done_epsilon_bytes(transfer.bytes_per_member) ||
               std::isinf(transfer.rate_bytes_per_s)) {
      next = now;
    } else {
      DYNAMIX_CHECK(transfer.rate_bytes_per_s > 0, "transfer " << transfer.id << " stalled with "
                                                               << transfer.remaining_bytes
                                                               << " bytes left");
      next =
          std::min(next, now + time_to_send(transfer.remaining_bytes, transfer.rate_bytes_per_s));
    }
  }
  if (event_pending && next_event_time == next) return;
  if (event_pending) sim.cancel(next_event);
  event_pending = next != kTimeInfinity;
  next_event_time = next;
  if (event_pending) next_event = sim.schedule_at(next, [this] { on_network_event(); });
}

void Network::Impl::settle() {
  advance();
  solve();
  schedule_next();
  dirty = false;
}

void Network::Impl::on_network_event() {
  event_pending = false;
  next_event_time = kTimeInfinity;
  advance();
  const TimePoint now = sim.now();
  std::size_t kept = 0;
  for (std::size_t index = 0; index < live.size(); ++index) {
    Transfer& transfer = live[index];
    const bool done = transfer.active_from <= now &&
                      transfer.remaining_bytes <= done_epsilon_bytes(transfer.bytes_per_member);
    if (done) {
      finished.push_back(std::move(transfer));
    } else {
      if (kept != index) live[kept] = std::move(transfer);
      ++kept;
    }
  }
  live.erase(live.begin() + static_cast<std::ptrdiff_t>(kept), live.end());
  settle();

  // Callbacks may start transfers (which only append to `live`), so `finished` is detached.
  std::vector<Transfer> done;
  done.swap(finished);
  for (Transfer& transfer : done) {
    TransferStats stats{transfer.start, now, transfer.bytes_per_member, std::move(transfer.stats),
                        transfer.active_from - transfer.start};
    if (transfer.on_done) transfer.on_done(stats);
    spare_stats.push_back(std::move(stats.members));
  }
  done.clear();
  if (finished.empty()) finished.swap(done);
}

Network::Network(Simulator& sim, std::vector<LinkSpec> links, NetworkOptions options)
    : impl_(std::make_unique<Impl>(sim, std::move(links), options)) {}
Network::Network(Network&&) noexcept = default;
Network& Network::operator=(Network&&) noexcept = default;
Network::~Network() = default;

TransferId Network::start_transfer(std::vector<Route> members, double bytes_per_member,
                                   std::function<void(const TransferStats&)> on_done) {
  return start_transfer_on(std::make_shared<const std::vector<Route>>(std::move(members)),
                           bytes_per_member, std::move(on_done));
}

TransferId Network::start_transfer(std::vector<Route> members, double bytes_per_member,
                                   std::function<void(const TransferStats&)> on_done,
                                   double rate_limit_bytes_per_s) {
  DYNAMIX_CHECK(rate_limit_bytes_per_s > 0, "rate limit of " << rate_limit_bytes_per_s << " B/s");
  return start_transfer_on(std::make_shared<const std::vector<Route>>(std::move(members)),
                           bytes_per_member, std::move(on_done), rate_limit_bytes_per_s);
}

TransferId Network::start_transfer_on(SharedRoutes members, double bytes_per_member,
                                      std::function<void(const TransferStats&)> on_done,
                                      double rate_limit_bytes_per_s) {
  DYNAMIX_CHECK(rate_limit_bytes_per_s >= 0, "rate limit of " << rate_limit_bytes_per_s << " B/s");
  const TransferId id =
      impl_->start_transfer(std::move(members), bytes_per_member, std::move(on_done));
  if (rate_limit_bytes_per_s > 0) {
    Transfer& transfer = impl_->live.back();
    transfer.bound_bytes_per_s = std::min(transfer.bound_bytes_per_s, rate_limit_bytes_per_s);
  }
  return id;
}

void Network::set_background_gbps(LinkId link, double gbps) {
  impl_->set_background_gbps(link, gbps);
}

void Network::add_trace(LinkId link, const BandwidthTrace& trace) {
  DYNAMIX_CHECK(link < impl_->links.size(), "trace on link " << link);
  DYNAMIX_CHECK(!trace.steps.empty(), "empty trace on link " << link);
  impl_->traces.push_back({link, trace, impl_->sim.now(), 0, {}});
  const std::size_t replay = impl_->traces.size() - 1;
  impl_->apply_trace_step(replay);
}

Duration Network::latency(const Route& route) const { return impl_->latency(route); }
Duration Network::rtt(const Route& route) const { return 2 * impl_->latency(route); }
double Network::loss(const Route& route) const { return impl_->loss(route); }
double Network::flow_cap_bytes_per_s(const Route& route) const {
  return impl_->flow_cap_bytes_per_s(route);
}

double Network::rate_bytes_per_s(TransferId id) const {
  // Rates of transfers started in the current event are computed on first read.
  if (impl_->dirty) impl_->settle();
  const Transfer* transfer = impl_->find(id);
  DYNAMIX_CHECK(transfer != nullptr, "transfer " << id << " is not live");
  return transfer->rate_bytes_per_s;
}

bool Network::is_live(TransferId id) const { return impl_->find(id) != nullptr; }

double Network::background_gbps(LinkId id) const {
  DYNAMIX_CHECK(id < impl_->links.size(), "link " << id << " of " << impl_->links.size());
  return impl_->background_gbps[id];
}

double Network::available_gbps(LinkId id) const {
  DYNAMIX_CHECK(id < impl_->links.size(), "link " << id << " of " << impl_->links.size());
  return impl_->available_bytes_per_s(id) / kBytesPerGigabit;
}

const NetworkOptions& Network::options() const { return impl_->options; }

}  // namespace dynamix
