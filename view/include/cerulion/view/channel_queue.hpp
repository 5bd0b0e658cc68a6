// SPDX-License-Identifier: Apache-2.0
#pragma once
// What one client has waiting on one channel: bounded by a count and by bytes, the newest kept
// and the oldest dropped when a new message would not fit, so a client that falls behind sees the
// latest state of a topic (what a live view wants) and costs the server a bounded amount of memory.
// Not thread-safe: its owner (the client) locks.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "cerulion/view/options.hpp"

namespace cerulion::view {

/// One message's bytes, shared by every client it is queued for (copied from the topic once).
using Payload = std::shared_ptr<const std::vector<std::byte>>;

struct QueuedMessage {
  Payload payload;
  std::uint64_t receive_ns = 0;
};

class ChannelQueue {
 public:
  explicit ChannelQueue(QueueLimits limits) : limits_(limits) {}

  /// Adds the newest message, dropping the oldest until the limits hold (the newest is kept
  /// whatever its size). Returns how many were dropped.
  std::size_t push(QueuedMessage message);
  /// The oldest message, or nullopt when empty.
  std::optional<QueuedMessage> pop();

  bool empty() const noexcept { return messages_.empty(); }
  std::size_t size() const noexcept { return messages_.size(); }
  /// Payload bytes waiting.
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  QueueLimits limits_;
  std::deque<QueuedMessage> messages_;
  std::size_t bytes_ = 0;
};

}  // namespace cerulion::view
