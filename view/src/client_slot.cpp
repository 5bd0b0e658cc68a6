// SPDX-License-Identifier: Apache-2.0
#include "client_slot.hpp"

#include <fmt/core.h>

namespace cerulion::view::detail {

ClientSlot::ClientSlot(std::uint64_t number, std::string peer, const ViewOptions& options, std::function<void()> wake)
    : number_(number),
      peer_(std::move(peer)),
      limits_(options.queue),
      max_control_bytes_(options.max_control_bytes),
      wake_(std::move(wake)) {}

void ClientSlot::wake_once() {
  if (wake_) wake_();
}

bool ClientSlot::push_text(std::string text) {
  {
    std::lock_guard lock(mutex_);
    if (overflowed_.load(std::memory_order_relaxed)) return false;
    if (text_bytes_ + text.size() > max_control_bytes_) {
      overflowed_.store(true, std::memory_order_release);
      texts_.clear();
      text_bytes_ = 0;
    } else {
      text_bytes_ += text.size();
      texts_.push_back(std::move(text));
    }
  }
  wake_once();
  return !overflowed();
}

bool ClientSlot::push_message(std::uint32_t channel_id, std::uint64_t receive_ns, const std::function<Payload()>& make,
                              std::uint64_t lost_before) {
  {
    std::lock_guard lock(mutex_);
    auto it = by_channel_.find(channel_id);
    if (it == by_channel_.end()) return false;
    const std::size_t dropped = it->second.queue.push({make(), receive_ns});
    it->second.drops_unreported += dropped;
    it->second.losses_unreported += lost_before;
    dropped_total_.fetch_add(dropped, std::memory_order_relaxed);
  }
  wake_once();
  return true;
}

std::optional<Outgoing> ClientSlot::next() {
  std::lock_guard lock(mutex_);
  if (!texts_.empty()) {
    std::string text = std::move(texts_.front());
    texts_.pop_front();
    text_bytes_ -= text.size();
    return Outgoing{std::move(text)};
  }
  if (by_channel_.empty()) return std::nullopt;
  // The first non-empty queue at or after next_turn_, wrapping around.
  auto it = by_channel_.lower_bound(next_turn_);
  for (std::size_t visited = 0; visited < by_channel_.size(); ++visited, ++it) {
    if (it == by_channel_.end()) it = by_channel_.begin();
    if (auto message = it->second.queue.pop()) {
      next_turn_ = it->first + 1;
      return Outgoing{MessageFrame{message_header(it->second.subscription_id, message->receive_ns), std::move(message->payload)}};
    }
  }
  return std::nullopt;
}

std::vector<std::string> ClientSlot::subscribe(const SubscribeRequest& request, const std::vector<std::string>& topics) {
  std::vector<std::string> problems;
  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < request.subscriptions.size(); ++i) {
    const auto& s = request.subscriptions[i];
    if (by_subscription_.count(s.id)) {
      problems.push_back(fmt::format("subscription id {} is already in use", s.id));
      continue;
    }
    std::string topic = i < topics.size() ? topics[i] : std::string();
    if (topic.empty()) {
      problems.push_back(fmt::format("no channel {} (never advertised, or unadvertised)", s.channel_id));
      continue;
    }
    if (by_channel_.count(s.channel_id)) {
      problems.push_back(fmt::format("already subscribed to channel {} ('{}')", s.channel_id, topic));
      continue;
    }
    by_subscription_[s.id] = s.channel_id;
    by_channel_.emplace(s.channel_id, Subscribed{s.id, std::move(topic), ChannelQueue(limits_), 0});
  }
  return problems;
}

std::vector<std::string> ClientSlot::unsubscribe(const UnsubscribeRequest& request) {
  std::vector<std::string> problems;
  std::lock_guard lock(mutex_);
  for (std::uint32_t id : request.subscription_ids) {
    auto it = by_subscription_.find(id);
    if (it == by_subscription_.end()) {
      problems.push_back(fmt::format("no subscription {}", id));
      continue;
    }
    by_channel_.erase(it->second);
    by_subscription_.erase(it);
  }
  return problems;
}

void ClientSlot::drop_channel(std::uint32_t channel_id) {
  std::lock_guard lock(mutex_);
  auto it = by_channel_.find(channel_id);
  if (it == by_channel_.end()) return;
  by_subscription_.erase(it->second.subscription_id);
  by_channel_.erase(it);
}

ClientSlot::Unreported ClientSlot::take_drops_and_losses() {
  Unreported out;
  std::lock_guard lock(mutex_);
  for (auto& [id, s] : by_channel_) {
    if (s.drops_unreported > 0) out.drops[s.topic] += s.drops_unreported;
    if (s.losses_unreported > 0) out.losses[s.topic] += s.losses_unreported;
    s.drops_unreported = 0;
    s.losses_unreported = 0;
  }
  return out;
}

std::size_t ClientSlot::subscriptions() const {
  std::lock_guard lock(mutex_);
  return by_channel_.size();
}

std::size_t ClientSlot::queued_bytes() const {
  std::lock_guard lock(mutex_);
  std::size_t bytes = text_bytes_;
  for (const auto& [id, s] : by_channel_) bytes += s.queue.bytes();
  return bytes;
}

}  // namespace cerulion::view::detail
