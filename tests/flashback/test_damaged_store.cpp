// SPDX-License-Identifier: Apache-2.0
// A damaged store (random bytes written into it: the evidence a user needs most after a crash)
// still dumps: every undamaged chunk is salvaged, and the dump says what it skipped and why.

#include <random>

#include "helpers.hpp"
#include "store_impl.hpp"
#include "topic_types.hpp"

using namespace fbtest;
using cerulion::flashback::Store;
using cerulion::flashback::detail::impl_of;

namespace {

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

}  // namespace

TEST_CASE("Random bytes written into a flashback store still give a readable dump that names what it skipped",
          "[flashback][store][damage]") {
  constexpr int kTrials = 50;
  for (int trial = 0; trial < kTrials; ++trial) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(trial) * 7919 + 1);
    INFO("trial " << trial);
    TestDomain domain;
    auto store = Store::open_for_keeper(domain.name, "k", {.memory_bytes = 8 << 20, .chunk_size = 4 << 10});
    requireOk(store.status());
    auto& impl = impl_of(*store);
    auto typed = impl.channel_for("/typed", "lockstep", 16, 4096, cerulion::test::imu_json_type());
    auto raw = impl.channel_for("/raw", "lockstep", 16, 4096);
    REQUIRE(typed);
    REQUIRE(raw);
    const std::uint64_t now = realtime_ns();
    std::uint64_t appended = 0;
    for (std::uint64_t s = 0; s < 200; ++s) {
      requireOk(impl.append(s % 2 ? *typed : *raw, static_cast<std::uint32_t>(s), now + s, now + s, payload(s, 100)));
      ++appended;
      if (s % 40 == 39 && s < 160) requireOk(impl.close_open_chunk());  // some closed, the rest open
    }
    const auto regions = used_regions(*store);
    const int writes = 2 + static_cast<int>(rng() % 7);
    for (int w = 0; w < writes; ++w) {
      const Region& r = regions[rng() % regions.size()];
      const std::uint64_t at = r.offset + rng() % r.length;
      impl.base()[at] ^= static_cast<std::byte>(1 + rng() % 255);
    }
    const ReadDump dump = dump_and_read(*store);  // written, and every CRC in it checks
    CHECK(dump.problems.empty());
    std::uint64_t dumped = 0;
    for (const auto& t : dump.summary.topics) dumped += t.messages;
    CHECK(dumped == dump.messages.size());
    if (dump.messages.size() < appended) {
      UNSCOPED_INFO("dumped " << dump.messages.size() << " of " << appended);
      CHECK_FALSE(dump.summary.skipped.empty());
    }
    // What was skipped is in the dump itself, for whoever reads it later.
    if (!dump.summary.skipped.empty()) {
      bool said = false;
      for (const auto& md : dump.metadata) {
        if (md.name == "flashback" && md.metadata.count("skipped")) said = !md.metadata.at("skipped").empty();
      }
      CHECK(said);
    }
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
