// SPDX-License-Identifier: Apache-2.0
#pragma once
// Settings of a view server (server.hpp); the defaults are the recommendation.

#include <cstddef>
#include <cstdint>
#include <string>

#include "cerulion/recording/events.hpp"
#include "cerulion/recording/tap_set.hpp"
#include "cerulion/view/status.hpp"

namespace cerulion::view {

/// The WebSocket subprotocol the server speaks (the Foxglove WebSocket protocol, version 1).
inline constexpr const char* kSubprotocol = "foxglove.websocket.v1";

/// How much one client may have waiting on one channel: the newest messages are kept, the oldest
/// dropped (counted and reported to that client). The newest message is always kept, however big.
struct QueueLimits {
  std::size_t messages = 64;
  std::size_t bytes = 32u << 20;
};

/// Settings of a ViewServer.
struct ViewOptions {
  /// Which topics, from which domain, read how. The taps never hold a publisher back (unless
  /// `taps.lockstep` is set, which a view should not do). Empty selection: every topic. The
  /// pooled readers by default: a message waits up to their back-off (a millisecond) but they
  /// take no CPU when it is due. `taps.readers = PerTopic` with `taps.poll_when_due` hands a
  /// message on as it is published, at the cost of polling when the topics' publishers and
  /// subscribers run, which slows them where CPUs are few (docs/performance.md).
  recording::TapSetOptions taps;
  /// Address to listen on. Loopback by default: the protocol has no authentication, so any
  /// address that other machines reach serves every topic to whoever connects.
  std::string address = "127.0.0.1";
  /// TCP port; 0 picks a free one (ViewServer::port() says which).
  std::uint16_t port = 8765;
  /// Clients served at once; one more is refused (HTTP 503) at its handshake.
  std::size_t max_clients = 4;
  /// Per client, per channel.
  QueueLimits queue;
  /// Text (advertise, status...) waiting for one client, in bytes, past which that client is
  /// disconnected: a client that never reads cannot grow the server without end.
  std::size_t max_control_bytes = 16u << 20;
  /// Largest text message accepted from a client, in bytes (bigger ones close that connection).
  std::size_t max_client_message = 1u << 20;
  /// Seconds between `status` reports of drops to a client that is falling behind.
  double drop_report_interval_s = 1.0;
  /// The server's name in serverInfo.
  std::string name = "cerulion view";
  /// Keep a status file (status.hpp) in `status_directory` from start() to stop(), replaced once a
  /// second, so that `cerulion view status` sees this server whichever program runs it.
  bool status_file = true;
  std::string status_directory = std::string(kDefaultStatusDirectory);
  /// Where the server says what happens (clients connecting, topics advertised, problems), and
  /// where its tap set says what it reads; null: nowhere. Outlives the server.
  recording::EventSink* events = nullptr;
};

/// Whether `address` is a loopback address (127.0.0.0/8, ::1, "localhost"): reachable from this
/// machine only.
bool is_loopback(const std::string& address);

}  // namespace cerulion::view
