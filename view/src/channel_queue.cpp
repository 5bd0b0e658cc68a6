// SPDX-License-Identifier: Apache-2.0
#include "cerulion/view/channel_queue.hpp"

namespace cerulion::view {
namespace {
std::size_t payload_size(const QueuedMessage& m) { return m.payload ? m.payload->size() : 0; }
}  // namespace

std::size_t ChannelQueue::push(QueuedMessage message) {
  bytes_ += payload_size(message);
  messages_.push_back(std::move(message));
  std::size_t dropped = 0;
  const std::size_t most = limits_.messages == 0 ? 1 : limits_.messages;
  while (messages_.size() > 1 && (messages_.size() > most || bytes_ > limits_.bytes)) {
    bytes_ -= payload_size(messages_.front());
    messages_.pop_front();
    ++dropped;
  }
  return dropped;
}

std::optional<QueuedMessage> ChannelQueue::pop() {
  if (messages_.empty()) return std::nullopt;
  QueuedMessage m = std::move(messages_.front());
  messages_.pop_front();
  bytes_ -= payload_size(m);
  return m;
}

}  // namespace cerulion::view
