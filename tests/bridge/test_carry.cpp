// SPDX-License-Identifier: Apache-2.0
// What is published in one domain arrives in the other, byte-exact and in order, small and large.

#include <catch2/catch.hpp>

#include <thread>

#include "bridge_helpers.hpp"

using namespace cerulion;
using namespace cerulion::test;

TEST_CASE("A message published in one domain arrives in the other byte-exact and in order", "[bridge]") {
  const std::size_t size = GENERATE(std::size_t{64}, std::size_t{1} << 20, std::size_t{16} << 20);
  const int count = size > (1u << 20) ? 4 : 20;
  INFO("size " << size);
  const std::string a = unique_domain("bra"), b = unique_domain("brb"), topic = unique_topic("carry");
  const std::uint32_t dds = test_dds_domain();
  auto out = start_bridge(a, dds, bridge::Direction::Export);
  auto in = start_bridge(b, dds, bridge::Direction::Import);

  auto [pub, sub] = open_crossing(a, b, topic);

  // Published while the far side reads (its topic runs free: a reader far behind would lose the
  // oldest). The exporting tap never holds the publisher back either: the messages are paced.
  std::atomic<bool> published_all{true};
  std::optional<SenderThread> sender(std::in_place, *sub, [&] {
    for (int i = 0; i < count; ++i) {
      if (!pub->publish_copy(numbered(i, size)).ok()) published_all = false;
      std::this_thread::sleep_for(std::chrono::milliseconds(size > (1u << 20) ? 60 : size > 4096 ? 10 : 2));
    }
  });
  for (int i = 0; i < count; ++i) {
    auto got = receive_numbered(*sub, std::chrono::seconds(20));
    REQUIRE(got.ok());
    REQUIRE(got->size() == size);
    CHECK(index_of(got->data()) == static_cast<std::uint64_t>(i));
    const auto expected = numbered(i, size);
    CHECK(std::memcmp(got->data().data(), expected.data(), size) == 0);
  }
  sender.reset();
  CHECK(published_all);
  const auto status = in.status();
  REQUIRE(status.topics.size() == 1);
  CHECK(status.topics[0].imported);
  CHECK(status.topics[0].topic == topic);
  CHECK(status.topics[0].lost == 0);
  CHECK(status.topics[0].dds_type == "std_msgs::msg::dds_::UInt8MultiArray_");
}

TEST_CASE("A JSON topic stays JSON through two bridges", "[bridge]") {
  const std::string a = unique_domain("bra"), b = unique_domain("brb"), topic = unique_topic("json");
  const std::uint32_t dds = test_dds_domain();
  auto out = start_bridge(a, dds, bridge::Direction::Export);
  auto in = start_bridge(b, dds, bridge::Direction::Import);
  PublisherOptions po;
  po.topic.domain = a;
  po.topic.type = TopicType{"json", {}};
  auto pub = Publisher::create(topic, po);
  REQUIRE(pub.ok());
  SubscriberOptions so;
  so.topic.domain = b;
  auto sub = Subscriber::create(topic, so);
  REQUIRE(sub.ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::optional<Sample> got;
  while (!got && std::chrono::steady_clock::now() < deadline) {
    REQUIRE(pub->publish_text(R"({"x": 1})").ok());
    if (auto s = sub->receive(std::chrono::milliseconds(100)); s.ok()) got = std::move(*s);
  }
  REQUIRE(got.has_value());
  CHECK(got->text() == R"({"x": 1})");
  auto type = sub->type();
  REQUIRE(type.ok());
  CHECK(type->message_encoding == "json");
  CHECK(in.status().topics.at(0).dds_type == "std_msgs::msg::dds_::String_");
}

TEST_CASE("Best-effort bridges carry messages byte-exact", "[bridge]") {
  const std::string a = unique_domain("bra"), b = unique_domain("brb"), topic = unique_topic("besteffort");
  const std::uint32_t dds = test_dds_domain();
  const auto bridges = start_export_import(a, b, dds, [](bridge::BridgeOptions& o) {
    o.reliable = false;
  });
  auto [pub, sub] = open_crossing(a, b, topic);
  // Best effort may drop a sample: resend until one arrives, then check it is whole.
  std::optional<Sample> got;
  for (int i = 0; i < 100 && !got; ++i) {
    REQUIRE(pub->publish_copy(numbered(7, 4096)).ok());
    if (auto s = sub->receive(std::chrono::milliseconds(100)); s.ok()) got = std::move(*s);
  }
  REQUIRE(got.has_value());
  CHECK(got->size() == 4096);
  CHECK(index_of(got->data()) == 7);
  const auto expected = numbered(7, 4096);
  CHECK(std::memcmp(got->data().data(), expected.data(), 4096) == 0);
}

TEST_CASE("Lockstep bridges with a deep history carry a burst without a loss", "[bridge]") {
  const std::string a = unique_domain("bra"), b = unique_domain("brb"), topic = unique_topic("burst");
  const std::uint32_t dds = test_dds_domain();
  const auto bridges = start_export_import(a, b, dds, [](bridge::BridgeOptions& o) {
    o.lockstep = true;
    o.depth = 1000;
  });
  auto [pub, sub] = open_crossing(a, b, topic);
  constexpr int kCount = 500;
  SenderThread sender(*sub, [&] {
    for (int i = 0; i < kCount; ++i) (void)pub->publish_copy(numbered(i, 256));  // back to back
  });
  for (int i = 0; i < kCount; ++i) {
    auto got = receive_numbered(*sub, std::chrono::seconds(20));
    REQUIRE(got.ok());
    REQUIRE(index_of(got->data()) == static_cast<std::uint64_t>(i));
  }
  for (const auto& bridge : bridges)
    for (const auto& t : bridge.status().topics) CHECK(t.lost == 0);
}
