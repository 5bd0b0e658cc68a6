// SPDX-License-Identifier: Apache-2.0
// A dump catches up from the topics' rings with what its keeper has not stored yet (a keeper
// stopped, starved of CPU, or killed): every message published before the dump is in it or
// counted lost, exactly.

#include <atomic>
#include <csignal>
#include <filesystem>
#include <thread>

#include "cerulion/core/publisher.hpp"
#include "dump_catch_up.hpp"
#include "frozen_threads.hpp"
#include "keeper_child.hpp"
#include "temp_dir.hpp"

using namespace fbtest;

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
  Traffic traffic{publisher};
  const std::uint64_t& published = traffic.published;
  auto publish = [&](int n) { requireOk(traffic.publish(n)); };
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
  Traffic traffic{publisher, [](std::uint64_t s) { return 64 + s % 300; }};
  const std::uint64_t& published = traffic.published;
  requireOk(traffic.publish(1));
  REQUIRE(cerulion::test::eventually([&] { return topic_status(store->status(), topic).messages == 1; }));
  // Killed while traffic comes, then more traffic than the ring holds.
  Status sent;
  std::thread publishing([&] { sent = traffic.publish(5000); });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  child.kill9();
  publishing.join();
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

TEST_CASE("A keeper's own dump on SIGUSR1, while its taps get no CPU, holds the newest messages from the rings and "
          "counts what they overwrote, exactly",
          "[flashback][catch-up]") {
  TestDomain domain;
  const std::string topic = "/catchup/own";
  const std::string dir = cerulion::test::fresh_temp_path("own-dumps");
  std::filesystem::create_directories(dir);
  auto publisher = open_publisher(domain.name, topic, Mode::FreeRun, 8);
  auto child = keeper_child(domain.name, topic, {.dump_dir = dir});
  REQUIRE(child.wait_ready());
  auto store = cerulion::flashback::Store::open(domain.name, "default");
  requireOk(store.status());
  Traffic traffic{publisher};
  requireOk(traffic.publish(1));
  REQUIRE(cerulion::test::eventually([&] { return topic_status(store->status(), topic).messages == 1; }));
  // Its taps, compression and trigger watch stop, as idle-priority threads under full load; its
  // main thread (where SIGUSR1 becomes a trigger) and its dump thread run on.
  cerulion::test::FrozenThreads frozen(child.pid(), [&](pid_t tid, const std::string& name) {
    return tid != child.pid() && name != "fb-dump";
  });
  if (!frozen.frozen()) {
    WARN("skipped: cannot stop the keeper's threads one by one (" << frozen.why() << ")");
    return;
  }
  auto own_dump = [&] {
    REQUIRE(::kill(child.pid(), SIGUSR1) == 0);
    REQUIRE(cerulion::test::eventually([&] { return store->status().dumps == 1; }));
    const auto written = store->status().last_dump;
    REQUIRE(written.has_value());
    CHECK(written->trigger == "signal");
    return read_dump_file(written->path);
  };
  SECTION("what the ring still holds, byte for byte") {
    requireOk(traffic.publish(5));
    auto dump = own_dump();
    CHECK(dump.problems.empty());
    REQUIRE(dump.messages.size() == 6);
    for (std::uint32_t i = 0; i < 6; ++i) {
      CHECK(dump.messages[i].sequence == i);
      CHECK(dump.messages[i].data == payload(i, 100));
    }
    CHECK(dump_count(dump, "messages", topic) == 6);
    CHECK(dump_count(dump, "lost", topic) == 0);
  }
  SECTION("what the ring overwrote, counted lost") {
    requireOk(traffic.publish(40));  // five rings' worth
    auto dump = own_dump();
    CHECK(dump.problems.empty());
    CHECK(newest_of(dump, topic) == traffic.published - 1);
    CHECK(dump_count(dump, "lost", topic) == sequence_gaps(dump)[topic]);
    CHECK(dump_count(dump, "lost", topic) > 0);
    CHECK(dump_count(dump, "messages", topic) == dump.messages.size());
    CHECK(dump.messages.size() + dump_count(dump, "lost", topic) == traffic.published);
  }
  // Its taps were behind all along: the store alone still holds the first message only.
  CHECK(topic_status(store->status(), topic).messages == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("A dump holds a topic of the keeper's selection that the keeper never attached, and counts every sequence "
          "its ring no longer holds as lost",
          "[flashback][catch-up]") {
  TestDomain domain;
  auto child = keeper_child(domain.name, "/catchup/named", {.all = true});
  REQUIRE(child.wait_ready());
  // Stopped before it can notice the new topic: as a keeper that never got the CPU.
  REQUIRE(child.stop());
  const std::string topic = "/catchup/unattached";
  auto publisher = open_publisher(domain.name, topic, Mode::FreeRun, 8);
  Traffic traffic{publisher};
  requireOk(traffic.publish(40));  // five rings' worth
  auto store = cerulion::flashback::Store::open(domain.name, "default");
  requireOk(store.status());
  auto dump = dump_and_read(*store);
  CHECK(dump.problems.empty());
  CHECK(newest_of(dump, topic) == traffic.published - 1);
  CHECK(dump_count(dump, "messages", topic) == 8);
  CHECK(dump_count(dump, "lost", topic) == 32);
  CHECK(dump.messages.size() + dump_count(dump, "lost", topic) == traffic.published);
  child.resume();
}

TEST_CASE("A dump of everything held and status report the same messages and lost, the loss before the keeper's "
          "first message included",
          "[flashback][catch-up]") {
  TestDomain domain;
  const std::string topic = "/catchup/agree";
  auto publisher = open_publisher(domain.name, topic, Mode::FreeRun, 8);
  auto child = keeper_child(domain.name, topic);
  REQUIRE(child.wait_ready());
  // Its tap reads nothing until 40 are published: it finds 32 overwritten before its first.
  REQUIRE(child.stop());
  Traffic traffic{publisher};
  requireOk(traffic.publish(40));
  child.resume();
  auto store = cerulion::flashback::Store::open(domain.name, "default");
  requireOk(store.status());
  REQUIRE(cerulion::test::eventually([&] { return topic_status(store->status(), topic).messages == 8; }));
  REQUIRE(child.stop());
  cerulion::flashback::DumpOptions store_only;
  store_only.from_topics = false;
  for (const auto& options : {store_only, cerulion::flashback::DumpOptions{}}) {
    const auto status = topic_status(store->status(), topic);
    auto dump = dump_and_read(*store, options);
    CHECK(dump.problems.empty());
    CHECK(status.lost == 32);
    CHECK(dump_count(dump, "messages", topic) == status.messages);
    CHECK(dump_count(dump, "lost", topic) == status.lost);
  }
  child.resume();
}

TEST_CASE("A keeper stopped for 2 s while a 1 kHz topic runs loses nothing, or its dump counts exactly what it lacks",
          "[flashback][catch-up]") {
  TestDomain domain;
  const std::string topic = "/catchup/khz";
  auto publisher = open_publisher(domain.name, topic, Mode::FreeRun, 16);
  auto child = keeper_child(domain.name, topic);
  REQUIRE(child.wait_ready());
  auto store = cerulion::flashback::Store::open(domain.name, "default");
  requireOk(store.status());
  Traffic traffic{publisher};
  std::atomic<bool> done{false};
  Status sent;
  std::thread publishing([&] {
    auto next = std::chrono::steady_clock::now();
    while (!done.load() && sent.ok()) {
      sent = traffic.publish(1);
      next += std::chrono::milliseconds(1);
      std::this_thread::sleep_until(next);
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  REQUIRE(child.stop());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  child.resume();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  done = true;
  publishing.join();
  requireOk(sent);
  REQUIRE(cerulion::test::eventually([&] {
    const auto s = topic_status(store->status(), topic);
    return s.messages + s.lost == traffic.published;
  }));
  auto dump = dump_and_read(*store);
  CHECK(dump.problems.empty());
  CHECK(newest_of(dump, topic) == traffic.published - 1);
  CHECK(dump_count(dump, "lost", topic) == sequence_gaps(dump)[topic]);
  CHECK(dump.messages.size() + dump_count(dump, "lost", topic) == traffic.published);
  CHECK(dump_count(dump, "lost", topic) == topic_status(store->status(), topic).lost);
}

TEST_CASE("A dump counts as lost what a topic published after the last message it holds of it",
          "[flashback][catch-up]") {
  using namespace cerulion::flashback::detail;
  std::map<std::string, RingCopy> rings;
  rings["/t"].published = 50;
  for (std::uint32_t s = 30; s < 40; ++s) rings["/t"].messages.push_back({s, 1000 + s, 2000 + s, payload(s, 10)});
  std::vector<std::byte> records;
  LossTable losses;
  const auto taken = catch_up({{3, "/t", 20u, 7}}, rings, 0, 0, records, losses);
  CHECK(taken == 10);
  REQUIRE(losses.count(3));
  CHECK(losses[3].messages == 10);
  CHECK(losses[3].first_lost == 7 + 10);     // 20-29 overwritten before the first here
  CHECK(losses[3].last_lost == 7 + 10 + 10);  // 40-49 published before the dump, in neither
  CHECK(losses[3].last_sequence == 49);
}
