// SPDX-License-Identifier: Apache-2.0
// The store: what it keeps, what it evicts, and that a copy is whole or left out, never torn,
// whoever writes it and whenever its keeper dies.

#include <atomic>
#include <sys/mman.h>
#include <thread>

#include "child.hpp"
#include "helpers.hpp"
#include "shm_objects.hpp"
#include "store_impl.hpp"
#include "time_units.hpp"

using namespace fbtest;
using cerulion::flashback::Store;
using cerulion::flashback::detail::impl_of;
using cerulion::flashback::StoreLimits;

using cerulion::test::kSecondNs;

namespace {

// Appends messages first..first+count-1 on `channel`, `size` bytes each, log times from `log_time`.
void append(Store& store, std::uint16_t channel, std::uint64_t first, std::uint64_t count, std::size_t size,
            std::uint64_t log_time, bool random = false) {
  for (std::uint64_t s = first; s < first + count; ++s) {
    requireOk(impl_of(store).append(channel, static_cast<std::uint32_t>(s), log_time + s, log_time + s,
                                  payload(s, size, random)));
  }
}

// Sequences of a dump are consecutive, each payload is the one sent; returns [first, last].
std::pair<std::uint64_t, std::uint64_t> check_consecutive(const ReadDump& dump, std::size_t size, bool random = false) {
  REQUIRE_FALSE(dump.messages.empty());
  for (std::size_t i = 0; i < dump.messages.size(); ++i) {
    const auto& m = dump.messages[i];
    if (i > 0) REQUIRE(m.sequence == dump.messages[i - 1].sequence + 1);
    REQUIRE(m.data == payload(m.sequence, size, random));
  }
  return {dump.messages.front().sequence, dump.messages.back().sequence};
}

}  // namespace

TEST_CASE("A store keeps closed chunks and the open chunk, and a dump has them all in order", "[flashback][store]") {
  TestDomain domain;
  auto store = Store::open_for_keeper(domain.name, "keeper", {});
  requireOk(store.status());
  auto channel = impl_of(*store).channel_for("/imu", "lockstep", 16, 1024);
  REQUIRE(channel);
  const std::uint64_t now = realtime_ns();
  append(*store, *channel, 0, 100, 200, now);
  requireOk(impl_of(*store).close_open_chunk());
  append(*store, *channel, 100, 50, 200, now);  // stays in the open chunk

  auto reader = Store::open(domain.name, "keeper");
  requireOk(reader.status());
  auto status = reader->status();
  CHECK(status.alive);
  CHECK(status.chunks == 1);
  CHECK(status.messages == 150);
  CHECK(status.compression_ratio > 1.5);
  auto dump = dump_and_read(*reader);
  CHECK(dump.problems.empty());
  CHECK(check_consecutive(dump, 200) == std::pair<std::uint64_t, std::uint64_t>{0, 149});
  CHECK(dump.messages.front().topic == "/imu");
  REQUIRE(dump.metadata.size() == 1);
  CHECK(dump.metadata[0].name == "flashback");
  CHECK(dump.metadata[0].metadata.at("trigger") == "request");
}

TEST_CASE("Eviction by window keeps exactly the chunks whose newest message is inside it", "[flashback][store]") {
  TestDomain domain;
  auto store = Store::open_for_keeper(domain.name, "keeper", {.window_s = 5});
  requireOk(store.status());
  auto channel = impl_of(*store).channel_for("/a", "free-run", 16, 1024);
  const std::uint64_t now = realtime_ns();
  append(*store, *channel, 0, 10, 100, now - 20 * kSecondNs);   // chunk 0: far outside
  requireOk(impl_of(*store).close_open_chunk());
  append(*store, *channel, 10, 10, 100, now - 6 * kSecondNs);   // chunk 1: just outside
  requireOk(impl_of(*store).close_open_chunk());
  append(*store, *channel, 20, 10, 100, now - 4 * kSecondNs);   // chunk 2: inside
  requireOk(impl_of(*store).close_open_chunk());
  append(*store, *channel, 30, 10, 100, now);                 // open chunk
  impl_of(*store).evict_expired(now);
  auto dump = dump_and_read(*store);
  CHECK(check_consecutive(dump, 100) == std::pair<std::uint64_t, std::uint64_t>{20, 39});
  CHECK(store->status().chunks_evicted == 2);
  CHECK(store->status().window_cut == cerulion::flashback::WindowCut::None);
}

TEST_CASE("Eviction by memory keeps exactly the newest whole chunks that fit", "[flashback][store]") {
  TestDomain domain;
  const StoreLimits limits{.window_s = 3600, .memory_bytes = 256 << 10, .chunk_size = 16 << 10};
  auto store = Store::open_for_keeper(domain.name, "keeper", limits);
  requireOk(store.status());
  auto channel = impl_of(*store).channel_for("/cam", "free-run", 16, 1 << 20);
  // Incompressible 1000-byte messages: about 16 per chunk, about 16 chunks fit.
  append(*store, *channel, 0, 2000, 1000, realtime_ns(), true);
  requireOk(impl_of(*store).close_open_chunk());
  auto status = store->status();
  CHECK(status.memory_bytes <= limits.memory_bytes);
  CHECK(status.chunks_evicted > 0);
  CHECK(status.window_cut == cerulion::flashback::WindowCut::Memory);
  auto dump = dump_and_read(*store);
  CHECK(dump.problems.empty());
  auto [first, last] = check_consecutive(dump, 1000, true);
  CHECK(last == 1999);
  CHECK(first > 0);
  CHECK(dump.summary.chunks == status.chunks);
  // Whole chunks: what is kept starts where a chunk started, and one more chunk would not fit.
  const std::uint64_t per_chunk = dump.messages.size() / status.chunks + 1;
  CHECK(status.memory_bytes + per_chunk * 1031 > limits.memory_bytes - 2 * (16 << 10));
}

TEST_CASE("A dump while the keeper evicts at a high rate never writes a torn chunk", "[flashback][store]") {
  TestDomain domain;
  auto keeper = Store::open_for_keeper(domain.name, "keeper", {.window_s = 3600, .memory_bytes = 24 << 10, .chunk_size = 4 << 10});
  requireOk(keeper.status());
  auto channel = impl_of(*keeper).channel_for("/fast", "free-run", 16, 4096);
  std::atomic<bool> stop{false};
  Status writer_status;
  // Payloads are made ahead, so the keeper goes round its memory as fast as it can.
  std::vector<std::vector<std::byte>> payloads;
  for (std::uint64_t s = 0; s < 4096; ++s) payloads.push_back(payload(s, 300, true));
  std::thread writer([&] {
    for (std::uint64_t s = 0; !stop.load() && writer_status.ok(); ++s) {
      writer_status = impl_of(*keeper).append(*channel, static_cast<std::uint32_t>(s), s, s, payloads[s % 4096]);
    }
  });
  auto reader = Store::open(domain.name, "keeper");
  requireOk(reader.status());
  std::uint64_t left_out = 0;
  // Until the keeper has gone round its memory many times, however the two threads are scheduled.
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; std::chrono::steady_clock::now() - started < std::chrono::seconds(3) || keeper->status().chunks_evicted < 500; ++i) {
    auto dump = dump_and_read(*reader);
    INFO("dump " << i);
    REQUIRE(dump.problems.empty());
    if (!dump.messages.empty()) {
      for (const auto& m : dump.messages) REQUIRE(m.data == payloads[m.sequence % 4096]);
    }
    left_out += dump.summary.chunks_left_out;
  }
  stop.store(true);
  writer.join();
  requireOk(writer_status);
  // How many copies raced an eviction (and were left out whole) is the machine's business.
  INFO("chunks left out: " << left_out);
  CHECK(keeper->status().chunks_evicted >= 500);
}

TEST_CASE("A keeper killed at any moment leaves a store whose dump has everything it had taken", "[flashback][store]") {
  TestDomain domain;
  // Shared with the children: how many messages the keeper has taken (appended).
  auto* taken = static_cast<std::atomic<std::uint64_t>*>(
      ::mmap(nullptr, sizeof(std::atomic<std::uint64_t>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  REQUIRE(taken != MAP_FAILED);
  new (taken) std::atomic<std::uint64_t>(0);
  std::mt19937 rng(7);
  for (int round = 0; round < 6; ++round) {
    INFO("round " << round);
    cerulion::test::Child keeper([&](cerulion::test::Child& self) {
      auto store = Store::open_for_keeper(domain.name, "keeper", {.window_s = 3600, .memory_bytes = 8 << 20, .chunk_size = 16 << 10});
      if (!store) return 1;
      auto channel = impl_of(*store).channel_for("/seq", "lockstep", 16, 4096);
      self.signal_ready();
      for (std::uint64_t s = taken->load();; ++s) {
        if (!impl_of(*store).append(*channel, static_cast<std::uint32_t>(s), realtime_ns(), s, payload(s, 300))) return 2;
        taken->store(s + 1);
      }
    });
    REQUIRE(keeper.wait_ready());
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + rng() % 40));
    keeper.kill9();
    const std::uint64_t had = taken->load();
    auto store = Store::open(domain.name, "keeper");
    requireOk(store.status());
    CHECK_FALSE(store->status().alive);
    auto dump = dump_and_read(*store);
    CHECK(dump.problems.empty());
    auto [first, last] = check_consecutive(dump, 300);
    CHECK(first == 0);
    // Everything taken is there; at most the one being appended when it died comes along too.
    CHECK(last + 1 >= had);
    CHECK(last <= had);
    taken->store(last + 1);
  }
  ::munmap(taken, sizeof(std::atomic<std::uint64_t>));
}

TEST_CASE("A second keeper of the same name is refused, naming the running one's pid", "[flashback][store]") {
  TestDomain domain;
  auto first = Store::open_for_keeper(domain.name, "k", {});
  requireOk(first.status());
  auto second = Store::open_for_keeper(domain.name, "k", {});
  REQUIRE_FALSE(second.ok());
  CHECK(second.message().find("pid " + std::to_string(::getpid())) != std::string::npos);
  CHECK(cerulion::flashback::remove_store(domain.name, "k").code() == ErrorCode::InvalidArgument);
}

TEST_CASE("A store that is missing, damaged or of another version gets one clear error", "[flashback][store]") {
  TestDomain domain;
  const std::string path = "/dev/shm/" + cerulion::flashback::store_file_name(domain.name, "bad");
  SECTION("not found") {
    auto s = Store::open(domain.name, "bad");
    CHECK(s.code() == ErrorCode::NotFound);
    CHECK(s.message().find("no flashback store named 'bad'") != std::string::npos);
  }
  SECTION("scribbled header") {
    { auto s = Store::open_for_keeper(domain.name, "bad", {.memory_bytes = 4 << 20}); requireOk(s.status()); }
    FILE* f = std::fopen(path.c_str(), "r+b");
    REQUIRE(f);
    std::fseek(f, 40, SEEK_SET);
    std::fputs("garbage", f);
    std::fclose(f);
    auto s = Store::open(domain.name, "bad");
    CHECK(s.code() == ErrorCode::Corrupted);
    CHECK(s.message().find("header checksum mismatch") != std::string::npos);
    CHECK(Store::open_for_keeper(domain.name, "bad", {}).code() == ErrorCode::Corrupted);
  }
  SECTION("another version") {
    { auto s = Store::open_for_keeper(domain.name, "bad", {.memory_bytes = 4 << 20}); requireOk(s.status()); }
    FILE* f = std::fopen(path.c_str(), "r+b");
    REQUIRE(f);
    std::fseek(f, 8, SEEK_SET);
    std::fputc(99, f);
    std::fclose(f);
    auto s = Store::open(domain.name, "bad");
    CHECK(s.code() == ErrorCode::Corrupted);
    CHECK(s.message().find("version 99") != std::string::npos);
  }
  SECTION("a bad name") {
    CHECK(Store::open(domain.name, "a/b").code() == ErrorCode::InvalidArgument);
    CHECK(Store::open(domain.name, "").code() == ErrorCode::InvalidArgument);
  }
}

TEST_CASE("A keeper taking over a dead keeper's store keeps its history and channels", "[flashback][store]") {
  TestDomain domain;
  {
    cerulion::test::Child first([&](cerulion::test::Child& self) {
      auto store = Store::open_for_keeper(domain.name, "k", {.memory_bytes = 8 << 20});
      if (!store) return 1;
      auto channel = impl_of(*store).channel_for("/old", "lockstep", 16, 4096);
      append(*store, *channel, 0, 10, 64, realtime_ns());
      self.signal_ready();
      for (;;) ::pause();
    });
    REQUIRE(first.wait_ready());
    first.kill9();
  }
  auto store = Store::open_for_keeper(domain.name, "k", {.memory_bytes = 8 << 20});
  requireOk(store.status());
  CHECK(store->taken_over());
  auto old_channel = impl_of(*store).channel_for("/old", "lockstep", 16, 4096);
  CHECK(old_channel == std::optional<std::uint16_t>(0));
  append(*store, *old_channel, 10, 5, 64, realtime_ns());
  auto dump = dump_and_read(*store);
  CHECK(check_consecutive(dump, 64) == std::pair<std::uint64_t, std::uint64_t>{0, 14});
}

TEST_CASE("A chunk whose bytes changed after it was committed is left out of a dump whole", "[flashback][store]") {
  TestDomain domain;
  auto store = Store::open_for_keeper(domain.name, "k", {.memory_bytes = 8 << 20, .chunk_size = 4 << 10});
  requireOk(store.status());
  auto channel = impl_of(*store).channel_for("/a", "lockstep", 16, 4096);
  const std::uint64_t now = realtime_ns();
  append(*store, *channel, 0, 10, 100, now);
  requireOk(impl_of(*store).close_open_chunk());
  append(*store, *channel, 10, 10, 100, now);
  requireOk(impl_of(*store).close_open_chunk());
  // What a keeper reusing those bytes mid-copy would leave behind: a chunk that is not itself.
  auto& first = impl_of(*store).slot(0);
  impl_of(*store).data_area()[first.offset.load() + first.length.load() / 2] ^= std::byte{0xff};
  auto dump = dump_and_read(*store);
  CHECK(dump.problems.empty());
  CHECK(dump.summary.chunks_left_out == 1);
  CHECK(check_consecutive(dump, 100) == std::pair<std::uint64_t, std::uint64_t>{10, 19});
}

TEST_CASE("Hostile entries in place of a flashback store are refused or reported, never followed or waited on",
          "[flashback][store][hostile]") {
  cerulion::test::check_hostile_entries(cerulion::test::flashback_store_kind());
}
