// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a view server has done so far: a snapshot, for a status line or a test.

#include <cstdint>
#include <string>
#include <vector>

namespace cerulion::view {

/// One channel (a topic as it is advertised now).
struct ChannelCounts {
  std::uint32_t id = 0;
  std::string topic;
  std::string encoding;       ///< as advertised
  std::uint64_t messages = 0; ///< read from the topic
  std::uint64_t bytes = 0;    ///< payload bytes read from the topic
  std::uint64_t last_size = 0;
  double rate_hz = 0;         ///< the topic's recent publish rate (core's TopicInfo::rate_hz), updated once a second
  /// Messages published on the topic that the view never read: its tap fell a whole ring behind
  /// (a busy machine), and the publisher overwrote them first.
  std::uint64_t lost = 0;
};

/// The whole server.
struct ViewCounts {
  std::uint64_t clients = 0;        ///< connected now (WebSocket)
  std::uint64_t subscriptions = 0;  ///< of all clients, now
  std::uint64_t messages_sent = 0;  ///< message frames written to clients
  std::uint64_t bytes_sent = 0;     ///< bytes of those frames
  std::uint64_t dropped = 0;        ///< messages dropped from client queues (clients behind)
  /// Messages the view's taps never read: ChannelCounts::lost of all channels, and the messages of
  /// topics that came and went before the view could open them (named in its events).
  std::uint64_t lost = 0;
  std::uint64_t connections = 0;    ///< WebSocket clients accepted since start
  std::uint64_t refused = 0;        ///< connections refused (too many clients, not the protocol)
  std::uint64_t queued_bytes = 0;   ///< payload bytes waiting in client queues now
  std::vector<ChannelCounts> channels;
};

}  // namespace cerulion::view
