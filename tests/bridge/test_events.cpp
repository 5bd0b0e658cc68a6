// SPDX-License-Identifier: Apache-2.0
// What a bridge says as it runs: each topic it starts carrying, and what it cannot carry, once,
// through the EventSink of its options; the problems also stay in its status for `bridge status`.

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include "bridge_helpers.hpp"
#include "cerulion/core/names.hpp"
#include "cerulion/recording/events.hpp"
#include "temp_dir.hpp"

using namespace cerulion;
using namespace cerulion::test;
using recording::EventKind;

namespace {

/// The events drained so far about `subject`, of `kind`.
std::size_t count(const std::vector<recording::Event>& events, EventKind kind, const std::string& subject) {
  return std::count_if(events.begin(), events.end(),
                       [&](const auto& e) { return e.kind == kind && e.subject == subject; });
}

}  // namespace

TEST_CASE("A bridge says once each topic it starts exporting and importing, as news about the local topic",
          "[bridge][events]") {
  const std::string a = unique_domain("bra"), b = unique_domain("brb"), topic = unique_topic("events");
  recording::EventQueue out_events, in_events;
  auto bridges = start_export_import(a, b, test_dds_domain(), [&](bridge::BridgeOptions& o) {
    o.events = o.direction == bridge::Direction::Export ? &out_events : &in_events;
  });
  // The warm-up publishes until a message crossed: many messages, each topic started once.
  auto [pub, sub] = open_crossing(a, b, topic);
  const auto out = out_events.drain();
  const auto in = in_events.drain();
  CHECK(count(out, EventKind::Info, topic) == 1);
  CHECK(count(in, EventKind::Info, topic) == 1);
  for (const auto& e : out) {
    INFO(e.message);
    CHECK(e.kind == EventKind::Info);
    CHECK(e.message.find("exporting " + topic + " as rt" + topic) != std::string::npos);
  }
  for (const auto& e : in) {
    INFO(e.message);
    CHECK(e.kind == EventKind::Info);
    CHECK(e.message.find("importing rt" + topic + " as " + topic) != std::string::npos);
  }
}

TEST_CASE("A bridge says once, as a problem, what it cannot read, and keeps it in its status", "[bridge][events]") {
  const std::string a = unique_domain("bra");
  const std::string planted = "/dev/shm" + segment_name(a, "/planted");
  REQUIRE(::mkfifo(planted.c_str(), 0600) == 0);
  recording::EventQueue events;
  bridge::BridgeOptions o;
  o.domain = a;
  o.dds_domain = test_dds_domain();
  o.direction = bridge::Direction::Export;
  o.selection = all_topics();
  o.events = &events;
  o.status_file = false;
  auto bridge = start_bridge(o);
  // A topic that appears later makes the tap set list the domain again, FIFO included; its first
  // message makes the exporter open its writer.
  auto pub = open_publisher(a, "/later");
  REQUIRE(pub.publish_copy(numbered(0, 16)).ok());
  REQUIRE(eventually([&] { return bridge.status().topics.size() == 1; }));
  const auto status = bridge.status();
  bridge.stop();
  ::unlink(planted.c_str());
  const auto said = events.drain();
  std::vector<std::string> problems;
  for (const auto& e : said) {
    if (e.kind == EventKind::Problem) problems.push_back(e.message);
  }
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("/planted") != std::string::npos);
  CHECK(problems[0].find("FIFO") != std::string::npos);
  CHECK(status.problems == problems);
  // The tap set's own news of a topic read is left to the exporter's: one line per topic.
  CHECK(count(said, EventKind::Info, "/later") == 1);
}

TEST_CASE("A bridge that cannot keep its status file says so once, as a warning, and goes on", "[bridge][events]") {
  recording::EventQueue events;
  bridge::BridgeOptions o;
  o.domain = unique_domain("bra");
  o.dds_domain = test_dds_domain();
  o.direction = bridge::Direction::Export;
  o.selection = all_topics();
  o.events = &events;
  o.status_directory = fresh_temp_path("no-such-directory");
  auto bridge = start_bridge(o);
  std::vector<recording::Event> said;
  const auto warnings = [&] {
    for (auto& e : events.drain()) said.push_back(std::move(e));
    return std::count_if(said.begin(), said.end(), [](const auto& e) { return e.kind == EventKind::Warning; });
  };
  REQUIRE(eventually([&] { return warnings() >= 1; }));
  // Two more status periods, each failing the same way: nothing more is said.
  for (int period = 0; period < 2; ++period) {
    const auto updated = bridge.status().updated_realtime_ns;
    REQUIRE(eventually([&] { return bridge.status().updated_realtime_ns > updated; }));
  }
  bridge.stop();
  CHECK(warnings() == 1);
  const auto warning = std::find_if(said.begin(), said.end(), [](const auto& e) { return e.kind == EventKind::Warning; });
  INFO(warning->message);
  CHECK(warning->message.find("cannot keep the status file (`cerulion bridge status` will not see this bridge)") !=
        std::string::npos);
  CHECK(warning->message.find(o.status_directory) != std::string::npos);
}
