// SPDX-License-Identifier: Apache-2.0
// Two bridges following everything both ways carry each message once, and it settles: nothing
// comes back to where it was published.

#include <catch2/catch.hpp>

#include "bridge_helpers.hpp"

using namespace cerulion;
using namespace cerulion::test;

TEST_CASE("Two bridges following everything both ways carry each message exactly once", "[bridge][loops]") {
  const std::string a = unique_domain("bra"), b = unique_domain("brb"), topic = unique_topic("noloop");
  const std::uint32_t dds = test_dds_domain();
  auto bridge_a = start_bridge(a, dds, bridge::Direction::Both);
  auto bridge_b = start_bridge(b, dds, bridge::Direction::Both);

  auto [pub, far] = open_crossing(a, b, topic);
  SubscriberOptions so;
  so.topic.domain = a;
  auto near = Subscriber::create(topic, so);  // beside the publisher: must see its own messages only
  REQUIRE(near.ok());

  constexpr int kCount = 50;
  // Settling: a loop would keep messages coming; two seconds of silence end the count.
  auto far_tally = drain_async(*far);
  auto near_tally = drain_async(*near);
  for (int i = 0; i < kCount; ++i) {
    REQUIRE(pub->publish_copy(numbered(i, 64)).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the exporting tap keeps up
  }
  const auto there = far_tally.get();
  const auto here = near_tally.get();
  REQUIRE(there.copies.size() == kCount);
  REQUIRE(here.copies.size() == kCount);
  for (int i = 0; i < kCount; ++i) {
    INFO("message " << i);
    CHECK(there.copies.at(i) == 1);
    CHECK(here.copies.at(i) == 1);
  }
  CHECK(here.warmups == 0);

  // B imported the topic and exported nothing of it; A exported it and imported nothing back.
  for (const auto& t : bridge_b.status().topics) {
    INFO(t.topic << (t.imported ? " imported" : " exported"));
    CHECK((t.imported || t.topic != topic));
  }
  for (const auto& t : bridge_a.status().topics) {
    if (t.topic == topic && t.imported) CHECK(t.messages == 0);
  }
}

TEST_CASE("A topic published on both sides reaches each other side once", "[bridge][loops]") {
  const std::string a = unique_domain("bra"), b = unique_domain("brb"), topic = unique_topic("twoway");
  const std::uint32_t dds = test_dds_domain();
  auto bridge_a = start_bridge(a, dds, bridge::Direction::Both);
  auto bridge_b = start_bridge(b, dds, bridge::Direction::Both);
  PublisherOptions po;
  po.topic.domain = a;
  auto pub_a = Publisher::create(topic, po);
  po.topic.domain = b;
  auto pub_b = Publisher::create(topic, po);
  REQUIRE(pub_a.ok());
  REQUIRE(pub_b.ok());
  SubscriberOptions so;
  so.topic.domain = a;
  auto sub_a = Subscriber::create(topic, so);
  so.topic.domain = b;
  auto sub_b = Subscriber::create(topic, so);
  REQUIRE(sub_a.ok());
  REQUIRE(sub_b.ok());
  REQUIRE(warm_up(*pub_a, *sub_b));
  REQUIRE(warm_up(*pub_b, *sub_a));
  (void)drain(*sub_a, std::chrono::milliseconds(300));
  (void)drain(*sub_b, std::chrono::milliseconds(300));

  auto tally_a = drain_async(*sub_a);
  auto tally_b = drain_async(*sub_b);
  for (int i = 0; i < 20; ++i) {
    REQUIRE(pub_a->publish_copy(numbered(i, 64)).ok());
    REQUIRE(pub_b->publish_copy(numbered(1000 + i, 64)).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const auto at_a = tally_a.get();
  const auto at_b = tally_b.get();
  // Each side sees its own 20 and the other's 20, once each.
  check_each_once(at_a, 40);
  check_each_once(at_b, 40);
}

TEST_CASE("Two bridge processes following everything both ways carry each message exactly once",
          "[bridge][loops][cli]") {
  const std::string a = unique_domain("bpa"), b = unique_domain("bpb"), topic = unique_topic("noloop_proc");
  const std::uint32_t dds = test_dds_domain();
  const auto bridge = [&](const std::string& domain) {
    return std::vector<std::string>{cerulion_binary(), "--domain", domain, "bridge", "-a", "--dds-domain",
                                    std::to_string(dds)};
  };
  BackgroundProcess bridge_a(bridge(a));
  BackgroundProcess bridge_b(bridge(b));
  auto [pub, far] = open_crossing(a, b, topic);
  SubscriberOptions so;
  so.topic.domain = a;
  auto near = Subscriber::create(topic, so);
  REQUIRE(near.ok());
  auto far_tally = drain_async(*far);
  auto near_tally = drain_async(*near);
  for (int i = 0; i < 50; ++i) {
    REQUIRE(pub->publish_copy(numbered(i, 64)).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const auto there = far_tally.get();
  const auto here = near_tally.get();
  check_each_once(there, 50);
  check_each_once(here, 50);
  CHECK(here.warmups == 0);
}
