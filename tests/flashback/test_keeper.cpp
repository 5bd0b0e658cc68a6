// SPDX-License-Identifier: Apache-2.0
// Keepers over real topics: what they take is what was published, byte for byte, and their
// triggers dump into their directory.

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/publisher.hpp"
#include "keeper_child.hpp"

using namespace fbtest;
using cerulion::flashback::Keeper;
using cerulion::flashback::KeeperOptions;
using cerulion::recording::Event;
using cerulion::recording::EventKind;

namespace {

/// What a keeper said, kept as it is drained.
struct Events {
  cerulion::recording::EventQueue queue;
  std::vector<Event> seen;
  std::size_t count(EventKind kind, const std::string& subject) {
    for (auto& e : queue.drain()) seen.push_back(std::move(e));
    return std::count_if(seen.begin(), seen.end(), [&](const auto& e) { return e.kind == kind && e.subject == subject; });
  }
};

/// Dumps the keeper wrote, and those it refused, by its store's counters.
std::uint64_t dumps_done(const Keeper& keeper) { return keeper.status().dumps + keeper.status().dumps_refused; }

std::string temp_dir() {
  auto dir = std::filesystem::temp_directory_path() / cerulion::test::unique_domain("fbdumps");
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace

TEST_CASE("A keeper takes every message of a lockstep keeper's topic, byte for byte, in order", "[flashback][keeper]") {
  TestDomain domain;
  const std::string topic = "/keeper/exact";
  KeeperOptions options;
  options.domain = domain.name;
  options.selection.topics = {topic};
  options.lockstep = true;
  options.limits.memory_bytes = 16 << 20;
  PublisherOptions publisher_options;
  publisher_options.topic.domain = domain.name;
  auto publisher = Publisher::create(topic, publisher_options);
  requireOk(publisher.status());
  auto keeper = Keeper::start(options);
  requireOk(keeper.status());
  for (std::uint64_t s = 0; s < 500; ++s) requireOk(publisher->publish_copy(payload(s, 64 + s % 300)).status());
  REQUIRE(cerulion::test::eventually([&] { return keeper->status().messages == 500; }));
  keeper->stop();
  auto dump = dump_and_read(keeper->store());
  CHECK(dump.problems.empty());
  REQUIRE(dump.messages.size() == 500);
  for (std::uint64_t s = 0; s < 500; ++s) {
    CHECK(dump.messages[s].sequence == s);
    CHECK(dump.messages[s].data == payload(s, 64 + s % 300));
  }
  REQUIRE(dump.summary.topics.size() == 1);
  CHECK(dump.summary.topics[0].messages == 500);
  CHECK(dump.summary.topics[0].lost == 0);
}

TEST_CASE("A keeper at idle priority stopped right after a burst on a busy machine has every message published "
          "before the stop in its store", "[flashback][keeper]") {
  TestDomain domain;
  const std::string topic = "/keeper/burst";
  PublisherOptions publisher_options;
  publisher_options.topic.domain = domain.name;
  publisher_options.topic.mode = Mode::FreeRun;
  publisher_options.topic.depth = 64;
  auto publisher = Publisher::create(topic, publisher_options);
  requireOk(publisher.status());
  KeeperOptions options;
  options.domain = domain.name;
  options.selection.topics = {topic};
  options.limits.memory_bytes = 16 << 20;
  options.idle_priority = true;
  auto keeper = Keeper::start(options);
  requireOk(keeper.status());
  REQUIRE(cerulion::test::eventually([&] {
    auto info = inspect_topic(topic, domain.name);
    return info && info->count(Role::Tap) == 1;
  }));
  {
    // Every core busy at normal priority: the keeper's idle-priority taps get next to no CPU, and
    // most of the burst is still in the ring, unread, when the keeper is stopped.
    std::atomic<bool> done{false};
    std::vector<std::jthread> busy;
    for (unsigned i = 0; i < std::max(1u, std::thread::hardware_concurrency()); ++i) {
      busy.emplace_back([&] {
        while (!done.load(std::memory_order_relaxed)) {
        }
      });
    }
    for (std::uint64_t s = 0; s < 48; ++s) requireOk(publisher->publish_copy(payload(s, 64)).status());
    keeper->stop();
    done = true;
  }
  CHECK(keeper->status().messages == 48);
  auto dump = dump_and_read(keeper->store());
  CHECK(dump.problems.empty());
  REQUIRE(dump.messages.size() == 48);
  for (std::uint64_t s = 0; s < 48; ++s) CHECK(dump.messages[s].data == payload(s, 64));
  REQUIRE(dump.summary.topics.size() == 1);
  CHECK(dump.summary.topics[0].messages == 48);
  CHECK(dump.summary.topics[0].lost == 0);
}

TEST_CASE("A keeper dumps by itself on a trigger, after its post window, with the triggers that joined", "[flashback][keeper]") {
  TestDomain domain;
  Events events;
  KeeperOptions options;
  options.domain = domain.name;
  options.selection.all = true;
  options.dump_dir = temp_dir();
  options.limits.memory_bytes = 16 << 20;
  options.events = &events.queue;
  SECTION("at once") {
    auto keeper = Keeper::start(options);
    requireOk(keeper.status());
    keeper->trigger("request", "asked by a test", "first note");
    REQUIRE(cerulion::test::eventually([&] { return keeper->last_dump().has_value(); }));
    const auto dumped = *keeper->last_dump();
    CHECK(std::filesystem::exists(dumped.path));
    CHECK(std::filesystem::path(dumped.path).parent_path() == options.dump_dir);
    // Said, once, as news about the file.
    REQUIRE(cerulion::test::eventually([&] { return events.count(EventKind::Info, dumped.path) == 1; }));
  }
  SECTION("after the post window, one dump for two triggers") {
    options.post_s = 0.5;
    auto keeper = Keeper::start(options);
    requireOk(keeper.status());
    keeper->trigger("request", "one", "a");
    keeper->trigger("signal", "two", "b");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK(keeper->status().dumps == 0);
    CHECK(events.count(EventKind::Info, "") == 1);  // the first trigger says it waits; the second joins it
    REQUIRE(cerulion::test::eventually([&] { return keeper->last_dump().has_value(); }));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK(keeper->status().dumps == 1);
    auto reader = recorder::Reader::open(keeper->last_dump()->path);
    requireOk(reader.status());
    auto md = reader->read_metadata();
    requireOk(md.status());
    REQUIRE(md->size() == 1);
    CHECK(md->at(0).metadata.at("details") == "one; signal: two");
    CHECK(md->at(0).metadata.at("note") == "a | b");
  }
  SECTION("no more than the dumps allowed per hour") {
    options.max_dumps_per_hour = 2;
    auto keeper = Keeper::start(options);
    requireOk(keeper.status());
    for (int i = 0; i < 3; ++i) {
      keeper->trigger("request", "burst", "");
      REQUIRE(cerulion::test::eventually([&] { return dumps_done(*keeper) == std::uint64_t(i + 1); }));
    }
    CHECK(keeper->status().dumps == 2);
    CHECK(keeper->status().dumps_refused == 1);
    // The refusal is a warning about the directory the limit guards.
    REQUIRE(cerulion::test::eventually([&] { return events.count(EventKind::Warning, options.dump_dir) == 1; }));
  }
  SECTION("one dump an hour: a refusal says so in the singular") {
    options.max_dumps_per_hour = 1;
    auto keeper = Keeper::start(options);
    requireOk(keeper.status());
    for (int i = 0; i < 2; ++i) {
      keeper->trigger("request", "burst", "");
      REQUIRE(cerulion::test::eventually([&] { return dumps_done(*keeper) == std::uint64_t(i + 1); }));
    }
    REQUIRE(cerulion::test::eventually([&] { return events.count(EventKind::Warning, options.dump_dir) == 1; }));
    const auto refusal = std::find_if(events.seen.begin(), events.seen.end(),
                                      [](const Event& e) { return e.kind == EventKind::Warning; });
    REQUIRE(refusal != events.seen.end());
    CHECK(refusal->message.find("1 dump in the last hour") != std::string::npos);
  }
  std::filesystem::remove_all(options.dump_dir);
}

TEST_CASE("A keeper's counters agree with its dump while it runs, after the traffic, and after a kill -9",
          "[flashback][keeper]") {
  TestDomain domain;
  const std::string topic = "/keeper/counted";
  auto publisher = open_publisher(domain.name, topic, Mode::FreeRun, 4);  // a burst overruns the tap: losses to count
  auto child = keeper_child(domain.name, topic, {.memory_bytes = 64 << 20, .dump_dir = ""});
  REQUIRE(child.wait_ready());
  auto store = cerulion::flashback::Store::open(domain.name, "default");
  requireOk(store.status());
  // The first message is taken alone, so every loss after it lies between kept messages.
  Traffic sender{publisher, [](std::uint64_t s) { return 64 + s % 500; }};
  const std::uint64_t& published = sender.published;
  requireOk(sender.publish(1));
  REQUIRE(cerulion::test::eventually([&] { return topic_status(store->status(), topic).messages == 1; }));
  // It may run on a traffic thread: Catch2's assertions are not thread-safe (two threads asserting
  // at once corrupt its state and the heap), so it returns its first failure.
  auto burst = [&](int n) { return sender.publish(n); };
  auto agree = [&](const ReadDump& dump) {
    CHECK(dump.problems.empty());
    CHECK(dump_count(dump, "lost", topic) == sequence_gaps(dump)[topic]);
    CHECK(dump_count(dump, "messages", topic) == dump.messages.size());
  };
  SECTION("live, with traffic meanwhile") {
    Status sent;
    std::thread traffic([&] { sent = burst(20000); });
    for (int i = 0; i < 5; ++i) agree(dump_and_read(*store));
    traffic.join();
    requireOk(sent);
  }
  requireOk(burst(5000));
  // After the traffic: every message published is kept or counted lost, in status and in a dump.
  REQUIRE(cerulion::test::eventually([&] {
    const auto t = topic_status(store->status(), topic);
    return t.messages + t.lost == published;
  }));
  auto after = dump_and_read(*store);
  agree(after);
  CHECK(topic_status(store->status(), topic).messages == after.messages.size());
  CHECK(topic_status(store->status(), topic).lost == dump_count(after, "lost", topic));
  // Killed while traffic comes: what its store says is what its dump holds.
  Status sent;
  std::thread traffic([&] { sent = burst(20000); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  child.kill9();
  traffic.join();
  requireOk(sent);
  const auto dead = topic_status(store->status(), topic);
  cerulion::flashback::DumpOptions store_only;
  store_only.from_topics = false;
  auto killed = dump_and_read(*store, store_only);
  agree(killed);
  CHECK(dead.messages == killed.messages.size());
  CHECK(dead.lost == dump_count(killed, "lost", topic));
  // Caught up from the topic's ring: more, and its counts still its content's.
  auto caught_up = dump_and_read(*store);
  agree(caught_up);
  CHECK(caught_up.messages.size() >= killed.messages.size());
}

TEST_CASE("A keeper of every topic counts the messages of topics that came and went before its taps opened them",
          "[flashback][keeper][removed]") {
  TestDomain domain;
  auto keeper = Keeper::start(keeper_of_all(domain));
  requireOk(keeper.status());
  // Created, published twice and left at once: faster than any discovery.
  const int topics = 10;
  PublisherOptions publisher_options;
  publisher_options.topic.domain = domain.name;
  for (int i = 0; i < topics; ++i) {
    auto publisher = Publisher::create("/flash/t" + std::to_string(i), publisher_options);
    requireOk(publisher.status());
    requireOk(publisher->publish_copy(payload(0, 16)).status());
    requireOk(publisher->publish_copy(payload(1, 16)).status());
  }
  // Each topic's two messages are held or counted lost, by status and by a dump alike.
  auto per_topic = [](const auto& list) {
    std::map<std::string, std::uint64_t> out;
    for (const auto& t : list) out[t.topic] += t.messages + t.lost;
    return out;
  };
  const std::map<std::string, std::uint64_t> all_two = [&] {
    std::map<std::string, std::uint64_t> out;
    for (int i = 0; i < topics; ++i) out["/flash/t" + std::to_string(i)] = 2;
    return out;
  }();
  CHECK(cerulion::test::eventually([&] { return per_topic(keeper->status().topics) == all_two; }));
  auto dump = dump_and_read(keeper->store());
  CHECK(dump.problems.empty());
  CHECK(per_topic(dump.summary.topics) == all_two);
  keeper->stop();
}
