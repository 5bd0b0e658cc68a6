// SPDX-License-Identifier: Apache-2.0
// -e and -x choose what a bridge carries, on both sides, by the local name.

#include <catch2/catch.hpp>

#include <map>

#include "bridge_helpers.hpp"

using namespace cerulion;
using namespace cerulion::test;

namespace {
recording::TopicSelection matching(std::vector<std::string> include, std::vector<std::string> exclude = {}) {
  recording::TopicSelection s;
  s.include = std::move(include);
  s.exclude = std::move(exclude);
  return s;
}
bool carries(const bridge::BridgeStatus& status, const std::string& topic, bool imported) {
  for (const auto& t : status.topics)
    if (t.topic == topic && t.imported == imported) return true;
  return false;
}
}  // namespace

TEST_CASE("Patterns choose the topics a bridge exports and imports", "[bridge][selection]") {
  const std::string a = unique_domain("sela"), b = unique_domain("selb");
  const std::string stem = unique_topic("sel");  // "/test/sel_<pid>_<n>"
  const std::string keep = stem + "/keep", skip = stem + "/keep_debug", other = stem + "/other",
                    unwanted = stem + "/unwanted";
  const std::uint32_t dds = test_dds_domain();
  // A exports what starts with the stem except debug topics; B imports what matches /keep or /other$,
  // except /other$: so keep alone.
  auto out = start_bridge(a, dds, bridge::Direction::Export, matching({"^" + stem}, {"debug$"}));
  auto in = start_bridge(b, dds, bridge::Direction::Import, matching({"/keep", "/other$"}, {"/other$"}));

  std::vector<Publisher> pubs;
  for (const auto& t : {keep, skip, other, unwanted}) {
    PublisherOptions po;
    po.topic.domain = a;
    auto p = Publisher::create(t, po);
    REQUIRE(p.ok());
    pubs.push_back(std::move(*p));
  }
  SubscriberOptions so;
  so.topic.domain = b;
  auto sub = Subscriber::create(keep, so);
  REQUIRE(sub.ok());
  bool arrived = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!arrived && std::chrono::steady_clock::now() < deadline) {
    for (auto& p : pubs) REQUIRE(p.publish_copy(numbered(0, 16)).ok());
    arrived = sub->receive(std::chrono::milliseconds(100)).ok();
  }
  REQUIRE(arrived);
  // A few more rounds, so that whatever else was going to be bridged has been.
  for (int i = 0; i < 10; ++i) {
    for (auto& p : pubs) REQUIRE(p.publish_copy(numbered(1, 16)).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const auto exported = out.status();
  CHECK(carries(exported, keep, false));
  CHECK(carries(exported, other, false));
  CHECK(carries(exported, unwanted, false));
  CHECK_FALSE(carries(exported, skip, false));  // excluded on the export side
  const auto imported = in.status();
  CHECK(carries(imported, keep, true));
  CHECK_FALSE(carries(imported, other, true));     // excluded on the import side
  CHECK_FALSE(carries(imported, unwanted, true));  // matched no include pattern
  CHECK_FALSE(carries(imported, skip, true));      // never exported
}

TEST_CASE("A bridge over every topic carries or counts lost each topic that came and went before it could read it",
          "[bridge][selection][removed]") {
  const std::string a = unique_domain("flasha");
  const std::string stem = unique_topic("flash");
  auto out = start_bridge(a, test_dds_domain(), bridge::Direction::Export);
  // Created, published once and left at once, as `cerulion pub /t x --once` does.
  const int topics = 10;
  for (int i = 0; i < topics; ++i) {
    PublisherOptions po;
    po.topic.domain = a;
    auto p = Publisher::create(stem + "/t" + std::to_string(i), po);
    REQUIRE(p.ok());
    REQUIRE(p->publish_copy(numbered(i, 16)).ok());
  }
  // Written to DDS (once held samples go out, a few seconds without a reader), or lost: none unknown.
  std::string seen;
  auto accounted = [&] {
    std::map<std::string, std::uint64_t> per_topic;
    seen.clear();
    for (const auto& t : out.status().topics) {
      if (t.imported) continue;
      per_topic[t.topic] += t.messages + t.lost;
      seen += t.topic + ": " + std::to_string(t.messages) + " carried, " + std::to_string(t.lost) + " lost\n";
    }
    if (per_topic.size() != static_cast<std::size_t>(topics)) return false;
    for (const auto& [topic, n] : per_topic)
      if (n != 1) return false;
    return true;
  };
  const bool settled = eventually(accounted, std::chrono::seconds(30));
  INFO(seen);
  CHECK(settled);
}
