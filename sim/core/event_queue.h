// A priority queue of simulation events ordered by (time, priority, insertion sequence).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/core/time.h"

namespace dynamix {

/// What an event does when it fires.
using EventCallback = std::function<void()>;

/// Names one scheduled event, for cancelling it; stays valid (and harmless) after it fired.
struct EventId {
  std::uint32_t slot = 0;
  std::uint64_t sequence = 0;
  friend bool operator==(const EventId&, const EventId&) = default;
};

/// A popped event: when it fires and what it does.
struct Event {
  TimePoint time;
  int priority = 0;
  std::uint64_t sequence = 0;
  EventCallback callback;
};

/// Events with equal times fire in ascending priority, then in insertion order: never in heap
/// order. Cancelled events are dropped lazily when they reach the top.
class EventQueue {
 public:
  EventId push(TimePoint time, int priority, EventCallback callback);
  /// The time of the next live event; the queue must not be empty.
  TimePoint peek_time();
  /// Removes and returns the next live event; the queue must not be empty.
  Event pop();
  /// True if the event was pending and is now cancelled.
  bool cancel(EventId id);
  bool empty();
  /// Live (not cancelled) events still pending.
  std::size_t size() const { return live_; }
  void clear();

 private:
  /// Priority and insertion sequence packed into one key, so that ordering is two compares.
  struct Entry {
    TimePoint time;
    std::uint64_t order;
    std::uint32_t slot;
  };
  struct Slot {
    std::uint64_t sequence = 0;
    int priority = 0;
    bool pending = false;
    EventCallback callback;
  };
  static bool before(const Entry& a, const Entry& b) {
    return a.time != b.time ? a.time < b.time : a.order < b.order;
  }
  static std::uint64_t sequence_of(const Entry& entry) { return entry.order & kSequenceMask; }
  static constexpr int kSequenceBits = 40;
  static constexpr std::uint64_t kSequenceMask = (std::uint64_t{1} << kSequenceBits) - 1;
  static constexpr int kPriorityBias = 1 << 23;
  void sift_up(std::size_t index);
  void sift_down(std::size_t index);
  void pop_entry();
  void drop_cancelled_top();

  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::uint64_t next_sequence_ = 1;
  std::size_t live_ = 0;
};

}  // namespace dynamix
