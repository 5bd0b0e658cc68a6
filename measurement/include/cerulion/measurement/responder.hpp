// SPDX-License-Identifier: Apache-2.0
#pragma once
// The pong side as a loop of its own: `cerulion pong`, the process `ping` starts, and the thread
// of a single-process measurement all run this.

#include <optional>
#include <string>

#include "cerulion/core/status.hpp"
#include "cerulion/measurement/transport.hpp"

namespace cerulion::measurement {

struct ResponderRunOptions {
  std::string transport = "native";
  ResponderOptions transport_options;
  std::optional<int> cpu;  ///< pin the answering thread to this CPU before attaching
  /// Set once the responder is attached to both topics (a requester can see it).
  std::atomic<bool>* ready = nullptr;
};

/// Pins, creates the responder and serves until stopped (a stop request with stop_on_request, or
/// the cancel flag): Status::success(). Otherwise the failure ("cannot pin to CPU 3", a topic
/// error, a receive that failed).
[[nodiscard]] Status run_responder(const ResponderRunOptions& options);

}  // namespace cerulion::measurement
