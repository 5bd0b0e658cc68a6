// SPDX-License-Identifier: Apache-2.0
#pragma once
// cerulion.Sample and cerulion.Subscriber as C++ classes, shared by the Subscriber's bindings and
// the WaitSet's (which takes samples from its members' endpoints).

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>

#include "arguments.hpp"
#include "binding.hpp"
#include "cerulion/core/subscriber.hpp"

namespace cerulion::python {

using SubscriberEndpoint = Endpoint<Subscriber, Sample>;

/// A received message. Its buffer (read-only) is the publisher's slot itself; the slot is held
/// while the PySample or any view of it lives. release() ends the sample's own access at once and
/// gives the slot back when the last view is gone, so no view ever reads a reused slot.
class PySample : public LentSlot<SubscriberEndpoint> {
 public:
  PySample(std::shared_ptr<SubscriberEndpoint> owner, Sample sample)
      : LentSlot(std::move(owner), std::move(sample)),
        size_(held_.size()),
        address_(reinterpret_cast<std::uintptr_t>(held_.data().data())),
        seq_(held_.sequence()),
        publish_time_ns_(held_.publish_time_ns()),
        publish_realtime_ns_(held_.publish_realtime_ns()),
        lost_before_(held_.lost_before()),
        publisher_pid_(held_.publisher_pid()) {}

  /// The payload, or cerulion.Closed once released.
  std::span<const std::byte> bytes(const char* use) const {
    if (finished_) {
      raise_closed("sample #" + std::to_string(seq_) + " of '" + topic_ + "' was released; " + use +
                       " needs an unreleased sample",
                   Subject::topic(topic_));
    }
    return held_.data();
  }
  void release() { finish(); }

  bool released() const { return finished_; }
  std::size_t size() const { return size_; }
  std::uintptr_t address() const { return address_; }
  std::uint64_t seq() const { return seq_; }
  std::uint64_t publish_time_ns() const { return publish_time_ns_; }
  std::uint64_t publish_realtime_ns() const { return publish_realtime_ns_; }
  std::uint64_t lost_before() const { return lost_before_; }
  std::uint32_t publisher_pid() const { return publisher_pid_; }

 private:
  // What the sample was stays readable after release.
  std::size_t size_;
  std::uintptr_t address_;
  std::uint64_t seq_, publish_time_ns_, publish_realtime_ns_, lost_before_;
  std::uint32_t publisher_pid_;
};

/// A Python Subscriber: the shared endpoint, or nothing once closed.
class PySubscriber : public EndpointHandle<SubscriberEndpoint> {
 public:
  PySubscriber(const std::string& topic, py::object wait, bool tap, py::object start, py::object domain,
               py::object mode, py::object depth, const std::string& group)
      : EndpointHandle(topic, options_of(wait, tap, start, domain, mode, depth, group)) {}

  PySample receive(py::object timeout_seconds) {
    std::shared_ptr<SubscriberEndpoint> endpoint = open("receive()");
    const Deadline deadline(timeout_argument(timeout_seconds));
    BusyScope busy(*endpoint, "subscriber", deadline);
    // A message ready now is taken with the GIL held: nothing waits, and releasing and retaking the
    // GIL is a good part of a receive's time in a process whose caches went cold between messages.
    // Anything else (nothing ready, an error) goes to the wait, which reports errors as receive() does.
    if (Result<std::optional<Sample>> ready = endpoint->core->try_receive(); ready.ok() && *ready) {
      return PySample(endpoint, std::move(**ready));
    }
    Result<Sample> sample = wait_in_slices(deadline, [&](Timeout slice) { return endpoint->core->receive(slice); });
    if (sample.ok()) return PySample(endpoint, std::move(sample).value());
    const std::string& topic = endpoint->core->topic();
    if (sample.code() == ErrorCode::Interrupted && endpoint->cancel.load()) {
      raise_closed("subscriber of '" + topic + "' was closed while receive() waited", Subject::topic(topic));
    }
    if (sample.code() == ErrorCode::Timeout) {
      raise(Status(ErrorCode::Timeout, "topic '" + topic + "': no message within the timeout", Subject::topic(topic)));
    }
    raise(with_advice(sample.status(), kReleaseSample));
  }

  /// A message ready now, or None; None too while another thread's call on this subscriber is
  /// under way (a receive() there takes the next message anyway).
  std::optional<PySample> try_receive() {
    std::shared_ptr<SubscriberEndpoint> endpoint = open("try_receive()");
    if (endpoint->turn.held()) return std::nullopt;
    BusyScope busy(*endpoint, "subscriber", Deadline(std::nullopt));
    auto ready = endpoint->core->try_receive();
    if (!ready) raise(with_advice(ready.status(), kReleaseSample));
    std::optional<Sample> sample = std::move(*ready);
    if (!sample) return std::nullopt;
    return PySample(endpoint, std::move(*sample));
  }

 private:
  static SubscriberOptions options_of(py::object wait, bool tap, py::object start, py::object domain, py::object mode,
                                      py::object depth, const std::string& group) {
    SubscriberOptions options;
    options.role = tap ? Role::Tap : Role::Subscriber;
    options.start = start_argument(start);
    options.topic.domain = domain_argument(domain);
    options.topic.mode = mode_argument(mode);
    options.topic.depth = depth_argument(depth);
    options.topic.group = group;
    options.wait.strategy = wait_argument(wait);
    return options;
  }
};

}  // namespace cerulion::python
