// SPDX-License-Identifier: Apache-2.0
// What a store says of itself beyond its chunks: where its keeper's dumps go and what triggers
// them, the last dump, why its window is short, who publishes on its topics; and a keeper's end:
// a stopped keeper lets go of its store, and stop_keeper() returns once the keeper's process left.

#include <csignal>
#include <filesystem>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/core/stop.hpp"
#include "cerulion/flashback/keeper.hpp"
#include "cerulion/flashback/status_json.hpp"
#include "child.hpp"
#include "helpers.hpp"
#include "store_impl.hpp"
#include "time_units.hpp"

using namespace fbtest;
using cerulion::flashback::Keeper;
using cerulion::flashback::KeeperOptions;
using cerulion::flashback::Store;
using cerulion::flashback::WindowCut;
using cerulion::flashback::detail::impl_of;
using cerulion::test::Child;
using cerulion::test::eventually;
using cerulion::test::kSecondNs;

namespace {

KeeperOptions small_keeper(const TestDomain& domain) { return keeper_of_all(domain, 8 << 20); }

}  // namespace

TEST_CASE("A keeper records in its store where its dumps go, made absolute, and what triggers them",
          "[flashback][status]") {
  TestDomain domain;
  auto options = small_keeper(domain);
  options.dump_dir = "";  // the current directory
  options.on_death = true;
  options.on_stall_s = 2.5;
  options.post_s = 1;
  options.trigger_topic = "fb/trigger";  // recorded in its canonical form
  options.dumps_on_signal = true;
  options.max_dumps_per_hour = 7;
  options.max_disk_bytes = 1 << 30;
  auto keeper = Keeper::start(options);
  requireOk(keeper.status());
  auto reader = Store::open(domain.name, "default");
  requireOk(reader.status());
  const auto k = reader->status().keeper;
  CHECK(k.dump_dir == std::filesystem::current_path().string());
  CHECK(k.on_death);
  CHECK(k.on_stall_s == Approx(2.5));
  CHECK(k.post_s == Approx(1));
  CHECK(k.trigger_topic == "/fb/trigger");
  CHECK(k.on_signal);
  CHECK(k.max_dumps_per_hour == 7);
  CHECK(k.max_disk_bytes == 1u << 30);
  keeper->stop();
  // A later keeper says its own.
  options.dump_dir = std::filesystem::temp_directory_path().string() + "/./";
  options.on_death = false;
  options.trigger_topic.clear();
  auto next = Keeper::start(options);
  requireOk(next.status());
  CHECK(reader->status().keeper.dump_dir == std::filesystem::temp_directory_path().lexically_normal().string());
  CHECK_FALSE(reader->status().keeper.on_death);
  CHECK(reader->status().keeper.trigger_topic.empty());
}

TEST_CASE("A store records every dump, and status shows the last one with its absolute path", "[flashback][status]") {
  TestDomain domain;
  auto store = Store::open_for_keeper(domain.name, "keeper", {.memory_bytes = 8 << 20});
  requireOk(store.status());
  auto channel = impl_of(*store).channel_for("/a", "free-run", 16, 1024);
  requireOk(impl_of(*store).append(*channel, 0, realtime_ns(), realtime_ns(), payload(0, 64)));
  CHECK_FALSE(store->status().last_dump.has_value());
  const auto dir = std::filesystem::temp_directory_path() / cerulion::test::unique_domain("fbrec");
  std::filesystem::create_directories(dir);
  const auto before = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  // More dumps than records: the newest is the one shown.
  for (int i = 0; i < 6; ++i) {
    flashback::DumpOptions options;
    options.trigger = i % 2 ? "signal" : "request";
    requireOk(flashback::dump_to_file(*store, "d" + std::to_string(i) + ".mcap", options).status());
  }
  std::filesystem::current_path(before);
  const auto status = Store::open(domain.name, "keeper")->status();
  CHECK(status.dumps == 6);
  REQUIRE(status.last_dump.has_value());
  CHECK(status.last_dump->path == (dir / "d5.mcap").string());
  CHECK(status.last_dump->trigger == "signal");
  CHECK(status.last_dump->messages == 1);
  CHECK(status.last_dump->realtime_ns > 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("A record torn by a dumping process that died gives way to the dump before it", "[flashback][status]") {
  TestDomain domain;
  auto store = Store::open_for_keeper(domain.name, "keeper", {.memory_bytes = 8 << 20});
  requireOk(store.status());
  auto& impl = impl_of(*store);
  impl.record_dump({"/tmp/first.mcap", "request", 1, 10});
  // The next dump took its number and died while writing its record.
  const std::uint64_t n = impl.header().dumps.fetch_add(1);
  impl.dump_record(n).state.store(cerulion::flashback::detail::writing_state(n));
  REQUIRE(store->status().last_dump.has_value());
  CHECK(store->status().last_dump->path == "/tmp/first.mcap");
}

TEST_CASE("A dump leaves out a topic with no message in it, such as one gone before the window", "[flashback][status]") {
  TestDomain domain;
  auto store = Store::open_for_keeper(domain.name, "keeper", {.window_s = 5, .memory_bytes = 8 << 20});
  requireOk(store.status());
  auto& impl = impl_of(*store);
  auto gone = impl.channel_for("/gone", "free-run", 16, 1024);
  auto live = impl.channel_for("/live", "free-run", 16, 1024);
  REQUIRE(gone);
  REQUIRE(live);
  const std::uint64_t now = realtime_ns();
  requireOk(impl.append(*gone, 0, now - 20 * kSecondNs, now - 20 * kSecondNs, payload(0, 64)));
  requireOk(impl.close_open_chunk());
  requireOk(impl.append(*live, 0, now, now, payload(0, 64)));
  SECTION("evicted by the window") {
    impl.evict_expired(now);
    auto dump = dump_and_read(*store);
    REQUIRE(dump.types.size() == 1);
    CHECK(dump.types.count("/live") == 1);
    REQUIRE(dump.summary.topics.size() == 1);
    CHECK(dump.summary.topics[0].topic == "/live");
    CHECK(dump.metadata.at(0).metadata.count("messages:/gone") == 0);
    CHECK(dump.metadata.at(0).metadata.at("messages:/live") == "1");
  }
  SECTION("outside the last seconds asked") {
    flashback::DumpOptions last;
    last.last_s = 5;
    auto dump = dump_and_read(*store, last);
    REQUIRE(dump.types.size() == 1);
    CHECK(dump.types.count("/live") == 1);
  }
}

TEST_CASE("A window cut short by memory is said so, and one cut by age is not", "[flashback][status]") {
  TestDomain domain;
  SECTION("memory") {
    auto store = Store::open_for_keeper(domain.name, "keeper", {.window_s = 3600, .memory_bytes = 256 << 10, .chunk_size = 16 << 10});
    requireOk(store.status());
    auto channel = impl_of(*store).channel_for("/cam", "free-run", 16, 1 << 20);
    const std::uint64_t now = realtime_ns();
    for (std::uint32_t s = 0; s < 1000; ++s) requireOk(impl_of(*store).append(*channel, s, now + s, now + s, payload(s, 1000, true)));
    CHECK(store->status().chunks_evicted > 0);
    CHECK(store->status().window_cut == WindowCut::Memory);
  }
  SECTION("age") {
    auto store = Store::open_for_keeper(domain.name, "keeper", {.window_s = 5, .memory_bytes = 8 << 20});
    requireOk(store.status());
    auto channel = impl_of(*store).channel_for("/a", "free-run", 16, 1024);
    const std::uint64_t now = realtime_ns();
    requireOk(impl_of(*store).append(*channel, 0, now - 20 * kSecondNs, now - 20 * kSecondNs, payload(0, 64)));
    requireOk(impl_of(*store).close_open_chunk());
    requireOk(impl_of(*store).append(*channel, 1, now, now, payload(1, 64)));
    impl_of(*store).evict_expired(now);
    CHECK(store->status().chunks_evicted == 1);
    CHECK(store->status().window_cut == WindowCut::None);
  }
}

TEST_CASE("A full store's memory never reads above its limit: what waits in staging is counted apart", "[flashback][status]") {
  TestDomain domain;
  auto store = Store::open_for_keeper(domain.name, "keeper", {.window_s = 3600, .memory_bytes = 256 << 10, .chunk_size = 16 << 10});
  requireOk(store.status());
  auto channel = impl_of(*store).channel_for("/cam", "free-run", 16, 1 << 20);
  const std::uint64_t now = realtime_ns();
  // Incompressible, so the chunks fill the limit; the last few messages stay staged.
  for (std::uint32_t s = 0; s < 1005; ++s) {
    requireOk(impl_of(*store).append(*channel, s, now + s, now + s, payload(s, 1000, true)));
    if (s % 100 == 0) CHECK(store->status().memory_bytes <= store->status().memory_limit_bytes);
  }
  const auto st = store->status();
  CHECK(st.memory_limit_bytes == 256u << 10);
  CHECK(st.memory_bytes <= st.memory_limit_bytes);
  CHECK(st.memory_bytes > st.memory_limit_bytes / 2);
  CHECK(st.staged_bytes > 0);
  CHECK(st.staged_bytes < 2 * (16u << 10) + 2000);
  const auto json = nlohmann::json::parse(cerulion::flashback::to_json("keeper", domain.name, &st, {}, now));
  CHECK(json["memory_bytes"] == st.memory_bytes);
  CHECK(json["staged_bytes"] == st.staged_bytes);
  CHECK(json["memory_limit_bytes"] == 256u << 10);
  CHECK(json["topics"][0]["topic"] == "/cam");
  CHECK(json["topics"][0]["in_domain"] == false);  // nothing publishes it: no publisher was asked about
}

TEST_CASE("The status JSON of no store has the same keys as a store's, each figure null", "[flashback][status]") {
  TestDomain domain;
  auto store = Store::open_for_keeper(domain.name, "keeper", {.memory_bytes = 8 << 20});
  requireOk(store.status());
  const auto st = store->status();
  const auto have = nlohmann::ordered_json::parse(cerulion::flashback::to_json("keeper", domain.name, &st, {}, realtime_ns()));
  const auto none = nlohmann::ordered_json::parse(cerulion::flashback::to_json("keeper", domain.name, nullptr, {}, realtime_ns()));
  std::vector<std::string> keys_have, keys_none;
  for (const auto& [key, value] : have.items()) keys_have.push_back(key);
  for (const auto& [key, value] : none.items()) keys_none.push_back(key);
  CHECK(keys_have == keys_none);
  for (const auto& [key, value] : none.items()) {
    if (key == "name" || key == "domain" || key == "alive" || key == "topics") continue;
    INFO(key);
    CHECK(value.is_null());
  }
  CHECK(none["alive"] == false);
  CHECK(none["topics"].empty());
  CHECK(have["memory_bytes"] == 0);
  CHECK(have["alive"].is_boolean());
}

TEST_CASE("A keeper whose memory limit is more than /dev/shm has free starts and warns, naming the free space",
          "[flashback][status]") {
  TestDomain domain;
  cerulion::recording::EventQueue events;
  auto options = small_keeper(domain);
  options.limits.memory_bytes = 64ull << 40;  // 64 TiB: more than any /dev/shm here
  options.events = &events;
  auto keeper = Keeper::start(options);
  requireOk(keeper.status());
  const auto status = keeper->status();
  CHECK(status.memory_limit_bytes == 64ull << 40);
  CHECK(status.shm_free_bytes < status.memory_limit_bytes);
  std::size_t warnings = 0;
  for (const auto& e : events.drain()) {
    if (e.kind != cerulion::recording::EventKind::Warning || e.subject != status.path) continue;
    ++warnings;
    CHECK(e.message.find("/dev/shm has") != std::string::npos);
    CHECK(e.message.find("free") != std::string::npos);
  }
  CHECK(warnings == 1);
}

TEST_CASE("A stopped keeper lets go of its store: its own process may remove it, and it says it stopped cleanly",
          "[flashback][status]") {
  TestDomain domain;
  auto keeper = Keeper::start(small_keeper(domain));
  requireOk(keeper.status());
  // Running, its store is not to be removed, from this process or another.
  CHECK(flashback::remove_store(domain.name, "default").code() == ErrorCode::InvalidArgument);
  CHECK(keeper->status().keeper_stopped_realtime_ns == 0);
  keeper->stop();
  const auto status = keeper->status();
  CHECK_FALSE(status.alive);
  CHECK(status.keeper_pid == static_cast<std::uint32_t>(::getpid()));
  CHECK(status.keeper_stopped_realtime_ns > 0);
  // Nothing runs: another keeper may take it at once, and this one may discard it.
  {
    auto next = Store::open_for_keeper(domain.name, "default", {.memory_bytes = 8 << 20});
    requireOk(next.status());
  }
  requireOk(flashback::remove_store(domain.name, "default"));
  CHECK(Store::open(domain.name, "default").code() == ErrorCode::NotFound);
  // What it holds is still readable here.
  CHECK(dump_and_read(keeper->store()).problems.empty());
}

TEST_CASE("stop_keeper returns once the keeper's process has exited, and a new keeper takes the store at once",
          "[flashback][status]") {
  TestDomain domain;
  const auto options = small_keeper(domain);
  Child child([&](Child& self) {
    cerulion::stop_on_signals();
    auto keeper = Keeper::start(options);
    if (!keeper) return 2;
    self.signal_ready();
    while (!cerulion::stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    keeper->stop();
    // A process that takes its time to exit after its keeper stopped (a last dump, its own work).
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return 0;
  });
  REQUIRE(child.wait_ready());
  auto stopped = flashback::stop_keeper(domain.name, "default", 20);
  requireOk(stopped.status());
  CHECK(*stopped == static_cast<std::uint32_t>(child.pid()));
  // Gone already: reaped without waiting.
  int wait_status = 0;
  CHECK(::waitpid(child.pid(), &wait_status, WNOHANG) == child.pid());
  CHECK(Keeper::start(options).ok());
  // Nothing runs now.
  auto again = flashback::stop_keeper(domain.name, "default", 1);
  requireOk(again.status());
  CHECK(*again == 0);
  CHECK(flashback::stop_keeper(domain.name, "nobody", 1).code() == ErrorCode::NotFound);
}

TEST_CASE("stop_keeper gives up on a keeper that ignores SIGTERM after its timeout, and says so", "[flashback][status]") {
  TestDomain domain;
  const auto options = small_keeper(domain);
  Child child([&](Child& self) {
    std::signal(SIGTERM, SIG_IGN);
    auto keeper = Keeper::start(options);
    if (!keeper) return 2;
    self.signal_ready();
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  });
  REQUIRE(child.wait_ready());
  auto stopped = flashback::stop_keeper(domain.name, "default", 0.3);
  CHECK(stopped.code() == ErrorCode::Timeout);
  CHECK(stopped.message().find(std::to_string(child.pid())) != std::string::npos);
  CHECK(stopped.message().find("gave up") != std::string::npos);
  CHECK(Store::open(domain.name, "default")->status().alive);
  child.kill9();
}

TEST_CASE("The trigger topic is tapped once when every topic is kept, and kept like the others", "[flashback][status]") {
  TestDomain domain;
  auto options = small_keeper(domain);
  options.trigger_topic = "/fb/trigger";
  auto keeper = Keeper::start(options);
  requireOk(keeper.status());
  PublisherOptions publisher_options;
  publisher_options.topic.domain = domain.name;
  auto trigger = Publisher::create("/fb/trigger", publisher_options);
  requireOk(trigger.status());
  // Long enough for the tap set's discovery to have listed it (it lists at least once a second).
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto info = inspect_topic("/fb/trigger", domain.name);
  requireOk(info.status());
  CHECK(info->count(Role::Tap) == 1);
  const std::string note = "e-stop pressed";
  requireOk(trigger->publish_copy({reinterpret_cast<const std::byte*>(note.data()), note.size()}).status());
  REQUIRE(eventually([&] { return keeper->last_dump().has_value(); }));
  auto reader = recorder::Reader::open(keeper->last_dump()->path);
  requireOk(reader.status());
  auto md = reader->read_metadata();
  requireOk(md.status());
  CHECK(md->at(0).metadata.at("trigger") == "topic");
  CHECK(md->at(0).metadata.at("note") == note);
  std::filesystem::remove(keeper->last_dump()->path);
  REQUIRE(eventually([&] {
    for (const auto& t : keeper->status().topics) {
      if (t.topic == "/fb/trigger") return t.messages == 1;
    }
    return false;
  }));
}

TEST_CASE("A kept topic's publishers are told apart: alive, dead, or the topic gone", "[flashback][status]") {
  TestDomain domain;
  Child publisher([&](Child& self) {
    PublisherOptions o;
    o.topic.domain = domain.name;
    auto p = Publisher::create("/doomed", o);
    if (!p) return 2;
    self.signal_ready();
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  });
  REQUIRE(publisher.wait_ready());
  publisher.kill9();
  std::vector<flashback::TopicStatus> topics(2);
  topics[0].topic = "/doomed";
  topics[1].topic = "/never";
  auto found = flashback::publishers_of(domain.name, topics);
  REQUIRE(found.size() == 2);
  CHECK(found[0].listed);
  CHECK(found[0].alive.empty());
  CHECK(found[0].dead == std::vector<std::uint32_t>{static_cast<std::uint32_t>(publisher.pid())});
  CHECK_FALSE(found[1].listed);
  CHECK(clean_domain(domain.name, false, "/doomed").ok());
}

TEST_CASE("A dump's default file name names the domain, the keeper and the time", "[flashback][status]") {
  // 2026-11-30 23:05:01.123 UTC
  CHECK(flashback::default_dump_file_name("robot", "cams", 1796079901'123'000'000ull) ==
        "flashback-robot-cams-20261130T230501.123Z.mcap");
}
