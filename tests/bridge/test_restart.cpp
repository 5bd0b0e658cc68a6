// SPDX-License-Identifier: Apache-2.0
// An exporting bridge that restarts while its topic keeps publishing: the far side gets every
// message published once the new bridge runs, or the bridges count what they lost, and count
// nothing that arrived (issue 39: the new writer's first messages were gone before the importing
// reader had them, uncounted).

#include <atomic>
#include <thread>

#include <catch2/catch.hpp>

#include "bridge_helpers.hpp"
#include "ros2_node.hpp"

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

/// A participant's user data as a bridge's says when it started: now.
std::vector<unsigned char> started_now() {
  const std::string text = "cerulion.started=" + std::to_string(realtime_ns());
  return {text.begin(), text.end()};
}

}  // namespace

TEST_CASE("After an exporting bridge restarts the far side gets every message published once it runs",
          "[bridge][restart]") {
  const std::string a = unique_domain("rsa"), b = unique_domain("rsb");
  const std::uint32_t dds = test_dds_domain();
  bridge::BridgeOptions importing = exporting(b, dds);
  importing.direction = bridge::Direction::Import;
  auto importer = start_bridge(importing);
  std::optional<bridge::Bridge> exporter(start_bridge(exporting(a, dds)));
  const std::string topic = unique_topic("restart");
  // The far side's ring holds what a new bridge releases at once when its writer matches.
  Crossing crossing{open_publisher(a, topic), open_subscriber(b, topic, 1024)};
  REQUIRE(warm_up(*crossing.pub, *crossing.sub));

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
  std::uint64_t lost_before = 0;  // counted by the exporting bridges that stopped
  for (int restart = 0; restart < 3; ++restart) {
    // Long enough for the far bridge to discover the new one on a busy machine.
    std::this_thread::sleep_for(1500ms);
    if (restart > 0) {
      // The window ends a moment before the stop: a message published as the bridge stops may
      // not have been read yet, and that is no restart's gap.
      stopped_at.push_back(published.load());
      std::this_thread::sleep_for(100ms);
    }
    // Stopped first: what it counts as lost includes what it still held for the far reader.
    exporter->stop();
    lost_before += lost_on(*exporter, topic);
    exporter.reset();
    std::this_thread::sleep_for(200ms);
    exporter.emplace(start_bridge(exporting(a, dds)));
    running_from.push_back(published.load());
  }
  std::this_thread::sleep_for(1500ms);
  stopped_at.push_back(published.load());
  done = true;
  publisher.join();
  const Tally got = far.get();
  REQUIRE_FALSE(failed.load());

  const std::uint64_t lost = lost_before + lost_on(*exporter, topic) + lost_on(importer, topic);
  std::uint64_t exported = 0;
  for (const auto& t : exporter->status().topics) exported += t.topic == topic ? t.messages : 0;
  std::uint64_t missing = 0, missing_anywhere = 0;
  const std::uint64_t last = published.load();
  for (std::uint64_t i = 0; i < last; ++i) missing_anywhere += got.copies.count(i) == 0 ? 1 : 0;
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
  INFO("missing " << missing << gaps << " (" << missing_anywhere << " of all " << last << ", the rest while no "
                   "bridge ran); counted lost " << lost << " (importer " << lost_on(importer, topic)
                   << "); the last bridge wrote " << exported);
  // Nothing missing while a bridge ran, or every missing message counted by a bridge; and nothing
  // counted that arrived.
  CHECK(missing <= lost);
  CHECK(lost <= missing_anywhere);
  for (const auto& [index, n] : got.copies) {
    INFO("message " << index);
    CHECK(n == 1);
  }
}

TEST_CASE("An importing bridge counts as lost what a restarted writer sent before its reader matched it",
          "[bridge][restart]") {
  const std::string b = unique_domain("rcb"), topic = unique_topic("restart_count");
  const std::uint32_t dds = test_dds_domain();
  auto importer = start_bridge(b, dds, bridge::Direction::Import);
  auto far = open_subscriber(b, topic, 64);
  {
    // A first writer, as another bridge's, until the importer reads the topic: older than the
    // importer's reader, so its history is no loss.
    PlainNode first(dds, started_now());
    auto* w = first.publisher->create_datawriter(first.topic("rt" + topic, "std_msgs::msg::dds_::String_"),
                                                 first.writer_qos(true));
    REQUIRE(w);
    bool arrived = false;
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!arrived && std::chrono::steady_clock::now() < deadline) {
      RawCdr m = ros_string("warm-up");
      REQUIRE(w->write(&m));
      arrived = far.receive(100ms).ok();
    }
    REQUIRE(arrived);
    (void)drain(far, 300ms);
  }
  // Its successor's bridge starts after the importer's reader: all it writes is owed. Its twenty
  // messages go before any reader can have matched it, and its history keeps the last five.
  PlainNode next(dds, started_now());
  fdds::DataWriterQos qos = next.writer_qos(true);
  qos.history().depth = 5;
  auto* w = next.publisher->create_datawriter(next.topic("rt" + topic, "std_msgs::msg::dds_::String_"), qos);
  REQUIRE(w);
  constexpr int kSent = 20;
  for (int i = 0; i < kSent; ++i) {
    RawCdr m = ros_string(std::to_string(i));
    REQUIRE(w->write(&m));
  }
  std::set<std::string> got;
  for (auto s = far.receive(3s); s.ok(); s = far.receive(3s)) got.insert(std::string(s->text()));
  const std::uint64_t lost = lost_on(importer, topic);
  INFO("received " << got.size() << ", counted lost " << lost);
  CHECK(got.size() < std::size_t{kSent});  // the history kept only the last ones
  CHECK(got.size() + lost == std::size_t{kSent});
}
