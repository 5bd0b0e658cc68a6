// SPDX-License-Identifier: Apache-2.0
// Nothing is lost at a topic's start: a topic that appears while bridges run crosses from its
// first message (the exporting tap reads it from its first, and the far bridge's reader, matched
// late, gets the writer's kept history), each message once, with two bridges or three.

#include <catch2/catch.hpp>

#include "bridge_helpers.hpp"

using namespace cerulion;
using namespace cerulion::test;

namespace {

constexpr int kMessages = 10;

}  // namespace

TEST_CASE("A topic started after two bridges run arrives whole and once in the other domain, 20 times in 20",
          "[bridge][first]") {
  const std::string a = unique_domain("fma"), b = unique_domain("fmb");
  const std::uint32_t dds = test_dds_domain();
  auto bridge_a = start_bridge(a, dds, bridge::Direction::Both);
  auto bridge_b = start_bridge(b, dds, bridge::Direction::Both);
  int whole = 0;
  for (int round = 0; round < 20; ++round) {
    const std::string topic = unique_topic("first");
    // As `cerulion echo` in B, waiting before anything exists; then a new publisher in A that sends
    // its ten messages at once, before either bridge can have noticed the topic: no warm-up.
    auto far = open_subscriber(b, topic);
    auto pub = open_publisher(a, topic);
    for (int i = 0; i < kMessages; ++i) REQUIRE(pub.publish_copy(numbered(i, 64)).ok());
    const Tally got = collect(far, kMessages);
    INFO("round " << round << ", topic " << topic);
    check_each_once(got, kMessages);
    if (each_once(got, kMessages)) ++whole;
  }
  CHECK(whole == 20);
}

TEST_CASE("Three bridges following everything both ways carry each message once to each other domain",
          "[bridge][first][loops]") {
  const std::vector<std::string> domains = {unique_domain("tba"), unique_domain("tbb"), unique_domain("tbc")};
  const std::string topic = unique_topic("three");
  const std::uint32_t dds = test_dds_domain();
  std::vector<bridge::Bridge> bridges;
  for (const auto& d : domains) bridges.push_back(start_bridge(d, dds, bridge::Direction::Both));

  // A subscriber in each domain, then a publisher in each, sending its own ten (100 × domain + i)
  // on the new topic at once. Each domain's ring holds all thirty: a bridge is a tap, which on a
  // busy machine may open the topic after a burst has wrapped a shorter ring (and counts that loss).
  std::vector<Subscriber> subs;
  for (const auto& d : domains) subs.push_back(open_subscriber(d, topic, 4 * kMessages));
  std::vector<std::future<Tally>> tallies;
  for (auto& sub : subs) {
    tallies.push_back(std::async(std::launch::async, [&sub] { return collect(sub, 3 * kMessages); }));
  }
  std::vector<Publisher> pubs;
  for (const auto& d : domains) pubs.push_back(open_publisher(d, topic));
  for (std::size_t k = 0; k < pubs.size(); ++k) {
    for (int i = 0; i < kMessages; ++i) REQUIRE(pubs[k].publish_copy(numbered(100 * k + i, 64)).ok());
  }
  // Each domain sees its own ten once (nothing came back) and each other domain's ten once.
  for (std::size_t k = 0; k < tallies.size(); ++k) {
    const Tally got = tallies[k].get();
    INFO("domain " << domains[k]);
    check_each_once(got, 3 * kMessages);
  }
  // Each bridge exported what its own domain published, and no import of its own.
  for (std::size_t k = 0; k < bridges.size(); ++k) {
    for (const auto& t : bridges[k].status().topics) {
      INFO("bridge of " << domains[k] << ": " << t.topic << (t.imported ? " imported" : " exported"));
      if (t.topic != topic) continue;
      CHECK(t.messages == (t.imported ? 2u : 1u) * kMessages);
    }
  }
}
