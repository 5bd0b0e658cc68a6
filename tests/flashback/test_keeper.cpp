// SPDX-License-Identifier: Apache-2.0
// Keepers over real topics: what they take is what was published, byte for byte, and their
// triggers dump into their directory.

#include <filesystem>
#include <mutex>
#include <thread>

#include "cerulion/core/publisher.hpp"
#include "cerulion/flashback/keeper.hpp"
#include "helpers.hpp"

using namespace fbtest;
using cerulion::flashback::Keeper;
using cerulion::flashback::KeeperEvent;
using cerulion::flashback::KeeperOptions;

namespace {

struct Events {
  std::mutex mutex;
  std::vector<KeeperEvent> seen;
  std::function<void(const KeeperEvent&)> callback() {
    return [this](const KeeperEvent& e) {
      std::lock_guard lock(mutex);
      seen.push_back(e);
    };
  }
  std::size_t count(KeeperEvent::Kind kind) {
    std::lock_guard lock(mutex);
    return std::count_if(seen.begin(), seen.end(), [&](const auto& e) { return e.kind == kind; });
  }
};

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

TEST_CASE("A keeper dumps by itself on a trigger, after its post window, with the triggers that joined", "[flashback][keeper]") {
  TestDomain domain;
  Events events;
  KeeperOptions options;
  options.domain = domain.name;
  options.selection.all = true;
  options.dump_dir = temp_dir();
  options.limits.memory_bytes = 16 << 20;
  SECTION("at once") {
    auto keeper = Keeper::start(options, events.callback());
    requireOk(keeper.status());
    keeper->trigger("request", "asked by a test", "first note");
    REQUIRE(cerulion::test::eventually([&] { return events.count(KeeperEvent::Kind::Dumped) == 1; }));
    const auto& dumped = events.seen.back().summary;
    CHECK(std::filesystem::exists(dumped.path));
    CHECK(std::filesystem::path(dumped.path).parent_path() == options.dump_dir);
  }
  SECTION("after the post window, one dump for two triggers") {
    options.post_s = 0.5;
    auto keeper = Keeper::start(options, events.callback());
    requireOk(keeper.status());
    keeper->trigger("request", "one", "a");
    keeper->trigger("signal", "two", "b");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK(events.count(KeeperEvent::Kind::Dumped) == 0);
    REQUIRE(cerulion::test::eventually([&] { return events.count(KeeperEvent::Kind::Dumped) == 1; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK(events.count(KeeperEvent::Kind::Dumped) == 1);
    auto reader = recorder::Reader::open(events.seen.back().summary.path);
    requireOk(reader.status());
    auto md = reader->read_metadata();
    requireOk(md.status());
    REQUIRE(md->size() == 1);
    CHECK(md->at(0).metadata.at("details") == "one; signal: two");
    CHECK(md->at(0).metadata.at("note") == "a | b");
  }
  SECTION("no more than the dumps allowed per hour") {
    options.max_dumps_per_hour = 2;
    auto keeper = Keeper::start(options, events.callback());
    requireOk(keeper.status());
    for (int i = 0; i < 3; ++i) {
      keeper->trigger("request", "burst", "");
      REQUIRE(cerulion::test::eventually([&] { return events.count(KeeperEvent::Kind::Dumped) + events.count(KeeperEvent::Kind::Refused) == std::size_t(i + 1); }));
    }
    CHECK(events.count(KeeperEvent::Kind::Dumped) == 2);
    CHECK(events.count(KeeperEvent::Kind::Refused) == 1);
    CHECK(keeper->status().dumps_refused == 1);
  }
  std::filesystem::remove_all(options.dump_dir);
}
