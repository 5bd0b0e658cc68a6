// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a bridge says as it runs. Every event goes to the sink of its options; the problems are
// also kept, for the status file that `bridge status` reads from another process.

#include <mutex>
#include <string>
#include <vector>

#include "cerulion/recording/events.hpp"

namespace cerulion::bridge::detail {

class BridgeEvents final : public recording::EventSink {
 public:
  explicit BridgeEvents(recording::EventSink* forward) : forward_(forward) {}

  void on_event(recording::Event event) override {
    if (event.kind != recording::EventKind::Info) {
      std::lock_guard lock(mutex_);
      problems_.push_back(event.message);
    }
    if (forward_ != nullptr) forward_->on_event(std::move(event));
  }

  /// The warnings and problems said so far, one line each.
  std::vector<std::string> problems() const {
    std::lock_guard lock(mutex_);
    return problems_;
  }

 private:
  recording::EventSink* forward_;
  mutable std::mutex mutex_;
  std::vector<std::string> problems_;
};

/// The tap set's events as the bridge passes them on: without its news of a topic read, since the
/// exporter says what it exports.
class TapEvents final : public recording::EventSink {
 public:
  explicit TapEvents(recording::EventSink& to) : to_(to) {}
  void on_event(recording::Event event) override {
    if (event.kind != recording::EventKind::Info) to_.on_event(std::move(event));
  }

 private:
  recording::EventSink& to_;
};

}  // namespace cerulion::bridge::detail
