// 4-ary heap over compact entries (shallower than binary, so fewer cache misses on deep queues);
// callbacks live in reusable slots so the heap moves 24 bytes.
#include "sim/core/event_queue.h"

#include <algorithm>
#include <utility>

#include "sim/core/check.h"

namespace dynamix {
namespace {
constexpr std::size_t kArity = 4;
}  // namespace

EventId EventQueue::push(TimePoint time, int priority, EventCallback callback) {
  std::uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  const std::uint64_t sequence = next_sequence_++;
  DYNAMIX_CHECK(sequence <= kSequenceMask, "more than 2^40 events scheduled");
  DYNAMIX_CHECK(priority >= -kPriorityBias && priority < kPriorityBias,
                "priority " << priority << " outside [-2^23, 2^23)");
  slots_[slot].sequence = sequence;
  slots_[slot].priority = priority;
  slots_[slot].pending = true;
  slots_[slot].callback = std::move(callback);
  const auto biased = static_cast<std::uint64_t>(priority + kPriorityBias);
  heap_.push_back({time, (biased << kSequenceBits) | sequence, slot});
  sift_up(heap_.size() - 1);
  ++live_;
  return {slot, sequence};
}

bool EventQueue::cancel(EventId id) {
  if (id.slot >= slots_.size()) return false;
  Slot& slot = slots_[id.slot];
  if (!slot.pending || slot.sequence != id.sequence) return false;
  slot.pending = false;
  slot.callback = nullptr;
  --live_;
  return true;
}

void EventQueue::drop_cancelled_top() {
  while (!heap_.empty()) {
    const Entry& top = heap_.front();
    const Slot& slot = slots_[top.slot];
    if (slot.pending && slot.sequence == sequence_of(top)) return;
    if (slot.sequence == sequence_of(top)) free_slots_.push_back(top.slot);
    pop_entry();
  }
}

bool EventQueue::empty() {
  drop_cancelled_top();
  return heap_.empty();
}

TimePoint EventQueue::peek_time() {
  drop_cancelled_top();
  DYNAMIX_CHECK(!heap_.empty(), "peek on an empty event queue");
  return heap_.front().time;
}

Event EventQueue::pop() {
  drop_cancelled_top();
  DYNAMIX_CHECK(!heap_.empty(), "pop on an empty event queue");
  const Entry top = heap_.front();
  Slot& slot = slots_[top.slot];
  Event event{top.time, slot.priority, slot.sequence, std::move(slot.callback)};
  slot.pending = false;
  slot.callback = nullptr;
  free_slots_.push_back(top.slot);
  pop_entry();
  --live_;
  return event;
}

void EventQueue::clear() {
  heap_.clear();
  slots_.clear();
  free_slots_.clear();
  live_ = 0;
}

void EventQueue::pop_entry() {
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
}

void EventQueue::sift_up(std::size_t index) {
  const Entry entry = heap_[index];
  while (index > 0) {
    const std::size_t parent = (index - 1) / kArity;
    if (!before(entry, heap_[parent])) break;
    heap_[index] = heap_[parent];
    index = parent;
  }
  heap_[index] = entry;
}

void EventQueue::sift_down(std::size_t index) {
  const std::size_t count = heap_.size();
  const Entry entry = heap_[index];
  while (true) {
    const std::size_t first = kArity * index + 1;
    if (first >= count) break;
    std::size_t child = first;
    const std::size_t last = std::min(first + kArity, count);
    for (std::size_t candidate = first + 1; candidate < last; ++candidate) {
      if (before(heap_[candidate], heap_[child])) child = candidate;
    }
    if (!before(heap_[child], entry)) break;
    heap_[index] = heap_[child];
    index = child;
  }
  heap_[index] = entry;
}

}  // namespace dynamix
