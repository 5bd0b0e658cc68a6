// SPDX-License-Identifier: Apache-2.0
// Long-running commands whose stderr goes away (`2>&1 | head -1`) or fills (`2>/dev/full`) stop
// talking and go on: record still finishes a file `info` reads, play still plays every message.
// They used to abort (SIGABRT, exit 134) on the first failed write.

#include <catch2/catch.hpp>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/subscriber.hpp"
#include "everyday_helpers.hpp"
#include "overlapping_mcap.hpp"
#include "process.hpp"
#include "test_record_helpers.hpp"

using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

/// Records `topic`, which a publisher feeds meanwhile, for 2 s with stderr redirected so.
void check_record_survives(const std::string& stem, const std::string& redirection) {
  const auto topic = unique_topic(stem);
  const auto file = record_temp_path(stem + ".mcap");
  BackgroundProcess pub({cerulion_binary(), "pub", topic, "tick", "-r", "50"});
  REQUIRE(eventually([&] { return !topic_snapshot(topic).is_null(); }));
  auto done = run_process(redirected({cerulion_binary(), "record", topic, "-o", file, "--duration", "2"}, redirection),
                          {}, 30s);
  INFO(redirection << ": " << done.out << done.err);
  CHECK_FALSE(done.timed_out);
  CHECK(done.killed_by == 0);
  CHECK(done.exit_code == 0);
  auto info = info_json(file);
  CHECK(info["finalized"] == true);
  CHECK(topic_count(info, topic) > 0);
}

}  // namespace

TEST_CASE("record whose stderr reader went away (2>&1 | head -1) goes on and finalizes its file", "[cli][record]") {
  check_record_survives("closed_stderr_record", "2>&1 | head -1");
}

TEST_CASE("record whose stderr is full (2>/dev/full) goes on and finalizes its file", "[cli][record]") {
  check_record_survives("full_stderr_record", "2>/dev/full");
}

TEST_CASE("play whose stderr reader went away (2>&1 | head -1) plays every message and exits 0", "[cli][play]") {
  const auto topic = unique_topic("closed_stderr_play");
  const auto file = record_temp_path("closed-stderr-play.mcap");
  // 40 messages over 2.5 s: progress lines at 1 and 2 s, the second into the closed pipe.
  REQUIRE(write_overlapping_chunks(file, {topic}, 4, 10, 1'700'000'000'000'000'000, 64'000'000).ok());
  cerulion::SubscriberOptions options;
  options.role = cerulion::Role::Tap;  // keeps the topic, and its count, after play left
  auto tap = cerulion::Subscriber::create(topic, options);
  REQUIRE(tap.ok());
  auto done = run_process(redirected({cerulion_binary(), "play", file}, "2>&1 | head -1"), {}, 30s);
  INFO(done.out << done.err);
  CHECK_FALSE(done.timed_out);
  CHECK(done.killed_by == 0);
  CHECK(done.exit_code == 0);
  CHECK(done.out.rfind("playing: ", 0) == 0);
  auto info = cerulion::inspect_topic(topic);
  REQUIRE(info.ok());
  CHECK(info->published == 40);
}

TEST_CASE("play whose stderr is full (2>/dev/full) plays every message and exits 0", "[cli][play]") {
  const auto topic = unique_topic("full_stderr_play");
  const auto file = record_temp_path("full-stderr-play.mcap");
  REQUIRE(write_overlapping_chunks(file, {topic}, 2, 10, 1'700'000'000'000'000'000, 60'000'000).ok());
  cerulion::SubscriberOptions options;
  options.role = cerulion::Role::Tap;
  auto tap = cerulion::Subscriber::create(topic, options);
  REQUIRE(tap.ok());
  auto done = run_process(redirected({cerulion_binary(), "play", file}, "2>/dev/full"), {}, 30s);
  CHECK(done.killed_by == 0);
  CHECK(done.exit_code == 0);
  auto info = cerulion::inspect_topic(topic);
  REQUIRE(info.ok());
  CHECK(info->published == 20);
}
