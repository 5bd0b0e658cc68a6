// SPDX-License-Identifier: Apache-2.0
// A flashback dump as the recording a node is verified against: the keeper kept the node's inputs
// and its outputs while it ran live, and the dump verifies as it is, no golden file made.

#include "helpers.hpp"

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/flashback/keeper.hpp"
#include "cerulion/measurement/child_process.hpp"
#include "cerulion/verify/report.hpp"
#include "process.hpp"

using namespace cerulion;
using namespace cerulion::test;

TEST_CASE("A flashback dump of the node's inputs and outputs verifies directly", "[verify][flashback]") {
  const std::string domain = unique_domain("verify-fb");
  const std::string name = "verify";
  constexpr std::uint64_t kInputs = 20;

  flashback::KeeperOptions k;
  k.selection = {.topics = {"/imu", "/imu/filtered"}};
  k.domain = domain;
  k.name = name;
  k.lockstep = true;  // every message kept, so the dump holds an output for every input
  auto keeper = flashback::Keeper::start(k);
  REQUIRE(keeper.ok());

  measurement::ChildOptions node;
  node.argv = imu_filter();
  node.environment = {"CERULION_DOMAIN=" + domain};
  auto child = measurement::ChildProcess::start(node);
  REQUIRE(child.ok());

  PublisherOptions o;
  o.topic.domain = domain;
  auto pub = Publisher::create("/imu", o);
  REQUIRE(pub.ok());
  REQUIRE(pub->wait_for_subscribers(2, std::chrono::seconds(20)).ok());  // the keeper and the node
  for (std::uint64_t n = 0; n < kInputs; ++n) {
    const example::Imu imu{.index = n, .orientation = {0, 0, 0, 1}, .angular_velocity = {0, 0, 0.1 * static_cast<double>(n)},
                           .linear_acceleration = {0, 0, 9.81}};
    REQUIRE(pub->publish(imu, std::chrono::seconds(20)).ok());
  }
  // Every output read by the keeper: its lockstep position on /imu/filtered is past the last.
  CHECK(eventually([&] {
    auto info = inspect_topic("/imu/filtered", domain);
    if (!info) return false;
    for (const auto& p : info->participants) {
      if (p.role == Role::Subscriber && p.messages >= kInputs) return true;
    }
    return false;
  }, std::chrono::seconds(20)));
  (void)child->stop();
  keeper->stop();
  const std::string dump = fresh_temp_path("flashback.mcap");
  auto dumped = flashback::dump_to_file(keeper->store(), dump);
  REQUIRE(dumped.ok());
  { auto stopped = std::move(*keeper); }
  CHECK(flashback::remove_store(domain, name).ok());
  (void)clean_domain(domain, false);

  const auto v = verify::verify(imu_verify_options(dump));
  INFO(v.problem << verify::text_report(v));
  CHECK(v.verdict == verify::Verdict::Same);
  REQUIRE(v.against_recording.topics.size() == 1);
  CHECK(v.against_recording.topics[0].expected == kInputs);
}
