// EventQueue ordering and cancellation, checked against a sorted reference list.
#include "sim/core/event_queue.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "sim/core/random.h"

namespace dynamix {
namespace {

TimePoint at_ns(std::int64_t ns) { return TimePoint{Duration{ns}}; }

TEST_CASE("EventQueue pops equal-time events in insertion order") {
  EventQueue queue;
  std::vector<int> fired;
  for (int i = 0; i < 100; ++i) queue.push(at_ns(5), 0, [&fired, i] { fired.push_back(i); });
  while (!queue.empty()) queue.pop().callback();
  std::vector<int> expected(100);
  for (int i = 0; i < 100; ++i) expected[i] = i;
  CHECK(fired == expected);
}

TEST_CASE("EventQueue orders by time, then priority, then insertion") {
  EventQueue queue;
  std::vector<char> fired;
  queue.push(at_ns(10), 0, [&] { fired.push_back('d'); });
  queue.push(at_ns(5), 1, [&] { fired.push_back('c'); });
  queue.push(at_ns(5), -1, [&] { fired.push_back('a'); });
  queue.push(at_ns(5), 1, [&] { fired.push_back('C'); });
  queue.push(at_ns(5), 0, [&] { fired.push_back('b'); });
  while (!queue.empty()) queue.pop().callback();
  CHECK(fired == std::vector<char>{'a', 'b', 'c', 'C', 'd'});
}

TEST_CASE("EventQueue agrees with a sorted reference list on random pushes and cancels") {
  EventQueue queue;
  Rng rng(7, 1);
  using Key = std::tuple<std::int64_t, int, int>;  // time, priority, insertion index
  std::vector<Key> reference;
  std::vector<std::pair<EventId, Key>> ids;
  std::vector<int> fired;
  for (int i = 0; i < 5000; ++i) {
    const std::int64_t time = static_cast<std::int64_t>(rng.below(200));
    const int priority = static_cast<int>(rng.below(3));
    const Key key{time, priority, i};
    ids.emplace_back(queue.push(at_ns(time), priority, [&fired, i] { fired.push_back(i); }), key);
    reference.push_back(key);
    if (rng.bernoulli(0.2)) {
      const std::size_t victim = rng.below(ids.size());
      if (queue.cancel(ids[victim].first)) {
        std::erase(reference, ids[victim].second);
      }
    }
  }
  CHECK(queue.size() == reference.size());
  std::sort(reference.begin(), reference.end());
  while (!queue.empty()) queue.pop().callback();
  std::vector<int> expected;
  for (const auto& key : reference) expected.push_back(std::get<2>(key));
  CHECK(fired == expected);
}

TEST_CASE("EventQueue cancel is refused for fired or unknown events") {
  EventQueue queue;
  const EventId id = queue.push(at_ns(1), 0, [] {});
  CHECK(queue.cancel(id));
  CHECK_FALSE(queue.cancel(id));
  CHECK(queue.empty());
  const EventId next = queue.push(at_ns(2), 0, [] {});
  queue.pop();
  CHECK_FALSE(queue.cancel(next));
  CHECK_FALSE(queue.cancel(id));
}

}  // namespace
}  // namespace dynamix
