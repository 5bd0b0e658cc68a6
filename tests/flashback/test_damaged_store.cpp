// SPDX-License-Identifier: Apache-2.0
// A damaged store (random bytes written into it: the evidence a user needs most after a crash)
// still dumps: every undamaged chunk and staged message is salvaged, nothing damaged is passed on,
// and the dump says what it skipped and why; a keeper taking it over says so too.

#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <random>
#include <set>

#include <fmt/core.h>

#include "cerulion/flashback/keeper.hpp"
#include "child.hpp"
#include "helpers.hpp"
#include "official_mcap_reader.hpp"
#include "store_impl.hpp"
#include "temp_dir.hpp"
#include "topic_types.hpp"

using namespace fbtest;
using cerulion::flashback::Store;
using cerulion::flashback::detail::impl_of;
using cerulion::flashback::detail::kStagedPrefix;

namespace {

constexpr std::size_t kPayload = 100;
constexpr std::uint64_t kStagedSize = kStagedPrefix + cerulion::recorder::message_record_size(kPayload);
const cerulion::flashback::StoreLimits kLimits{.memory_bytes = 8 << 20, .chunk_size = 16 << 10};

struct Region {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

// What a store holds past its header page: channel table, chunk slots, staging buffers, chunk bytes,
// topic types. (The header is checked on opening; a damaged one is refused, not dumped.)
std::vector<Region> used_regions(const Store& store) {
  auto& impl = impl_of(store);
  const auto& h = impl.header();
  using cerulion::flashback::detail::ChannelEntry;
  using cerulion::flashback::detail::ChunkSlot;
  std::vector<Region> regions{
      {h.channels_offset, sizeof(ChannelEntry) * h.channel_count.load()},
      {h.slots_offset, sizeof(ChunkSlot) * h.head.load()},
      {h.data_offset, h.write_offset.load()},
      {h.types_offset, h.types_length.load()},
  };
  for (std::uint64_t i = 0; i < cerulion::flashback::detail::kStagingBuffers; ++i) {
    regions.push_back({h.staging_offset + i * h.staging_capacity, h.staging[i].length.load()});
  }
  std::erase_if(regions, [](const Region& r) { return r.length == 0; });
  return regions;
}

// XORs `mask` into byte `offset` of the store's file, as another process's stray write would.
void damage_byte(const Store& store, std::uint64_t offset, std::byte mask) {
  const int fd = ::open(store.path().c_str(), O_RDWR | O_CLOEXEC);
  REQUIRE(fd >= 0);
  std::byte b{};
  REQUIRE(::pread(fd, &b, 1, static_cast<off_t>(offset)) == 1);
  b ^= mask;
  REQUIRE(::pwrite(fd, &b, 1, static_cast<off_t>(offset)) == 1);
  ::close(fd);
}

// A keeper that stored messages 0..count-1 (even ones on /raw, odd ones on /typed, payload(s)),
// closing a chunk after each multiple of `per_chunk` below `closed`, then was killed with -9: its
// store has closed chunks and, after them, staged messages.
void store_then_die(const TestDomain& domain, std::uint64_t count, std::uint64_t per_chunk, std::uint64_t closed,
                    std::uint64_t log_time) {
  cerulion::test::Child keeper([&](cerulion::test::Child& self) {
    auto store = Store::open_for_keeper(domain.name, "k", kLimits);
    if (!store) return 1;
    auto& impl = impl_of(*store);
    auto raw = impl.channel_for("/raw", "lockstep", 16, 4096);
    auto typed = impl.channel_for("/typed", "lockstep", 16, 4096, cerulion::test::imu_json_type());
    if (!raw || !typed) return 2;
    for (std::uint64_t s = 0; s < count; ++s) {
      if (!impl.append(s % 2 ? *typed : *raw, static_cast<std::uint32_t>(s), log_time + s, log_time + s, payload(s, kPayload))) return 3;
      if ((s + 1) % per_chunk == 0 && s + 1 <= closed && !impl.close_open_chunk()) return 4;
    }
    self.signal_ready();
    for (;;) ::pause();
  });
  REQUIRE(keeper.wait_ready());
  keeper.kill9();
}

// XORs `mask` into byte `at` of chunk `n` of a dead keeper's store.
void damage_chunk(const TestDomain& domain, std::uint64_t n, std::uint64_t at, std::byte mask) {
  auto reading = Store::open(domain.name, "k");
  requireOk(reading.status());
  damage_byte(*reading, impl_of(*reading).header().data_offset + impl_of(*reading).slot(n).offset.load() + at, mask);
}

// XORs `mask` into byte `at` of staged message `index` (of the buffer taps append to) of a dead
// keeper's store.
void damage_staged(const TestDomain& domain, std::uint64_t index, std::uint64_t at, std::byte mask) {
  auto reading = Store::open(domain.name, "k");
  requireOk(reading.status());
  const auto& h = impl_of(*reading).header();
  damage_byte(*reading, h.staging_offset + h.active.load() * h.staging_capacity + index * kStagedSize + at, mask);
}

bool says_skipped(const ReadDump& dump) {
  for (const auto& md : dump.metadata) {
    if (md.name == "flashback" && md.metadata.count("skipped") && !md.metadata.at("skipped").empty()) return true;
  }
  return false;
}

std::uint64_t base_seed() {
  if (const char* given = std::getenv("CERULION_TEST_SEED")) return std::strtoull(given, nullptr, 10);
  return std::random_device{}();
}

}  // namespace

TEST_CASE("Random bytes written into a flashback store give 50 dumps that both MCAP readers read, none passing on a "
          "damaged message, each naming what it skipped",
          "[flashback][store][damage]") {
  constexpr int kTrials = 50;
  constexpr std::uint64_t kMessages = 200;
  const std::uint64_t seed = base_seed();
  INFO("seed " << seed << " (CERULION_TEST_SEED=" << seed << " repeats it)");
  std::vector<std::string> files;
  std::vector<nlohmann::json> ours;  // each dump's messages as the official reader lists them
  for (int trial = 0; trial < kTrials; ++trial) {
    std::mt19937_64 rng(seed + static_cast<std::uint64_t>(trial));
    INFO("trial " << trial);
    TestDomain domain;
    // Three chunks closed, 80 messages staged.
    store_then_die(domain, kMessages, 40, 120, realtime_ns());
    std::optional<Store> store;
    {
      auto reading = Store::open(domain.name, "k");
      requireOk(reading.status());
      const auto regions = used_regions(*reading);
      const int writes = 2 + static_cast<int>(rng() % 7);
      for (int w = 0; w < writes; ++w) {
        const Region& r = regions[rng() % regions.size()];
        damage_byte(*reading, r.offset + rng() % r.length, static_cast<std::byte>(1 + rng() % 255));
      }
      store.emplace(std::move(*reading));
    }
    // Half are dumped as the dead keeper left them, half after a new keeper took the store over.
    const bool taken_over = trial % 2 == 1;
    if (taken_over) {
      store.reset();
      auto keeper = Store::open_for_keeper(domain.name, "k", kLimits);
      requireOk(keeper.status());
      store.emplace(std::move(*keeper));
    }
    const std::string path = cerulion::test::fresh_temp_path("damaged-" + std::to_string(trial) + ".mcap");
    cerulion::flashback::DumpOptions only_the_store;
    only_the_store.from_topics = false;
    auto dumped = cerulion::flashback::dump_to_file(*store, path, only_the_store);
    requireOk(dumped.status());
    const ReadDump dump = read_dump_file(path);
    CHECK(dump.problems.empty());
    // Every message dumped is one stored, with its bytes, once.
    std::set<std::uint32_t> seen;
    nlohmann::json listed = nlohmann::json::array();
    for (const auto& m : dump.messages) {
      INFO("sequence " << m.sequence);
      REQUIRE(m.sequence < kMessages);
      CHECK(seen.insert(m.sequence).second);
      CHECK(m.data == payload(m.sequence, kPayload));
      listed.push_back({m.topic, m.sequence, std::to_string(m.log_time), m.data.size(),
                        cerulion::test::official_reader_digest(m.data)});
    }
    std::uint64_t counted = 0;
    for (const auto& t : dumped->topics) counted += t.messages;
    CHECK(counted == dump.messages.size());
    if (dump.messages.size() < kMessages) {
      UNSCOPED_INFO("dumped " << dump.messages.size() << " of " << kMessages);
      CHECK_FALSE(dumped->skipped.empty());
    }
    if (taken_over && store->damage_found().any()) CHECK_FALSE(dumped->skipped.empty());
    // What was skipped is in the dump itself, for whoever reads it later.
    CHECK(says_skipped(dump) == !dumped->skipped.empty());
    files.push_back(path);
    ours.push_back(std::move(listed));
  }

  // The official reader, once over every dump.
  std::string why;
  const auto reader = cerulion::test::official_mcap_reader(why);
  if (!reader) {
    WARN("the official MCAP reader skipped: " << why);
    return;
  }
  const auto read = cerulion::test::read_with_official_reader(*reader, files);
  INFO(read.output.substr(0, 4000));
  CHECK(read.exit_code == 0);
  REQUIRE(read.files.size() == files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    INFO("trial " << i << ": " << files[i]);
    const auto& got = read.files[i];
    REQUIRE_FALSE(got.contains("error"));
    CHECK(got["stream_done"] == true);
    CHECK(got["streamed_messages"] == ours[i].size());
    CHECK(got["messages"] == ours[i]);
  }
}

TEST_CASE("A flashback dump skips a chunk whose bytes were damaged and says which and why", "[flashback][store][damage]") {
  TestDomain domain;
  auto store = Store::open_for_keeper(domain.name, "k", {.memory_bytes = 8 << 20, .chunk_size = 4 << 10});
  requireOk(store.status());
  auto& impl = impl_of(*store);
  auto channel = impl.channel_for("/a", "lockstep", 16, 4096);
  const std::uint64_t now = realtime_ns();
  for (std::uint64_t s = 0; s < 30; ++s) {
    requireOk(impl.append(*channel, static_cast<std::uint32_t>(s), now + s, now + s, payload(s, 100)));
    if (s % 10 == 9) requireOk(impl.close_open_chunk());
  }
  auto& second = impl.slot(1);
  impl.data_area()[second.offset.load() + 3] ^= std::byte{0x5a};
  const ReadDump dump = dump_and_read(*store);
  CHECK(dump.messages.size() == 20);
  REQUIRE(dump.summary.skipped.size() == 1);
  CHECK(dump.summary.skipped[0] == "chunk 1: its bytes fail their CRC or lie outside the store");
}

TEST_CASE("A staged message whose bytes changed is left out of a dump and named, and those around it are dumped",
          "[flashback][store][damage]") {
  TestDomain domain;
  auto store = Store::open_for_keeper(domain.name, "k", kLimits);
  requireOk(store.status());
  auto& impl = impl_of(*store);
  auto channel = impl.channel_for("/a", "lockstep", 16, 4096);
  const std::uint64_t now = realtime_ns();
  for (std::uint64_t s = 0; s < 10; ++s) {
    requireOk(impl.append(*channel, static_cast<std::uint32_t>(s), now + s, now + s, payload(s, kPayload)));
  }
  const auto active = impl.header().active.load();
  // A byte of message 3's payload.
  impl.staging_area(active)[3 * kStagedSize + kStagedSize - 10] ^= std::byte{0x01};
  auto sequences = [](const ReadDump& dump) {
    std::vector<std::uint32_t> out;
    for (const auto& m : dump.messages) out.push_back(m.sequence);
    return out;
  };
  const std::vector<std::uint32_t> all_but_3{0, 1, 2, 4, 5, 6, 7, 8, 9};

  SECTION("by a dump") {
    const ReadDump dump = dump_and_read(*store);
    CHECK(sequences(dump) == all_but_3);
    CHECK(dump.summary.skipped ==
          std::vector<std::string>{"the newest messages (not yet compressed): 1 damaged message (failing its CRC) left out"});
  }
  SECTION("by the keeper compressing it, and then by every dump while its chunk is held") {
    requireOk(impl.close_open_chunk());
    CHECK(impl.status().damaged_messages == 1);
    const ReadDump dump = dump_and_read(*store);
    CHECK(sequences(dump) == all_but_3);
    CHECK(dump.summary.skipped ==
          std::vector<std::string>{"chunk 0: 1 damaged message (failing its CRC) left out when it was made"});
  }
  SECTION("with its length changed, what follows it cannot be trusted: left out, and said") {
    // The Message record's length, after its opcode.
    impl.staging_area(active)[3 * kStagedSize + kStagedPrefix + 2] ^= std::byte{0x01};
    const ReadDump dump = dump_and_read(*store);
    CHECK(sequences(dump) == std::vector<std::uint32_t>{0, 1, 2});
    CHECK(dump.summary.skipped ==
          std::vector<std::string>{fmt::format("the newest messages (not yet compressed): the last {} bytes do not read as "
                                               "messages: left out",
                                               7 * kStagedSize)});
  }
}

TEST_CASE("A keeper taking over a damaged store sets aside what fails its CRC, says how much, and its dumps name it",
          "[flashback][store][damage]") {
  TestDomain domain;
  // Chunks 0, 1 and 2 of 10 messages each, then 10 staged.
  store_then_die(domain, 40, 10, 30, realtime_ns());
  damage_chunk(domain, 1, 5, std::byte{0x20});
  damage_staged(domain, 4, kStagedSize - 1, std::byte{0x80});
  auto store = Store::open_for_keeper(domain.name, "k", kLimits);
  requireOk(store.status());
  CHECK(store->taken_over());
  CHECK(store->damage_found().chunks == 1);
  CHECK(store->damage_found().messages == 1);
  CHECK(cerulion::flashback::describe(store->damage_found()) ==
        "the store taken over is damaged: 1 chunk set aside and 1 message not yet compressed left out (failing their "
        "CRC); dumps name them while they are in the window and leave them out");
  const auto status = store->status();
  CHECK(status.damaged_chunks == 1);
  CHECK(status.damaged_messages == 1);
  cerulion::flashback::DumpOptions only_the_store;
  only_the_store.from_topics = false;
  const ReadDump dump = dump_and_read(*store, only_the_store);
  CHECK(dump.messages.size() == 29);
  for (const auto& m : dump.messages) CHECK(m.data == payload(m.sequence, kPayload));
  CHECK(dump.summary.skipped ==
        std::vector<std::string>{
            "chunk 1: found damaged (failing its CRC) by the keeper that took the store over, and set aside",
            "chunk 3: 1 damaged message (failing its CRC) left out when it was made"});
  CHECK(dump.summary.chunks_left_out == 0);
}

TEST_CASE("A keeper that takes over a damaged store says so once, as a warning naming the store",
          "[flashback][keeper][damage]") {
  TestDomain domain;
  store_then_die(domain, 30, 10, 30, realtime_ns());
  damage_chunk(domain, 2, 1, std::byte{1});
  cerulion::recording::EventQueue events;
  cerulion::flashback::KeeperOptions options;
  options.domain = domain.name;
  options.name = "k";
  options.selection.topics = {"/raw"};
  options.limits = kLimits;
  options.events = &events;
  auto keeper = cerulion::flashback::Keeper::start(options);
  requireOk(keeper.status());
  keeper->stop();
  std::vector<std::string> warnings;
  for (const auto& e : events.drain()) {
    if (e.kind == cerulion::recording::EventKind::Warning && e.subject == keeper->store().path()) warnings.push_back(e.message);
  }
  CHECK(warnings == std::vector<std::string>{cerulion::flashback::describe({.chunks = 1, .messages = 0})});
  CHECK(keeper->status().damaged_chunks == 1);
}
