// Simulator: advances the clock from event to event.
#include "sim/core/simulator.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "sim/core/check.h"

namespace dynamix {

EventId Simulator::schedule_at(TimePoint time, EventCallback callback, int priority) {
  DYNAMIX_CHECK(time >= now_, "event scheduled at " << to_seconds(time) << " s, before now "
                                                    << to_seconds(now_) << " s");
  return queue_.push(time, priority, std::move(callback));
}

EventId Simulator::schedule_after(Duration delay, EventCallback callback, int priority) {
  DYNAMIX_CHECK(delay.count() >= 0, "negative delay " << delay.count() << " ns");
  return queue_.push(now_ + delay, priority, std::move(callback));
}

bool Simulator::step() {
  if (queue_.empty()) return false;
  Event event = queue_.pop();
  now_ = event.time;
  ++events_fired_;
  event.callback();
  return true;
}

void Simulator::run_until(TimePoint time) {
  if (time < now_) {
    throw std::invalid_argument("asked to simulate up to " + std::to_string(to_seconds(time)) +
                                " s, but that is in the past already (now " +
                                std::to_string(to_seconds(now_)) + " s)");
  }
  while (!queue_.empty() && queue_.peek_time() <= time) step();
  now_ = time;
}

void Simulator::run() {
  stopped_ = false;
  while (!stopped_ && step()) {
  }
}

}  // namespace dynamix
