// SPDX-License-Identifier: Apache-2.0
// A dump catches up from the topics' rings with what its keeper has not stored yet (a keeper
// stopped, starved of CPU, or killed): every message published before the dump is in it or
// counted lost, exactly.

#include <csignal>
#include <thread>

#include "cerulion/core/publisher.hpp"
#include "cerulion/flashback/keeper.hpp"
#include "child.hpp"
#include "helpers.hpp"

using namespace fbtest;

namespace {

/// A keeper of `topic` in a child process, ready once it has started tapping.
cerulion::test::Child keeper_child(const std::string& domain, const std::string& topic) {
  return cerulion::test::Child([=](cerulion::test::Child& self) {
    cerulion::flashback::KeeperOptions options;
    options.domain = domain;
    options.selection.topics = {topic};
    options.limits.memory_bytes = 16 << 20;
    auto keeper = cerulion::flashback::Keeper::start(options);
    if (!keeper) return 1;
    self.signal_ready();
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  });
}

/// The newest sequence of `topic` in a dump (0 when none).
std::uint32_t newest_of(const ReadDump& dump, const std::string& topic) {
  std::uint32_t newest = 0;
  for (const auto& m : dump.messages) {
    if (m.topic == topic) newest = std::max(newest, m.sequence);
  }
  return newest;
}

}  // namespace

TEST_CASE("A dump takes from the topic's ring what a stopped keeper has not stored, and counts what the ring "
          "no longer holds as lost",
          "[flashback][catch-up]") {
  TestDomain domain;
  const std::string topic = "/catchup/stopped";
  auto publisher = open_publisher(domain.name, topic, Mode::FreeRun, 8);
  auto child = keeper_child(domain.name, topic);
  REQUIRE(child.wait_ready());
  auto store = cerulion::flashback::Store::open(domain.name, "default");
  requireOk(store.status());
  std::uint64_t published = 0;
  auto publish = [&](int n) {
    for (int i = 0; i < n; ++i, ++published) requireOk(publisher.publish_copy(payload(published, 100)).status());
  };
  publish(1);
  REQUIRE(cerulion::test::eventually([&] { return topic_status(store->status(), topic).messages == 1; }));
  // The keeper gets no CPU from here on, as an idle-priority keeper under full load.
  REQUIRE(child.stop());
  cerulion::flashback::DumpOptions store_only;
  store_only.from_topics = false;

  SECTION("what the ring still holds is in the dump, byte for byte") {
    publish(5);
    auto dump = dump_and_read(*store);
    CHECK(dump.problems.empty());
    REQUIRE(dump.messages.size() == 6);
    for (std::uint32_t i = 0; i < 6; ++i) {
      CHECK(dump.messages[i].sequence == i);
      CHECK(dump.messages[i].data == payload(i, 100));
    }
    CHECK(dump.summary.from_topics == 5);
    CHECK(dump_count(dump, "messages", topic) == 6);
    CHECK(dump_count(dump, "lost", topic) == 0);
    // The store itself holds what the keeper took, alone.
    CHECK(dump_and_read(*store, store_only).messages.size() == 1);
  }
  SECTION("what the ring overwrote is counted lost, exactly") {
    publish(40);  // five rings' worth
    auto dump = dump_and_read(*store);
    CHECK(dump.problems.empty());
    CHECK(newest_of(dump, topic) == published - 1);
    CHECK(dump_count(dump, "lost", topic) == sequence_gaps(dump)[topic]);
    CHECK(dump_count(dump, "lost", topic) > 0);
    CHECK(dump_count(dump, "messages", topic) == dump.messages.size());
    CHECK(dump.messages.size() + dump_count(dump, "lost", topic) == published);
  }
  SECTION("what the keeper takes once it runs again is not taken twice") {
    publish(5);
    child.resume();
    REQUIRE(cerulion::test::eventually([&] { return topic_status(store->status(), topic).messages == 6; }));
    publish(3);
    REQUIRE(child.stop());
    publish(2);
    auto dump = dump_and_read(*store);
    REQUIRE(dump.messages.size() == published);
    for (std::uint32_t i = 0; i < dump.messages.size(); ++i) CHECK(dump.messages[i].sequence == i);
    CHECK(dump_count(dump, "lost", topic) == 0);
  }
  child.resume();
}

TEST_CASE("A dump knows a keeper's named topics before its tap has read anything from them", "[flashback][catch-up]") {
  TestDomain domain;
  const std::string topic = "/catchup/unread";
  auto publisher = open_publisher(domain.name, topic, Mode::FreeRun);
  auto child = keeper_child(domain.name, topic);
  REQUIRE(child.wait_ready());
  // Stopped before its tap reads: as a keeper that never got the CPU.
  REQUIRE(child.stop());
  for (std::uint64_t s = 0; s < 5; ++s) requireOk(publisher.publish_copy(payload(s, 100)).status());
  auto store = cerulion::flashback::Store::open(domain.name, "default");
  requireOk(store.status());
  auto dump = dump_and_read(*store);
  CHECK(dump.problems.empty());
  CHECK(dump.messages.size() == 5);
  CHECK(dump.summary.from_topics == 5);
  CHECK(dump_count(dump, "messages", topic) == 5);
  child.resume();
}

TEST_CASE("A dump after a kill -9 of the keeper holds what was published since, or counts it lost",
          "[flashback][catch-up]") {
  TestDomain domain;
  const std::string topic = "/catchup/killed";
  auto publisher = open_publisher(domain.name, topic, Mode::FreeRun, 16);
  auto child = keeper_child(domain.name, topic);
  REQUIRE(child.wait_ready());
  auto store = cerulion::flashback::Store::open(domain.name, "default");
  requireOk(store.status());
  std::uint64_t published = 0;
  // Returns the first failure rather than asserting: it also runs on a traffic thread, where a
  // Catch2 assertion is not safe.
  auto publish = [&](int n) -> Status {
    for (int i = 0; i < n; ++i, ++published) {
      if (auto sent = publisher.publish_copy(payload(published, 64 + published % 300)); !sent) return sent.status();
    }
    return {};
  };
  requireOk(publish(1));
  REQUIRE(cerulion::test::eventually([&] { return topic_status(store->status(), topic).messages == 1; }));
  // Killed while traffic comes, then more traffic than the ring holds.
  Status sent;
  std::thread traffic([&] { sent = publish(5000); });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  child.kill9();
  traffic.join();
  requireOk(sent);
  auto dump = dump_and_read(*store);
  CHECK(dump.problems.empty());
  CHECK(newest_of(dump, topic) == published - 1);
  CHECK(dump_count(dump, "lost", topic) == sequence_gaps(dump)[topic]);
  CHECK(dump_count(dump, "messages", topic) == dump.messages.size());
  CHECK(dump.messages.size() + dump_count(dump, "lost", topic) == published);
  // The ring's last messages, byte for byte.
  REQUIRE(dump.messages.size() >= 2);
  const auto& last = dump.messages.back();
  CHECK(last.data == payload(last.sequence, 64 + last.sequence % 300));
}
