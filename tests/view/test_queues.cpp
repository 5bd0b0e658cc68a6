// SPDX-License-Identifier: Apache-2.0
// A client's queues, in memory: bounded, newest kept, channels served in turn.

#include <catch2/catch.hpp>

#include "cerulion/view/channel_queue.hpp"
#include "client_slot.hpp"

using namespace cerulion::view;
using cerulion::view::detail::ClientSlot;
using cerulion::view::detail::MessageFrame;

namespace {

Payload bytes_of_size(std::size_t size, std::uint8_t fill = 0) {
  return std::make_shared<const std::vector<std::byte>>(size, std::byte{fill});
}

}  // namespace

TEST_CASE("A full queue keeps the newest messages and counts the drops", "[view][queue]") {
  ChannelQueue q({.messages = 3, .bytes = 1u << 20});
  std::size_t dropped = 0;
  for (std::uint64_t i = 0; i < 10; ++i) dropped += q.push({bytes_of_size(8), i});
  CHECK(dropped == 7);
  CHECK(q.size() == 3);
  CHECK(q.bytes() == 24);
  for (std::uint64_t i = 7; i < 10; ++i) CHECK(q.pop()->receive_ns == i);
  CHECK_FALSE(q.pop());
  CHECK(q.bytes() == 0);
}

TEST_CASE("A queue bounded by bytes keeps the newest message however big", "[view][queue]") {
  ChannelQueue q({.messages = 100, .bytes = 1000});
  CHECK(q.push({bytes_of_size(600), 1}) == 0);
  CHECK(q.push({bytes_of_size(600), 2}) == 1);
  CHECK(q.push({bytes_of_size(5000), 3}) == 1);
  CHECK(q.size() == 1);
  CHECK(q.pop()->receive_ns == 3);
}

TEST_CASE("A client's channels are served in turn, so a big topic does not starve a small one", "[view][queue]") {
  ViewOptions options;
  options.queue = {.messages = 100, .bytes = 1u << 30};
  ClientSlot slot(1, "test", options, {});
  REQUIRE(slot.subscribe({{{10, 1}, {20, 2}}}, {"/t1", "/t2"}).empty());
  for (int i = 0; i < 5; ++i) {
    CHECK(slot.push_message(1, i, [] { return bytes_of_size(16u << 20, 1); }));
    CHECK(slot.push_message(2, i, [] { return bytes_of_size(64, 2); }));
  }
  std::vector<int> order;
  while (auto next = slot.next()) {
    auto& frame = std::get<MessageFrame>(*next);
    order.push_back(static_cast<int>(frame.header[1]));
  }
  CHECK(order == std::vector<int>{10, 20, 10, 20, 10, 20, 10, 20, 10, 20});
}

TEST_CASE("Text waits before messages, and a client too far behind on text is marked overflowed", "[view][queue]") {
  ViewOptions options;
  options.max_control_bytes = 100;
  ClientSlot slot(1, "test", options, {});
  REQUIRE(slot.subscribe({{{1, 1}}}, {"/a"}).empty());
  CHECK(slot.push_message(1, 5, [] { return bytes_of_size(4); }));
  CHECK(slot.push_text("hello"));
  CHECK(std::holds_alternative<std::string>(*slot.next()));
  CHECK(std::holds_alternative<MessageFrame>(*slot.next()));
  CHECK_FALSE(slot.overflowed());
  CHECK_FALSE(slot.push_text(std::string(200, 'x')));
  CHECK(slot.overflowed());
}

TEST_CASE("Subscriptions refuse an id in use, an unknown channel and a second one to a channel", "[view][queue]") {
  ViewOptions options;
  ClientSlot slot(1, "test", options, {});
  CHECK(slot.subscribe({{{1, 1}}}, {"/t1"}).empty());
  CHECK(slot.subscribe({{{1, 2}}}, {"/t2"}).size() == 1);  // id 1 in use
  CHECK(slot.subscribe({{{2, 99}}}, {""}).size() == 1);    // no channel 99
  CHECK(slot.subscribe({{{3, 1}}}, {"/t1"}).size() == 1);  // channel 1 already
  CHECK(slot.subscriptions() == 1);
  CHECK(slot.unsubscribe({{7}}).size() == 1);
  CHECK(slot.unsubscribe({{1}}).empty());
  CHECK(slot.subscriptions() == 0);
  CHECK_FALSE(slot.push_message(1, 0, [] { return bytes_of_size(1); }));
}
