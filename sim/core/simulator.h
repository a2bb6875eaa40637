// The discrete-event kernel: a clock and an event queue, with no global state.
#pragma once

#include <cstdint>

#include "sim/core/event_queue.h"
#include "sim/core/time.h"

namespace dynamix {

/// One independent simulation. Many may run side by side on different threads.
class Simulator {
 public:
  TimePoint now() const { return now_; }
  /// Schedules `callback` at `time` (not before now); lower priorities fire first at equal times.
  EventId schedule_at(TimePoint time, EventCallback callback, int priority = 0);
  EventId schedule_after(Duration delay, EventCallback callback, int priority = 0);
  /// True if the event was still pending.
  bool cancel(EventId id) { return queue_.cancel(id); }
  /// Fires the next event; false if none is pending.
  bool step();
  /// Fires every event up to and including `time`, then sets the clock to `time`.
  void run_until(TimePoint time);
  /// Fires events until none is pending or stop() is called.
  void run();
  /// Makes run() return after the event being fired.
  void stop() { stopped_ = true; }
  std::uint64_t events_fired() const { return events_fired_; }

 private:
  EventQueue queue_;
  TimePoint now_ = kTimeZero;
  std::uint64_t events_fired_ = 0;
  bool stopped_ = false;
};

}  // namespace dynamix
