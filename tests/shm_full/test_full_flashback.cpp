// SPDX-License-Identifier: Apache-2.0
// Flashback when memory or disk runs out: a store bigger than /dev/shm stops growing where /dev/shm
// ends and keeps working within it; a dump into a full disk fails with one line, leaves no file,
// and leaves the store as it was, so the dump can be retried elsewhere.

#include <catch2/catch.hpp>

#include <filesystem>
#include <random>
#include <sys/mount.h>

#include "cerulion/core/options.hpp"
#include "cerulion/flashback/dump.hpp"
#include "cerulion/flashback/store.hpp"
#include "full_shm.hpp"
#include "process.hpp"
#include "store_impl.hpp"  // white box: the keeper's side of the store

using namespace cerulion;
using namespace cerulion::test;
using namespace std::chrono_literals;
using cerulion::flashback::detail::impl_of;

namespace {

// Incompressible messages, so the store holds as many bytes as it is given.
void fill_store(flashback::Store& store, std::uint64_t bytes) {
  auto channel = impl_of(store).channel_for("/noise", "free-run", 16, 1 << 20);
  REQUIRE(channel);
  std::mt19937_64 rng(1);
  std::vector<std::byte> payload(64 << 10);
  for (std::uint64_t s = 0; s * payload.size() < bytes; ++s) {
    for (auto& b : payload) b = static_cast<std::byte>(rng());
    auto st = impl_of(store).append(*channel, static_cast<std::uint32_t>(s), realtime_ns(), realtime_ns(), payload);
    INFO(st.message());
    REQUIRE((st.ok() || st.code() == ErrorCode::OutOfMemory));
  }
}

}  // namespace

TEST_CASE("A flashback store larger than /dev/shm keeps working within what /dev/shm holds", "[full][flashback]") {
  const std::string domain = unique_domain("fullfb");
  {
    auto store = flashback::Store::open_for_keeper(domain, "big", {.memory_bytes = 256ull << 20});
    REQUIRE(store.ok());
    fill_store(*store, 120ull << 20);
    const auto status = store->status();
    CHECK(status.memory_usable_bytes < status.memory_limit_bytes);
    CHECK(status.memory_bytes <= status.memory_usable_bytes);
    CHECK(status.chunks_evicted > 0);
    auto listing = run_cerulion({"--domain", domain, "flashback", "status", "--name", "big"}, {}, 10s);
    CHECK(listing.exit_code == 0);
    CHECK(listing.out.find("/dev/shm ran out") != std::string::npos);
  }
  CHECK(flashback::remove_store(domain, "big").ok());
}

TEST_CASE("A dump into a full disk fails with one line leaves no file and can be retried", "[full][flashback]") {
  const std::string domain = unique_domain("fulldisk");
  const auto disk = std::filesystem::temp_directory_path() / unique_domain("tinydisk");
  std::filesystem::create_directories(disk);
  REQUIRE(::mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=1m") == 0);
  {
    auto store = flashback::Store::open_for_keeper(domain, "k", {.memory_bytes = 16ull << 20});
    REQUIRE(store.ok());
    fill_store(*store, 4ull << 20);
    const auto before = store->status();
    auto r = run_cerulion({"--domain", domain, "flashback", "dump", "--name", "k", "-o", (disk / "d.mcap").string()}, {}, 20s);
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("no space left") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(std::filesystem::is_empty(disk));
    const auto after = store->status();
    CHECK(after.messages == before.messages);
    CHECK(after.chunks == before.chunks);
    auto elsewhere = std::filesystem::temp_directory_path() / (unique_domain("retry") + ".mcap");
    auto retry = run_cerulion({"--domain", domain, "flashback", "dump", "--name", "k", "-o", elsewhere.string()}, {}, 20s);
    INFO("retry stderr: " << retry.err);
    CHECK(retry.exit_code == 0);
    CHECK(std::filesystem::file_size(elsewhere) > (4u << 20));
    std::filesystem::remove(elsewhere);
  }
  ::umount(disk.c_str());
  std::filesystem::remove_all(disk);
  CHECK(flashback::remove_store(domain, "k").ok());
}
