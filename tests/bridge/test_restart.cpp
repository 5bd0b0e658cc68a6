// SPDX-License-Identifier: Apache-2.0
// An exporting bridge that restarts while its topic keeps publishing: the new one resumes from
// what the topic's ring kept, the far side gets nothing twice, and the importing bridge counts the
// gap it sees in the topic's own sequence numbers, so that its count and the far readers'
// lost_before add up to what is missing (issue 49: a restart lost hundreds of messages, mostly
// uncounted; issue 39: the new writer's first messages were gone before the importing reader had
// them, uncounted).

#include <atomic>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

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

/// What the far side got of a stream of numbered messages, and what it was told it lost.
struct FarSide {
  std::map<std::uint64_t, int> copies;  ///< index -> copies received
  std::uint64_t lost_before = 0;        ///< the subscriber's own count (echo's lost_before)
};

/// Publishes numbered messages at about 200 Hz on `topic` of domain `a` (a ring of 16) while
/// `restart` stops the exporting bridge (and starts another) three times 1.5 s apart, the far
/// subscriber in `b` collecting them; then checks what `importer_lost` (the importing bridge's
/// count, read at the end) and the subscriber's lost_before say against what is missing: every
/// message between the first and the last that arrived came once or is counted, and nothing that
/// arrived is counted.
template <typename Restart, typename ImporterLost>
void check_restarts_accounted(const std::string& a, const std::string& b, const std::string& topic, Restart restart,
                              ImporterLost importer_lost) {
  Crossing crossing{open_publisher(a, topic), open_subscriber(b, topic, 1024)};
  REQUIRE(warm_up(*crossing.pub, *crossing.sub));
  const std::uint64_t lost_at_start = importer_lost();
  std::atomic<std::uint64_t> published{0};
  std::atomic<bool> done{false}, failed{false};
  std::thread publisher([&] {
    while (!done.load()) {
      if (!crossing.pub->publish_copy(numbered(published.load(), 64)).ok()) failed = true;
      published.fetch_add(1);
      std::this_thread::sleep_for(5ms);
    }
  });
  // Taken until the publisher stopped and nothing came for 3 s: a restart on a busy machine may
  // leave it without messages longer than that.
  auto far = std::async(std::launch::async, [&] {
    FarSide f;
    for (;;) {
      auto got = crossing.sub->receive(3s);
      if (!got.ok()) {
        if (done.load()) return f;
        continue;
      }
      if (got->data()[0] == kWarmup) continue;
      ++f.copies[index_of(got->data())];
      f.lost_before += got->lost_before();
    }
  });
  for (int k = 0; k < 3; ++k) {
    std::this_thread::sleep_for(1500ms);
    restart(k);
  }
  std::this_thread::sleep_for(1500ms);
  done = true;
  publisher.join();
  const FarSide got = far.get();
  REQUIRE_FALSE(failed.load());
  REQUIRE_FALSE(got.copies.empty());
  const std::uint64_t first = got.copies.begin()->first, last = got.copies.rbegin()->first;
  std::uint64_t missing = 0, missing_before_last = 0;
  std::string gaps;
  for (std::uint64_t i = 0; i <= last; ++i) {
    if (got.copies.count(i) != 0) continue;
    ++missing_before_last;
    if (i < first) continue;
    ++missing;
    if (got.copies.count(i - 1) != 0) gaps += " " + std::to_string(i) + "-";
    if (got.copies.count(i + 1) != 0) gaps += std::to_string(i);
  }
  const std::uint64_t counted = importer_lost() - lost_at_start + got.lost_before;
  INFO("published " << published.load() << ", received " << first << ".." << last << ", missing " << missing << ":"
                    << gaps << "; counted " << counted << " (the far subscriber's lost_before " << got.lost_before
                    << "), missing before the last " << missing_before_last);
  CHECK(missing <= counted);
  CHECK(counted <= missing_before_last);
  for (const auto& [index, n] : got.copies) {
    INFO("message " << index);
    CHECK(n == 1);
  }
}

}  // namespace

TEST_CASE("A restarted exporting bridge sends what its topic's ring kept while no bridge ran, and nothing twice",
          "[bridge][restart]") {
  const std::string a = unique_domain("rra"), b = unique_domain("rrb");
  const std::uint32_t dds = test_dds_domain();
  bridge::BridgeOptions importing = exporting(b, dds);
  importing.direction = bridge::Direction::Import;
  auto importer = start_bridge(importing);
  std::optional<bridge::Bridge> exporter(start_bridge(exporting(a, dds)));
  const std::string topic = unique_topic("ring_resume");
  // A ring of 64 in `a`: it keeps all that is published here.
  PublisherOptions po;
  po.topic.domain = a;
  po.topic.depth = 64;
  auto pub = Publisher::create(topic, po);
  REQUIRE(pub.ok());
  auto sub = open_subscriber(b, topic, 1024);
  REQUIRE(warm_up(*pub, sub));
  const std::uint64_t lost_at_start = lost_on(importer, topic);
  for (std::uint64_t i = 0; i < 20; ++i) REQUIRE(pub->publish_copy(numbered(i, 64)).ok());
  Tally got = collect(sub, 20);
  REQUIRE(each_once(got, 20));
  // No bridge runs while 30 more are published; the next one finds them in the ring, with the 20
  // the far side has already.
  exporter->stop();
  exporter.reset();
  for (std::uint64_t i = 20; i < 50; ++i) REQUIRE(pub->publish_copy(numbered(i, 64)).ok());
  exporter.emplace(start_bridge(exporting(a, dds)));
  for (std::uint64_t i = 50; i < 60; ++i) REQUIRE(pub->publish_copy(numbered(i, 64)).ok());
  const Tally more = collect(sub, 40);
  for (const auto& [index, n] : more.copies) got.copies[index] += n;
  check_each_once(got, 60);
  CHECK(lost_on(importer, topic) == lost_at_start);
}

TEST_CASE("After an exporting bridge restarts every message between the first and the last the far side got came once or is counted by the importing bridge",
          "[bridge][restart]") {
  const std::string a = unique_domain("rsa"), b = unique_domain("rsb");
  const std::uint32_t dds = test_dds_domain();
  bridge::BridgeOptions importing = exporting(b, dds);
  importing.direction = bridge::Direction::Import;
  auto importer = start_bridge(importing);
  std::optional<bridge::Bridge> exporter(start_bridge(exporting(a, dds)));
  const std::string topic = unique_topic("restart");
  // Stopped for 0.2 to 1 s: longer than a ring of 16 at 200 Hz keeps.
  check_restarts_accounted(
      a, b, topic,
      [&](int k) {
        exporter->stop();
        exporter.reset();
        std::this_thread::sleep_for(std::chrono::milliseconds(200 + 400 * k));
        exporter.emplace(start_bridge(exporting(a, dds)));
      },
      [&] { return lost_on(importer, topic); });
}

TEST_CASE("After exporting bridges killed with -9 and started again, bridge status and the far readers' lost_before count every message missing",
          "[bridge][restart][cli]") {
  const std::string a = unique_domain("rka"), b = unique_domain("rkb");
  const std::uint32_t dds = test_dds_domain();
  const auto fastdds_before = fastdds_shm_files();
  const auto bridge_command = [&](const std::string& domain, const char* direction) {
    return std::vector<std::string>{cerulion_binary(), "--domain", domain, "bridge", "--dds-domain", std::to_string(dds),
                                    "-a", direction};
  };
  BackgroundProcess in(bridge_command(b, "--import"));
  auto out = std::make_unique<BackgroundProcess>(bridge_command(a, "--export"));
  const std::string topic = unique_topic("restart_kill");
  // What `bridge status --json` of the far side says the import of the topic lost.
  const auto importer_lost = [&] {
    std::uint64_t lost = 0;
    const bool read = eventually([&] {
      auto r = run_cerulion({"--domain", b, "bridge", "status", "--json"});
      if (r.exit_code != 0) return false;
      // Held whole while its topics are walked (a range-for keeps no temporary of its expression alive).
      const auto status = nlohmann::json::parse(r.out);
      for (const auto& t : status["bridges"][0]["topics"]) {
        if (t["topic"] == topic && t["direction"] == "import") lost = t["lost"];
      }
      return true;
    });
    REQUIRE(read);
    return lost;
  };
  check_restarts_accounted(
      a, b, topic,
      [&](int k) {
        out->signal(SIGKILL);
        (void)out->wait(10s);
        std::this_thread::sleep_for(std::chrono::milliseconds(200 + 400 * k));
        out = std::make_unique<BackgroundProcess>(bridge_command(a, "--export"));
      },
      [&] {
        // The status file is replaced once a second: read after the counts settled.
        std::this_thread::sleep_for(1500ms);
        return importer_lost();
      });
  out.reset();
  remove_abandoned_fastdds_files(fastdds_before);
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
