// SPDX-License-Identifier: Apache-2.0
// An exporting bridge that restarts while its topic keeps publishing: the far side gets every
// message published once the new bridge runs, or the bridges count what they lost. Hidden ([.]):
// it fails today (the new writer's first messages are lost uncounted); see issue 39.

#include <atomic>
#include <thread>

#include <catch2/catch.hpp>

#include "bridge_helpers.hpp"

using namespace cerulion;
using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

/// Export-only options of a bridge for `domain` on DDS domain `dds`, following every topic.
bridge::BridgeOptions exporting(const std::string& domain, std::uint32_t dds) {
  bridge::BridgeOptions o;
  o.domain = domain;
  o.dds_domain = dds;
  o.direction = bridge::Direction::Export;
  o.selection = all_topics();
  o.status_file = false;
  return o;
}

/// What the bridges counted as lost on `topic`.
std::uint64_t lost_on(const bridge::Bridge& b, const std::string& topic) {
  std::uint64_t lost = 0;
  for (const auto& t : b.status().topics) {
    if (t.topic == topic) lost += t.lost;
  }
  return lost;
}

}  // namespace

TEST_CASE("After an exporting bridge restarts the far side gets every message published once it runs",
          "[.][bridge][restart]") {
  const std::string a = unique_domain("rsa"), b = unique_domain("rsb");
  const std::uint32_t dds = test_dds_domain();
  bridge::BridgeOptions importing = exporting(b, dds);
  importing.direction = bridge::Direction::Import;
  auto importer = start_bridge(importing);
  std::optional<bridge::Bridge> exporter(start_bridge(exporting(a, dds)));
  const std::string topic = unique_topic("restart");
  auto crossing = open_crossing(a, b, topic);

  // A publisher at about 200 Hz, numbering its messages, until told to stop.
  std::atomic<std::uint64_t> published{0};
  std::atomic<bool> done{false}, failed{false};
  std::thread publisher([&] {
    while (!done.load()) {
      if (!crossing.pub->publish_copy(numbered(published.load(), 64)).ok()) failed = true;
      published.fetch_add(1);
      std::this_thread::sleep_for(5ms);
    }
  });
  auto far = std::async(std::launch::async, [&] { return drain(*crossing.sub, 3s); });

  // Per restart: the first index published once the new bridge ran, and once it stopped again.
  std::vector<std::uint64_t> running_from, stopped_at;
  for (int restart = 0; restart < 3; ++restart) {
    std::this_thread::sleep_for(500ms);
    if (restart > 0) stopped_at.push_back(published.load());
    exporter.reset();
    std::this_thread::sleep_for(200ms);
    exporter.emplace(start_bridge(exporting(a, dds)));
    running_from.push_back(published.load());
  }
  std::this_thread::sleep_for(1s);
  stopped_at.push_back(published.load());
  done = true;
  publisher.join();
  const Tally got = far.get();
  REQUIRE_FALSE(failed.load());

  const std::uint64_t lost = lost_on(*exporter, topic) + lost_on(importer, topic);
  std::uint64_t exported = 0;
  for (const auto& t : exporter->status().topics) exported += t.topic == topic ? t.messages : 0;
  std::uint64_t missing = 0;
  std::string gaps;  // "from 120: 123-160" for each restart
  for (std::size_t k = 0; k < running_from.size(); ++k) {
    const std::uint64_t end = stopped_at[k];
    gaps += "; from " + std::to_string(running_from[k]) + ":";
    for (std::uint64_t i = running_from[k]; i < end; ++i) {
      if (got.copies.count(i) != 0) continue;
      ++missing;
      if (i == running_from[k] || got.copies.count(i - 1) != 0) gaps += " " + std::to_string(i) + "-";
      if (got.copies.count(i + 1) != 0 || i + 1 == end) gaps += std::to_string(i);
    }
  }
  INFO("missing " << missing << gaps << "; counted lost " << lost << " (importer " << lost_on(importer, topic) << "); the last bridge wrote " << exported);
  // Nothing missing, or every missing message counted by a bridge.
  CHECK(missing <= lost);
  for (const auto& [index, n] : got.copies) {
    INFO("message " << index);
    CHECK(n == 1);
  }
}
