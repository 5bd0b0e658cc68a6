// SPDX-License-Identifier: Apache-2.0
#include "cerulion/recording/events.hpp"

#include <mutex>

#include "cerulion/core/options.hpp"

namespace cerulion::recording {

const char* to_string(EventKind kind) noexcept {
  switch (kind) {
    case EventKind::Info: return "info";
    case EventKind::Warning: return "warning";
    case EventKind::Problem: return "problem";
  }
  return "info";
}

void report(EventSink* sink, EventKind kind, std::string subject, std::string message) {
  if (sink == nullptr) return;
  sink->on_event(Event{kind, std::move(subject), std::move(message), realtime_ns()});
}

struct EventQueue::State {
  std::mutex mutex;
  std::vector<Event> events;
  std::size_t capacity = 0;
  std::uint64_t left_out = 0;
};

EventQueue::EventQueue(std::size_t capacity) : state_(std::make_unique<State>()) { state_->capacity = capacity; }
EventQueue::~EventQueue() = default;

void EventQueue::on_event(Event event) {
  std::lock_guard lock(state_->mutex);
  if (state_->events.size() >= state_->capacity) {
    ++state_->left_out;
    return;
  }
  state_->events.push_back(std::move(event));
}

std::vector<Event> EventQueue::drain() {
  std::lock_guard lock(state_->mutex);
  std::vector<Event> out;
  out.swap(state_->events);
  return out;
}

std::uint64_t EventQueue::left_out() const {
  std::lock_guard lock(state_->mutex);
  return state_->left_out;
}

}  // namespace cerulion::recording
