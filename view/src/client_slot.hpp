// SPDX-License-Identifier: Apache-2.0
#pragma once
// One connected client as the hub sees it: its subscriptions, a bounded queue per subscribed
// channel, and the text messages waiting for it. Filled by the tap threads, emptied by the server's
// I/O thread (next()); `wake` tells the I/O side that something is waiting. Thread-safe.

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cerulion/view/channel_queue.hpp"
#include "cerulion/view/options.hpp"
#include "cerulion/view/protocol.hpp"

namespace cerulion::view::detail {

/// A message-data frame: the header and the shared payload, written as two buffers.
struct MessageFrame {
  std::array<std::byte, kMessageHeaderBytes> header;
  Payload payload;
};
/// What the I/O side writes next: a text message or a message frame.
using Outgoing = std::variant<std::string, MessageFrame>;

class ClientSlot {
 public:
  ClientSlot(std::uint64_t number, std::string peer, const ViewOptions& options, std::function<void()> wake);

  std::uint64_t number() const noexcept { return number_; }
  const std::string& peer() const noexcept { return peer_; }

  /// Queues a text message; false (and the client is marked overflowed) past max_control_bytes.
  bool push_text(std::string text);
  /// Queues a message of `channel_id` when subscribed to it; `make` gives the shared payload (made
  /// at most once by the caller over all clients), `lost_before` the messages of the topic the
  /// view never read just before it (to be told to the client). True when it was queued.
  bool push_message(std::uint32_t channel_id, std::uint64_t receive_ns, const std::function<Payload()>& make,
                    std::uint64_t lost_before = 0);

  /// What to write next: text first, then one message per subscribed channel in turn, so a big
  /// topic never starves a small one. nullopt when nothing waits.
  std::optional<Outgoing> next();
  /// True once the client fell so far behind on text that it is to be disconnected.
  bool overflowed() const noexcept { return overflowed_.load(std::memory_order_acquire); }

  /// A subscription request: the problems (unknown channel, id in use...) as lines for status
  /// messages. `topics[i]` names the channel of the i-th subscription, "" when no such channel is
  /// advertised (looked up by the caller before: the hub's lock is never taken under this one's).
  std::vector<std::string> subscribe(const SubscribeRequest& request, const std::vector<std::string>& topics);
  std::vector<std::string> unsubscribe(const UnsubscribeRequest& request);
  /// The channel went away: its subscriptions end, its queue is freed.
  void drop_channel(std::uint32_t channel_id);

  /// Since the last call, per topic of its subscriptions (for status warnings to this client):
  /// messages dropped from its queues, and messages the view lost before it read them.
  struct Unreported {
    std::map<std::string, std::uint64_t> drops, losses;
  };
  Unreported take_drops_and_losses();
  std::size_t subscriptions() const;
  std::uint64_t dropped_total() const noexcept { return dropped_total_.load(std::memory_order_relaxed); }
  std::size_t queued_bytes() const;

 private:
  struct Subscribed {
    std::uint32_t subscription_id = 0;
    std::string topic;
    ChannelQueue queue;
    std::uint64_t drops_unreported = 0;
    std::uint64_t losses_unreported = 0;
  };
  void wake_once();

  const std::uint64_t number_;
  const std::string peer_;
  const QueueLimits limits_;
  const std::size_t max_control_bytes_;
  const std::function<void()> wake_;

  mutable std::mutex mutex_;
  std::deque<std::string> texts_;
  std::size_t text_bytes_ = 0;
  std::map<std::uint32_t, Subscribed> by_channel_;        ///< channel id -> subscription
  std::map<std::uint32_t, std::uint32_t> by_subscription_; ///< subscription id -> channel id
  std::uint32_t next_turn_ = 0;                            ///< round robin: the channel after the last served
  std::atomic<bool> overflowed_{false};
  std::atomic<std::uint64_t> dropped_total_{0};
};

}  // namespace cerulion::view::detail
