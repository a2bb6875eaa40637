// Flow-level network: sharing, timing, loss, incast, background traffic, determinism.
#include "sim/network/network.h"

#include <doctest/doctest.h>

#include <optional>

namespace dynamix {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// 8 Gb/s is exactly 1e9 bytes per second.
constexpr double kGbps8 = 8;

TimePoint at(Duration d) { return kTimeZero + d; }

struct Finished {
  std::optional<TransferStats> stats;
  auto callback() {
    return [this](const TransferStats& done) { stats = done; };
  }
  TimePoint end() const {
    REQUIRE(stats.has_value());
    return stats->end;
  }
};

TEST_CASE("a single flow on an uncongested link gets full bandwidth and finishes at bytes / B") {
  Simulator sim;
  Network network(sim, {{kGbps8, microseconds(10), 0}});
  Finished flow;
  const TransferId id = network.start_transfer({{0}}, 1e6, flow.callback());
  CHECK(network.rate_bytes_per_s(id) == doctest::Approx(1e9));
  sim.run();
  CHECK(flow.end() == at(milliseconds(1)));
  CHECK(flow.stats->start == kTimeZero);
  CHECK(flow.stats->payload_bytes_per_member == 1e6);
  REQUIRE(flow.stats->members.size() == 1);
  CHECK(flow.stats->members[0].wire_bytes == 1e6);
  CHECK(flow.stats->members[0].retransmitted_segments == 0);
  CHECK(flow.stats->members[0].timeouts == 0);
  CHECK_FALSE(network.is_live(id));
}

TEST_CASE("two flows sharing a link each get half, and the survivor speeds up when one ends") {
  Simulator sim;
  Network network(sim, {{kGbps8, microseconds(5), 0}});
  Finished small;
  Finished large;
  const TransferId small_id = network.start_transfer({{0}}, 1e6, small.callback());
  const TransferId large_id = network.start_transfer({{0}}, 2e6, large.callback());
  CHECK(network.rate_bytes_per_s(small_id) == doctest::Approx(5e8));
  CHECK(network.rate_bytes_per_s(large_id) == doctest::Approx(5e8));
  sim.run_until(at(milliseconds(2)));
  REQUIRE(small.stats.has_value());
  CHECK(small.end() == at(milliseconds(2)));
  CHECK(network.rate_bytes_per_s(large_id) == doctest::Approx(1e9));
  sim.run();
  CHECK(large.end() == at(milliseconds(3)));
}

TEST_CASE("a coupled group progresses at the rate of its most congested member") {
  // Members 0→1 and 1→0 over links 0 and 1; a plain flow also crosses link 1.
  Simulator sim;
  Network network(sim, {{kGbps8, Duration{0}, 0}, {kGbps8, Duration{0}, 0}});
  Finished group;
  Finished plain;
  const TransferId group_id = network.start_transfer({{0}, {1}}, 1e6, group.callback());
  network.start_transfer({{1}}, 1e6, plain.callback());
  CHECK(network.rate_bytes_per_s(group_id) == doctest::Approx(5e8));
  sim.run();
  CHECK(group.end() == at(milliseconds(2)));
  CHECK(plain.end() == at(milliseconds(2)));
  CHECK(group.stats->members.size() == 2);
}

TEST_CASE("halving a link's bandwidth lengthens a transfer") {
  Simulator sim;
  Network network(sim, {{kGbps8, Duration{0}, 0}, {kGbps8 / 2, Duration{0}, 0}});
  Finished full;
  Finished half;
  network.start_transfer({{0}}, 2e6, full.callback());
  network.start_transfer({{1}}, 2e6, half.callback());
  sim.run();
  CHECK(full.end() == at(milliseconds(2)));
  CHECK(half.end() == at(milliseconds(4)));
}

TEST_CASE("background traffic set mid-transfer slows the rest of it") {
  Simulator sim;
  Network network(sim, {{kGbps8, Duration{0}, 0}});
  Finished flow;
  network.start_transfer({{0}}, 2e6, flow.callback());
  sim.schedule_at(at(milliseconds(1)), [&] { network.set_background_gbps(0, kGbps8 / 2); });
  sim.run();
  CHECK(flow.end() == at(milliseconds(3)));
  CHECK(network.available_gbps(0) == doctest::Approx(4));
}

TEST_CASE("background above capacity leaves a floor so transfers still finish") {
  Simulator sim;
  Network network(sim, {{kGbps8, Duration{0}, 0}});
  network.set_background_gbps(0, 100);
  CHECK(network.available_gbps(0) == doctest::Approx(kGbps8 * 0.01));
  Finished flow;
  network.start_transfer({{0}}, 1e4, flow.callback());
  sim.run();
  CHECK(flow.end() == at(milliseconds(1)));
}

TEST_CASE("loss raises retransmissions, wire bytes and transfer time") {
  const double p = 0.01;
  auto run = [](double loss) {
    Simulator sim;
    Network network(sim, {{kGbps8, microseconds(10), loss}});
    Finished flow;
    network.start_transfer({{0}}, 1.46e6, flow.callback());
    sim.run();
    return *flow.stats;
  };
  const TransferStats clean = run(0);
  const TransferStats lossy = run(p);
  CHECK(lossy.end > clean.end);
  const MemberStats& member = lossy.members[0];
  CHECK(member.retransmitted_segments == doctest::Approx(1000 * p / (1 - p)));
  CHECK(member.wire_bytes == doctest::Approx(1.46e6 / (1 - p)));
  CHECK(member.timeouts > 0);
  CHECK(member.timeouts < member.retransmitted_segments);
  CHECK(clean.members[0].retransmitted_segments == 0);
}

TEST_CASE("A transfer on shared routes, repeated, matches the same transfer on its own copy") {
  // A collective's route set is remembered by the network after its first transfer: every later
  // transfer on it must time and count as a first one would, also after the set is replaced.
  auto run = [](bool shared) {
    Simulator sim;
    Network network(sim, {{kGbps8, microseconds(10), 0.01}, {kGbps8 / 2, microseconds(30), 0.002}});
    // The third round's set replaces the first, other routes that may take its address.
    std::vector<Route> routes = {{0, 1}, {1}};
    std::vector<TransferStats> done;
    SharedRoutes held = std::make_shared<const std::vector<Route>>(routes);
    for (int round = 0; round < 3; ++round) {
      if (round == 2) {
        routes = {{1}, {0}};
        held.reset();
        held = std::make_shared<const std::vector<Route>>(routes);
      }
      Finished flow;
      if (shared) {
        network.start_transfer_on(held, 2e6, flow.callback());
      } else {
        network.start_transfer(routes, 2e6, flow.callback());
      }
      sim.run();
      done.push_back(*flow.stats);
    }
    return done;
  };
  const std::vector<TransferStats> own = run(false);
  const std::vector<TransferStats> shared = run(true);
  REQUIRE(shared.size() == own.size());
  for (std::size_t round = 0; round < own.size(); ++round) {
    CAPTURE(round);
    CHECK(shared[round].end == own[round].end);
    for (std::size_t m = 0; m < own[round].members.size(); ++m) {
      CHECK(shared[round].members[m].wire_bytes == own[round].members[m].wire_bytes);
      CHECK(shared[round].members[m].timeouts == own[round].members[m].timeouts);
    }
  }
}

TEST_CASE("a lossy link caps a flow at the Padhye rate and compounds loss along the route") {
  Simulator sim;
  Network network(sim, {{100, microseconds(50), 0.001}, {100, microseconds(50), 0.002}});
  const Route route{0, 1};
  CHECK(network.loss(route) == doctest::Approx(1 - 0.999 * 0.998));
  CHECK(network.rtt(route) == microseconds(200));
  const double cap = network.flow_cap_bytes_per_s(route);
  CHECK(cap < 100 / 8.0 * 1e9);
  const TransferId id = network.start_transfer({route}, 1e6, nullptr);
  CHECK(network.rate_bytes_per_s(id) == doctest::Approx(cap));
}

// Hosts 0..n-1 each have an uplink (id i) and a downlink (id n + i) to one switch.
std::vector<LinkSpec> star(std::size_t hosts) {
  return std::vector<LinkSpec>(2 * hosts, LinkSpec{10, microseconds(5), 0});
}
Route star_route(std::size_t hosts, std::size_t from, std::size_t to) {
  return {static_cast<LinkId>(from), static_cast<LinkId>(hosts + to)};
}

struct IncastResult {
  TimePoint last_end;
  double timeouts = 0;
};

IncastResult incast(std::size_t senders, bool distinct_receivers) {
  const std::size_t hosts = senders + 1;
  Simulator sim;
  Network network(sim, star(hosts), {.switch_buffer_bytes = 32 * 1024});
  IncastResult result;
  for (std::size_t s = 1; s <= senders; ++s) {
    const std::size_t to = distinct_receivers ? s % senders + 1 : 0;
    network.start_transfer({star_route(hosts, s, to)}, 1e6, [&](const TransferStats& done) {
      result.last_end = std::max(result.last_end, done.end);
      result.timeouts += done.members[0].timeouts;
    });
  }
  sim.run();
  return result;
}

TEST_CASE("incast: 16 senders into one receiver with a small buffer time out, 1 sender does not") {
  const double link_bytes_per_s = 10e9 / 8;
  const IncastResult many = incast(16, false);
  const TimePoint bandwidth_bound = at(ceil_seconds(16 * 1e6 / link_bytes_per_s));
  CHECK(many.timeouts > 0);
  CHECK(many.last_end > bandwidth_bound + milliseconds(200));

  const IncastResult one = incast(1, false);
  CHECK(one.timeouts == 0);
  CHECK(one.last_end == at(microseconds(800)));
}

TEST_CASE("incast: a ring's one sender per receiver pays no timeouts") {
  const IncastResult ring = incast(16, true);
  CHECK(ring.timeouts == 0);
  CHECK(ring.last_end == at(microseconds(800)));
}

TEST_CASE("incast: a coupled group converging on one port stalls and counts its timeouts") {
  const std::size_t hosts = 17;
  Simulator sim;
  Network network(sim, star(hosts), {.switch_buffer_bytes = 32 * 1024});
  std::vector<Route> members;
  for (std::size_t s = 1; s < hosts; ++s) members.push_back(star_route(hosts, s, 0));
  Finished group;
  const TransferId id = network.start_transfer(members, 1e6, group.callback());
  CHECK(network.rate_bytes_per_s(id) == 0);
  sim.run();
  CHECK(group.stats->incast_stall >= milliseconds(200));
  CHECK(group.end() - kTimeZero > group.stats->incast_stall);
  CHECK(group.stats->members.front().timeouts == 0);
  CHECK(group.stats->members.back().timeouts > 0);
  CHECK(group.stats->members.back().wire_bytes > 1e6);
}

TEST_CASE("incast: senders that start more than an RTT apart do not collide") {
  const std::size_t hosts = 17;
  Simulator sim;
  Network network(sim, star(hosts), {.switch_buffer_bytes = 0});
  double timeouts = 0;
  for (std::size_t s = 1; s < hosts; ++s) {
    sim.schedule_at(at(milliseconds(static_cast<int>(s))), [&, s] {
      network.start_transfer({star_route(hosts, s, 0)}, 1e3, [&](const TransferStats& done) {
        timeouts += done.members[0].timeouts;
      });
    });
  }
  sim.run();
  CHECK(timeouts == 0);
}

TEST_CASE("a background trace slows a transfer while it lasts and not after") {
  BandwidthTrace trace;
  trace.steps = {{Duration{0}, 4}, {milliseconds(1), 0}};
  Simulator sim;
  Network network(sim, {{kGbps8, Duration{0}, 0}});
  network.add_trace(0, trace);
  Finished during;
  network.start_transfer({{0}}, 2e6, during.callback());
  Finished after;
  sim.schedule_at(at(milliseconds(3)),
                  [&] { network.start_transfer({{0}}, 1e6, after.callback()); });
  sim.run();
  // 0.5 ms worth at half rate in the first millisecond, then 1.5e6 bytes at full rate.
  CHECK(during.end() == at(microseconds(2500)));
  CHECK(after.end() == at(milliseconds(4)));
}

TEST_CASE("a repeating trace cycles over its period") {
  BandwidthTrace trace;
  trace.steps = {{Duration{0}, 6}, {milliseconds(1), 0}, {milliseconds(2), 6}};
  trace.repeat = true;
  CHECK(trace.background_gbps_at(microseconds(500)) == 6);
  CHECK(trace.background_gbps_at(microseconds(1500)) == 0);
  CHECK(trace.background_gbps_at(microseconds(2500)) == 6);
  CHECK(trace.background_gbps_at(microseconds(3500)) == 0);

  Simulator sim;
  Network network(sim, {{kGbps8, Duration{0}, 0}});
  sim.schedule_at(at(milliseconds(1)), [&] { network.add_trace(0, trace); });
  std::vector<double> seen;
  for (int ms = 0; ms < 7; ++ms) {
    sim.schedule_at(at(milliseconds(ms) + microseconds(500)),
                    [&] { seen.push_back(network.background_gbps(0)); });
  }
  sim.run_until(at(milliseconds(8)));
  CHECK(seen == std::vector<double>{0, 6, 0, 6, 0, 6, 0});
}

TEST_CASE("a zero-byte transfer completes at once, as an event") {
  Simulator sim;
  Network network(sim, {{kGbps8, Duration{0}, 0}});
  Finished flow;
  network.start_transfer({{0}}, 0, flow.callback());
  CHECK_FALSE(flow.stats.has_value());
  sim.run();
  CHECK(flow.end() == kTimeZero);
}

TEST_CASE("a transfer started from a completion callback begins when the other ends") {
  Simulator sim;
  Network network(sim, {{kGbps8, Duration{0}, 0}});
  Finished second;
  network.start_transfer({{0}}, 1e6, [&](const TransferStats&) {
    network.start_transfer({{0}}, 1e6, second.callback());
  });
  sim.run();
  CHECK(second.stats->start == at(milliseconds(1)));
  CHECK(second.end() == at(milliseconds(2)));
}

TEST_CASE("destroying a network cancels its pending events") {
  Simulator sim;
  bool fired = false;
  {
    Network network(sim, {{kGbps8, Duration{0}, 0}});
    network.start_transfer({{0}}, 1e6, [&](const TransferStats&) { fired = true; });
    BandwidthTrace trace;
    trace.steps = {{Duration{0}, 1}, {milliseconds(1), 2}};
    network.add_trace(0, trace);
  }
  sim.run();
  CHECK_FALSE(fired);
}

std::vector<TimePoint> mixed_run() {
  const std::size_t hosts = 8;
  Simulator sim;
  auto links = star(hosts);
  links[3].loss_rate = 1e-4;
  Network network(sim, links);
  std::vector<TimePoint> ends;
  auto record = [&](const TransferStats& done) { ends.push_back(done.end); };
  std::vector<Route> ring;
  for (std::size_t i = 0; i < hosts; ++i) ring.push_back(star_route(hosts, i, (i + 1) % hosts));
  network.start_transfer(ring, 3.3e6, record);
  for (std::size_t i = 1; i < hosts; ++i) {
    sim.schedule_at(at(microseconds(137 * static_cast<int>(i))), [&, i] {
      network.start_transfer({star_route(hosts, i, 0)}, 1.7e5 * static_cast<double>(i), record);
    });
  }
  BandwidthTrace trace;
  trace.steps = {{Duration{0}, 3}, {microseconds(700), 7.5}, {milliseconds(2), 0}};
  network.add_trace(static_cast<LinkId>(hosts), trace);
  sim.run();
  return ends;
}

TEST_CASE("the same inputs give identical end times") {
  const auto first = mixed_run();
  CHECK(first.size() == 8);
  CHECK(mixed_run() == first);
}

}  // namespace
}  // namespace dynamix
