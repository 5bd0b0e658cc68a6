// SPDX-License-Identifier: Apache-2.0
// Writer throughput at the default settings (zstd level 1, 1 MiB chunks). Hidden: run with
// `recorder_tests "[.bench]"`. Payloads are made up front so only writing is timed.

#include <catch2/catch.hpp>

#include <chrono>
#include <iostream>
#include <random>

#include "cerulion/recorder/writer.hpp"
#include "helpers.hpp"

using namespace rectest;

namespace {

double write_mbps(const std::vector<ByteVector>& pool, std::size_t total_bytes, const char* label) {
  auto path = temp_path("bench.mcap");
  auto w = Writer::create(path);
  REQUIRE(w.ok());
  auto ch = w->add_channel("/bench", "x-cerulion-bytes");
  REQUIRE(ch.ok());
  auto start = std::chrono::steady_clock::now();
  std::size_t written = 0;
  for (std::uint32_t i = 0; written < total_bytes; ++i) {
    const auto& data = pool[i % pool.size()];
    REQUIRE(w->write(*ch, i, i, i, data).ok());
    written += data.size();
  }
  REQUIRE(w->close().ok());
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double mbps = static_cast<double>(written) / secs / 1e6;
  std::cout << label << ": " << mbps << " MB/s (" << written / 1e6 << " MB payload -> "
            << w->counters().file_bytes / 1e6 << " MB file)\n";
  fs::remove(path);
  return mbps;
}

}  // namespace

TEST_CASE("Writer throughput at default settings on compressible and random data", "[.bench]") {
  std::mt19937_64 rng(1);
  std::vector<ByteVector> compressible, random;
  for (int m = 0; m < 64; ++m) {
    ByteVector c(64 * 1024), r(64 * 1024);
    for (std::size_t k = 0; k < c.size(); ++k) {
      c[k] = static_cast<std::byte>((k / 64 + m) % 200 + (k % 8 == 0 ? rng() % 4 : 0));  // gradient + noise
      r[k] = static_cast<std::byte>(rng());
    }
    compressible.push_back(std::move(c));
    random.push_back(std::move(r));
  }
  CHECK(write_mbps(compressible, 512u << 20, "compressible (zstd 1)") > 0);
  CHECK(write_mbps(random, 512u << 20, "random (stored uncompressed)") > 0);
}
