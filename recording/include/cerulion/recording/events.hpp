// SPDX-License-Identifier: Apache-2.0
#pragma once
// How the long-running components (a recording, a tap set, a playback, a flashback keeper, a
// bridge) say what happens while they run: each hands Events to the EventSink named in its
// options, from its own threads, as it happens, each problem once. What ends a component is its
// error() (or run()'s status), not an event; numbers that move all the time (counts, progress)
// are asked for as snapshots.
//
//   cerulion::recording::EventQueue events;
//   cerulion::recording::RecordingOptions o;
//   o.events = &events;
//   ...                                   // the recording runs
//   for (const auto& e : events.drain()) std::fprintf(stderr, "%s\n", e.message.c_str());
//
// Tests give an EventQueue and look at what was drained; a program may give a sink of its own
// (a logger), which must then be thread-safe and quick.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cerulion::recording {

/// How much an event matters.
enum class EventKind : std::uint8_t {
  Info,     ///< what happened: a topic read, a file started, a dump written
  Warning,  ///< done, but not as asked: messages taken as raw bytes, a dump refused by a limit
  Problem,  ///< could not be done, and the component goes on without it: a topic not read
};
/// "info", "warning", "problem".
const char* to_string(EventKind kind) noexcept;

/// One thing a component has to say.
struct Event {
  EventKind kind = EventKind::Info;
  /// What it is about, as data: a topic ("/imu"), a file or directory; "" for the component.
  std::string subject;
  /// One line for a person; it names the subject.
  std::string message;
  /// When it happened, ns since the epoch (CLOCK_REALTIME).
  std::uint64_t realtime_ns = 0;
};

/// Where a component's events go.
class EventSink {
 public:
  virtual ~EventSink() = default;
  /// Called from the component's threads, from several at once: thread-safe, and quick (the
  /// caller may be a reader that publishers wait for).
  virtual void on_event(Event event) = 0;
};

/// Stamps an event now and hands it to `sink`; does nothing when `sink` is null.
void report(EventSink* sink, EventKind kind, std::string subject, std::string message);

/// A sink that keeps events in order until they are drained, from any thread. Bounded, so that
/// nobody draining cannot grow it without end: past `capacity` the newest are left out (counted).
class EventQueue final : public EventSink {
 public:
  static constexpr std::size_t kDefaultCapacity = 4096;
  explicit EventQueue(std::size_t capacity = kDefaultCapacity);
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;
  ~EventQueue() override;

  void on_event(Event event) override;
  /// The events since the last drain, oldest first.
  std::vector<Event> drain();
  /// Events left out since the queue was made because it was full.
  std::uint64_t left_out() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace cerulion::recording
