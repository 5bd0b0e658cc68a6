// SPDX-License-Identifier: Apache-2.0
// The staging area: what a keeper takes is in shared memory at once, whoever compresses it and
// however late; what it cannot keep is counted when dropped; and the counters agree with a dump's
// content while it runs, after the traffic and after a kill -9.

#include <sys/mman.h>

#include <atomic>
#include <thread>

#include "cerulion/core/publisher.hpp"
#include "keeper_child.hpp"
#include "store_impl.hpp"
#include "time_units.hpp"

using namespace fbtest;
using cerulion::flashback::Store;
using cerulion::flashback::StoreLimits;
using cerulion::flashback::detail::impl_of;
using cerulion::test::kSecondNs;

namespace {

// Takes message `sequence` of `size` bytes on `channel`; whether it was stored.
bool take(Store& store, std::uint16_t channel, std::uint64_t sequence, std::size_t size, std::uint64_t log_time,
          std::uint64_t lost_before = 0) {
  auto taken = impl_of(store).take(channel, static_cast<std::uint32_t>(sequence), log_time, log_time,
                                   payload(sequence, size, true), lost_before);
  requireOk(taken.status());
  return *taken;
}

}  // namespace

TEST_CASE("A message taken is in the store's shared memory at once, before anything compresses it",
          "[flashback][staging]") {
  TestDomain domain;
  auto store = Store::open_for_keeper(domain.name, "keeper", {});
  requireOk(store.status());
  // Compression belongs to a thread that never runs here: nothing but the taking happens.
  impl_of(*store).compress_in_background(true);
  auto channel = impl_of(*store).channel_for("/now", "free-run", 16, 4096);
  REQUIRE(channel);
  const std::uint64_t now = realtime_ns();
  for (std::uint64_t s = 0; s < 100; ++s) REQUIRE(take(*store, *channel, s, 2000, now + s));
  auto reader = Store::open(domain.name, "keeper");
  requireOk(reader.status());
  const auto status = reader->status();
  CHECK(status.chunks == 0);
  CHECK(topic_status(status, "/now").messages == 100);
  auto dump = dump_and_read(*reader);
  CHECK(dump.problems.empty());
  REQUIRE(dump.messages.size() == 100);
  CHECK(dump.messages.back().sequence == 99);
  CHECK(dump_count(dump, "messages", "/now") == 100);
}

TEST_CASE("A store whose compression is behind commits the sealed buffer uncompressed instead of dropping, so a "
          "dump holds every message and status and the dump agree",
          "[flashback][staging]") {
  TestDomain domain;
  auto store = Store::open_for_keeper(domain.name, "keeper", {.window_s = 3600, .memory_bytes = 8 << 20, .chunk_size = 16 << 10});
  requireOk(store.status());
  auto& impl = impl_of(*store);
  impl.compress_in_background(true);
  auto channel = impl.channel_for("/behind", "free-run", 16, 4096);
  REQUIRE(channel);
  const std::uint64_t now = realtime_ns();
  // The compressor never runs (starved at idle priority): both buffers fill, again and again.
  const std::uint64_t count = 3000;
  for (std::uint64_t s = 0; s < count; ++s) REQUIRE(take(*store, *channel, s, 1000, now + s));
  const auto status = store->status();
  CHECK(status.chunks_stored_raw > 0);
  CHECK(status.messages_dropped == 0);
  CHECK(topic_status(status, "/behind").lost == 0);
  CHECK(topic_status(status, "/behind").messages == count);
  // The compressor, when it gets the CPU at last, finds its buffer committed already or compresses
  // the one sealed since: nothing twice.
  auto compressed = impl.compress_sealed();
  requireOk(compressed.status());
  auto dump = dump_and_read(*store);
  CHECK(dump.problems.empty());
  REQUIRE(dump.messages.size() == count);
  for (std::uint32_t i = 0; i < count; ++i) CHECK(dump.messages[i].sequence == i);
  CHECK(sequence_gaps(dump)["/behind"] == 0);
  CHECK(dump_count(dump, "lost", "/behind") == 0);
  CHECK(dump_count(dump, "messages", "/behind") == topic_status(store->status(), "/behind").messages);
}

TEST_CASE("Taps that waited for room stage their messages in log-time order, so a dump reads every one of them",
          "[flashback][staging]") {
  TestDomain domain;
  auto store = Store::open_for_keeper(domain.name, "keeper", {.window_s = 3600, .memory_bytes = 1 << 20, .chunk_size = 16 << 10});
  requireOk(store.status());
  auto& impl = impl_of(*store);
  impl.compress_in_background(true, true);
  std::vector<std::uint16_t> channels;
  for (int t = 0; t < 4; ++t) {
    auto channel = impl.channel_for("/waiting/" + std::to_string(t), "free-run", 16, 4096);
    REQUIRE(channel);
    channels.push_back(*channel);
  }
  // Both buffers full, the compressor not running: every tap from here waits for room.
  const std::uint64_t now = realtime_ns();
  std::uint64_t filled = 0;
  auto& h = impl.header();
  auto active = [&]() -> auto& { return h.staging[h.active.load() % 2]; };
  auto other = [&]() -> auto& { return h.staging[(h.active.load() + 1) % 2]; };
  while (other().length.load() == 0 || active().length.load() + 2 * 1100 <= h.staging_capacity) {
    REQUIRE(take(*store, channels[0], filled, 1000, now + filled));
    ++filled;
  }
  // Each waits with its own log time, stamped before it waited (as a tap stamps it); which goes
  // first once there is room is the scheduler's choice. Catch2's assertions are not thread-safe:
  // the threads count what failed, and the test checks the count.
  std::atomic<int> failed_takes{0};
  std::vector<std::thread> taps;
  for (std::size_t t = 1; t < channels.size(); ++t) {
    taps.emplace_back([&, t] {
      for (std::uint64_t s = 0; s < 20; ++s) {
        const std::uint64_t log_time = now + filled + s * 10 + t;
        auto taken = impl.take(channels[t], static_cast<std::uint32_t>(s), log_time, log_time, payload(s, 1000, true), 0);
        if (!taken.ok() || !*taken) ++failed_takes;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (;;) {
    auto compressed = impl.compress_sealed();
    requireOk(compressed.status());
    bool done = true;
    for (std::size_t t = 1; t < channels.size(); ++t) done = done && topic_status(store->status(), "/waiting/" + std::to_string(t)).messages == 20;
    if (done) break;
    std::this_thread::yield();
  }
  for (auto& t : taps) t.join();
  CHECK(failed_takes == 0);
  auto dump = dump_and_read(*store);
  CHECK(dump.problems.empty());
  CHECK(dump.summary.skipped.empty());
  for (std::size_t t = 1; t < channels.size(); ++t) CHECK(dump_count(dump, "messages", "/waiting/" + std::to_string(t)) == 20);
}

TEST_CASE("A dump of the last seconds counts only the losses between its own messages", "[flashback][staging]") {
  TestDomain domain;
  auto store = Store::open_for_keeper(domain.name, "keeper", {.window_s = 3600});
  requireOk(store.status());
  auto channel = impl_of(*store).channel_for("/gappy", "free-run", 16, 4096);
  const std::uint64_t now = realtime_ns();
  const std::uint64_t old = now - 20 * kSecondNs;
  // Old: 0..4, then 4 missed, 9..13. Recent: 3 missed before 17 (the dump's first), then 17..19,
  // 2 missed, 22..29.
  for (std::uint64_t s = 0; s < 5; ++s) take(*store, *channel, s, 100, old + s);
  for (std::uint64_t s = 9; s < 14; ++s) take(*store, *channel, s, 100, old + s, s == 9 ? 4 : 0);
  requireOk(impl_of(*store).close_open_chunk());
  for (std::uint64_t s = 17; s < 20; ++s) take(*store, *channel, s, 100, now + s, s == 17 ? 3 : 0);
  requireOk(impl_of(*store).close_open_chunk());
  for (std::uint64_t s = 22; s < 30; ++s) take(*store, *channel, s, 100, now + s, s == 22 ? 2 : 0);
  CHECK(topic_status(store->status(), "/gappy").lost == 9);
  SECTION("the last seconds") {
    cerulion::flashback::DumpOptions last_five;
    last_five.last_s = 5;
    auto dump = dump_and_read(*store, last_five);
    REQUIRE(dump.messages.front().sequence == 17);
    CHECK(sequence_gaps(dump)["/gappy"] == 2);
    CHECK(dump_count(dump, "lost", "/gappy") == 2);
  }
  SECTION("everything held") {
    auto dump = dump_and_read(*store);
    CHECK(sequence_gaps(dump)["/gappy"] == 9);
    CHECK(dump_count(dump, "lost", "/gappy") == 9);
  }
}

TEST_CASE("A store whose keeper is killed at any moment has counters that agree with its dump",
          "[flashback][staging]") {
  std::mt19937 rng(38);
  for (int round = 0; round < 8; ++round) {
    INFO("round " << round);
    TestDomain domain;
    cerulion::test::Child keeper([&](cerulion::test::Child& self) {
      auto store = Store::open_for_keeper(domain.name, "keeper",
                                          {.window_s = 3600, .memory_bytes = 64 << 20, .chunk_size = 16 << 10});
      if (!store) return 1;
      auto& impl = impl_of(*store);
      // Taps wait for room rather than drop, so every loss is a gap the taps were told of.
      impl.compress_in_background(true, true);
      std::thread compressor([&] {
        for (;;) {
          if (!impl.compress_sealed()) return;
          impl.wait_for_sealed(std::chrono::milliseconds(10));
        }
      });
      compressor.detach();
      auto run = [&](const std::string& topic, unsigned seed) {
        auto channel = impl.channel_for(topic, "free-run", 16, 8192);
        std::mt19937 gen(seed);
        for (std::uint64_t s = 0;; ++s) {
          const std::uint64_t missed = s > 0 && gen() % 10 == 0 ? gen() % 4 + 1 : 0;
          s += missed;
          if (!impl.take(*channel, static_cast<std::uint32_t>(s), realtime_ns(), s, payload(s, 100 + gen() % 3000), missed)) {
            return;
          }
        }
      };
      std::thread other([&] { run("/b", 2); });
      other.detach();
      self.signal_ready();
      run("/a", 1);
      return 2;
    });
    REQUIRE(keeper.wait_ready());
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + rng() % 60));
    keeper.kill9();
    auto store = Store::open(domain.name, "keeper");
    requireOk(store.status());
    const auto status = store->status();
    CHECK_FALSE(status.alive);
    auto dump = dump_and_read(*store);
    CHECK(dump.problems.empty());
    auto gaps = sequence_gaps(dump);
    for (const std::string topic : {"/a", "/b"}) {
      INFO(topic);
      CHECK(topic_status(status, topic).messages == dump_count(dump, "messages", topic));
      CHECK(topic_status(status, topic).lost == dump_count(dump, "lost", topic));
      CHECK(dump_count(dump, "lost", topic) == gaps[topic]);
    }
    // A keeper taking over counts on from there, and its dump still agrees.
    auto next = Store::open_for_keeper(domain.name, "keeper", {.window_s = 3600, .memory_bytes = 64 << 20, .chunk_size = 16 << 10});
    requireOk(next.status());
    auto again = dump_and_read(*next);
    CHECK(again.messages.size() == dump.messages.size());
    for (const std::string topic : {"/a", "/b"}) {
      CHECK(topic_status(next->status(), topic).messages == dump_count(again, "messages", topic));
      CHECK(topic_status(next->status(), topic).lost == dump_count(again, "lost", topic));
    }
  }
}

